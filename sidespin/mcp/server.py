"""Our plugins as a real MCP server: Streamable HTTP for the web app's `/mcp`, stdio for `sidespin mcp-serve`.

Both serve one SDK low-level `Server`:
- tools: `tools/list` describes every tool of the `ToolRegistry`, `tools/call` runs it through
  `registry.execute` (so arguments are coerced, timeouts apply and failures become `isError`
  results the caller can read);
- resources (read-only, when given the conversations' `TranscriptStore`): each conversation is
  `sidespin://conversations/{id}`, its markdown file as `text/markdown`; an unknown or
  malformed id is an INVALID_PARAMS error carrying the URI (SEP-2164), never a path;
- prompts: `poke`, the salted one-shot prompt asking the model to call one tool (as the chat's
  Poke button does), for the client to send to its own model.

Over HTTP a request whose Accept names `text/event-stream` is answered with an SSE stream, so
the progress a plugin reports (`report_progress`) reaches the client; any other request gets
one JSON response.

Long plugins (`@tool(task=...)`) are served as tasks to a client that declares the
`io.modelcontextprotocol/tasks` extension (`sidespin.mcp.task_store`; what a plugin may do
while it runs: `sidespin.mcp.served`). The endpoint's lifespan cancels the tasks still running.

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
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timezone
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
from sidespin.config import LOOPBACK_HOSTS, Settings, load_settings
from sidespin.errors import ToolNotFound, TranscriptError
from sidespin.mcp.served import InputNeeded, ServedCall, report_progress, request_context, serve_as_task
from sidespin.mcp.task_store import TASKS, TaskStore, missing_tasks_capability, takes_tasks
from sidespin.protocol import poke_prompt
from sidespin.tools import Tool, ToolCall, ToolRegistry, ToolResult, load_plugins, plugins_dir
from sidespin.transcript import TranscriptStore

__all__ = [
    "CONVERSATION_URI",
    "MCPEndpoint",
    "build_lowlevel_server",
    "build_mcp_server",
    "call_result",
    "conversation_handlers",
    "main",
    "prompt_handlers",
    "report_progress",
    "request_context",
    "serve_stdio",
]

CONVERSATION_URI = "sidespin://conversations/"


def _accepts_sse(scope: Scope) -> bool:
    """Whether the request's Accept names `text/event-stream` itself (a bare `*/*` gets plain JSON)."""
    accept = b",".join(value for key, value in scope["headers"] if key == b"accept").decode("latin-1")
    return any(part.split(";")[0].strip().lower() == "text/event-stream" for part in accept.split(","))


class MCPEndpoint:
    """The `/mcp` endpoint: an ASGI app, and the lifespan it needs running around it.

    `json_response`: None answers each request as its Accept asks (SSE when it names
    `text/event-stream`, so notifications such as progress reach the client; JSON otherwise),
    True always JSON, False always SSE. Stateless, so the two SDK session managers behind
    this share nothing but the server.

    The lifespan may be entered again after it ended (new session managers each time), so
    an app whose lifespan runs more than once (tests, reloads) keeps a working endpoint.
    """

    def __init__(self, server: Server[Any], security: TransportSecuritySettings, json_response: bool | None,
                 tasks: TaskStore | None = None) -> None:
        self.server = server
        self.tasks = tasks
        self._security = security
        self._json_response = json_response
        self._managers: dict[bool, StreamableHTTPSessionManager] = {}  # keyed by "answers with JSON"

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """Run the SDK's stateless Streamable HTTP session manager(s) while the app runs."""
        modes = [True, False] if self._json_response is None else [self._json_response]
        async with AsyncExitStack() as stack:
            managers = {
                json_mode: StreamableHTTPSessionManager(
                    app=self.server, json_response=json_mode, stateless=True, security_settings=self._security
                )
                for json_mode in modes
            }
            for manager in managers.values():
                await stack.enter_async_context(manager.run())
            self._managers = managers
            logger.info("MCP_ENDPOINT_START stateless responses={}",
                        {None: "json-or-sse", True: "json", False: "sse"}[self._json_response])
            try:
                yield
            finally:
                self._managers = {}
                if self.tasks is not None:
                    await self.tasks.close()

    def _manager_for(self, scope: Scope) -> StreamableHTTPSessionManager | None:
        if len(self._managers) == 1:
            return next(iter(self._managers.values()))
        wants_json = scope["type"] != "http" or not _accepts_sse(scope)
        return self._managers.get(wants_json)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = self._manager_for(scope)
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
    structured = result.structured if result.structured is not None else (
        result.output if isinstance(result.output, dict) else None)
    return types.CallToolResult(content=_content(result), structured_content=structured)


