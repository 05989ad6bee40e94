"""Real MCP for sidespin: external servers from `mcp.json`, and our plugins served as an MCP server.

configs = load_mcp_config(settings.mcp_config)
async with MCPManager(configs) as manager:
    manager.register_into(registry)

endpoint = build_mcp_server(registry, port=settings.port)   # mount endpoint.route() at /mcp

`config` reads `mcp.json`; `connection` holds one external server's session; `manager` runs them
all and puts their tools in the registry; `auth` signs in to remote servers with OAuth (tokens,
pending sign-ins); `content` turns what they answer into `ToolResult`s;
`server` serves our own registry over MCP.
"""

from sidespin.mcp.config import DEFAULT_CALL_TIMEOUT, ServerConfig, load_mcp_config, parse_mcp_config
from sidespin.mcp.connection import STARTUP_TIMEOUT
from sidespin.mcp.content import render_result
from sidespin.mcp.manager import MCPManager
from sidespin.mcp.server import MCPEndpoint, build_lowlevel_server, build_mcp_server, serve_stdio

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "STARTUP_TIMEOUT",
    "MCPEndpoint",
    "MCPManager",
    "ServerConfig",
    "build_lowlevel_server",
    "build_mcp_server",
    "load_mcp_config",
    "parse_mcp_config",
    "render_result",
    "serve_stdio",
]
