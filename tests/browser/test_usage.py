"""What an answer cost, under it, live and after a reload; and a model per conversation, picked in the header,
with a bar while it loads. Real headless Chromium against the real app, two scripted models."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Iterator

import pytest

from sidespin.llm import Delta, TokenUsage
from tests.browser.conftest import ARTIFACTS, wait_for
from tests.browser.test_reload import message_html, wait_done
from tests.conftest import app_for, running
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]


class SlowLoad(ScriptedBackend):
    """A scripted model that takes a moment to load, as the embedded one does."""

    async def start(self) -> None:
        await asyncio.sleep(1.6)


def used(tokens_in: int, tokens_out: int) -> Delta:
    return Delta(finish_reason="stop", usage=TokenUsage(tokens_in, tokens_out))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    first = ScriptedBackend([["Hello from the **first** model.", used(812, 64)]], delay=0.01)
    first.context_window = 8192
    second = SlowLoad([["And this is the *second* one.", used(95, 11)]], delay=0.01)
    app = app_for(first, tmp_path, tool_mode="xml")
    with running(app) as url:
        app.state.engine.pool.add("second", second)
        yield url, tmp_path / "conversations"


def test_usage_shows_under_each_answer_live_and_after_a_reload_and_a_picked_model_answers(page, app) -> None:
    url, conversations = app
    page.goto(url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    assert page.input_value("#model-picker select") == "scripted"  # the default model

    page.fill("#msg", "Hi there")
    page.press("#msg", "Enter")
    wait_done(page, "turn-0")
    meter = page.inner_text("#turn-0-meter")
    assert meter == "812 tokens in · 64 out · context 876 / 8,192 (11%)"
    assert page.get_attribute("#turn-0-meter progress", "value") == "876"

    page.select_option("#model-picker select", "second")
    wait_for(page, "document.querySelector('#model-picker select').value === 'second'")
    page.fill("#msg", "And you?")
    page.press("#msg", "Enter")
    page.wait_for_selector('#turn-1-meter[data-state="loading"] progress:not([value])')  # a bar that only moves
    assert "loading model second…" in page.inner_text("#turn-1-meter")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#turn-1").screenshot(path=str(ARTIFACTS / "model-loading.png"))
    wait_done(page, "turn-1")
    assert "second one" in page.inner_text("#turn-1")
    assert page.inner_text("#turn-1-meter") == "95 tokens in · 11 out · context 106"  # its window is not known
    live = [message_html(page, "turn-0"), message_html(page, "turn-1")]
    page.screenshot(path=str(ARTIFACTS / "usage.png"), full_page=True)

    page.reload()
    page.wait_for_selector("#turn-1 .turn-state", state="attached")
    assert [message_html(page, "turn-0"), message_html(page, "turn-1")] == live
    assert page.input_value("#model-picker select") == "second"  # the choice is the conversation's
    transcript = (conversations / (page.url.rsplit("/", 1)[-1] + ".md")).read_text(encoding="utf-8")
    assert "🤖:[scripted]" in transcript and "🤖:[second]" in transcript
    assert transcript.index("🤖:[scripted]") < transcript.index("And you?") < transcript.index("🤖:[second]")
