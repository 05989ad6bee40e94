"""A long tool call on the page: its progress on the card, a person cancels it there, and a task's stages.

server-everything runs over stdio, as `mcp.json` names it. A scripted model calls
`trigger-long-running-operation` (30 steps of a second, each a `notifications/progress`): the
running card shows a bar and "N of 30" that move, a card opened meanwhile stays open while the
news comes, and its Cancel ends the call (the server gets `notifications/cancelled`); the card
and the transcript say it was cancelled, the model is told, and a reload draws the same card.
Then `simulate-research-query`, a task of the 2025-11-25 protocol: its stages show on the card
while it runs, and its report is the result. Last, a call that runs as a task on sidespin's own
`/mcp` (2026-07-28): its status on the card, and its Cancel cancels the task on that server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from sidespin.tools import ToolCall
from tests.browser.conftest import ARTIFACTS, start_chat, wait_for
from tests.browser.test_reload import message_html, wait_done
from tests.conftest import serve_app
from tests.mcp.mcp_harness import EVERYTHING, HAVE_NODE, NO_NODE, NODE, endpoint_app, serve_in_thread, tasks_endpoint
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

LONG = "trigger-long-running-operation"
TASK = "simulate-research-query"


def told(messages: list[dict]) -> list[str]:
    """What the model read of the last tool result, as its next answer (so the test sees what it was told)."""
    return [f"The tool said: {messages[-1]['content']}"]


SCRIPT = [
    ["Starting the long one.", ToolCall(LONG, {"duration": 30, "steps": 30})],
    told,
    ["Researching.", ToolCall(TASK, {"topic": "tides"})],
    ["Here is the report."],
]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"everything": {
        "type": "stdio", "command": str(NODE), "args": [str(EVERYTHING), "stdio"]}}}))
    with serve_app(ScriptedBackend(SCRIPT, supports_tools=True), tmp_path, tool_mode="native",
                   approval="auto") as url:
        yield url, tmp_path


def progress_value(page, card: str) -> float:
    return page.evaluate(f"(document.querySelector('{card} progress.call-progress') || {{value: 0}}).value")


def test_progress_shows_on_the_card_and_a_person_cancels_the_call_there(page, served):
    url, data = served
    start_chat(page, url, "Run the long operation")
    card = f'#turn-0 [data-tool="{LONG}"]'
    page.wait_for_selector(f'{card}[data-status="running"] progress.call-progress')
    assert page.get_attribute(f"{card} progress.call-progress", "max") == "30"
    assert " of 30" in page.inner_text(f"{card} .progress-text")
    first = progress_value(page, card)
    page.click(f"{card} summary .tool-name")  # a person opens the running card to read its arguments
    wait_for(page, f"(document.querySelector('{card} progress.call-progress') || {{value: 0}}).value > {first}")
    assert page.evaluate(f"document.querySelector('{card}').open"), "the news replaced the open card"
    assert '"steps": 30' in page.inner_text(f"{card} .args")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "long-call-progress.png"), full_page=True)

    page.click(f"{card} button.cancel-call")
    page.wait_for_selector(f'{card}[data-status="error"]')
    assert page.inner_text(f"{card} .tool-status").startswith("cancelled")
    assert page.locator(f"{card} button.cancel-call").count() == 0
    wait_done(page, "turn-0")
    assert "cancelled by you before it finished" in page.inner_text("#turn-0 .body")  # what the model was told
    live = message_html(page, "turn-0")

    page.reload()
    page.wait_for_selector("#turn-0 .turn-state", state="attached")
    assert message_html(page, "turn-0") == live
    transcript = data / "conversations" / f"{page.url.rsplit('/', 1)[-1]}.md"
    assert "cancelled by you before it finished" in transcript.read_text(encoding="utf-8")

    late = page.request.post(f"{url}/cancel", form={"cid": page.input_value("#composer [name=cid]"),
                                                    "call_id": page.get_attribute(card, "data-call-id")})
    assert late.status == 409

    page.fill("#msg", "Now research tides")
    page.press("#msg", "Enter")
    task_card = f'#turn-1 [data-tool="{TASK}"]'
    page.wait_for_selector(f"{task_card} .call-news[data-task]")
    wait_for(page, f"document.querySelector('{task_card}').textContent.includes('working · ')")
    wait_done(page, "turn-1")
    assert page.get_attribute(task_card, "data-status") == "done"
    assert "Research Report: tides" in page.text_content(f"{task_card} .result")


@pytest.fixture
def served_tasks(tmp_path: Path) -> Iterator[tuple[str, object]]:
    """The app with one MCP server: sidespin's own /mcp serving the task fixtures, in this process (so the test
    sees the server's tasks)."""
    endpoint = tasks_endpoint()
    script = [["Computing.", ToolCall("slow_compute", {"seconds": 60, "label": "the totals"})], told]
    with serve_in_thread(endpoint_app(endpoint)) as port:
        (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"long": {"url": f"http://127.0.0.1:{port}/mcp"}}}))
        with serve_app(ScriptedBackend(script, supports_tools=True), tmp_path, tool_mode="native",
                       approval="auto") as url:
            yield url, endpoint


def test_a_call_that_runs_as_a_task_shows_its_status_and_cancelling_it_cancels_the_task(page, served_tasks):
    url, endpoint = served_tasks
    start_chat(page, url, "Compute the totals")
    card = '#turn-0 [data-tool="slow_compute"]'
    page.wait_for_selector(f"{card} .call-news[data-task]")
    wait_for(page, f"document.querySelector('{card} .progress-text').textContent.startsWith('working · computing')")
    task_id = page.get_attribute(f"{card} .call-news", "data-task")
    assert endpoint.tasks.get(task_id).status == "working"
    page.click(f"{card} button.cancel-call")
    page.wait_for_selector(f'{card}[data-status="error"]')
    wait_done(page, "turn-0")
    assert page.inner_text(f"{card} .tool-status").startswith("cancelled")
    assert endpoint.tasks.get(task_id).status == "cancelled"  # tasks/cancel reached the server before the card said so
