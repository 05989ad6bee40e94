"""Kept only so `from sidespin.mcp.client import MCPManager` still works; import from `sidespin.mcp` instead.

The code lives in `sidespin.mcp.connection` (one server's session), `sidespin.mcp.manager`
(every server, and their tools in the registry) and `sidespin.mcp.content` (results as the model reads them).
"""

from sidespin.mcp.connection import STARTUP_TIMEOUT
from sidespin.mcp.content import render_result
from sidespin.mcp.manager import MCPManager

__all__ = ["MCPManager", "render_result", "STARTUP_TIMEOUT"]
