"""Sign in from the Servers panel in headless Chromium, against the SDK's own authorization server
(tests/oauth_fixture.py): the button posts, the page goes to the authorization server, which sends it
back to /oauth/callback (a request from another port: the one path the guard lets another site reach),
and the server is ready with its tool. No CSP violation on the way (the page fixture checks)."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import wait_for
from tests.conftest import serve_app
from tests.oauth_fixture import serve_oauth_server
from tests.scripted import ScriptedBackend

pytestmark = [pytest.mark.browser]

VAULT = '#servers .server[data-server="vault"]'


def test_the_sign_in_button_goes_to_the_authorization_server_and_back(page, tmp_path) -> None:
    with serve_oauth_server() as oauth:
        (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"vault": {"url": oauth.url, "oauth": {}}}}))
        with serve_app(ScriptedBackend([]), tmp_path, tool_mode="xml") as url:
            page.goto(url)
            assert page.locator(VAULT).get_attribute("data-status") == "needs sign-in"
            page.click("#servers summary")
            page.locator(f"{VAULT} button.sign-in").click()
            page.wait_for_url("**/oauth/callback?**")
            wait_for(page, "document.querySelector('h1')?.textContent === 'Signed in to vault'")
            page.click("text=Back to sidespin")
            wait_for(page, f"document.querySelector('{VAULT}')?.dataset.status === 'ready'")
            assert page.locator(f'{VAULT} [data-tool="whisper"]').count() == 1
            assert page.locator(f"{VAULT} .sign-in").count() == 0
