"""The app is built by `create_app(settings, backend)`: importing `server` reads nothing and builds nothing,
and every address the page links to is one of the app's routes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from fasthtml.common import to_xml
from starlette.routing import Match
from starlette.testclient import TestClient

from sidespin.mcp.auth import CALLBACK_PATH
from sidespin.record import CallRecord
from sidespin.tools import ToolCall
from sidespin.web import oauth
from sidespin.web.page import ToolCard
from tests.conftest import ROOT, in_process
from tests.scripted import ScriptedBackend

LINK = re.compile(r'\b(href|action|hx-get|hx-post|sse-connect)="(/[^"]*)"')


def test_importing_server_reads_no_settings_and_builds_no_app() -> None:
    """Settings that cannot be read fail `main()`, not an import (a test, a tool listing the modules)."""
    environment = {**os.environ, "SIDESPIN_PORT": "not a port"}
    probe = "import server; print(sorted(name for name in ('app', 'settings', 'rt') if hasattr(server, name)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_oauth_callback_route_answers_the_redirect_uri_the_client_gives() -> None:
    assert oauth.oauth_callback.to() == CALLBACK_PATH


def answered(app, path: str, method: str) -> bool:
    scope = {"type": "http", "path": path.split("#")[0].split("?")[0], "method": method}
    return any(route.matches(scope)[0] is Match.FULL for route in app.routes)


def read(client: TestClient, path: str, form: dict[str, str] | None = None) -> str:
    response = client.get(path) if form is None else client.post(path, data=form)
    response.raise_for_status()
    return response.text


def test_every_address_the_page_links_to_is_a_route_of_the_app(data_dir: Path) -> None:
    # a model that streams (each piece after a pause): the answer still plays when /send draws it, with its Stop
    with in_process(ScriptedBackend([["Hel", "lo."]], delay=0.01), data_dir, tool_mode="xml") as client:
        app = client.app
        response = client.get("/")  # the chat page, after the redirect
        response.raise_for_status()
        cid = str(response.url).rsplit("/", 1)[-1]
        shown = [response.text]
        shown.append(read(client, "/send", {"cid": cid, "msg": "Hi"}))  # the message and its live answer
        shown.append(read(client, f"/c/{cid}"))  # now with the message's and the answer's buttons
        shown.append(read(client, "/trash"))
        shown.append(read(client, "/logs"))
    waiting, interrupted = CallRecord(ToolCall("say_hello", {}, "c1")), CallRecord(ToolCall("say_hello", {}, "c2"))
    waiting.status, interrupted.status = "waiting", "interrupted"
    shown += [to_xml(ToolCard(waiting)), to_xml(ToolCard(interrupted))]  # the approval and Run again buttons

    links = {(path, "POST" if attribute in ("action", "hx-post") else "GET")
             for attribute, path in LINK.findall("".join(shown))}
    paths = {path.split("?")[0] for path, _ in links}
    expected = {"/", f"/c/{cid}", "/send", "/poke", "/pulse", "/stream", "/stop", "/approve", "/rerun", "/new",
                "/search", "/rename", "/delete", "/trash", "/import", "/export", "/edit_message", "/regenerate",
                "/fork", "/tools", "/health", "/logs", "/logs-stream", "/servers/live", "/servers/tool"}
    assert expected <= paths, f"the page no longer links to {sorted(expected - paths)}"
    assert sorted(f"{method} {path}" for path, method in links if not answered(app, path, method)) == []
