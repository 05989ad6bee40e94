"""The sidebar, as a person uses it: search every conversation (Ctrl+K), open a hit at its message,
rename a conversation, delete it and restore it from the trash. Real headless Chromium, real app,
a scripted model."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.browser.conftest import ARTIFACTS, wait_for
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

LONG = "".join(f"Paragraph {n} about lift, envelopes, ballast and mooring masts.\n\n" for n in range(40))
SCRIPT = [
    ["Zeppelins are rigid airships."],  # conversation A, turn 0
    [LONG],                             # A, turn 1: pushes turn 0 out of sight
    ["A kite is tethered to the ground."],  # B
    ["Knock knock."],                   # C
]


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    with serve_app(ScriptedBackend(SCRIPT), tmp_path, tool_mode="xml") as url:
        yield url


def say(page, text: str, turn: int) -> None:
    page.fill("#msg", text)
    page.press("#msg", "Enter")
    wait_for(page, f"!!document.querySelector('#turn-{turn} .turn-state[data-state=\"done\"]')")


def new_chat(page) -> str:
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    return page.url.rsplit("/", 1)[1]


def listed(page) -> list[str]:
    return page.eval_on_selector_all("#conversations li a", "links => links.map(a => a.textContent.trim())")


def test_search_opens_the_hit_at_its_message_and_rename_delete_restore_work(page, app_url):
    page.goto(app_url)  # the first visit makes a conversation
    page.wait_for_selector('#status[data-state="connected"]')
    first = page.url.rsplit("/", 1)[1]
    say(page, "My favourite airship is a zeppelin from 1936.", 0)
    say(page, "Tell me more about how they fly", 1)
    second = new_chat(page)
    say(page, "What is a kite?", 0)
    third = new_chat(page)
    say(page, "Tell me a joke", 0)

    # the list, grouped by day: all three under Today, titled by their first message
    assert page.eval_on_selector_all("#conversations h2", "headings => headings.map(h => h.textContent)") == ["Today"]
    wait_for(page, "document.querySelector('#conversations li.current a').textContent === 'Tell me a joke'", 10)
    assert listed(page) == ["Tell me a joke", "What is a kite?", "My favourite airship is a zeppelin from 1936."]

    # Ctrl+K, then a word typed three turns ago in another conversation
    page.click("#chat")
    page.keyboard.press("Control+k")
    assert page.evaluate("document.activeElement.id") == "search"
    page.keyboard.type("zeppelin")
    page.wait_for_selector("#conversations.results li.hit")
    hits = page.eval_on_selector_all("li.hit", "items => items.map(li => li.querySelector('.snippet').innerHTML)")
    assert any("<mark>zeppelin</mark>" in snippet for snippet in hits), hits
    marked = page.eval_on_selector_all("li.hit mark", "marks => marks.map(m => m.textContent.toLowerCase())")
    assert marked and all(word.startswith("zeppelin") for word in marked)
    page.locator("#conversations").screenshot(path=str(ARTIFACTS / "search-results.png"))
    page.screenshot(path=str(ARTIFACTS / "search.png"))

    # the question's hit opens that conversation at that message, not at its end
    page.click("li.hit[data-role='user'] a")
    page.wait_for_selector('#status[data-state="connected"]')
    assert page.url.endswith(f"/c/{first}#user-0")
    in_view = """() => { const m = document.getElementById('user-0').getBoundingClientRect();
                         const c = document.getElementById('chat').getBoundingClientRect();
                         return m.top >= c.top - 1 && m.bottom <= c.bottom + 1; }"""
    wait_for(page, f"({in_view})()", timeout=5)
    page.screenshot(path=str(ARTIFACTS / "search-opened.png"))
    assert page.evaluate("document.getElementById('chat').scrollTop") < \
        page.evaluate("document.getElementById('chat').scrollHeight - document.getElementById('chat').clientHeight")

    # emptying the box gives the list back
    page.fill("#search", "")
    page.wait_for_selector("#conversations:not(.results) h2")
    assert len(listed(page)) == 3

    # rename the second conversation; the list shows the new title after a reload
    page.goto(f"{app_url}/c/{second}")
    page.click("li.current .actions summary")
    page.fill("li.current input.title", "Kites and strings")
    page.locator(".sidebar").screenshot(path=str(ARTIFACTS / "search-rename.png"))
    page.click("li.current button.rename")
    page.wait_for_url(f"**/c/{second}")
    page.reload()
    assert "Kites and strings" in listed(page) and "What is a kite?" not in listed(page)

    # delete the third one: it leaves the list for the trash, and Restore brings it back
    page.goto(f"{app_url}/c/{third}")
    page.click("li.current .actions summary")
    page.click("li.current button.delete")
    page.wait_for_load_state()
    assert "Tell me a joke" not in listed(page)
    assert page.inner_text(".trash-link") == "🗑 Trash (1)"
    page.click(".trash-link")
    assert page.inner_text("li.trashed .title") == "Tell me a joke"
    page.screenshot(path=str(ARTIFACTS / "search-trash.png"))
    page.click("li.trashed button.restore")
    page.wait_for_url(f"**/c/{third}")
    assert "Tell me a joke" in listed(page)
    assert page.inner_text("#user-0 .user-text") == "Tell me a joke"
    assert page.inner_text(".trash-link") == "🗑 Trash"
