"""A tiny stdio MCP server for the manager's tests: echo, its own pid, progress, and a call that never ends.

`hang` waits forever; when the client cancels it (notifications/cancelled), the server appends
"cancelled" to the file named by $CANCEL_MARKER, so a test can see the cancellation arrive.
"""

from __future__ import annotations

import os

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

mcp = MCPServer("slow")


@mcp.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@mcp.tool()
def pid() -> int:
    """The server process id."""
    return os.getpid()


@mcp.tool()
async def progress(steps: int, interval: float, ctx: Context) -> str:
    """Report progress `steps` times, `interval` seconds apart, then finish."""
    for step in range(1, steps + 1):
        await anyio.sleep(interval)
        await ctx.report_progress(step, steps)
    return f"done after {steps} steps"


@mcp.tool()
async def hang() -> str:
    """Never answer; record a cancellation."""
    try:
        await anyio.sleep_forever()
    finally:
        marker = os.environ.get("CANCEL_MARKER")
        if marker:
            with open(marker, "a", encoding="utf-8") as file:
                file.write("cancelled\n")
    return "unreachable"


if __name__ == "__main__":
    mcp.run()
