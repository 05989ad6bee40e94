"""Restart by a person's choice (`MCPManager.restart_server`) against real stdio servers: a server that failed at
start shows its stderr tail and comes back ready with its tools once fixed; a server killed mid-session shows
failed, then ready after Restart; presses during a restart join it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from mcp_harness import SERVERS, slow_server

from sidespin.mcp import MCPManager, ServerConfig
from sidespin.tools import ToolCall, ToolRegistry


def failing(fixed: Path) -> ServerConfig:
    return ServerConfig("broken", "stdio", command=sys.executable, args=[str(SERVERS / "failing_server.py")],
                        env={"SIDESPIN_TEST_FIXED": str(fixed)})


async def status_becomes(manager: MCPManager, server: str, wanted: str, deadline: float = 20.0) -> None:
    """Wait on the manager's changes (never a sleep) until `server` has status `wanted`."""
    async def watch() -> None:
        seen = manager.version
        while manager.state()[server]["status"] != wanted:
            seen = await manager.wait_for_change(seen)

    await asyncio.wait_for(watch(), deadline)


async def test_a_server_failed_at_start_shows_its_stderr_and_a_restart_after_fixing_brings_its_tools(tmp_path) -> None:
    async with MCPManager([failing(tmp_path / "fixed")], startup_timeout=10) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        state = manager.state()["broken"]
        assert state["status"] == "failed"
        assert "failing_server: cannot open /nonexistent/db.sqlite (error 7)" in state["error"]
        assert "shout" not in registry

        (tmp_path / "fixed").write_text("yes")
        assert await manager.restart_server("broken") == "ready"
        assert manager.state()["broken"]["error"] is None
        result = await registry.execute(ToolCall("shout", {"text": "back"}))
        assert result.ok and result.output == "BACK"


async def test_a_server_killed_mid_session_shows_failed_then_ready_after_restart() -> None:
    async with MCPManager([slow_server()]) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        pid = int((await manager.call_tool("slow", "pid", {})).content[0].text)
        os.kill(pid, signal.SIGKILL)
        await status_becomes(manager, "slow", "failed")
        assert "connection lost" in manager.state()["slow"]["error"]

        presses = await asyncio.gather(*(manager.restart_server("slow") for _ in range(3)))
        assert presses == ["ready"] * 3
        again = int((await manager.call_tool("slow", "pid", {})).content[0].text)
        assert again != pid
        assert (await registry.execute(ToolCall("echo", {"text": "hi"}))).output == "hi"


async def test_concurrent_presses_restart_once() -> None:
    async with MCPManager([slow_server()]) as manager:
        before = int((await manager.call_tool("slow", "pid", {})).content[0].text)
        generation = manager._connections["slow"].generation
        await asyncio.gather(*(manager.restart_server("slow") for _ in range(4)))
        assert manager._connections["slow"].generation == generation + 1  # one restart for four presses
        assert int((await manager.call_tool("slow", "pid", {})).content[0].text) != before


def test_sidespin_servers_prints_each_status_tools_and_the_stderr_tail(tmp_path, capsys) -> None:
    import json

    from sidespin.cli import main

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"servers": {
        "shouter": {"command": sys.executable, "args": [str(SERVERS / "tools_only_server.py")]},
        "broken": {"command": sys.executable, "args": [str(SERVERS / "failing_server.py")]},
    }}))
    assert main(["--mcp-config", str(config), "servers", "--json"]) == 1  # one failed
    rows = {row["server"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["shouter"]["status"] == "ready" and rows["shouter"]["tool_names"] == ["shout"]
    assert rows["broken"]["status"] == "failed" and "cannot open /nonexistent/db.sqlite" in rows["broken"]["error"]

    assert main(["--mcp-config", str(config), "servers"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["server", "status", "transport", "protocol", "tools", "tool", "names"]
    shouter = next(line.split() for line in lines if line.startswith("shouter "))
    assert shouter[:3] == ["shouter", "ready", "stdio"] and shouter[-2:] == ["1", "shout"]
    assert "broken failed:" in lines and any("cannot open /nonexistent/db.sqlite" in line for line in lines)
