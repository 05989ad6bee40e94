"""The tool registry gives every failed call an error kind: what went wrong, not only the words for the model."""

from __future__ import annotations

import asyncio

from sidespin.tools import ToolCall, ToolRegistry, ToolResult, tool


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


@tool
def broken() -> str:
    """Always fails."""
    raise ValueError("out of order")


@tool
async def slow() -> str:
    """Never answers in time."""
    await asyncio.sleep(5)
    return "late"


@tool
async def remote_error() -> ToolResult:
    """Like an MCP tool whose server answered with an error result."""
    return ToolResult(call=ToolCall("remote_error", {}), error="no such city")


async def test_each_failure_has_its_kind_and_success_has_none() -> None:
    with ToolRegistry([double, broken, slow, remote_error]) as registry:
        ok = await registry.execute(ToolCall("double", {"n": "4"}))
        assert ok.ok and ok.output == 8 and ok.kind is None
        cases = {
            "not_found": ToolCall("triple", {"n": 1}),
            "bad_arguments": ToolCall("double", {"n": "four"}),
            "failed": ToolCall("broken", {}),
            "timeout": ToolCall("slow", {}),
        }
        for kind, call in cases.items():
            result = await registry.execute(call, timeout=0.1)
            assert (result.kind, result.ok) == (kind, False), result.error
        mcp = await registry.execute(ToolCall("remote_error", {}))
        assert (mcp.kind, mcp.error) == ("failed", "no such city")
