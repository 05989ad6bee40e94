"""Conformance fixture (tasks-*): a task whose tool raises a JSON-RPC error: the task ends `failed` with it."""

import mcp_types as types
from mcp.shared.exceptions import MCPError

from sidespin.tools import tool


@tool(task="optional")
async def protocol_error_job() -> str:
    """Run a job that crashes with an internal error."""
    raise MCPError(code=types.INTERNAL_ERROR, message="the job crashed")
