"""/oauth/callback is reachable by any page (a top-level GET); only its single-use `state` makes it do anything.

An unknown state, or one already used, is a 400 page and changes nothing: the waiting sign-in stays
waiting for its real callback, and a used one cannot be replayed into a second sign-in.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2 as httpx

from tests.conftest import serve_app
from tests.oauth_fixture import serve_oauth_server
from tests.scripted import ScriptedBackend


def _vault(base: str) -> dict:
    return httpx.get(base + "/health", timeout=30).json()["mcp_servers"]["vault"]


def test_a_callback_with_an_unknown_or_used_state_does_nothing(tmp_path: Path) -> None:
    with serve_oauth_server() as oauth:
        servers = {"vault": {"url": oauth.url, "oauth": {}}}
        (tmp_path / "mcp.json").write_text(json.dumps({"servers": servers}), encoding="utf-8")
        with serve_app(ScriptedBackend([]), tmp_path) as base:
            assert _vault(base)["status"] == "needs sign-in"
            authorization = httpx.post(base + "/oauth/vault/sign-in", follow_redirects=False).headers["location"]
            state = parse_qs(urlsplit(authorization).query)["state"][0]

            # A page that guesses: no state, a wrong one, a near miss. Nothing happens.
            for query in ["", "?code=evil", "?code=evil&state=guess", f"?code=evil&state={state[:-1]}"]:
                refused = httpx.get(base + "/oauth/callback" + query)
                assert refused.status_code == 400
                assert "unknown, already used or expired" in refused.text
            assert _vault(base)["status"] == "needs sign-in"
            assert httpx.post(base + "/oauth/vault/sign-in", follow_redirects=False).headers["location"] == authorization
            assert oauth.provider.issued == []

            # The real sign-in completes once ...
            approved = httpx.get(authorization, follow_redirects=False).headers["location"]
            assert httpx.get(approved).status_code == 200
            assert _vault(base)["status"] == "ready"
            issued = list(oauth.provider.issued)

            # ... and replaying its callback (or another code with its state) is refused and changes nothing.
            replay = httpx.get(approved)
            assert replay.status_code == 400 and "already used" in replay.text
            code = parse_qs(urlsplit(approved).query)["code"][0]
            assert httpx.get(f"{base}/oauth/callback?code=other&state={state}").status_code == 400
            assert oauth.provider.issued == issued and code not in oauth.provider.codes
            assert _vault(base)["status"] == "ready"


def test_an_error_from_the_authorization_server_is_shown_and_fails_the_sign_in(tmp_path: Path) -> None:
    with serve_oauth_server() as oauth:
        (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"vault": {"url": oauth.url}}}), encoding="utf-8")
        with serve_app(ScriptedBackend([]), tmp_path) as base:
            authorization = httpx.post(base + "/oauth/vault/sign-in", follow_redirects=False).headers["location"]
            state = parse_qs(urlsplit(authorization).query)["state"][0]
            page = httpx.get(f"{base}/oauth/callback?error=access_denied&error_description=the+user+said+no&state={state}")
            assert page.status_code == 400
            assert "access_denied" in page.text and "the user said no" in page.text
            deadline = time.monotonic() + 10
            while (vault := _vault(base))["status"] == "needs sign-in" and time.monotonic() < deadline:
                time.sleep(0.05)  # the holding task records the refusal in a moment; only /health shows it
            assert vault["status"] == "failed" and "access_denied" in vault["error"]
            # Signing in again starts a fresh attempt with a new state.
            again = httpx.post(base + "/oauth/vault/sign-in", follow_redirects=False).headers["location"]
            assert parse_qs(urlsplit(again).query)["state"][0] != state
