"""A stdio MCP server whose tool asks the person through a 2026-07-28 input-required result.

`ask_color` answers the first call with an `InputRequiredResult` carrying one elicitation; the
client's retry brings the answer, and the tool says what it received: `you chose green`,
`you declined`, `you cancelled` (with ` for LABEL` when called with a `label`).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

QUESTION = types.ElicitRequest(params=types.ElicitRequestFormParams(
    message="Which color?",
    requested_schema={"type": "object", "properties": {"color": {"type": "string", "enum": ["red", "green"]}},
                      "required": ["color"]},
))


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"label": {"type": "string", "description": "named in the answer"}}}
    return types.ListToolsResult(tools=[types.Tool(name="ask_color", description="Asks for a color.",
                                                   input_schema=schema)])


async def call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    answer = (params.input_responses or {}).get("color")
    if answer is None:
        return types.InputRequiredResult(input_requests={"color": QUESTION}, request_state="asked")
    assert isinstance(answer, types.ElicitResult)
    said = {"decline": "you declined", "cancel": "you cancelled"}
    text = f"you chose {(answer.content or {}).get('color')}" if answer.action == "accept" else said[answer.action]
    label = (params.arguments or {}).get("label")
    if label:
        text += f" for {label}"
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    server = Server("asker", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
