"""9 (round three). A single 60 MB line from a stdio server ended as the 15 s timeout (the SDK's reader joined each
chunk to the line so far, in time growing with the square of its length). Now each line is cut to size as it
arrives (`sidespin.mcp.lines`): the answer comes, cut at the result cap with a note, well within the timeout, and
the server goes on answering. A real stdio server (tests/security/servers/hostile_server.py) sends it."""

from __future__ import annotations

import sys
from pathlib import Path

from sidespin.mcp import MCPManager
from sidespin.mcp.config import ServerConfig
from sidespin.tools import ToolCall, ToolRegistry

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_server.py"
CAP = 100_000  # max_result_chars


async def test_a_60_mb_line_is_cut_at_the_result_cap_with_a_note_and_never_times_out() -> None:
    config = ServerConfig(name="big", transport="stdio", command=sys.executable,
                          args=[str(HOSTILE), "big", "60000000"], timeout=15)  # the timeout it used to end as
    registry = ToolRegistry(max_result_chars=CAP)
    async with MCPManager([config], startup_timeout=60, max_result_chars=CAP) as manager:
        manager.register_into(registry)
        for _ in range(2):  # and the server answers the next call as ever
            result = await registry.execute(ToolCall("big_text", {}))
            assert result.ok and result.kind is None, result.error
            text = result.text()
            assert text.startswith("AAAA") and len(text) <= CAP
            assert text.endswith("more bytes not shown; the server sent 60,000,000]")
            assert "[cut: 59,9" in text
