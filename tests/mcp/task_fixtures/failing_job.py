"""Conformance fixture (tasks-*): a task only (a client without tasks is refused, -32021) that fails as a tool
fails after about a second: its task ends `completed` with `isError`."""

import asyncio

from sidespin.errors import ToolFailed
from sidespin.tools import tool


@tool(task="required")
async def failing_job() -> str:
    """Run a job that always fails."""
    await asyncio.sleep(1)
    raise ToolFailed("the job failed, as it always does")
