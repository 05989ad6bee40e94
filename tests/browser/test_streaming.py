"""A long answer streamed a token at a time, in real headless Chromium: the page takes the lean messages
(text appended to the answer's tail, completed blocks put in place by app.js) and ends drawing exactly what a
reload draws."""

from __future__ import annotations

import re
from typing import Iterator

import pytest

from tests.browser.conftest import wait_for
from tests.browser.test_reload import message_html, wait_done
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

PARAGRAPHS = [
    "## Table tennis, briefly",
    "The ball crossed the net, spun, and came back faster than anyone expected. A short serve keeps the "
    "receiver from attacking the first ball.",
    "- serve short\n- push long\n- loop the third ball",
    "Written as HTML a loop would be <b>topspin</b> & a chop 2 < 3, but it is only text.",
    "```python\nfor point in range(11):\n    print('ping', point)\n```",
    "  Footwork matters more than the bat: be in place before the ball arrives.",
    "Most points at club level are lost on the return of serve, not in the rally.",
]
ANSWER = "\n\n".join(PARAGRAPHS) + "\n"
TOKENS = re.findall(r" ?[^\s]{1,6}|\n|\s", ANSWER)

# every SSE message a live answer's stream brings, by type, counted before htmx handles it
COUNT_MESSAGES = """() => {
  window.__sse = {};
  document.addEventListener('htmx:sseBeforeMessage', (e) => {
    window.__sse[e.detail.type] = (window.__sse[e.detail.type] || 0) + 1;
  });
}"""


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    assert "".join(TOKENS) == ANSWER
    with serve_app(ScriptedBackend([TOKENS], delay=0.01), tmp_path) as url:
        yield url


def test_an_answer_streamed_a_token_at_a_time_is_drawn_live_as_a_reload_draws_it(page, app_url):
    page.goto(app_url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    page.evaluate(COUNT_MESSAGES)
    page.fill("#msg", "Tell me about table tennis")
    page.press("#msg", "Enter")
    wait_for(page, "(document.querySelector('#turn-0-body-tail.writing') || {}).textContent > ''")
    wait_done(page, "turn-0")
    seen = page.evaluate("window.__sse")
    assert seen.get("message", 0) > 5 and seen.get("block", 0) >= 3, seen  # text appended, blocks put in place
    live = message_html(page, "turn-0")
    shown = page.inner_text("#turn-0-body")
    assert "<b>topspin</b> & a chop 2 < 3" in shown and page.locator("#turn-0-body b").count() == 0
    assert shown.count("The ball crossed the net") == 1 and shown.count("lost on the return of serve") == 1
    assert page.locator("#turn-0-body pre code").count() == 1 and page.locator("#turn-0-body li").count() == 3

    page.reload()
    page.wait_for_selector("#turn-0 .turn-state", state="attached")
    assert message_html(page, "turn-0") == live
