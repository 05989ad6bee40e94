"""3. Only what a server offered is read from it: `/send`'s attach (and the terminal's `@URI`) names a URI the
server lists, or one that fills in one of its templates; any other is a 422 naming it and never reaches the server.

The servers are a spy (tests/security/servers/spy_server.py) that reads any URI it is asked for and
records it, so a refusal here is sidespin's, not the server's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient

from sidespin.errors import AttachmentRefused
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.mcp.attach import ResourceRef, compose
from sidespin.terminal import read_line
from tests.conftest import in_process
from tests.security.conftest import app_request, json_of

SPY = Path(__file__).resolve().parent / "servers" / "spy_server.py"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
NEVER_OFFERED = [
    ("spy", "file:///etc/passwd"),
    ("spy", "http://169.254.169.254/latest/meta-data/iam/security-credentials/"),
    ("spy", "other://notes/today"),  # listed, but by another server
    ("spy", "spy://notes/today/../../../etc/passwd"),  # no template variable spans a "/"
    ("nobody", "spy://notes/today"),
]


def spies(folder: Path) -> dict[str, dict]:
    return {name: {"command": sys.executable, "args": [str(SPY), name, str(folder / f"{name}-read.txt")]}
            for name in ("spy", "other")}


def reached(folder: Path, name: str = "spy") -> list[str]:
    record = folder / f"{name}-read.txt"
    return record.read_text(encoding="utf-8").splitlines() if record.exists() else []


def send(client: TestClient, cid: str, server: str, uri: str) -> tuple[int, bytes]:
    attach = json.dumps({"server": server, "uri": uri, "name": "notes"})
    status, _, body = app_request(client, "POST", "/send", urlencode({"cid": cid, "msg": "read this",
                                                                       "attach": attach}).encode(), FORM)
    return status, body


def test_send_refuses_a_uri_the_server_never_offered_and_it_never_reaches_it(echo_model, data_dir):
    data_dir.mkdir(parents=True)
    (data_dir / "mcp.json").write_text(json.dumps({"servers": spies(data_dir)}), encoding="utf-8")
    with in_process(echo_model, data_dir) as client:
        _, headers, _ = app_request(client, "POST", "/new", b"", FORM)
        cid = headers["location"].rsplit("/", 1)[1]
        for server, uri in NEVER_OFFERED:
            status, body = send(client, cid, server, uri)
            assert status == 422, (uri, body)
            assert uri in json_of(body)["error"] and "nothing was sent" in json_of(body)["error"]
        assert reached(data_dir) == [] and reached(data_dir, "other") == []
        transcript = (data_dir / "conversations" / f"{cid}.md").read_text(encoding="utf-8")
        assert "read this" not in transcript and "passwd" not in transcript

        # what it offers still goes: its listed resource, and its template filled in
        for uri in ("spy://notes/today", "spy://notes/2026-11-24"):
            status, body = send(client, cid, "spy", uri)
            assert status == 200, body
        assert reached(data_dir) == ["spy://notes/today", "spy://notes/2026-11-24"]


async def test_compose_and_the_terminal_read_only_offered_resources(tmp_path: Path, monkeypatch):
    configs = [ServerConfig(name=name, transport="stdio", command=spec["command"], args=spec["args"])
               for name, spec in spies(tmp_path).items()]
    async with MCPManager(configs) as manager:
        for server, uri in NEVER_OFFERED:
            with pytest.raises(AttachmentRefused, match=uri.replace("?", r"\?")):
                await compose(manager, "hi", [ResourceRef(server, uri)], max_chars=10_000)
        with pytest.raises(AttachmentRefused, match="file:///etc/passwd"):
            await read_line(manager, "look @file:///etc/passwd", max_chars=10_000)
        # a resource followed from an older message that its server never offered is left out, never read
        followed = [ResourceRef("spy", "file:///etc/passwd")]
        monkeypatch.setattr(manager.subscriptions, "changed", lambda conversation: followed)
        composed = await compose(manager, "hi", [ResourceRef("spy", "spy://notes/today")], max_chars=10_000,
                                 conversation="c1")
    assert "spy read spy://notes/today" in composed.text and "passwd" not in composed.text
    assert reached(tmp_path) == ["spy://notes/today"] and reached(tmp_path, "other") == []
