"""MCP Apps drawn in the chat, in headless Chromium, with the ext-apps example servers from npm over stdio.

`server-basic-vanillajs`: a scripted model calls `get-time`; its app appears in the tool card, framed from
the second origin; its "Get Server Time" button calls the tool through the page (approved by the person
in the card) and shows the new time; its "Send Message" button sends a message the model receives in
the next turn; a reload draws the app again from the transcript without calling the tool.
`server-cohort-heatmap`: a control of its app (the metric) calls the tool with new arguments through
the page and draws the answer.
"""

from __future__ import annotations

import json
import re
import time
from typing import Iterator

import pytest

from sidespin.tools import ToolCall
from tests.browser.conftest import ARTIFACTS, start_chat, wait_for
from tests.browser.test_reload import wait_done
from tests.conftest import log_lines, serve_app
from tests.mcp.mcp_harness import HAVE_NODE, NO_NODE, NODE, NODE_PREFIX
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

EXAMPLES = NODE_PREFIX / "node_modules" / "@modelcontextprotocol"
BASIC = EXAMPLES / "server-basic-vanillajs" / "dist" / "index.js"
COHORT = EXAMPLES / "server-cohort-heatmap" / "dist" / "index.js"
ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def stdio(script) -> dict:
    return {"command": str(NODE), "args": [str(script), "--stdio"]}


@pytest.fixture
def examples(tmp_path) -> Iterator[tuple[str, ScriptedBackend]]:
    if not (HAVE_NODE and BASIC.exists() and COHORT.exists()):
        pytest.skip(NO_NODE)
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"basic": stdio(BASIC), "cohort": stdio(COHORT)}}))
    said: list[str] = []

    def heard(messages):
        said.append(json.dumps(messages))
        return ["I read what the app sent."]

    backend = ScriptedBackend([
        ["Here is the time.", ToolCall("get-time", {})],
        ["The app shows it."],
        heard,
        ["Here is the heatmap.", ToolCall("get-cohort-data", {"metric": "retention"})],
        ["Drawn."],
    ], supports_tools=True)
    backend.said = said
    with serve_app(backend, tmp_path, tool_mode="native") as url:
        yield url, backend


def app_frame(page, turn: str):
    """The app inside its card: the sandbox's frame, then the app's own inside it."""
    return page.frame_locator(f"#{turn} .app-frame").frame_locator("iframe")


def test_the_basic_app_appears_calls_its_tool_through_the_page_and_talks_to_the_model(page, examples):
    url, backend = examples
    start_chat(page, url, "What time is it on the server?")
    page.click('#turn-0 [data-tool="get-time"] button.approve.yo')  # the model's call waits for the person
    page.wait_for_selector('#turn-0 [data-tool="get-time"][data-status="done"]')
    wait_done(page, "turn-0")

    wait_for(page, "document.querySelector('#turn-0 [data-tool=\"get-time\"]').open")  # the app in sight
    frame_src = page.get_attribute("#turn-0 .app-frame", "src")
    assert frame_src.startswith("http://127.0.0.1:") and not frame_src.startswith(url)  # another origin
    app = app_frame(page, "turn-0")
    shown = app.locator("#server-time")
    wait_for(page, "document.querySelector('#turn-0 .app-view').dataset.state === 'ready'")
    first = shown.inner_text(timeout=30_000)
    assert ISO_TIME.match(first), first  # the tool's result, handed to the app by the page
    # the app says how tall it is (ui/notifications/size-changed): the frame takes that height, not its first
    wait_for(page, "document.querySelector('#turn-0 .app-frame').style.height !== '360px'")

    app.locator("#get-time-btn").click()  # the app calls get-time through the page: the person is asked
    ask = page.wait_for_selector("#turn-0 .app-ask")
    assert "get-time" in ask.inner_text()
    page.click("#turn-0 .app-ask button.app-allow")
    wait_for(page, "document.querySelector('#turn-0 .app-line.ran') !== null")
    again = shown.inner_text()
    assert ISO_TIME.match(again) and again != first  # the new answer, drawn by the app
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-basic.png"), full_page=True)

    with log_lines("TOOL_CALL_START") as started:
        page.reload()
        page.wait_for_selector("#turn-0 .app-frame")
        wait_for(page, "document.querySelector('#turn-0 .app-view').dataset.state === 'ready'")
        assert ISO_TIME.match(app_frame(page, "turn-0").locator("#server-time").inner_text(timeout=30_000))
    assert started == []  # drawn again from the transcript: the tool was not called

    app = app_frame(page, "turn-0")
    app.locator("#message-text").fill("Please remember the number 4817.")
    app.locator("#send-message-btn").click()  # ui/message: sent from the composer, as if typed
    wait_done(page, "turn-1")
    assert "Please remember the number 4817." in page.inner_text("#chat .msg.user >> nth=-1")
    assert "Please remember the number 4817." in backend.said[-1]  # the model received it


def test_a_control_of_the_cohort_app_calls_its_tool_with_new_arguments(page, examples):
    url, backend = examples
    backend.turns = backend.turns[3:]
    start_chat(page, url, "Show me the cohort retention")
    page.click('#turn-0 [data-tool="get-cohort-data"] button.approve.yO')  # yes, and always for this tool
    page.wait_for_selector('#turn-0 [data-tool="get-cohort-data"][data-status="done"]')
    wait_done(page, "turn-0")
    wait_for(page, "document.querySelector('#turn-0 .app-view').dataset.state === 'ready'")
    app = app_frame(page, "turn-0")
    # on load the app asks for its data itself: remembered, so no question waits
    wait_for(page, "document.querySelectorAll('#turn-0 .app-line.ran').length >= 1")
    ran = page.locator("#turn-0 .app-line.ran").count()
    heatmap = app.locator("body")
    before = heatmap.inner_text()
    metric = app.locator("select").first
    options = metric.locator("option").all_inner_texts()
    assert len(options) > 1, options
    metric.select_option(index=1)
    wait_for(page, f"document.querySelectorAll('#turn-0 .app-line.ran').length > {ran}")
    assert page.locator("#turn-0 .app-ask").count() == 0
    deadline = time.monotonic() + 30
    while heatmap.inner_text() == before:  # the tool's new answer, drawn by the app
        assert time.monotonic() < deadline, "the heatmap did not change"
        page.wait_for_timeout(50)
    assert options[1] in heatmap.inner_text() or metric.input_value() != ""
    page.screenshot(path=str(ARTIFACTS / "app-cohort.png"), full_page=True)
