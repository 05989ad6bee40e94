"""The Servers panel in headless Chromium against real stdio servers: a failing server shows "failed" and its
stderr line; a working one shows ready with its tools; a tool switched off stays off after a reload and the
tool list's token figure drops; Restart goes through "restarting" to "ready" live, without a reload."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.browser.conftest import wait_for
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

SERVERS = Path(__file__).resolve().parent.parent / "mcp" / "servers"
STATUS = "document.querySelector('#servers .server[data-server=\"{}\"]')?.dataset.status"
TOKENS = "Number(document.querySelector('#tools-cost').dataset.tokens)"


@pytest.fixture
def app(tmp_path):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {
        "shouter": {"command": sys.executable, "args": [str(SERVERS / "tools_only_server.py")]},
        "broken": {"command": sys.executable, "args": [str(SERVERS / "failing_server.py")]},
    }}))
    # the demo plugins offered beside the servers ("plugins": true), to switch one of them off
    with serve_app(ScriptedBackend([]), tmp_path, tool_mode="xml", plugins=True) as url:
        yield url


def test_the_panel_shows_status_stderr_tools_switches_cost_and_a_live_restart(page, app) -> None:
    page.goto(app)
    panel = page.locator("#servers")
    assert panel.get_attribute("open") is not None  # a failed server opens the panel by itself
    assert page.evaluate(STATUS.format("broken")) == "failed"
    stderr = page.locator('#servers .server[data-server="broken"] pre.stderr')
    assert "failing_server: cannot open /nonexistent/db.sqlite (error 7)" in stderr.inner_text()
    assert page.evaluate(STATUS.format("shouter")) == "ready"
    assert page.locator('#servers .server[data-server="shouter"] [data-tool="shout"]').count() == 1

    before = page.evaluate(TOKENS)
    page.locator('#servers [data-tool="roll_dice"] input').uncheck()
    wait_for(page, "document.querySelector('#servers [data-tool=\"roll_dice\"]').dataset.on === 'false'")
    assert page.evaluate(TOKENS) < before  # the tool list costs less without it
    assert page.locator('#poke-tool option[value="roll_dice"]').count() == 0

    page.reload()
    assert page.locator('#servers [data-tool="roll_dice"] input').is_checked() is False
    assert page.evaluate(TOKENS) < before

    # every status the page shows, as it shows it, to see "restarting" pass by without a reload
    page.evaluate("""window.__seen = [];
      new MutationObserver(() => {
        const s = document.querySelector('#servers .server[data-server="shouter"]');
        if (s && window.__seen[window.__seen.length - 1] !== s.dataset.status) window.__seen.push(s.dataset.status);
      }).observe(document.getElementById('servers'), {subtree: true, childList: true, attributes: true});""")
    wait_for(page, "document.querySelector('#servers-body').getAttribute('sse-connect') !== null")
    page.locator('#servers .server[data-server="shouter"] button.restart').click()
    wait_for(page, "window.__seen.includes('restarting') && window.__seen[window.__seen.length - 1] === 'ready'")
    assert page.evaluate(STATUS.format("shouter")) == "ready"
