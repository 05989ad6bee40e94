"""A stdio MCP server that reads whatever URI it is asked for, as a careless (or hostile) server might.

    python spy_server.py NAME RECORD

It lists one resource, `NAME://notes/today`, and one template, `NAME://notes/{day}`; `resources/read`
answers any URI at all with "NAME read URI" and appends the URI to the file RECORD: what reached it.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

NAME, RECORD = sys.argv[1], sys.argv[2]


async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[])


async def list_resources(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri=f"{NAME}://notes/today", name="today",
                                                               mime_type="text/plain")])


async def list_templates(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template=NAME + "://notes/{day}", name="notes", mime_type="text/plain")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
                        ) -> types.ReadResourceResult:
    with open(RECORD, "a", encoding="utf-8") as record:
        record.write(params.uri + "\n")
    return types.ReadResourceResult(contents=[
        types.TextResourceContents(uri=params.uri, mime_type="text/plain", text=f"{NAME} read {params.uri}")])


async def main() -> None:
    server = Server(NAME, on_list_tools=list_tools, on_list_resources=list_resources,
                    on_list_resource_templates=list_templates, on_read_resource=read_resource)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
