"""8, 9. The access token of a public bind: the one in the URL wins over an old cookie, and its redirect stays on
this server."""

from __future__ import annotations

import pytest

from tests.conftest import serve_app
from tests.security.conftest import json_of, raw_request

TOKEN = "correct-horse-battery-staple"


def cookie_name(base: str) -> str:
    return "sidespin_token_" + base.rsplit(":", 1)[1]


def test_a_correct_token_in_the_url_wins_over_a_stale_cookie_and_replaces_it(echo_model, data_dir):
    with serve_app(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as base:
        stale = {"Cookie": f"{cookie_name(base)}=the-token-of-last-week"}
        assert raw_request(base, "GET", "/health", headers=stale)[0] == 401
        status, headers, _ = raw_request(base, "GET", f"/?token={TOKEN}", headers=stale)
        assert status == 303 and headers["location"] == "/"
        fresh = headers["set-cookie"].split(";")[0]
        assert fresh == f"{cookie_name(base)}={TOKEN}"
        status, _, body = raw_request(base, "GET", "/health", headers={"Cookie": fresh})
        assert status == 200 and json_of(body)["status"] == "ok"
        # a wrong token in the URL is not rescued by a good cookie: what the URL says is what is checked
        assert raw_request(base, "GET", "/health?token=wrong", headers={"Cookie": fresh})[0] == 401


@pytest.mark.parametrize("path, location", [
    ("//evil.example/", "/evil.example/"),
    ("//evil.example/c/x?a=1", "/evil.example/c/x?a=1"),
    ("/\\evil.example/", "/evil.example/"),
    ("/%2F%2Fevil.example/", "/evil.example/"),
    ("/%5Cevil.example", "/evil.example"),
    ("/%09/evil.example", "/%09/evil.example"),  # a browser drops a raw tab: "/\t/x" would become "//x"
    ("/c/abc", "/c/abc"),
])
def test_the_redirect_that_drops_the_token_stays_on_this_server(echo_model, data_dir, path, location):
    with serve_app(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as base:
        joiner = "&" if "?" in path else "?"
        status, headers, _ = raw_request(base, "GET", f"{path}{joiner}token={TOKEN}")
        assert status == 303
        assert headers["location"] == location
        assert headers["location"].startswith("/") and not headers["location"].startswith(("//", "/\\"))
