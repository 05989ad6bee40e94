"""8 (round three). A call whose path lies outside the folders its server works in is not run without a person's
approval, whatever decided the call: the route wrote `/etc/passwd` and `../../../../etc/passwd` into a read that
needs no approval, and only the filesystem server's own check refused it. Here the real filesystem server, a
scripted model that writes each call, and the approval layer (`sidespin.approvals`) between them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.events import ApprovalNeeded, ToolFinished, ToolStarted
from sidespin.tools import ToolCall
from tests.conftest import in_process
from tests.mcp.mcp_harness import NODE, NODE_PREFIX
from tests.scripted import ScriptedBackend
from tests.security.conftest import app_request, json_of

FILESYSTEM = NODE_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
pytestmark = [pytest.mark.node, pytest.mark.skipif(not FILESYSTEM.exists(), reason="scripts/setup-node installs it")]


def writes_the_call_asked(messages: list[dict[str, Any]]) -> list:
    """The call the person's message spells as JSON, then, once it ran, a short answer."""
    if messages[-1]["role"] != "user":
        return ["Read."]
    asked = json.loads(messages[-1]["content"])
    return [ToolCall(asked["tool"], asked["arguments"])]


@pytest.fixture
def space(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "notes.txt").write_text("bread, milk\n")
    (folder / "escape").symlink_to("/etc")  # a link inside the folder that leads out of it
    (tmp_path / "secret.txt").write_text("the neighbour's secret\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mcp.json").write_text(json.dumps(
        {"servers": {"files": {"command": str(NODE), "args": [str(FILESYSTEM), str(folder)]}}}))
    return folder


def settings(space: Path, **overrides: Any):
    root = space.parent
    return load_settings(environ={}, data_dir=root / "data", mcp_config=root / "data" / "mcp.json", tool_mode="native",
                         plugins=False, **overrides)


def outside(space: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read_text_file", {"path": "/etc/passwd"}),
        ("read_text_file", {"path": "../../../../etc/passwd"}),
        ("read_text_file", {"path": f"{space}/../../../../../../etc/passwd"}),
        ("read_text_file", {"path": f"{space}/escape/passwd"}),  # the symbolic link's way out
        ("read_text_file", {"path": "~/.ssh/id_rsa"}),
        ("read_text_file", {"path": "file:///etc/passwd"}),
        ("get_file_info", {"path": str(space.parent / "secret.txt")}),
        ("read_multiple_files", {"paths": [f"{space}/notes.txt", "/etc/shadow"]}),
        ("list_directory", {"path": str(space.parent)}),
    ]


async def play(engine: Engine, tool: str, arguments: dict[str, Any]) -> list:
    conversation = engine.conversation()
    return [event async for event in engine.events(conversation, json.dumps({"tool": tool, "arguments": arguments}))]


@pytest.mark.parametrize("default", ["auto", "ask"])  # the terminal's default, the page's
async def test_a_path_outside_the_server_s_folder_waits_for_a_person(space, default):
    model = ScriptedBackend([writes_the_call_asked] * 40, supports_tools=True)
    async with Engine.open(settings(space), backend=model, approval=default) as engine:
        for tool, arguments in outside(space):
            events = await play(engine, tool, arguments)
            asked = [e for e in events if isinstance(e, ApprovalNeeded)]
            assert asked and "outside the folders its server works in" in asked[0].why, (tool, arguments)
            assert not any(isinstance(e, (ToolStarted, ToolFinished)) for e in events), (tool, arguments)
            assert events[-1].reason == "approval"


async def test_a_path_inside_runs_at_once(space):
    model = ScriptedBackend([writes_the_call_asked] * 20, supports_tools=True)
    async with Engine.open(settings(space), backend=model, approval="ask") as engine:
        for arguments in ({"path": f"{space}/notes.txt"}, {"path": "notes.txt"}, {"path": f"{space}/./notes.txt"}):
            events = await play(engine, "read_text_file", arguments)
            (finished,) = [e for e in events if isinstance(e, ToolFinished)]
            assert not any(isinstance(e, ApprovalNeeded) for e in events), arguments
            assert finished.result.ok and "bread, milk" in finished.result.text(), arguments


async def test_configured_auto_and_a_remembered_tool_do_not_take_a_call_outside(space):
    model = ScriptedBackend([writes_the_call_asked] * 4, supports_tools=True)
    configured = settings(space, tools={"read_text_file": {"approval": "auto"}})
    async with Engine.open(configured, backend=model, approval="auto") as engine:
        events = await play(engine, "read_text_file", {"path": "/etc/passwd"})
        assert any(isinstance(e, ApprovalNeeded) for e in events)
        approvals = engine.approvals(engine.store.load(engine.conversation().id))
        approvals.remembered.add("read_text_file")
        tool = engine.registry.get("read_text_file")
        assert approvals.policy_for(tool, ToolCall("read_text_file", {"path": "/etc/passwd"})) == "ask"
        assert approvals.policy_for(tool, ToolCall("read_text_file", {"path": f"{space}/notes.txt"})) == "auto"


def test_outside_callers_are_refused_a_path_outside_with_the_reason(space, echo_model):
    root = space.parent
    with in_process(echo_model, root / "data", plugins=False) as client:
        headers = {"Content-Type": "application/json"}
        status, _, body = app_request(client, "POST", "/mcp-tool-executor", json.dumps(
            {"tool": "read_text_file", "params": {"path": "../../../../etc/passwd"}}).encode(), headers)
        assert status == 403 and "outside the folders" in json_of(body)["error"]
        status, _, body = app_request(client, "POST", "/mcp-tool-executor", json.dumps(
            {"tool": "read_text_file", "params": {"path": f"{space}/notes.txt"}}).encode(), headers)
        assert status == 200 and "bread, milk" in str(json_of(body)["result"])
