"""A reloaded conversation looks exactly like the live one: the same HTML, from the one renderer.

A scripted model (so the turn is the same every run) plays, in real headless Chromium against
the real app, a turn with a thought, a call it cannot read, a tool that fails, a slow tool and a
tool that returns an image; then a turn whose call waits for approval and goes on once approved.
Each assistant message is snapshotted live once its turn is over, the page is reloaded from the
transcript, and the two snapshots must be equal.
"""

from __future__ import annotations

import re

import base64
import time
from typing import Iterator

import pytest

from sidespin.llm.base import Delta
from sidespin.protocol import format_block
from sidespin.tools import ToolCall, ToolResult, tool
from tests.browser.conftest import ARTIFACTS, wait_for
from tests.conftest import app_for, running
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

# a 1×1 PNG, as an MCP server would send it
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000" "1f15c4890000000d49444154789c6360f8cfc000000301010018dd8db00000000049454e44ae426082"
)).decode()


@tool(read_only=True)
def slow_lookup(city: str) -> str:
    """Looks a city up, slowly."""
    time.sleep(1.2)
    return f"{city}: 12 °C, light rain"


@tool(read_only=True)
def read_sensor() -> str:
    """Reads the sensor."""
    raise RuntimeError("the sensor is offline")


@tool(read_only=True)
def snapshot() -> ToolResult:
    """Takes a picture."""
    return ToolResult(ToolCall("snapshot", {}), output="a 1×1 picture", attachments=[
        {"type": "image", "mimeType": "image/png", "data": PIXEL}])


@tool
def send_note(text: str) -> str:
    """Sends a note (asks first: it is not read-only)."""
    return f"sent: {text}"


SCRIPT = [
    [
        Delta(thinking="The person wants the weather, "), Delta(thinking="the sensor and a picture.\n\nThree calls."),
        "Let me check three things.\n\n",
        format_block(ToolCall("slow_lookup", {"city": "Lyon"})),
        format_block(ToolCall("read_sensor", {})),
        format_block(ToolCall("snapshot", {})),
        "<mcp-request><tool>no name here</tool></mcp-request>",
    ],
    ["Lyon has **12 °C** and light rain.\n\n", "The sensor is offline; the picture came back.\n\n- one\n- two\n"],
    ["I will send it.", format_block(ToolCall("send_note", {"text": "buy milk"}))],
    ["Sent: *buy milk*."],
]


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    app = app_for(ScriptedBackend(SCRIPT, delay=0.01), tmp_path, tool_mode="xml")
    with running(app) as url:
        registry = app.state.engine.registry
        for extra in (slow_lookup, read_sensor, snapshot, send_note):
            registry.add(extra)
        yield url


# The message's HTML without the whitespace-only text nodes between elements (the server indents a
# fragment by its depth in the response, which differs between an update and a whole page; a browser
# draws nothing for them outside <pre>).
MESSAGE_HTML = """(id) => {
  const copy = document.getElementById(id).querySelector('.bubble').cloneNode(true);
  const walker = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT);
  const blank = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.textContent.trim() && !node.parentElement.closest('pre')) blank.push(node);
  }
  blank.forEach((node) => node.remove());
  return copy.innerHTML;
}"""


def message_html(page, turn_id: str) -> str:
    return page.evaluate(MESSAGE_HTML, turn_id)


def wait_done(page, turn_id: str) -> None:
    wait_for(page, f"!!document.querySelector('#{turn_id} .turn-state[data-state=\"done\"]')")
    page.wait_for_timeout(300)  # htmx settles swapped content (its settle classes go after 20 ms)


def test_a_reloaded_conversation_is_drawn_exactly_as_it_was_seen_live(page, app_url):
    page.goto(app_url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    page.fill("#msg", "Weather in Lyon, the sensor, and a picture?")
    page.press("#msg", "Enter")
    wait_done(page, "turn-0")
    first = message_html(page, "turn-0")
    assert page.evaluate("window.__leaks") == []  # the unreadable block is told of; what it said stays folded
    for part in ("thought", 'data-status="done"', 'data-status="error"', "the sensor is offline",
                 "could not read a tool call", "data:image/png;base64,", "Lyon has <strong>12 °C</strong>"):
        assert part in first, part
    took = re.search(r"done · (\d+\.\d+) s", page.inner_text('[data-tool="slow_lookup"] .tool-status'))
    assert took and float(took.group(1)) >= 1.2  # its duration is shown (it sleeps 1.2 s; a busy machine, longer)

    page.fill("#msg", "Send a note: buy milk")
    page.press("#msg", "Enter")
    page.wait_for_selector('#turn-1 [data-tool="send_note"][data-status="waiting"]')
    wait_done(page, "turn-1")  # the card comes with the turn's last swap: let htmx settle it first
    waiting = message_html(page, "turn-1")
    page.reload()
    page.wait_for_selector('#turn-1 [data-tool="send_note"][data-status="waiting"]')
    assert message_html(page, "turn-0") == first
    assert message_html(page, "turn-1") == waiting  # waiting for a choice: the same buttons after a reload

    page.click('#turn-1 button.approve.yo')
    wait_for(page, "document.querySelector('#turn-1').innerText.includes('Sent: buy milk')")
    wait_done(page, "turn-1")
    second = message_html(page, "turn-1")
    assert 'data-status="done"' in second and "I will send it." in second
    assert page.locator(".msg.assistant").count() == 2  # the approved turn went on in its own message
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "live-turns.png"), full_page=True)

    page.reload()
    page.wait_for_selector("#turn-1 .turn-state", state="attached")
    assert message_html(page, "turn-0") == first
    assert message_html(page, "turn-1") == second
    page.screenshot(path=str(ARTIFACTS / "reloaded-turns.png"), full_page=True)
    page.click("#turn-0 .notice.malformed summary")  # a person who wants to see what the model wrote can
    assert "<tool>no name here</tool>" in page.inner_text("#turn-0 .notice.malformed")
