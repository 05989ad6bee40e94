"""A server's question on the page: server-everything asks during a tool call, a person answers in Chromium.

A scripted model calls `trigger-elicitation-request` (server-everything over stdio); the form
appears inside the running tool's card, built from the requested schema; a bad answer is
refused with a reason and the question stays open; an accepted answer reaches the server (the
card shows the tool's result with the submitted values) and a reload draws the same card. A
second turn declines, and a late answer is refused with 409.
"""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from sidespin.tools import ToolCall
from tests.browser.conftest import ARTIFACTS, start_chat
from tests.browser.test_reload import message_html, wait_done
from tests.conftest import serve_app
from tests.mcp.mcp_harness import EVERYTHING, HAVE_NODE, NO_NODE, NODE
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

ASK = "trigger-elicitation-request"
SCRIPT = [
    ["I will ask you.", ToolCall(ASK, {})],
    ["Thanks for answering."],
    ["Once more.", ToolCall(ASK, {})],
    ["You declined."],
]


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"everything": {
        "type": "stdio", "command": str(NODE), "args": [str(EVERYTHING), "stdio"]}}}))
    with serve_app(ScriptedBackend(SCRIPT, supports_tools=True), tmp_path, tool_mode="native",
                   approval="auto") as url:
        yield url


def test_a_person_answers_a_server_question_in_the_tool_card(page, app_url):
    start_chat(page, app_url, "Ask me something")
    form = page.wait_for_selector(f'#turn-0 [data-tool="{ASK}"][data-status="running"] form.question-form')
    assert "everything asks:" in page.inner_text("#turn-0 .question-message").lower()
    assert page.input_value('input[name="field.firstLine"]') == "It was a dark and stormy night."  # default
    assert page.input_value('input[name="field.integer"]') == "42"
    assert page.get_attribute('input[name="field.integer"]', "max") == "100"
    assert page.get_attribute('input[name="field.email"]', "type") == "email"
    assert page.locator('select[name="field.titledSingleSelectEnum"] option').all_inner_texts() == [
        "—", "Superman", "Green Lantern", "Wonder Woman"]  # not required: it may be left empty
    assert page.input_value('select[name="field.titledSingleSelectEnum"]') == "hero-1"  # the default
    assert page.locator(".question-form .field .required").count() == 1  # name is the one required field

    page.fill('input[name="field.integer"]', "1000")  # out of range, and the required name is empty
    form.query_selector("button.accept").click()
    page.wait_for_selector(".question-problems")
    problems = page.inner_text(".question-problems")
    assert "an answer is required" in problems and "at most 100" in problems
    assert page.input_value('input[name="field.integer"]') == "1000"  # what was typed is kept

    page.fill('input[name="field.name"]', "Ada Lovelace")
    page.fill('input[name="field.integer"]', "7")
    page.check('input[name="field.check"]')
    page.select_option('select[name="field.untitledMultipleSelectEnum"]', ["Piano", "Drums"])
    page.click(".question-form button.accept")
    wait_done(page, "turn-0")
    card = page.text_content(f'#turn-0 [data-tool="{ASK}"]')
    assert "answered: accept" in card and "name=Ada Lovelace" in card
    assert "- Name: Ada Lovelace" in card and "- Favorite Integer: 7" in card and "Agreed to terms: true" in card
    live = message_html(page, "turn-0")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "elicitation-answered.png"), full_page=True)

    page.fill("#msg", "Ask again")
    page.press("#msg", "Enter")
    page.wait_for_selector("#turn-1 form.question-form")
    qid = page.get_attribute('#turn-1 form.question-form input[name="qid"]', "value")
    page.click("#turn-1 .question-form button.decline")
    wait_done(page, "turn-1")
    card = page.text_content(f'#turn-1 [data-tool="{ASK}"]')
    assert "declined" in card and "User declined" in card
    declined = message_html(page, "turn-1")

    late = page.request.post(f"{app_url}/question", form={"qid": qid, "action": "accept"})
    assert late.status == 409 and "closed" in late.json()["error"]

    page.reload()
    page.wait_for_selector("#turn-1 .turn-state", state="attached")
    assert message_html(page, "turn-0") == live
    assert message_html(page, "turn-1") == declined
