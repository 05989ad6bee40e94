"""4 (round three), on the page: a message sent on a full data disk stays in the composer, which says why, and goes
once there is room. Real headless Chromium, the real app, a data folder on a small tmpfs filled to its last byte
(`SmallDisk`)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import browser, page, wait_for  # noqa: F401 (fixtures)
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend
from tests.security.conftest import SmallDisk

pytestmark = [pytest.mark.browser]

KEPT = "Remember: the plumber comes on Tuesday at 10."


def test_the_composer_keeps_a_message_the_full_disk_refused_and_says_why(page, data_dir):  # noqa: F811
    model = ScriptedBackend([["Hello."], ["Noted: Tuesday at 10."]])
    with SmallDisk(data_dir) as disk, serve_app(model, data_dir, tool_mode="xml") as url:
        page.goto(url)
        page.wait_for_selector('#status[data-state="connected"]')
        page.fill("#msg", "Hi")
        page.press("#msg", "Enter")
        wait_for(page, "!!document.querySelector('#turn-0 .turn-state[data-state=\"done\"]')")

        disk.fill()
        page.fill("#msg", KEPT)
        page.press("#msg", "Enter")
        wait_for(page, "document.getElementById('composer-error').textContent.length > 0")
        error = page.inner_text("#composer-error")
        assert "not sent" in error and "No space left on device" in error
        assert page.input_value("#msg") == KEPT  # what the person typed is still there
        assert page.locator("#user-1").count() == 0  # and no message is shown that was not kept

        disk.free()
        page.press("#msg", "Enter")
        wait_for(page, "!!document.querySelector('#turn-1 .turn-state[data-state=\"done\"]')")
        assert page.input_value("#msg") == "" and page.inner_text("#composer-error") == ""
        assert KEPT in page.inner_text("#user-1")
        page.reload()
        page.wait_for_selector('#status[data-state="connected"]')
        assert KEPT in page.inner_text("#user-1") and "Noted: Tuesday at 10." in page.inner_text("#turn-1")
