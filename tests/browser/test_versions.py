"""Edit, regenerate, fork, export and import, as a person does them in real headless Chromium.

A scripted model answers every message by number ("Answer #3 to: …"), so a turn played again is
seen to be new; asked about the weather it calls `lookup`, a tool that counts its runs, so a
regenerated answer is seen to reuse the recorded result instead of running it again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from sidespin.protocol import format_block
from sidespin.tools import ToolCall, tool
from tests.browser.conftest import ARTIFACTS, wait_for
from tests.conftest import app_for, running
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

RUNS: list[str] = []


@tool(read_only=True)
def lookup(city: str) -> str:
    """Looks a city's weather up."""
    RUNS.append(city)
    return f"{city}: 12 °C (run {len(RUNS)})"


def model() -> ScriptedBackend:
    answered: list[int] = []

    def reply(messages: list[dict[str, Any]]) -> list[str]:
        answered.append(1)
        last = messages[-1]
        result = re.search(r"Lyon: 12 °C \(run \d+\)", last["content"])  # a result, sent back as xml
        if result:
            return [f"Answer #{len(answered)}: it is mild ({result.group(0)})."]
        if "weather" in last["content"].lower():
            return [format_block(ToolCall("lookup", {"city": "Lyon"}))]
        return [f"Answer #{len(answered)} to: {last['content']}"]

    return ScriptedBackend([reply] * 100, delay=0.005)


@pytest.fixture
def app(tmp_path) -> Iterator[tuple[str, Any]]:
    RUNS.clear()
    app = app_for(model(), tmp_path, tool_mode="xml")
    with running(app) as url:
        engine = app.state.engine
        engine.registry.add(lookup)
        yield url, engine.store


def wait_done(page, turn_id: str) -> None:
    wait_for(page, f"!!document.querySelector('#{turn_id} .turn-state[data-state=\"done\"]')")


def send(page, text: str, index: int) -> None:
    page.fill("#msg", text)
    page.press("#msg", "Enter")
    page.wait_for_selector(f"#turn-{index}")
    wait_done(page, f"turn-{index}")


def user_text(page, index: int) -> str:
    return page.inner_text(f"#user-{index} .user-text")


def answer(page, index: int) -> str:
    return page.inner_text(f"#turn-{index} .body").strip()


