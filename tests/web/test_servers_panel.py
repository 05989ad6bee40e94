"""The Servers panel, in process, with a scripted model and real stdio servers: status and stderr of a
failed server, a tool switched off per conversation (kept in the transcript, not sent to the model, refused
when called anyway), the tool list's cost, and Restart."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp
import pytest

from sidespin.tools import ToolCall
from sidespin.transcript import TranscriptStore
from tests.conftest import in_process, serve_app
from tests.scripted import ScriptedBackend
from tests.test_server import stream_events, turn_id

if TYPE_CHECKING:
    from starlette.testclient import TestClient

SERVERS = Path(__file__).resolve().parent.parent / "mcp" / "servers"


def write_mcp_json(data_dir: Path, fixed: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "mcp.json").write_text(json.dumps({"servers": {
        "shouter": {"command": sys.executable, "args": [str(SERVERS / "tools_only_server.py")]},
        "broken": {"command": sys.executable, "args": [str(SERVERS / "failing_server.py")],
                   "env": {"SIDESPIN_TEST_FIXED": str(fixed)}},
        "later": {"command": sys.executable, "args": ["-c", "pass"], "disabled": True},
    }}))


def first_cid(client: TestClient) -> str:
    return str(client.get("/").url).rsplit("/", 1)[1]


def panel(client: TestClient, cid: str) -> str:
    response = client.get("/servers/panel", params={"cid": cid})
    assert response.status_code == 200
    return html.unescape(response.text)


def tokens(body: str) -> int:
    import re

    return int(re.search(r'data-tokens="(\d+)"', body).group(1))


def test_the_panel_shows_a_failed_servers_stderr_a_ready_servers_tools_and_a_disabled_one(data_dir, tmp_path):
    write_mcp_json(data_dir, tmp_path / "fixed")
    with in_process(ScriptedBackend([]), data_dir) as client:
        cid = first_cid(client)
        page = html.unescape(client.get(f"/c/{cid}").text)
        assert 'id="servers"' in page and "Servers 1/2 ready · 1 failed" in page
        body = panel(client, cid)
        assert 'data-server="broken" data-status="failed"' in body
        assert "failing_server: cannot open /nonexistent/db.sqlite (error 7)" in body  # its stderr, in a <pre>
        assert 'data-server="shouter" data-status="ready"' in body and 'data-tool="shout"' in body
        assert 'data-server="later" data-status="disabled"' in body
        # the user's tools come first: the demo plugins are held back, and the group says why and how to turn them on
        assert 'data-server="plugins" data-status="not offered"' in body and 'data-tool="get_cat_fact"' not in body
        assert 'set "plugins": true in config.json to turn them on' in body
        assert "1 tool offered · tool list:" in body  # shout, the one tool of the ready server
        assert "≈" in body  # the scripted model has no tokenizer: an estimate, labelled

        (tmp_path / "fixed").write_text("yes")
        response = client.post("/servers/restart", data={"server": "broken", "cid": cid})
        assert response.status_code == 200
        body = html.unescape(response.text)
        assert 'data-server="broken" data-status="ready"' in body and body.count('data-tool="shout"') == 1
        assert 'data-tool="broken__shout"' in body  # its tool joined the registry, qualified (shouter has one)
        response = client.post("/servers/restart", data={"server": "nobody", "cid": cid})
        assert response.status_code == 404 and "no MCP server named 'nobody'" in response.text


def test_a_tool_switched_off_is_kept_in_the_transcript_not_sent_and_refused_when_called(data_dir, tmp_path):
    seen: list[str] = []

    def reply(messages):
        seen.append(messages[0]["content"] if messages[0]["role"] == "system" else "")
        if len(seen) == 1:
            return ['<mcp-request>\n  <tool name="roll_dice"><sides>6</sides></tool>\n</mcp-request>']
        return ["done"]

    with in_process(ScriptedBackend([reply] * 10), data_dir, tool_mode="xml") as client:
        cid = first_cid(client)
        before = tokens(panel(client, cid))
        response = client.post("/servers/tool", data={"cid": cid, "tool": "roll_dice"})
        assert response.status_code == 200
        body = html.unescape(response.text)
        assert 'data-tool="roll_dice" data-on="false"' in body
        assert tokens(body) < before  # the tool list costs less without it
        assert '<option value="roll_dice"' not in body  # the Poke picker no longer offers it
        assert TranscriptStore(data_dir / "conversations").load(cid).meta["tools_off"] == ["roll_dice"]

        tid = turn_id(client.post("/send", data={"cid": cid, "msg": "roll a die"}).text)
        stream_events(client, tid)
        assert "say_hello" in seen[0] and "roll_dice" not in seen[0]  # not taught to the model
        written = (data_dir / "conversations" / f"{cid}.md").read_text()
        assert "🛠️: [roll_dice]" in written and "switched off for this conversation" in written  # refused

        store = TranscriptStore(data_dir / "conversations")
        listed = {c for c, _, _ in store.list()}
        assert client.post("/fork", data={"cid": cid, "turn": "0"}).status_code == 200
        (forked,) = {c for c, _, _ in store.list()} - listed
        assert store.load(forked).meta["tools_off"] == ["roll_dice"]  # a fork keeps the switches
        response = client.post("/poke", data={"cid": cid, "tool": "roll_dice"})
        assert response.status_code == 409 and "switched off" in response.text
        page = html.unescape(client.get(f"/c/{cid}").text)  # a reload keeps it off
        assert 'data-tool="roll_dice" data-on="false"' in page
        response = client.post("/servers/tool", data={"cid": cid, "tool": "roll_dice", "on": "1"})
        assert 'data-tool="roll_dice" data-on="true"' in html.unescape(response.text)
        assert "tools_off" not in TranscriptStore(data_dir / "conversations").load(cid).meta
        response = client.post("/servers/tool", data={"cid": cid, "tool": "no_such"})
        assert response.status_code == 404 and "no tool named 'no_such'" in response.text


def test_native_tools_leave_out_a_tool_switched_off(data_dir):
    backend = ScriptedBackend([["hi"]] * 3, supports_tools=True)
    with in_process(backend, data_dir, tool_mode="native") as client:
        cid = first_cid(client)
        assert "native tool schemas" in client.post("/servers/tool", data={"cid": cid, "tool": "get_time"}).text
        stream_events(client, turn_id(client.post("/send", data={"cid": cid, "msg": "time?"}).text))
        assert backend.tools_seen[-1] and "get_time" not in backend.tools_seen[-1]
        assert "say_hello" in backend.tools_seen[-1]


async def test_the_live_stream_sends_the_panel_and_ends_when_the_client_goes(data_dir):
    # the client going is a socket closing: this one keeps a real server
    with serve_app(ScriptedBackend([]), data_dir) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.get(base + "/servers/live", params={"cid": cid},
                                   timeout=aiohttp.ClientTimeout(total=20)) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                first = (await response.content.readuntil(b"\n\n")).decode()
            assert first.startswith("event: servers") and "No MCP servers" in first
            assert 'data-server="plugins"' in first


def test_a_call_to_a_tool_switched_off_is_refused_by_the_registry_view() -> None:
    import asyncio

    from sidespin.tools import ToolRegistry, load_plugins, plugins_dir

    with ToolRegistry(load_plugins(plugins_dir())) as registry:
        view = registry.without(["say_hello"])
        assert "say_hello" not in view and "say_hello" not in view.names() and "say_hello" in registry
        result = asyncio.run(view.execute(ToolCall("say_hello", {"name": "A"})))
        assert result.kind == "denied" and "switched off for this conversation" in result.error
        assert asyncio.run(view.execute(ToolCall("get_time", {"timezone": "UTC"}))).ok


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
