"""Our plugins as a real MCP server: /mcp in a Starlette app under uvicorn, and `sidespin mcp-serve` over stdio."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_harness import ROOT, endpoint_app, free_socket, serve_in_thread

from sidespin.mcp import MCPManager, ServerConfig, build_mcp_server
from sidespin.mcp.server import report_progress
from sidespin.tools import ToolCall, ToolRegistry, load_plugins, plugins_dir, tool


@pytest.fixture
def demo_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SIDESPIN_DATA_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def plugins_url(demo_data: Path) -> Iterator[str]:
    """The real plugins behind /mcp, served by uvicorn on a free port (Host and Origin pinned to it)."""
    sock = free_socket()
    port = sock.getsockname()[1]
    endpoint = build_mcp_server(ToolRegistry(load_plugins(plugins_dir())), port=port)
    with serve_in_thread(endpoint_app(endpoint), sock):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_separate_sdk_client_lists_and_calls_our_plugins(plugins_url: str, mode: str) -> None:
    async with Client(plugins_url, mode=mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        tools = {item.name: item for item in (await client.list_tools()).tools}
        assert {"query_database", "get_time", "say_hello"} <= set(tools)
        assert tools["query_database"].annotations.read_only_hint is True
        assert tools["query_database"].input_schema["required"] == ["sql"]

        rows = await client.call_tool(
            "query_database", {"sql": "SELECT name FROM users WHERE city = 'Boston' ORDER BY id"}
        )
        assert not rows.is_error
        assert json.loads(rows.content[0].text) == [{"name": "Bob Chen"}, {"name": "Farid Haddad"}]

        now = await client.call_tool("get_time", {"timezone": "Europe/Paris"})
        assert now.structured_content["timezone"] == "Europe/Paris"

        refused = await client.call_tool("query_database", {"sql": "DROP TABLE users"})
        assert refused.is_error and "only SELECT statements are allowed" in refused.content[0].text

        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("no_such_tool", {})


async def test_another_sidespin_uses_our_endpoint_through_its_registry(plugins_url: str) -> None:
    async with MCPManager([ServerConfig(name="peer", transport="http", url=plugins_url)], strict=True) as manager:
        registry = ToolRegistry(load_plugins(plugins_dir()))
        added = manager.register_into(registry)
        assert {item.name for item in added} >= {"peer__query_database", "peer__say_hello"}
        result = await registry.execute(
            ToolCall(name="peer__query_database", arguments={"sql": "SELECT count(*) AS n FROM orders"})
        )
        assert result.ok, result.error
        assert json.loads(result.output) == [{"n": 8}]


async def test_requests_from_other_sites_are_refused(plugins_url: str) -> None:
    port = plugins_url.split(":")[2].split("/")[0]
    hostile = [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:1"},  # another local app is another origin
        {"Host": f"evil.example:{port}"},  # DNS rebinding: a hostile name resolving to 127.0.0.1
    ]
    async with httpx2.AsyncClient() as http:
        for headers in hostile:
            response = await http.get(plugins_url, headers=headers)
            assert response.status_code in (403, 421), headers
    configs = [
        ServerConfig(name="evil", transport="http", url=plugins_url, headers={"Origin": "http://evil.example"}),
        ServerConfig(
            name="same-site", transport="http", url=plugins_url, headers={"Origin": f"http://localhost:{port}"}
        ),
        ServerConfig(name="no-origin", transport="http", url=plugins_url),
    ]
    async with MCPManager(configs) as manager:
        assert {name: state["status"] for name, state in manager.state().items()} == {
            "evil": "failed",
            "same-site": "ready",
            "no-origin": "ready",
        }


async def test_plugins_can_report_progress_to_an_mcp_client() -> None:
    @tool
    async def count_up(steps: int) -> str:
        """Count, reporting each step."""
        for step in range(1, steps + 1):
            await report_progress(step, steps, f"step {step}")
        return f"counted to {steps}"

    endpoint = build_mcp_server(ToolRegistry([count_up]))  # SSE (which carries notifications) to a client accepting it
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with serve_in_thread(endpoint_app(endpoint)) as port:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("count_up", {"steps": 3}, progress_callback=on_progress)
    assert result.content[0].text == "counted to 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_mcp_serve_speaks_stdio(demo_data: Path) -> None:
    config = ServerConfig(
        name="sidespin",
        transport="stdio",
        command=sys.executable,
        args=["-c", "from sidespin.mcp.server import main; main()"],
        cwd=str(ROOT),
        env={"SIDESPIN_DATA_DIR": str(demo_data), "PYTHONPATH": str(ROOT)},
    )
    async with MCPManager([config], strict=True) as manager:
        names = {item.name for item in manager.tools("sidespin")}
        assert {"query_database", "say_hello", "get_time"} <= names
        result = await manager.call(
            "sidespin", "query_database", {"sql": "SELECT item FROM orders WHERE amount > 200 ORDER BY id"}
        )
        assert json.loads(result.output) == [{"item": "espresso machine"}, {"item": "standing desk"}]


async def test_the_endpoint_survives_its_app_starting_twice(demo_data: Path) -> None:
    endpoint = build_mcp_server(ToolRegistry(load_plugins(plugins_dir())))
    app = endpoint_app(endpoint)
    for _ in range(2):  # e.g. the test suite serving the same app object again
        with serve_in_thread(app) as port:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert (await client.call_tool("say_hello", {"name": "Ada"})).is_error is False
    async with httpx2.AsyncClient() as http:  # outside the lifespan: a plain refusal, not a crash
        with serve_in_thread(endpoint.route("/mcp")) as port:
            assert (await http.get(f"http://127.0.0.1:{port}/mcp")).status_code == 503
