"""2. No state changes from another site: what changes anything takes POST only, and a page elsewhere is refused.

A link or an `<img>` on any site makes the browser send a GET with no Origin: every route that
changes something answers it 405 and does nothing. A request another site's page made is refused
whatever its method, told by its Origin, by `Sec-Fetch-Site` (on localhost every port is the same
site, so "same-site" is another app too) or, from a browser that sends neither, by its Referer.
The OAuth callback alone takes a GET from elsewhere: the authorization server sends the browser
there, and its single-use state is what protects it (test_oauth_callback.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from starlette.testclient import TestClient

from sidespin.config import Settings
from sidespin.web.app import create_app
from tests.conftest import in_process
from tests.security.conftest import app_request, json_of

FORM = {"Content-Type": "application/x-www-form-urlencoded"}

# Every route that answers GET, and why that changes nothing.
READ_ONLY = {
    "/", "/c/{cid}",  # the page (the first visit makes the first, empty conversation)
    "/stream", "/pulse", "/logs-stream", "/servers/live",  # event streams
    "/tools", "/health", "/logs", "/export", "/search", "/trash", "/servers/panel",
    "/composer/resources", "/composer/prompts", "/composer/template_form", "/composer/prompt_form",
    "/oauth/callback",  # a redirect from the authorization server: its single-use state protects it
    "/mcp",  # the MCP protocol's own GET (a stream of server messages; none in stateless mode)
    "/apps/view",  # an MCP App of a result, to draw: read from the shelf (or its server) as the page is read
}

CHANGES_STATE = [
    "/new", "/send?cid={cid}&msg=hello", "/poke?cid={cid}", "/approve?cid={cid}&call_id=c1&choice=ya",
    "/rerun?cid={cid}&call_id=c1", "/cancel?cid={cid}&call_id=c1", "/stop?cid={cid}", "/oauth/vault/sign-in", "/edit_message?cid={cid}&turn=0&text=x",
    "/regenerate?cid={cid}&turn=0", "/fork?cid={cid}&turn=0", "/import", "/rename?cid={cid}&title=pwned",
    "/delete?cid={cid}", "/restore?cid={cid}", "/servers/restart?server=vault&cid={cid}",
    "/servers/tool?cid={cid}&tool=say_hello", "/composer/chip?server=s&uri=u", "/composer/prompt?server=s&name=n",
    "/question?qid=q&action=accept", "/model?cid={cid}&model=x", "/mcp-tool-executor",
    "/apps/call", "/apps/answer", "/apps/context",
]


def conversations(data_dir: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in (data_dir / "conversations").glob("*.md")}


def new_conversation(client: TestClient, headers: dict[str, str] | None = None) -> tuple[int, str]:
    status, answer, _ = app_request(client, "POST", "/new", b"", {**FORM, **(headers or {})})
    return status, answer.get("location", "").rsplit("/", 1)[-1]


def test_only_routes_that_change_nothing_answer_get():
    answering_get = {route.path for route in create_app(Settings()).routes if "GET" in (getattr(route, "methods", None) or ())}
    assert answering_get == READ_ONLY


def test_a_get_to_a_route_that_changes_state_is_a_405_and_changes_nothing(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        _, cid = new_conversation(client)
        before = conversations(data_dir)
        for path in CHANGES_STATE:
            status, headers, body = app_request(client, "GET", path.format(cid=cid))
            assert status == 405, f"GET {path} answered {status}"
            assert "POST" in headers.get("allow", "") and json_of(body)["status"] == "error"
        assert conversations(data_dir) == before  # no conversation made, no message sent, nothing renamed


@pytest.mark.parametrize("foreign", [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},  # another port of localhost
    {"Origin": "http://attacker.example"},
    {"Referer": "http://attacker.example/page.html"},  # a browser that sends neither Origin nor Sec-Fetch-Site
])
def test_a_request_from_another_site_is_refused_whatever_its_method(echo_model, data_dir, foreign):
    with in_process(echo_model, data_dir) as client:
        _, cid = new_conversation(client)
        before = conversations(data_dir)
        assert new_conversation(client, foreign)[0] == 403
        status, _, body = app_request(client, "POST", "/send", f"cid={cid}&msg=hello".encode(), {**FORM, **foreign})
        assert status == 403 and "refused" in json_of(body)["error"]
        for path in ("/health", f"/export?cid={cid}", f"/c/{cid}"):
            assert app_request(client, "GET", path, headers=foreign)[0] == 403, path
        assert conversations(data_dir) == before


def test_the_page_itself_and_a_typed_address_still_work(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        base = str(client.base_url).rstrip("/")
        own = {"Sec-Fetch-Site": "same-origin", "Origin": base, "Referer": base + "/c/x"}
        status, cid = new_conversation(client, own)
        assert status == 303 and cid
        status, _, _ = app_request(client, "POST", "/send", f"cid={cid}&msg=hello".encode(), {**FORM, **own})
        assert status == 200
        typed = {"Sec-Fetch-Site": "none"}  # the address bar, a bookmark
        assert app_request(client, "GET", f"/c/{cid}", headers=typed)[0] == 200


def test_the_oauth_callback_alone_takes_a_get_from_another_site(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        status, _, body = app_request(client, "GET", "/oauth/callback?code=x&state=guess",
                                      headers={"Sec-Fetch-Site": "cross-site", "Referer": "http://auth.example/"})
        assert status == 400 and b"Sign-in failed" in body  # reached: refused by its state, not by the guard
        status, _, _ = app_request(client, "POST", "/oauth/callback?code=x&state=guess", b"",
                                   {"Sec-Fetch-Site": "cross-site"})
        assert status == 403
