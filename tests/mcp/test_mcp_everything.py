"""Real third-party servers: @modelcontextprotocol/server-everything (stdio, HTTP, SSE) and mcp-server-time."""

from __future__ import annotations

import base64
import contextlib
import json
import time

import pytest
from mcp_harness import (
    HAVE_NODE,
    MCP_SERVER_TIME,
    NO_NODE,
    everything_server,
    everything_stdio,
    requires_node,
    requires_time,
)

from sidespin.errors import ToolTimeout
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.tools import ToolCall, ToolRegistry

pytestmark = pytest.mark.node


@pytest.fixture(params=["stdio", "http", "sse"])
def everything(request: pytest.FixtureRequest) -> ServerConfig:
    """server-everything over each transport the manager speaks."""
    if request.param == "stdio":
        if not HAVE_NODE:
            pytest.skip(NO_NODE)
        return everything_stdio()
    url = request.getfixturevalue(f"everything_{request.param}")
    return ServerConfig(name="everything", transport=request.param, url=url)


async def test_everything_tools_work_through_the_registry(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        assert {"echo", "get-sum", "get-structured-content", "get-tiny-image", "trigger-long-running-operation"} <= set(
            registry.names()
        )
        assert registry.get("echo").source == "mcp:everything"

        echo = await registry.execute(ToolCall(name="echo", arguments={"message": "ping"}))
        assert echo.output == "Echo: ping"

        total = await registry.execute(
            ToolCall(name="get-sum", arguments={"a": "2", "b": 3})
        )  # "2" coerced from the schema
        assert total.output == "The sum of 2 and 3 is 5."

        weather = await registry.execute(ToolCall(name="get-structured-content", arguments={"location": "Chicago"}))
        assert set(json.loads(weather.output)) == {"temperature", "conditions", "humidity"}

        image = await registry.execute(ToolCall(name="get-tiny-image", arguments={}))
        assert "[image: image/png," in image.output
        (attachment,) = image.attachments
        assert attachment["mimeType"] == "image/png"
        assert base64.b64decode(attachment["data"]).startswith(b"\x89PNG")

        hints = registry.get("get-structured-content")
        assert hints.read_only and not hints.destructive


async def test_progress_keeps_a_long_operation_alive(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        started = time.monotonic()
        # 6 steps over 3 s: each progress notification (every 0.5 s) renews the 1.5 s timeout.
        result = await manager.call_tool(
            "everything", "trigger-long-running-operation", {"duration": 3, "steps": 6}, timeout=1.5
        )
        assert "Long running operation completed" in result.content[0].text
        assert time.monotonic() - started >= 3
        with pytest.raises(ToolTimeout):
            await manager.call_tool(
                "everything", "trigger-long-running-operation", {"duration": 3, "steps": 1}, timeout=1.5
            )


@requires_time
async def test_mcp_server_time_from_its_own_venv() -> None:
    config = ServerConfig(
        name="time", transport="stdio", command=str(MCP_SERVER_TIME), args=["--local-timezone", "UTC"]
    )
    async with MCPManager([config], strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        assert {"get_current_time", "convert_time"} <= set(registry.names())
        now = await registry.execute(ToolCall(name="get_current_time", arguments={"timezone": "Asia/Tokyo"}))
        assert now.ok, now.error
        assert json.loads(now.output)["timezone"] == "Asia/Tokyo"
        converted = await registry.execute(
            ToolCall(
                name="convert_time",
                arguments={"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Paris"},
            )
        )
        assert json.loads(converted.output)["target"]["timezone"] == "Europe/Paris"
        bad = await registry.execute(ToolCall(name="get_current_time", arguments={"timezone": "Mars/Olympus"}))
        assert not bad.ok and "Mars/Olympus" in bad.error


@requires_node
@requires_time
async def test_servers_start_in_parallel_and_mix_transports(everything_http: str) -> None:
    configs = [
        everything_stdio(name="local"),
        ServerConfig(name="remote", transport="http", url=everything_http),
        ServerConfig(name="time", transport="stdio", command=str(MCP_SERVER_TIME)),
    ]
    async with MCPManager(configs, strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        assert {name: state["status"] for name, state in manager.state().items()} == {
            "local": "ready",
            "remote": "ready",
            "time": "ready",
        }
        # Both everything servers list `echo`: the second is qualified, neither is shadowed.
        assert registry.get("echo").source == "mcp:local"
        assert registry.get("remote__echo").source == "mcp:remote"
        remote = await registry.execute(ToolCall(name="remote__echo", arguments={"message": "over http"}))
        assert remote.output == "Echo: over http"


@requires_node
async def test_an_http_server_that_goes_away_is_reported_and_reconnected_when_back() -> None:
    with contextlib.ExitStack() as first_server:
        url = first_server.enter_context(everything_server("streamableHttp"))
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        async with MCPManager([ServerConfig(name="remote", transport="http", url=url)], strict=True) as manager:
            registry = ToolRegistry()
            manager.register_into(registry)
            echo = ToolCall(name="echo", arguments={"message": "hi"})
            assert (await registry.execute(echo)).output == "Echo: hi"

            first_server.close()
            gone = await registry.execute(echo)
            assert not gone.ok and "remote" in gone.error
            assert manager.state()["remote"]["status"] == "failed"

            with everything_server("streamableHttp", port=port):
                back = await registry.execute(echo)
                assert back.ok, back.error
                assert manager.state()["remote"]["status"] == "ready"

            # A server restarted between two calls no longer knows our session id: reconnect once, transparently.
            with everything_server("streamableHttp", port=port):
                again = await registry.execute(echo)
                assert again.ok, again.error
                assert again.output == "Echo: hi"
