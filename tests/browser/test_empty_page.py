"""A new conversation's empty page in headless Chromium: which tools the model can use and where they come from,
the Servers line when no server is configured, the demo plugins held back while one is, and Poke calling a
server's tool then. The summary goes as soon as the first message is in, without a reload."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sidespin.protocol import format_block
from sidespin.tools import ToolCall
from tests.browser.conftest import wait_for
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

SHOUTER = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "tools_only_server.py"
SOURCES = "[...document.querySelectorAll('#tool-offer li[data-source]')].map(li => li.innerText.trim())"


def test_with_no_server_the_empty_page_lists_the_plugins_and_the_servers_line_says_none_is_configured(
        page, tmp_path) -> None:
    with serve_app(ScriptedBackend([["Hello there."]]), tmp_path, tool_mode="xml") as url:
        page.goto(url)
        offer = page.locator("#tool-offer")
        assert offer.is_visible()
        assert offer.locator(".offer-head").inner_text() == "The model can use 6 tools in this conversation:"
        assert page.evaluate(SOURCES) == ["plugins · built in · 6 tools"]
        assert "list MCP servers in mcp.json" in offer.inner_text()
        assert page.locator("#servers summary").inner_text() == "Servers: none configured · add one in mcp.json"
        assert page.locator("#tools-cost").text_content().startswith("6 tools offered · tool list:")  # panel closed

        page.fill("#msg", "hi")
        page.press("#msg", "Enter")
        page.wait_for_selector('.msg.assistant .turn-state[data-state="done"]', state="attached")
        assert not offer.is_visible()  # the first message is in: the summary is gone, as a reload draws it
        page.reload()
        page.wait_for_selector(".msg.user")
        assert page.locator("#tool-offer").count() == 0


def test_with_a_server_the_empty_page_offers_its_tools_the_plugins_held_back_and_poke_calls_it(page, tmp_path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {
        "shouter": {"command": sys.executable, "args": [str(SHOUTER)]}}}))
    script = [[format_block(ToolCall("shout", {"text": "ping"}))], ["It shouted back."]]
    with serve_app(ScriptedBackend(script), tmp_path, tool_mode="xml", approval="auto") as url:
        page.goto(url)
        assert page.evaluate(SOURCES) == ["shouter · MCP server · 1 tool"]
        text = page.locator("#tool-offer").inner_text()
        assert "Demo plugins off because MCP servers are configured (shouter)" in text
        assert 'set "plugins": true in config.json to turn them on' in text
        assert page.locator("#servers summary").inner_text() == "Servers 1/1 ready"
        plugins = page.locator('#servers .server[data-server="plugins"]')
        assert plugins.get_attribute("data-status") == "not offered"

        page.wait_for_selector('#status[data-state="connected"]')
        page.click("#poke")
        card = page.wait_for_selector('.tool-call[data-tool="shout"][data-status="done"]')
        assert "PING" in card.text_content()  # the server's answer, on its card
        wait_for(page, "document.querySelector('#chat').innerText.includes('It shouted back.')")
        assert not page.locator("#tool-offer").is_visible()
