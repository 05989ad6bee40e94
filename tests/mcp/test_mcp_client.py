"""MCPManager against small real stdio servers: start-up failures, timeouts, progress, restarts, shutdown."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import mcp_types as types
import pytest
from mcp_harness import SERVERS, descendants, silent_server, slow_server

from sidespin.errors import MCPServerError, ToolTimeout
from sidespin.mcp import MCPManager, ServerConfig, render_result
from sidespin.tools import Tool, ToolCall, ToolRegistry
from tests.conftest import default_sigint


def crashing_server(name: str = "broken") -> ServerConfig:
    script = "import sys; print('cannot open the database: permission denied', file=sys.stderr); sys.exit(3)"
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=["-c", script])


async def pid_of(manager: MCPManager, server: str = "slow") -> int:
    result = await manager.call_tool(server, "pid", {})
    return int(result.content[0].text)


async def test_a_failing_server_is_reported_with_its_stderr_and_the_others_work() -> None:
    async with MCPManager([slow_server(), crashing_server()]) as manager:
        assert manager.state()["slow"]["status"] == "ready"
        assert manager.state()["broken"]["status"] == "failed"
        assert "cannot open the database: permission denied" in manager.failures["broken"]
        echo = await manager.call_tool("slow", "echo", {"text": "still here"})
        assert echo.content[0].text == "still here"


async def test_a_server_that_never_answers_is_reported_within_its_timeout() -> None:
    started = time.monotonic()
    async with MCPManager([slow_server(), silent_server()], startup_timeout=3) as manager:
        elapsed = time.monotonic() - started
        assert "did not become ready within 3 s" in manager.failures["silent"]
        assert "listening and never answering" in manager.failures["silent"]  # its stderr tail
        assert elapsed < 3 + 2.5  # the timeout plus closing the silent process
        assert (await manager.call_tool("slow", "echo", {"text": "ok"})).content[0].text == "ok"


async def test_strict_mode_raises_for_the_terminal_chat_and_leaves_no_process() -> None:
    before = descendants()
    with pytest.raises(MCPServerError, match="broken"):
        async with MCPManager([slow_server(), crashing_server()], strict=True):
            pass
    assert descendants() - before == set()


async def test_disabled_servers_are_not_started() -> None:
    async with MCPManager([slow_server(disabled=True)]) as manager:
        assert manager.state() == {}


async def test_a_call_timeout_cancels_the_call_on_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "cancelled.txt"
    async with MCPManager([slow_server(env={"CANCEL_MARKER": str(marker)})]) as manager:
        started = time.monotonic()
        with pytest.raises(ToolTimeout, match="did not answer within 1 s"):
            await manager.call_tool("slow", "hang", {}, timeout=1.0)
        assert 1.0 <= time.monotonic() - started < 3.0
        # The next request is served after the cancellation, on the same connection.
        assert (await manager.call_tool("slow", "echo", {"text": "after"})).content[0].text == "after"
        assert marker.read_text().strip() == "cancelled"


async def test_progress_notifications_extend_the_deadline() -> None:
    async with MCPManager([slow_server()]) as manager:
        started = time.monotonic()
        # 5 steps 0.4 s apart: 2 s in all, well past the 0.9 s timeout, which each step renews.
        result = await manager.call_tool("slow", "progress", {"steps": 5, "interval": 0.4}, timeout=0.9)
        assert result.content[0].text == "done after 5 steps"
        assert time.monotonic() - started > 0.9 * 2
        with pytest.raises(ToolTimeout):
            await manager.call_tool("slow", "progress", {"steps": 1, "interval": 2.0}, timeout=0.9)


async def test_a_killed_server_is_restarted_and_the_next_call_succeeds() -> None:
    async with MCPManager([slow_server()]) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        first = await pid_of(manager)
        os.kill(first, signal.SIGKILL)
        result = await registry.execute(ToolCall(name="echo", arguments={"text": "after the crash"}))
        assert result.ok, result.error
        assert result.output == "after the crash"
        second = await pid_of(manager)
        assert second != first
        assert manager.state()["slow"]["status"] == "ready"


async def test_a_server_that_dies_for_good_reports_the_error_and_the_chat_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text((SERVERS / "slow_server.py").read_text(encoding="utf-8"), encoding="utf-8")
    async with MCPManager(
        [ServerConfig("flaky", "stdio", command=sys.executable, args=[str(script)])], startup_timeout=5
    ) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        script.write_text("import sys; sys.exit('gone for good')", encoding="utf-8")
        os.kill(await pid_of(manager, "flaky"), signal.SIGKILL)
        result = await registry.execute(ToolCall(name="echo", arguments={"text": "hello?"}))
        assert not result.ok
        assert "flaky" in result.error and "gone for good" in result.error
        assert manager.state()["flaky"]["status"] == "failed"


async def test_no_child_process_remains_after_the_manager_exits() -> None:
    before = descendants()
    async with MCPManager([slow_server("a"), slow_server("b"), silent_server()], startup_timeout=3) as manager:
        children = descendants() - before
        assert len(children) >= 2
        await pid_of(manager, "a")
    assert descendants() & children == set()


def test_ctrl_c_leaves_no_orphan() -> None:
    process = subprocess.Popen(
        [sys.executable, str(SERVERS / "interrupt_me.py")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        preexec_fn=default_sigint,
    )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(timeout=30), "the manager did not start its server in 30 s"
        server_pid = int(process.stdout.readline())
        assert server_pid in descendants(process.pid)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not Path(f"/proc/{server_pid}").exists() or _is_zombie(server_pid)


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


async def test_tools_join_the_registry_with_their_source_schema_and_hints() -> None:
    registry = ToolRegistry(
        [Tool(name="echo", description="the plugin echo", input_schema={"type": "object"}, fn=lambda: "")]
    )
    async with MCPManager([slow_server()]) as manager:
        added = {item.name: item for item in manager.register_into(registry)}
        listed = {item.name: item for item in manager.tools("slow")}
        assert set(added) == {"slow__echo", "pid", "progress", "hang"}  # the clash is qualified, never shadowed
        assert registry.get("echo").source == "plugin"
        assert registry.get("slow__echo").source == "mcp:slow"
        assert added["pid"].input_schema == listed["pid"].input_schema
        result = await registry.execute(ToolCall(name="slow__echo", arguments={"text": "qualified"}))
        assert result.output == "qualified"


def test_results_become_text_attachments_and_json() -> None:
    call = ToolCall(name="t", arguments={})
    image = types.ImageContent(data="iVBORw0KGgo=", mime_type="image/png")
    link = types.ResourceLink(name="report", uri="file:///tmp/report.pdf")
    embedded = types.EmbeddedResource(resource=types.TextResourceContents(uri="test://note", text="the note"))
    result = render_result(
        types.CallToolResult(
            content=[types.TextContent(text="here"), image, link, embedded], structured_content={"answer": 42}
        ),
        call,
    )
    assert result.ok
    assert result.output.splitlines() == [
        "here",
        "[image: image/png, 9 bytes]",
        "[resource: report](file:///tmp/report.pdf)",
        "the note",
        '{"answer": 42}',
    ]
    assert result.attachments == [
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "resource", "uri": "test://note", "mimeType": "", "text": "the note"},  # for the tool card
    ]
    assert result.structured == {"answer": 42}


def test_structured_content_is_kept_and_is_the_text_when_there_is_no_other() -> None:
    result = render_result(types.CallToolResult(content=[], structured_content={"rows": [1, 2]}),
                           ToolCall(name="t", arguments={}))
    assert result.structured == {"rows": [1, 2]}
    assert result.text() == '{"rows": [1, 2]}'


def test_structured_content_already_in_the_text_is_not_repeated() -> None:
    result = render_result(
        types.CallToolResult(content=[types.TextContent(text='{"a": 1}')], structured_content={"a": 1}),
        ToolCall(name="t", arguments={}),
    )
    assert result.output == '{"a": 1}'


def test_an_error_result_becomes_the_error_the_model_reads() -> None:
    result = render_result(
        types.CallToolResult(content=[types.TextContent(text="no such city")], is_error=True),
        ToolCall(name="t", arguments={}),
    )
    assert not result.ok and result.kind == "failed"
    assert result.text() == "Error: no such city"


def test_a_wrapped_scalar_is_not_repeated_as_json() -> None:
    # Python SDK servers send `str` returns as text plus {"result": text}.
    result = render_result(
        types.CallToolResult(content=[types.TextContent(text="hello")], structured_content={"result": "hello"}),
        ToolCall(name="t", arguments={}),
    )
    assert result.output == "hello"
