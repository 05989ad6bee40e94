"""Run an MCPManager over the slow server, print the server's pid, then wait to be interrupted (Ctrl-C)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from sidespin.mcp import MCPManager, ServerConfig  # noqa: E402


async def main() -> None:
    server = ServerConfig(
        name="slow", transport="stdio", command=sys.executable, args=[str(Path(__file__).with_name("slow_server.py"))]
    )
    async with MCPManager([server], strict=True) as manager:
        result = await manager.call_tool("slow", "pid", {})
        print(result.content[0].text, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
