"""Our plugins as a real MCP server: Streamable HTTP for the web app's `/mcp`, stdio for `sidespin mcp-serve`.

Both serve one SDK low-level `Server` whose two handlers read the `ToolRegistry`: `tools/list`
describes every tool, `tools/call` runs it through `registry.execute` (so arguments are coerced,
timeouts apply and failures become `isError` results the caller can read).

Mounting in a Starlette / FastHTML app (the endpoint's lifespan must run inside the app's):

    endpoint = build_mcp_server(registry, port=settings.port)
    app.routes.insert(0, endpoint.route())              # Route("/mcp", endpoint): exactly /mcp, no redirect

    @asynccontextmanager
    async def lifespan(app):
        async with endpoint.lifespan():                  # may run again later: a fresh session manager each time
            yield
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from loguru import logger
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from sidespin import __version__
from sidespin.config import LOOPBACK_HOSTS
from sidespin.tools import Tool, ToolCall, ToolRegistry, ToolResult, load_plugins, plugins_dir

__all__ = [
    "MCPEndpoint",
    "build_lowlevel_server",
    "build_mcp_server",
    "call_result",
    "main",
    "report_progress",
    "request_context",
    "serve_stdio",
]

_REQUEST: ContextVar[ServerRequestContext[Any, Any] | None] = ContextVar("sidespin_mcp_request", default=None)


def request_context() -> ServerRequestContext[Any, Any] | None:
    """The MCP `tools/call` being served in this task, or None when the tool runs for the chat."""
    return _REQUEST.get()


async def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Let an async plugin report progress to the MCP client that called it (a no-op otherwise)."""
    context = _REQUEST.get()
    if context is not None:
        await context.session.report_progress(progress, total, message)


class MCPEndpoint:
    """The `/mcp` endpoint: an ASGI app, and the lifespan it needs running around it.

    The lifespan may be entered again after it ended (a new session manager each time), so
    an app whose lifespan runs more than once (tests, reloads) keeps a working endpoint.
    """

    def __init__(self, server: Server[Any], security: TransportSecuritySettings, json_response: bool) -> None:
        self.server = server
        self._security = security
        self._json_response = json_response
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the SDK's stateless Streamable HTTP session manager while the app runs."""
        manager = StreamableHTTPSessionManager(
            app=self.server, json_response=self._json_response, stateless=True, security_settings=self._security
        )
        async with manager.run():
            self._manager = manager
            logger.info("MCP_ENDPOINT_START stateless responses={}", "json" if self._json_response else "sse")
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager
        if manager is None:
            await Response("the MCP endpoint is not running (its lifespan was not entered)", status_code=503)(
                scope, receive, send
            )
            return
        if scope["type"] == "http":
            # RFC 9110 §5.5: a field value excludes the whitespace around it; the SDK compares Mcp-* values as sent.
            headers = [
                (key, value.strip(b" \t") if key.startswith(b"mcp-") else value) for key, value in scope["headers"]
            ]
            scope = {**scope, "headers": headers}
        await manager.handle_request(scope, receive, send)

    def route(self, path: str = "/mcp") -> Route:
        """A Starlette route serving the endpoint at exactly `path` (no redirect to `path/`)."""
        return Route(path, endpoint=self, methods=["GET", "POST", "DELETE"])


def _mcp_tool(item: Tool) -> types.Tool:
    annotations = types.ToolAnnotations(
        read_only_hint=item.read_only,
        destructive_hint=None if item.read_only else item.destructive,
    )
    return types.Tool(
        name=item.name, description=item.description, input_schema=item.input_schema, annotations=annotations
    )


def _content(result: ToolResult) -> list[types.ContentBlock]:
    blocks: list[types.ContentBlock] = [types.TextContent(text=result.text())]
    for attachment in result.attachments:
        if attachment.get("type") == "image":
            blocks.append(types.ImageContent(data=attachment["data"], mime_type=attachment["mimeType"]))
        elif attachment.get("type") == "audio":
            blocks.append(types.AudioContent(data=attachment["data"], mime_type=attachment["mimeType"]))
    return blocks


def call_result(result: ToolResult) -> types.CallToolResult:
    """A `ToolResult` as MCP sees it: text (JSON for data), attachments, and an object output as structured content."""
    if not result.ok:
        return types.CallToolResult(content=[types.TextContent(text=result.error or "error")], is_error=True)
    if isinstance(result.output, types.CallToolResult):
        return result.output  # a tool that speaks MCP content itself (images, audio, resources) is passed through
    structured = result.output if isinstance(result.output, dict) else None
    return types.CallToolResult(content=_content(result), structured_content=structured)


Refusal = Callable[[Tool], "str | None"]


def build_lowlevel_server(registry: ToolRegistry, *, name: str = "sidespin", policy: Refusal | None = None) -> Server[Any]:
    """The SDK server whose `tools/list` and `tools/call` read and run `registry`.

    `policy(tool)` says why a call may not run here (a tool that waits for a person's approval
    on the chat page), or None: a refused call is an `isError` result with that reason.
    """

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_mcp_tool(item) for item in registry])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in registry:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        refusal = policy(registry.get(params.name)) if policy is not None else None
        if refusal is not None:
            logger.warning("MCP_SERVE_REFUSED {} {}", params.name, refusal)
            return types.CallToolResult(content=[types.TextContent(text=refusal)], is_error=True)
        logger.info("MCP_SERVE_CALL {}", params.name)
        token = _REQUEST.set(ctx)
        try:
            result = await registry.execute(ToolCall(name=params.name, arguments=dict(params.arguments or {})))
        finally:
            _REQUEST.reset(token)
        return call_result(result)

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        return registry.get(tool_name).input_schema if tool_name in registry else None

    return Server(
        name,
        version=__version__,
        instructions="Tools of a sidespin server (its built-in plugins).",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
    )


def _security(
    port: int | None, allowed_hosts: list[str] | None, allowed_origins: list[str] | None
) -> TransportSecuritySettings:
    """DNS-rebinding protection: only this machine's own names for Host, and no Origin or our own."""
    suffix = f":{port}" if port else ":*"
    names = sorted({f"[{host}]" if ":" in host and not host.startswith("[") else host
                    for host in allowed_hosts or LOOPBACK_HOSTS})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[host + suffix for host in names],
        allowed_origins=allowed_origins if allowed_origins is not None else [f"http://{host}{suffix}" for host in names],
    )


def build_mcp_server(
    registry: ToolRegistry,
    *,
    port: int | None = None,
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    json_response: bool = True,
    policy: Refusal | None = None,
) -> MCPEndpoint:
    """The registry's tools over stateless Streamable HTTP (JSON responses), with Host/Origin checks.

    `port` pins the allowed Host and Origin to these names (this machine's loopback names by
    default) on that port (any port if None); `policy` as for `build_lowlevel_server`.
    """
    security = _security(port, allowed_hosts, allowed_origins)
    return MCPEndpoint(build_lowlevel_server(registry, policy=policy), security, json_response)


async def serve_stdio(registry: ToolRegistry) -> None:
    """Serve the registry's tools over stdin/stdout until the client closes stdin."""
    server = build_lowlevel_server(registry)
    logger.info("MCP_SERVE_STDIO tools={}", len(registry))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    """`sidespin mcp-serve`: the built-in plugins over stdio (logs go to stderr; stdout is the protocol)."""
    registry = ToolRegistry(load_plugins(plugins_dir()))
    asyncio.run(serve_stdio(registry))


if __name__ == "__main__":
    main()
