"""`@` and `/` in the composer, in real headless Chromium against the real app and server-everything (stdio).

`@` lists the resources, typing filters them, arrows and Enter choose one: a chip shows above the
textarea, × takes it off, a click puts it back; the sent message shows the attachment, and so does
the page after a reload. `/` lists the prompts; one with an argument asks for it in a small form, and
its rendered text lands in the textarea.
"""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from tests.browser.conftest import ARTIFACTS, wait_for
from tests.conftest import serve_app
from tests.mcp.mcp_harness import EVERYTHING, NODE, requires_node
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser, requires_node]

FEATURES = "demo://resource/static/document/features.md"


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    servers = {"everything": {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    backend = ScriptedBackend([lambda messages: ["I read " + ("the features." if "Features" in messages[-1]["content"]
                                                              else "nothing.")]])
    with serve_app(backend, tmp_path, tool_mode="xml") as url:
        yield url


def open_chat(page, url: str) -> None:
    page.goto(url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')


def test_at_attaches_a_resource_as_a_chip_that_goes_with_the_message_and_stays_after_a_reload(page, app_url):
    open_chat(page, app_url)
    page.click("#msg")
    page.keyboard.type("What is in @feat")
    page.wait_for_selector("#composer-menu:not([hidden]) .menu-item")
    wait_for(page, "document.querySelectorAll('#composer-menu .menu-item').length === 1")  # filtered to features.md
    assert page.inner_text("#composer-menu .menu-item .item-name") == "features.md"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "composer-menu.png"))
    page.keyboard.press("Enter")  # chooses; does not send
    page.wait_for_selector(f'#chips .chip[data-uri="{FEATURES}"]')
    assert page.input_value("#msg") == "What is in "  # the @query made way for the chip
    assert page.locator(".msg.user").count() == 0
    assert "everything" in page.inner_text("#chips .chip")

    page.click("#chips .chip .chip-remove")
    assert page.locator("#chips .chip").count() == 0
    page.keyboard.type("@")
    page.wait_for_selector("#composer-menu:not([hidden]) .menu-item")
    page.keyboard.type("features")
    wait_for(page, "document.querySelectorAll('#composer-menu .menu-item').length === 1")
    page.click("#composer-menu .menu-item")
    page.wait_for_selector(f'#chips .chip[data-uri="{FEATURES}"]')
    page.keyboard.press("Escape")
    page.keyboard.type("the file?")
    page.keyboard.press("Enter")

    page.wait_for_selector(".msg.user .attached")
    wait_for(page, "document.querySelector('#turn-0 .turn-state[data-state=\"done\"]') !== null")
    assert "I read the features." in page.inner_text("#turn-0")
    live = page.inner_html("#user-0 .bubble")
    assert page.locator("#chips .chip").count() == 0  # the chip went with the message
    assert page.inner_text("#user-0 .user-text").strip() == "What is in the file?"
    assert "features.md" in page.inner_text("#user-0 .attached summary")
    page.screenshot(path=str(ARTIFACTS / "composer-attached.png"), full_page=True)

    page.reload()
    page.wait_for_selector("#user-0 .attached")
    assert page.inner_html("#user-0 .bubble").split() == live.split()  # a reload draws the same message
    page.click("#user-0 .attached summary")
    assert "Everything Server - Features" in page.inner_text("#user-0 .attached pre")


def test_slash_runs_a_prompt_with_its_argument_into_the_textarea(page, app_url):
    open_chat(page, app_url)
    page.click("#msg")
    page.keyboard.type("/args")
    page.wait_for_selector("#composer-menu:not([hidden]) .menu-item")
    wait_for(page, "document.querySelectorAll('#composer-menu .menu-item').length === 1")
    assert page.inner_text("#composer-menu .menu-item .item-name") == "/args-prompt"
    page.keyboard.press("Enter")
    page.wait_for_selector('#composer-panel:not([hidden]) input[data-field="city"]')
    assert page.locator('#composer-panel .panel-field:has(input[data-field="city"]) .required').count() == 1
    page.keyboard.press("Enter")  # the required city is empty: said in the form, nothing inserted
    wait_for(page, "document.querySelector('#composer-panel .panel-error').textContent.includes('city')")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "composer-prompt-form.png"))
    page.fill('#composer-panel input[data-field="city"]', "Lyon")
    page.keyboard.press("Enter")
    wait_for(page, "document.getElementById('msg').value.length > 0")
    assert page.input_value("#msg") == "What's weather in Lyon?"
    assert page.is_hidden("#composer-panel")
    assert page.locator(".msg.user").count() == 0  # inserted, not sent
