"""Signing in to an OAuth-protected MCP server: the SDK's authorization server (tests/oauth_fixture.py) for real.

The page's Sign in link, the browser following the authorization server's redirect back to our
/oauth/callback, the server becoming ready with its tools, tokens kept 0600 and reused (refreshed
when stale) by the next start, and no token in the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import stat
import sys
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from tests.conftest import serve_app
from mcp_harness import SERVERS
from tests.oauth_fixture import serve_oauth_server

from sidespin.mcp import MCPManager, ServerConfig
from sidespin.mcp.auth import SignIns, redirect_uri, token_path
from sidespin.mcp.config import OAuthConfig, parse_mcp_config
from sidespin.errors import ConfigError
from tests.scripted import ScriptedBackend


def _write_config(data_dir: Path, oauth_url: str) -> None:
    servers = {
        "vault": {"url": oauth_url, "oauth": {}},
        "plain": {"command": sys.executable, "args": [str(SERVERS / "tools_only_server.py")]},
    }
    (data_dir / "mcp.json").write_text(json.dumps({"servers": servers}), encoding="utf-8")


def _health(base: str) -> dict[str, Any]:
    return httpx.get(base + "/health", timeout=30).json()["mcp_servers"]


def _wait_for_status(base: str, server: str, wanted: str, seconds: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while (state := _health(base)[server])["status"] != wanted and time.monotonic() < deadline:
        time.sleep(0.1)  # polling a live HTTP server's /health: there is no event to wait on from outside
    return state


def test_a_server_that_needs_sign_in_waits_for_the_page_and_then_serves_its_tools(tmp_path: Path) -> None:
    with serve_oauth_server() as oauth:
        _write_config(tmp_path, oauth.url)
        with serve_app(ScriptedBackend([]), tmp_path, approval="auto") as base:
            servers = _health(base)
            assert servers["plain"]["status"] == "ready"  # the other server did not wait for the sign-in
            assert servers["vault"]["status"] == "needs sign-in"
            assert servers["vault"]["sign_in"] == "/oauth/vault/sign-in"
            assert "whisper" not in {tool["name"] for tool in httpx.get(base + "/tools").json()["tools"]}
            panel = httpx.get(base + "/", follow_redirects=True).text  # the chat page: a Sign in button on the server
            assert "needs sign-in" in panel and 'hx-post="/oauth/vault/sign-in"' in panel and "whisper" not in panel

            button = httpx.post(base + servers["vault"]["sign_in"], headers={"HX-Request": "true"})
            sign_in = httpx.post(base + servers["vault"]["sign_in"], follow_redirects=False)
            assert sign_in.status_code == 303
            authorization = sign_in.headers["location"]
            assert authorization.startswith(oauth.url.removesuffix("/mcp") + "/authorize?")
            assert button.status_code == 200 and button.headers["hx-redirect"] == authorization  # the page's button

            # The "browser": the authorization server approves at once and sends it to our callback.
            landed = httpx.get(authorization, follow_redirects=True, timeout=60)
            assert landed.url.path == "/oauth/callback"
            assert landed.status_code == 200, landed.text
            assert "Signed in to vault" in landed.text and 'href="/"' in landed.text

            assert _health(base)["vault"]["status"] == "ready"
            panel = httpx.get(base + "/", follow_redirects=True).text
            assert "whisper" in panel and "/oauth/vault/sign-in" not in panel
            called = httpx.post(base + "/mcp-tool-executor", json={"tool": "whisper", "params": {"text": "HUSH"}})
            assert called.json() == {"status": "success", "result": "hush", "seconds": called.json()["seconds"]}

            tokens = token_path(tmp_path / "oauth", "vault")
            assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
            assert stat.S_IMODE(tokens.parent.stat().st_mode) == 0o700
            saved = json.loads(tokens.read_text(encoding="utf-8"))
            assert saved["url"] == oauth.url and saved["expires_at"] > time.time()

        # A second start uses the stored tokens: ready at once, no sign-in.
        with serve_app(ScriptedBackend([]), tmp_path, approval="auto") as base:
            assert _health(base)["vault"]["status"] == "ready"

        # Stale tokens (the access token expired while sidespin was off) are refreshed, not signed in again.
        oauth.provider.expire_access_tokens()
        saved["expires_at"] = time.time() - 10
        tokens.write_text(json.dumps(saved), encoding="utf-8")
        refreshes = oauth.provider.refreshes
        with serve_app(ScriptedBackend([]), tmp_path, approval="auto") as base:
            assert _health(base)["vault"]["status"] == "ready"
            assert oauth.provider.refreshes == refreshes + 1
            called = httpx.post(base + "/mcp-tool-executor", json={"tool": "whisper", "params": {"text": "AGAIN"}})
            assert called.json()["result"] == "again"
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600

        issued = list(oauth.provider.issued)
    # The server's own log file (DEBUG and up) of all three runs.
    text = "\n".join(path.read_text(encoding="utf-8") for path in tmp_path.rglob("server.log*"))
    assert "OAUTH_SIGNED_IN vault" in text and "OAUTH_REFRESHED" in text
    assert issued and not [token for token in issued if token in text]


def test_a_sign_in_nobody_completes_fails_the_server_with_a_reason() -> None:
    async def scenario() -> None:
        with serve_oauth_server() as oauth:
            config = ServerConfig(name="vault", transport="http", url=oauth.url, oauth=OAuthConfig())
            sign_ins = SignIns(redirect_uri(5001), wait=0.5)
            async with MCPManager([config], sign_ins=sign_ins) as manager:
                connection = manager.connection("vault")
                assert connection.status == "needs sign-in" and connection.sign_in_url
                seen = manager.version
                async with asyncio.timeout(10):
                    while connection.status == "needs sign-in":
                        seen = await manager.wait_for_change(seen)
                assert connection.status == "failed"
                assert "sign-in was not completed within" in (connection.error or "")
                assert connection.sign_in_url is None

    asyncio.run(scenario())


def test_a_server_answering_401_without_oauth_in_mcp_json_still_asks_for_sign_in() -> None:
    async def scenario() -> None:
        with serve_oauth_server() as oauth:
            config = ServerConfig(name="vault", transport="http", url=oauth.url)
            async with MCPManager([config]) as manager:
                assert manager.state()["vault"]["status"] == "needs sign-in"
                assert manager.failures == {}

    asyncio.run(scenario())


def test_mcp_json_oauth_is_checked_with_reasons_a_person_can_act_on() -> None:
    def parse(oauth: object) -> Any:
        return parse_mcp_config({"servers": {"s": {"url": "https://example.com/mcp", "oauth": oauth}}}, environ={})

    assert parse(True)[0].oauth == OAuthConfig()
    assert parse({})[0].oauth == OAuthConfig()
    full = parse({"client_id": "abc", "client_secret": "shh", "scopes": ["read", "write"]})[0].oauth
    assert full == OAuthConfig("abc", "shh", ("read", "write"))
    for bad, reason in [
        ("yes", "must be true or an object"),
        ({"client": "abc"}, "unknown field(s) client"),
        ({"client_secret": "shh"}, "client_secret but no client_id"),
        ({"scopes": "read"}, "list of strings"),
        ({"client_metadata_url": "http://example.com/c.json"}, "https://"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(reason)):
            parse(bad)
    with pytest.raises(ConfigError, match="for http and sse servers"):
        parse_mcp_config({"servers": {"s": {"command": "x", "oauth": True}}}, environ={})


def test_the_terminal_prints_the_sign_in_url_and_takes_the_callback_on_its_own_listener(tmp_path: Path) -> None:
    from rich.console import Console

    from sidespin.config import load_settings
    from sidespin.terminal.sign_in import sign_in_listener
    from tests.conftest import free_port

    async def scenario() -> None:
        with serve_oauth_server() as oauth:
            settings = load_settings(data_dir=tmp_path, port=free_port(), mcp_config=tmp_path / "none.json")
            printed = Console(record=True, width=400)
            async with contextlib.AsyncExitStack() as stack:
                sign_ins = await sign_in_listener(stack, settings, printed)
                config = ServerConfig(name="vault", transport="http", url=oauth.url)
                async with MCPManager([config], sign_ins=sign_ins, token_dir=tmp_path / "oauth") as manager:
                    url = manager.connection("vault").sign_in_url
                    assert f"'vault' needs sign-in: open {url}" in printed.export_text()
                    async with httpx.AsyncClient(follow_redirects=True, timeout=30) as browser:
                        landed = await browser.get(url)
                    assert landed.url.port == settings.port and "Signed in to vault" in landed.text
                    seen = manager.version
                    async with asyncio.timeout(10):
                        while manager.connection("vault").status != "ready":
                            seen = await manager.wait_for_change(seen)
                    assert [tool.name for tool in manager.tools("vault")] == ["whisper"]
            assert token_path(tmp_path / "oauth", "vault").exists()

    asyncio.run(scenario())
