"""A hostile MCP App (tests/security/servers/hostile_app_server.py) in headless Chromium: whatever it tries,
it stays in its sandbox and the page keeps working.

- it cannot read or write the page, its cookies or storage, nor fetch the chat server (another origin,
  an opaque one, under a CSP with no connect-src), nor open a popup or navigate the top window;
- a message it posts straight to the page, past the sandbox, is ignored;
- it cannot call another server's tool; a tool that needs approval waits for the person and runs only if
  they allow it; a tool only for apps it may call;
- a flood of messages stops the app, not the page;
- the bridge's routes refuse a request from the app's origin or the sandbox's, whatever it carries.

The same server's app also tells the model something (ui/update-model-context): the next turns carry it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from sidespin.tools import ToolCall
from tests.browser.conftest import browser, local_context, start_chat, wait_for  # noqa: F401 (browser: a fixture)
from tests.conftest import log_lines, serve_app
from tests.scripted import ScriptedBackend
from tests.security.conftest import raw_request

pytestmark = [pytest.mark.browser]

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_app_server.py"


class Hostile:
    """The app served with the hostile server and a victim server; what their tools ran is in `record`."""

    def __init__(self, url: str, record: Path, model: ScriptedBackend) -> None:
        self.url, self.record, self.model = url, record, model

    def ran(self) -> list[str]:
        return self.record.read_text().split() if self.record.exists() else []


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Iterator[Hostile]:
    folder = tmp_path_factory.mktemp("hostile")
    record = folder / "ran.txt"
    (folder / "mcp.json").write_text(json.dumps({"servers": {
        "hostile": {"command": sys.executable, "args": [str(HOSTILE), str(record)]},
        "victim": {"command": sys.executable, "args": [str(HOSTILE), str(record), "victim"]},
    }}))
    address: list[str] = []

    def model(messages):
        last = messages[-1]
        if last["role"] == "user" and last["content"].startswith("attack "):
            return [ToolCall("open_app", {"attack": last["content"].split()[1], "main": address[0]})]
        return ["Opened." if last["role"] == "tool" else "Still here."]

    backend = ScriptedBackend([model] * 60, supports_tools=True)
    with serve_app(backend, folder, tool_mode="native", approval="auto") as url:
        address.append(url)
        yield Hostile(url, record, backend)


@pytest.fixture
def page(browser):  # noqa: F811 (the browser fixture)
    context, outside = local_context(browser, 900)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.said = []  # what the app printed
    page.on("console", lambda message: page.said.append(message.text) if message.text.startswith("HOSTILE") else None)
    yield page
    pages = len(context.pages)
    context.close()
    assert outside == [], f"the page tried to leave the machine: {outside}"
    assert pages == 1, "the app opened another window"


def attack(page, hostile: Hostile, name: str) -> None:
    """A new conversation whose model opens the hostile app with `attack`, drawn and initialized (and maybe
    already stopped or closed, by then)."""
    start_chat(page, hostile.url, f"attack {name}")
    wait_for(page, "['ready', 'stopped', 'closed'].includes(document.querySelector('#turn-0 .app-view')?.dataset.state)")


def outcome(page, what: str) -> str:
    """What the app printed for `what` (waits for it)."""
    prefix = f"HOSTILE {what}: "
    deadline = time.monotonic() + 30
    while not any(line.startswith(prefix) for line in page.said):
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never said {what!r}; it said {page.said}")
        page.wait_for_timeout(50)
    return next(line for line in page.said if line.startswith(prefix))[len(prefix):]


def still_works(page, hostile: Hostile) -> None:
    """The page answers a message as before: the app broke nothing of it."""
    assert page.url.startswith(hostile.url + "/c/") and "navigated" not in page.url
    page.fill("#msg", "hello again")
    page.press("#msg", "Enter")
    wait_for(page, "!!document.querySelector('#turn-1 .turn-state[data-state=\"done\"]')")
    assert "Still here." in page.inner_text("#turn-1")


def test_an_app_cannot_reach_the_page_the_server_or_the_top_window(page, hostile):
    before = hostile.ran()
    with log_lines("REQUEST_REFUSED") as refused:
        attack(page, hostile, "escape")
        assert outcome(page, "escape") == "done"
    assert refused == []  # its requests never left the browser: the CSP stopped them, not the server's guard
    for what in ("top-document", "parent-document", "top-write", "cookie", "storage", "top-storage"):
        assert outcome(page, what).startswith("blocked SecurityError"), (what, page.said)
    assert outcome(page, "fetch") == "blocked TypeError"  # no connect-src: the chat server is out of reach
    assert outcome(page, "fetch-answer") == "blocked TypeError"
    assert outcome(page, "popup") in ("got null", "blocked SecurityError")
    assert "PWNED" not in page.inner_text("body")
    still_works(page, hostile)  # a whole turn later, a forged call would have been asked long since
    assert page.locator(".app-ask").count() == 0  # the message posted past the sandbox was ignored
    assert hostile.ran() == before + ["open_app"]


def test_an_app_cannot_call_another_servers_tool(page, hostile):
    before = hostile.ran()
    attack(page, hostile, "other-server")
    said = json.loads(outcome(page, "other-server"))
    assert "only the tools of its own server" in said["message"]
    assert hostile.ran() == before + ["open_app"]  # victim_tool never ran
    still_works(page, hostile)


def test_an_app_call_that_needs_approval_waits_for_the_person(page, hostile):
    before = hostile.ran()
    attack(page, hostile, "no-approval")
    ask = page.wait_for_selector("#turn-0 .app-ask")
    assert "wipe" in ask.inner_text()
    assert hostile.ran() == before + ["open_app"]  # the server chose to ask, not to run: nothing ran
    page.click("#turn-0 .app-ask button.app-refuse")
    said = json.loads(outcome(page, "no-approval"))
    assert "you refused" in said["message"]
    assert hostile.ran() == before + ["open_app"]
    still_works(page, hostile)


def test_an_app_may_call_a_tool_only_for_apps_which_the_model_is_not_offered(page, hostile):
    tools = json.loads(raw_request(hostile.url, "GET", "/tools")[2])
    assert "app_only" not in [tool["name"] for tool in tools["tools"]]
    before = hostile.ran()
    attack(page, hostile, "app-only")
    said = json.loads(outcome(page, "app-only"))
    assert said["content"][0]["text"] == "app_only ran"
    assert hostile.ran() == before + ["open_app", "app_only"]


def test_a_flood_of_messages_stops_the_app_and_not_the_page(page, hostile):
    attack(page, hostile, "flood")
    wait_for(page, "document.querySelector('#turn-0 .app-view').dataset.state === 'stopped'")
    assert "sent more than" in page.inner_text("#turn-0 .app-view")
    assert page.locator("#turn-0 .app-frame").count() == 0
    still_works(page, hostile)


def test_the_bridge_routes_refuse_the_apps_origin_and_the_sandboxs(hostile):
    body = json.dumps({"cid": "x", "ask": "ask_x", "allow": True}).encode()
    for origin in ("null", "http://127.0.0.1:1"):
        status, _, answer = raw_request(hostile.url, "POST", "/apps/answer", body,
                                        {"Origin": origin, "Content-Type": "application/json"})
        assert status == 403, answer
    status, headers, _ = raw_request(hostile.url, "GET", "/")
    assert status in (200, 303, 307)


def test_what_an_app_tells_the_model_reaches_it_in_the_next_turn(page, hostile):
    attack(page, hostile, "context")
    assert outcome(page, "context") == "{}"
    still_works(page, hostile)
    system = hostile.model.calls[-1][0]
    assert system["role"] == "system" and "The app's counter stands at 31337." in system["content"]
    page.reload()  # kept in the transcript: a reload, a later turn still carry it
    page.fill("#msg", "and now?")
    page.press("#msg", "Enter")
    wait_for(page, "!!document.querySelector('#turn-2 .turn-state[data-state=\"done\"]')")
    assert "31337" in hostile.model.calls[-1][0]["content"]


def test_an_app_that_asks_to_close_is_told_before_its_frame_goes(page, hostile):
    attack(page, hostile, "close")
    wait_for(page, "document.querySelector('#turn-0 .app-view').dataset.state === 'closed'")
    assert page.locator("#turn-0 .app-frame").count() == 0
    # the app answered ui/resource-teardown before its frame went (its console may go with the frame)
    assert page.get_attribute("#turn-0 .app-view", "data-teardown") == "answered"
    assert "the app closed (the app asked to close)" in page.inner_text("#turn-0 .app-view")