Refusal = Callable[[Tool], "str | None"]
Handlers = dict[str, Callable[..., Any]]


def _resource_not_found(uri: str, reason: str) -> MCPError:
    """SEP-2164: an unknown resource is INVALID_PARAMS with the URI in `data` (never a path on this machine)."""
    return MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {reason}", data={"uri": uri})


def conversation_handlers(store: TranscriptStore) -> Handlers:
    """`resources/*` over the store's conversations: list, one template, read. Nothing here writes."""

    def resource(conversation_id: str, title: str, mtime: float) -> types.Resource:
        changed = datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds")
        return types.Resource(
            uri=CONVERSATION_URI + conversation_id,
            name=title,
            description=f"Conversation {conversation_id} (markdown transcript)",
            mime_type="text/markdown",
            annotations=types.Annotations(last_modified=changed),
        )

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        listing = await asyncio.to_thread(store.list)
        return types.ListResourcesResult(resources=[resource(*row) for row in listing])

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=CONVERSATION_URI + "{id}",
            name="conversation",
            title="A sidespin conversation",
            description="One conversation's markdown transcript, by its id (as listed by resources/list)",
            mime_type="text/markdown",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        if not uri.startswith(CONVERSATION_URI):
            raise _resource_not_found(uri, f"{uri} is not a sidespin conversation")
        conversation_id = uri.removeprefix(CONVERSATION_URI)
        try:
            store.path(conversation_id)  # the store says which ids exist at all: no path leaves its folder
        except TranscriptError:
            raise _resource_not_found(uri, f"{conversation_id!r} is not a conversation id") from None
        try:
            text = await asyncio.to_thread(store.read, conversation_id)
        except TranscriptError as error:
            logger.info("MCP_RESOURCE_MISSING {} {}", uri, error)
            raise _resource_not_found(uri, f"no readable conversation {conversation_id!r}") from None
        logger.info("MCP_RESOURCE_READ {}", uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    return {
        "on_list_resources": list_resources,
        "on_list_resource_templates": list_templates,
        "on_read_resource": read_resource,
    }


POKE = types.Prompt(
    name="poke",
    title="Poke",
    description="The salted one-shot prompt sidespin's Poke button sends: it teaches the tool-call block "
    "and asks the model to call one tool now, writing only that block.",
    arguments=[
        types.PromptArgument(name="tool", description="the tool to call (one listed by tools/list)", required=True),
        types.PromptArgument(
            name="arguments",
            description='its arguments as a JSON object, e.g. {"timezone": "Europe/Paris"} '
            "(default: example values for the required ones)",
            required=False,
        ),
    ],
)


def _poke_arguments(text: str | None) -> dict[str, Any] | None:
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise MCPError(code=types.INVALID_PARAMS, message="the poke prompt's `arguments` must be a JSON object")
    return value


def prompt_handlers(registry: ToolRegistry) -> Handlers:
    """`prompts/list` and `prompts/get` for the one prompt we serve, `poke`."""

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[POKE])

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != POKE.name:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
        given = params.arguments or {}
        tool_name = given.get("tool", "").strip()
        if not tool_name:
            raise MCPError(code=types.INVALID_PARAMS, message="the poke prompt needs its `tool` argument")
        if tool_name not in registry:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {tool_name}")
        arguments = _poke_arguments(given.get("arguments"))
        try:  # only the asked-for tool, as the chat's Poke: a short prompt, and the model sees no other tool
            text = poke_prompt([registry.get(tool_name)], tool_name=tool_name, arguments=arguments)
        except ToolNotFound as error:
            raise MCPError(code=types.INVALID_PARAMS, message=str(error)) from None
        logger.info("MCP_PROMPT_GET poke tool={}", tool_name)
        return types.GetPromptResult(
            description=f"Poke: call the {tool_name} tool.",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    return {"on_list_prompts": list_prompts, "on_get_prompt": get_prompt}


def build_lowlevel_server(
    registry: ToolRegistry,
    *,
    name: str = "sidespin",
    policy: Refusal | None = None,
    conversations: TranscriptStore | None = None,
    tasks: TaskStore | None = None,
) -> Server[Any]:
    """The SDK server whose `tools/list` and `tools/call` read and run `registry`, with the `poke` prompt.

    `policy(tool)` says why a call may not run here (a tool that waits for a person's approval
    on the chat page), or None: a refused call is an `isError` result with that reason.
    `conversations`: the store whose conversations are served as read-only resources (none if None).
    `tasks`: where long tools' tasks are kept (the server offers the tasks extension); None: every
    call is a plain one, and a tool that requires a task is refused with -32021.
    """

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_mcp_tool(item) for item in registry])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        if params.name not in registry:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        item = registry.get(params.name)
        refusal = policy(item) if policy is not None else None
        if refusal is not None:
            logger.warning("MCP_SERVE_REFUSED {} {}", params.name, refusal)
            return types.CallToolResult(content=[types.TextContent(text=refusal)], is_error=True)
        call = ServedCall.of(ctx, params)
        tool_call = ToolCall(name=params.name, arguments=dict(params.arguments or {}))

        async def run() -> ToolResult:
            return await registry.execute(tool_call, reraise=(MCPError, InputNeeded))

        if item.task is not None and tasks is not None:
            if takes_tasks(ctx) and call.modern:
                logger.info("MCP_SERVE_CALL {} as a task", params.name)
                return await serve_as_task(tasks, call, params.name, run, call_result, asks_first=item.asks_first)
            if item.task == "required":
                raise missing_tasks_capability(f"the tool {params.name!r}")
        logger.info("MCP_SERVE_CALL {}", params.name)
        try:
            return call_result(await call.within(run))
        except InputNeeded as needed:
            return call.input_required(needed)

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        return registry.get(tool_name).input_schema if tool_name in registry else None

    resources = conversation_handlers(conversations) if conversations is not None else {}
    server = Server(
        name,
        version=__version__,
        instructions="Tools of a sidespin server (its built-in plugins)"
        + (", its conversations as resources" if resources else "")
        + " and the `poke` prompt.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=input_schema,
        **prompt_handlers(registry),
        **resources,
    )
    if tasks is not None:
        for method, params_type, handler in tasks.handlers():
            server.add_request_handler(method, params_type, handler)
        server.extensions[TASKS] = {}
    return server


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
    json_response: bool | None = None,
    policy: Refusal | None = None,
    conversations: TranscriptStore | None = None,
) -> MCPEndpoint:
    """The registry's tools (and `conversations`, and the poke prompt) over stateless Streamable HTTP.

    `port` pins the allowed Host and Origin to these names (this machine's loopback names by
    default) on that port (any port if None); `json_response` as for `MCPEndpoint` (None: SSE
    for a client that accepts it, JSON otherwise); `policy` and `conversations` as for
    `build_lowlevel_server`.
    """
    security = _security(port, allowed_hosts, allowed_origins)
    tasks = TaskStore()
    server = build_lowlevel_server(registry, policy=policy, conversations=conversations, tasks=tasks)
    return MCPEndpoint(server, security, json_response, tasks)


async def serve_stdio(registry: ToolRegistry, conversations: TranscriptStore | None = None) -> None:
    """Serve the registry's tools (and `conversations`) over stdin/stdout until the client closes stdin."""
    tasks = TaskStore()
    server = build_lowlevel_server(registry, conversations=conversations, tasks=tasks)
    logger.info("MCP_SERVE_STDIO tools={} conversations={}", len(registry),
                conversations.directory if conversations is not None else "none")
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await tasks.close()


def main(settings: Settings | None = None) -> None:
    """`sidespin mcp-serve`: the built-in plugins and the conversations over stdio (stdout is the protocol)."""
    settings = settings or load_settings()
    registry = ToolRegistry(load_plugins(plugins_dir()))
    asyncio.run(serve_stdio(registry, TranscriptStore(settings.conversations_dir)))


if __name__ == "__main__":
    main()
