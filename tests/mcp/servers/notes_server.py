"""A stdio MCP server of the 2026-07-28 revision whose one resource changes: `notes://today`.

Built with the SDK's `MCPServer`, which serves `subscriptions/listen` (and so declares
`resources.subscribe`). The tool `write_note` replaces the note's text and publishes
`ResourceUpdated("notes://today")` to the listen streams that follow it.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

NOTE = {"text": "first draft"}
server = MCPServer("notes")


@server.resource("notes://today", name="today", mime_type="text/plain")
def today() -> str:
    """Today's note."""
    return NOTE["text"]


@server.tool()
async def write_note(text: str, ctx: Context) -> str:
    """Replace today's note."""
    NOTE["text"] = text
    await ctx.notify_resource_updated("notes://today")
    return "written"


if __name__ == "__main__":
    server.run("stdio")
