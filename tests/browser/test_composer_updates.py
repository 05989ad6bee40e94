"""An attached resource that changes on its server, seen in real headless Chromium (server-everything, stdio).

After a message carried a resource, server-everything's `toggle-subscriber-updates` makes it say the
resource changed: a line above the composer says so without a reload, the next message carries the
resource again (its block marked "changed since it was attached"), and the line goes away.
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
TOGGLE = """async () => {
    const answer = await fetch('/mcp-tool-executor', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                body: JSON.stringify({tool: 'toggle-subscriber-updates', params: {}})});
    return answer.status;
}"""


@pytest.fixture
def app_url(tmp_path) -> Iterator[str]:
    servers = {"everything": {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    backend = ScriptedBackend([["Read."], ["Read again."]])
    with serve_app(backend, tmp_path, tool_mode="xml", approval="auto") as url:  # the test toggles via the executor
        yield url


def test_a_changed_resource_is_announced_above_the_composer_and_sent_again_with_the_next_message(page, app_url):
    page.goto(app_url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    page.click("#msg")
    page.keyboard.type("Read @features")
    wait_for(page, "document.querySelectorAll('#composer-menu .menu-item').length === 1")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'#chips .chip[data-uri="{FEATURES}"]')
    page.keyboard.press("Enter")
    wait_for(page, "document.querySelector('#turn-0 .turn-state[data-state=\"done\"]') !== null")
    assert page.locator("#resource-notice .notice-line").count() == 0

    assert page.evaluate(TOGGLE) == 200
    page.wait_for_selector(f'#resource-notice .notice-line[data-uri="{FEATURES}"]', timeout=20_000)  # no reload
    assert "features.md changed — it will be sent again with your next message" in page.inner_text("#resource-notice")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "composer-resource-changed.png"))

    page.click("#msg")
    page.keyboard.type("Anything new?")
    page.keyboard.press("Enter")
    page.wait_for_selector("#user-1 .attached .chip-changed")
    assert page.inner_text("#user-1 .user-text").strip() == "Anything new?"
    wait_for(page, "document.querySelectorAll('#resource-notice .notice-line').length === 0")  # sent: gone
    page.reload()
    page.wait_for_selector("#user-1 .attached .chip-changed")  # the transcript keeps it
