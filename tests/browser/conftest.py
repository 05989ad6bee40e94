"""Headless Chromium for the page tests: one browser per module, a page that may not leave the machine
and must keep its own Content-Security-Policy."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = os.environ.get("SIDESPIN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

# Flags a page's text if "<mcp-request" ever shows, even for a single frame of streaming.
LEAK_WATCH = """
window.__leaks = [];
new MutationObserver(() => {
  const chat = document.getElementById('chat');
  if (chat && chat.innerText.includes('<mcp-request')) window.__leaks.push(chat.innerText);
}).observe(document, {subtree: true, childList: true, characterData: true});
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || e.sourceFile || '')));
"""


def wait_for(page, expression: str, timeout: float = 60.0) -> None:
    """Wait until `expression` is true in the page. (Playwright's wait_for_function evaluates its
    predicate with eval, which the page's own CSP forbids; page.evaluate goes through DevTools.)"""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {expression}")
        page.wait_for_timeout(50)


def start_chat(page, url: str, text: str) -> None:
    """Open the app at `url`, start a new conversation and send `text` as its first message."""
    page.goto(url)
    page.click("button.new-chat")
    page.wait_for_selector('#status[data-state="connected"]')
    page.fill("#msg", text)
    page.press("#msg", "Enter")


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is missing: ./run test installs it with apt (package chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield instance
        instance.close()


def local_context(browser, height: int) -> tuple:
    """A browser context whose requests off this machine are refused, and the list of those it refused."""
    context = browser.new_context(viewport={"width": 1280, "height": height})
    outside: list[str] = []

    def only_local(route):
        if urlsplit(route.request.url).hostname not in ("127.0.0.1", "localhost"):
            outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    context.route("**/*", only_local)
    return context, outside


ANSWER_MS = 180_000  # for a real model's whole answer while other tests share the cores: a guard, not a speed check

@pytest.fixture
def page(browser):
    context, outside = local_context(browser, 800)
    page = context.new_page()
    page.add_init_script(LEAK_WATCH)
    page.set_default_timeout(60_000)
    console_csp: list[str] = []
    page.on("console", lambda message: console_csp.append(message.text)
            if "Content Security Policy" in message.text else None)
    yield page
    violations = page.evaluate("window.__csp || []") if not page.is_closed() else []
    context.close()
    assert outside == [], f"the page tried to leave the machine: {outside}"
    assert violations == [] and console_csp == [], f"the page broke its own CSP: {violations} {console_csp}"


