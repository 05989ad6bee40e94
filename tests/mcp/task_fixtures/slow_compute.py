"""Conformance fixture (tasks-*): sleeps `seconds`, reporting each second, then answers; served as a task to a
client that takes tasks, as a plain call to others. Cancelled, it stops at once."""

import asyncio

from sidespin.mcp.served import report_progress
from sidespin.tools import tool


@tool(read_only=True, task="optional", timeout=600)
async def slow_compute(seconds: float, label: str = "") -> str:
    """Compute slowly: wait `seconds` seconds (0 for an immediate answer), then say so."""
    whole = int(seconds)
    for second in range(whole):
        await report_progress(second, whole, f"computing {label}".strip())
        await asyncio.sleep(1)
    await asyncio.sleep(seconds - whole)
    return f"computed {label or 'it'} in {seconds:g} s"