def start(page, url: str) -> str:
    page.goto(url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    return page.url.rsplit("/", 1)[1]


def test_an_edited_message_is_answered_again_and_its_old_version_stays_one_click_away(page, app):
    url, store = app
    cid = start(page, url)
    send(page, "Weather in Lyon?", 0)
    assert "Lyon: 12 °C (run 1)" in answer(page, 0) and RUNS == ["Lyon"]
    send(page, "Tell me a joke", 1)
    assert answer(page, 1) == "Answer #3 to: Tell me a joke"

    ARTIFACTS.mkdir(exist_ok=True)
    page.press("#msg", "ArrowUp")  # ↑ in the empty composer: edit the last message
    assert page.evaluate("document.activeElement.classList.contains('edit-text')")
    assert page.is_visible("#user-1 details.edit[open] textarea")
    page.fill("#user-1 textarea.edit-text", "Tell me a riddle")
    page.locator("#chat").screenshot(path=str(ARTIFACTS / "versions-editing.png"))
    with page.expect_navigation():
        page.click("#user-1 button.save-edit")
    wait_done(page, "turn-1")
    assert user_text(page, 1) == "Tell me a riddle" and answer(page, 1) == "Answer #4 to: Tell me a riddle"
    assert page.inner_text("#user-1 .versions .version-count") == "2/2"
    assert user_text(page, 0) == "Weather in Lyon?" and not page.query_selector("#user-0 .versions")

    page.reload()
    page.wait_for_selector("#user-1 .versions")
    assert page.inner_text("#user-1 .versions .version-count") == "2/2"
    assert answer(page, 1) == "Answer #4 to: Tell me a riddle"
    page.locator("#chat").screenshot(path=str(ARTIFACTS / "versions.png"))

    with page.expect_navigation():
        page.click("#user-1 .versions a.version-step.previous")
    page.wait_for_selector("#user-1 .versions")
    assert page.inner_text("#user-1 .versions .version-count") == "1/2"
    assert user_text(page, 1) == "Tell me a joke" and answer(page, 1) == "Answer #3 to: Tell me a joke"
    assert page.url.rsplit("/", 1)[1] != cid
    with page.expect_navigation():
        page.click("#user-1 .versions a.version-step.next")
    page.wait_for_selector("#user-1 .versions")
    assert page.url.rsplit("/", 1)[1] == cid and user_text(page, 1) == "Tell me a riddle"

    # regenerate the last answer: a new answer, a third version
    with page.expect_navigation():
        page.click("#turn-1 button.regenerate")
    wait_done(page, "turn-1")
    assert answer(page, 1) == "Answer #5 to: Tell me a riddle"
    assert page.inner_text("#user-1 .versions .version-count") == "3/3"

    # regenerate the weather answer: the model calls lookup again, and gets the recorded result
    with page.expect_navigation():
        page.click("#turn-0 button.regenerate")
    wait_done(page, "turn-0")
    assert RUNS == ["Lyon"]  # not run again
    assert "Answer #7: it is mild (Lyon: 12 °C (run 1))." in answer(page, 0)
    assert "reused" in page.inner_text('#turn-0 [data-tool="lookup"] .tool-status')
    assert not page.query_selector("#user-1")  # the later messages live on in the kept version
    page.reload()
    page.wait_for_selector("#turn-0 .turn-state", state="attached")
    assert "reused" in page.inner_text('#turn-0 [data-tool="lookup"] .tool-status')

    # unless the person ticks "run tools again"
    page.hover("#turn-0 button.regenerate")  # the tick shows beside the buttons under the pointer
    page.check("#turn-0 .regenerate-form input[name=rerun_tools]")
    page.locator("#chat").screenshot(path=str(ARTIFACTS / "versions-regenerate.png"))
    with page.expect_navigation():
        page.click("#turn-0 button.regenerate")
    wait_done(page, "turn-0")
    assert RUNS == ["Lyon", "Lyon"] and "(run 2)" in answer(page, 0)
    assert page.inner_text("#user-0 .versions .version-count") == "3/3"


def test_a_fork_opens_a_new_conversation_with_the_earlier_messages_and_export_downloads_the_file(page, app):
    url, store = app
    cid = start(page, url)
    send(page, "First question", 0)
    send(page, "Second question", 1)
    send(page, "Third question", 2)

    with page.expect_navigation():
        page.click("#turn-1 button.fork")
    page.wait_for_selector("#chat .lineage")
    forked = page.url.rsplit("/", 1)[1]
    assert forked != cid
    assert [page.inner_text(f"#user-{i} .user-text") for i in range(2)] == ["First question", "Second question"]
    assert not page.query_selector("#user-2") and "message 2" in page.inner_text("#chat .lineage")
    page.screenshot(path=str(ARTIFACTS / "fork.png"))
    send(page, "Another third", 2)  # the fork goes on on its own
    assert "Another third" in answer(page, 2)
    assert "Third question" in store.read(cid) and "Another third" not in store.read(cid)

    with page.expect_download() as download:
        page.click("header a.export")
    saved = Path(download.value.path())
    assert download.value.suggested_filename == f"{forked}.md"
    assert saved.read_text(encoding="utf-8") == store.read(forked)


# A file dropped on the chat, as a person drags one from their file manager.
DROP = """([name, text]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, {type: "text/markdown"}));
  const target = document.getElementById("chat");
  target.dispatchEvent(new DragEvent("dragover", {dataTransfer: data, bubbles: true, cancelable: true}));
  target.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
}"""


def test_an_import_shows_a_good_file_and_refuses_a_bad_one_with_its_line(page, app, tmp_path):
    url, store = app
    start(page, url)
    before = store.list()
    page.evaluate(DROP, ["broken.md", "💬: hello\n🤖:\n\nfine so far\n❓: `not json`\n"])  # dropped on the page
    wait_for(page, "document.getElementById('import-status').dataset.state === 'error'")
    assert "line 5" in page.inner_text("#import-status") and "broken.md" in page.inner_text("#import-status")
    assert store.list() == before  # nothing written

    good = tmp_path / "sums.md"
    good.write_text("💬: What is 2+2?\n🤖:[a model]\n\n**4**, of course.\n\n💬: \n", encoding="utf-8")
    with page.expect_navigation():
        page.set_input_files("#import-file", str(good))
    page.wait_for_selector("#turn-0")
    assert page.inner_text("#user-0 .user-text") == "What is 2+2?"
    assert page.inner_text("#turn-0 .body strong") == "4"
    assert "sums.md" in page.inner_text("#chat .lineage")
    assert len(store.list()) == len(before) + 1
