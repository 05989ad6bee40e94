"""sidespin's web app: the chat page, the Poke button, streaming replies and the tool-executor endpoints.

Thin by design: routes render pages and turn engine events into HTML; all logic
lives in `sidespin/`. Run with `./run` (or `python server.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import sys
from typing import Any

import uvicorn

from fasthtml.common import (
    A, Div, EventStream, H1, Header, JSONResponse, Link, Main, Meta, Pre, Redirect, Script, Section, Span, Title,
    fast_app, sse_message,
)
from loguru import logger
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sidespin.config import PROJECT_DIR, load_settings
from sidespin.engine import Engine
from sidespin.errors import AttachmentRefused, BadArguments, ToolNotFound, TranscriptError
from sidespin.guard import BodyLimit, GuardPolicy, OriginGuard, SecurityHeaders, TokenRedaction
from sidespin.logs import LogHub, setup_logging
from sidespin.mcp import build_mcp_server
from sidespin.mcp.auth import CALLBACK_PATH
from sidespin.protocol import poke_note, poke_prompt
from sidespin.tools import ToolCall, ToolRegistry, coerce_arguments
from sidespin.web import composer
from sidespin.web import models as model_picker
from sidespin.web import oauth as oauth_web
from sidespin.web import questions as questions_web
from sidespin.web import servers as servers_web
from sidespin.web import sidebar
from sidespin.web import versions as versions_web
from sidespin.web.forms import refusal, text_fields
from sidespin.web.live import TurnBoard, user_dom_id
from sidespin.web.page import (
    ChatHistory, Composer, LiveAnswer, StatusDot, ToolCard, TurnWatch, UserMessage,
)

settings = load_settings()
STATIC_DIR = PROJECT_DIR / "static"
# uvicorn's access log writes every request's query: a visit with ?token= must not put the token there
# (a logger's filters outlive uvicorn's dictConfig, which replaces only its handlers)
logging.getLogger("uvicorn.access").addFilter(TokenRedaction())


def access_token(settings: Any) -> str | None:
    """The token a non-loopback bind requires: configured, or made now and printed once (as Jupyter does)."""
    if not settings.public_bind:
        return None
    if settings.auth_token:
        logger.warning("PUBLIC_BIND host={} port={}: every request needs the configured token", settings.host,
                       settings.port)
        return settings.auth_token
    token = secrets.token_urlsafe(24)
    logger.warning("PUBLIC_BIND host={} port={}: every request needs the access token printed below",
                   settings.host, settings.port)
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    print(f"\n  sidespin is reachable from other machines. Open it with its access token:\n"
          f"    http://{shown}:{settings.port}/?token={token}\n", file=sys.stderr, flush=True)
    return token


async def lifespan(app: Any):
    """FastHTML runs this async generator around the server's life: engine up before, closed after."""
    state = app.state
    hub: LogHub = setup_logging(state.settings.logs_dir)
    state.log_hub = hub
    # the OAuth callback is where another site (the authorization server) sends the browser back
    state.guard = GuardPolicy.for_settings(state.settings, access_token(state.settings),
                                           cross_site_gets=frozenset({CALLBACK_PATH}))
    logger.info("GUARD hosts={} token={}", ",".join(sorted(state.guard.allowed_hosts)),
                "required" if state.guard.token else "not needed (loopback)")
    async with Engine.open(state.settings, backend=getattr(state, "backend", None), approval="ask") as engine:
        state.engine = engine
        state.board = TurnBoard(engine)
        plugins = ToolRegistry([t for t in engine.registry if t.source.startswith("plugin:")],
                               max_result_chars=state.settings.max_result_chars)
        state.mcp_endpoint = build_mcp_server(
            plugins, port=state.settings.port, allowed_hosts=sorted(state.guard.allowed_hosts),
            policy=engine.outside_policy, conversations=engine.store,
        )
        with plugins:
            async with state.mcp_endpoint.lifespan():
                yield
    hub.close()


class MCPMount:
    """`/mcp`: the built-in plugins as a real MCP server (stateless Streamable HTTP), built in the lifespan."""

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        await scope["app"].state.mcp_endpoint(scope, receive, send)


async def http_error(request: Request, error: HTTPException):
    """Every refusal (bad JSON, a missing field, an unknown path) as JSON with a reason."""
    logger.info("HTTP_REFUSED {} {} {} {}", request.method, request.url.path, error.status_code, error.detail)
    return JSONResponse({"status": "error", "error": error.detail}, status_code=error.status_code,
                        headers=error.headers)  # a 405's Allow names the method to use


async def too_deep(request: Request, error: RecursionError):
    """FastHTML reads a JSON body before any route: a body nested thousands deep is the sender's mistake."""
    return await http_error(request, HTTPException(400, "the body is nested too deeply to read"))


async def internal_error(request: Request, error: Exception):
    """The top edge: a bug becomes a JSON 500 with a reason in the log, and the server keeps serving."""
    logger.opt(exception=error).error("HTTP_INTERNAL_ERROR {} {}", request.method, request.url.path)
    return JSONResponse({"status": "error", "error": f"internal error ({type(error).__name__}); see the server log"},
                        status_code=500)


app, rt = fast_app(
    default_hdrs=False,
    pico=False,
    surreal=False,
    title="sidespin",
    canonical=False,  # FastHTML's canonical link says https, which a local server is not
    lifespan=lifespan,
    exception_handlers={HTTPException: http_error, RecursionError: too_deep, Exception: internal_error},
    middleware=[Middleware(SecurityHeaders), Middleware(OriginGuard), Middleware(BodyLimit)],
    hdrs=(
        Meta(name="viewport", content="width=device-width, initial-scale=1"),
        # no inline styles or eval under our CSP: htmx must not inject its indicator <style> or run hx-on code
        Meta(name="htmx-config",
             content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'),
        Link(rel="stylesheet", href="/static/app.css"),
        Link(rel="stylesheet", href="/static/servers.css"),
        Link(rel="stylesheet", href="/static/questions.css"),
        Link(rel="icon", href="data:,"),  # no favicon request, no 404 in the console
        Script(src="/static/htmx.min.js"),
        Script(src="/static/htmx-ext-sse.min.js"),
        Script(src="/static/app.js", defer=True),
        Link(rel="stylesheet", href="/static/composer.css"),
        Link(rel="stylesheet", href="/static/composer-updates.css"),
        Script(src="/static/composer.js", defer=True),
    ),
)
app.state.settings = settings
# FastHTML's catch-all static route joins any path onto a folder without keeping it inside; only static/ is served,
# by Starlette's StaticFiles, which refuses every path that resolves outside it.
app.routes[:] = [r for r in app.routes if getattr(r, "path", "") != "/{fname:path}.{ext:static}"]
app.routes.insert(0, Route("/mcp", endpoint=MCPMount(), methods=["GET", "POST", "DELETE"]))
app.routes.insert(1, Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"))
versions_web.install(rt)  # edit, regenerate, fork, export, import
sidebar.install(rt)  # search, rename, delete, trash, restore
servers_web.install(rt)  # the Servers panel: status, restart, tools on/off, the tool list's cost
oauth_web.install(rt)  # /oauth/{server}/sign-in, /oauth/callback
composer.install(rt)  # `@` resources and `/` prompts in the composer
questions_web.install(rt)  # a person's answer to a server's question (elicitation)


def engine_of(request: Request) -> Engine:
    return request.app.state.engine


def board_of(request: Request) -> TurnBoard:
    return request.app.state.board


# ---------------------------------------------------------------- helpers

def json_body(raw: bytes) -> Any:
    """A request body as JSON; anything unreadable (bad UTF-8, bad JSON, nesting too deep) is a 400."""
    try:
        return json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HTTPException(400, f"the body is not valid JSON: {error}") from None
    except RecursionError:
        raise HTTPException(400, "the JSON is nested too deeply") from None


def json_object(text: str, what: str) -> dict[str, Any] | None:
    """A form field holding a JSON object (or nothing)."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise HTTPException(400, f"{what} are not valid JSON: {error}") from None
    except RecursionError:
        raise HTTPException(400, f"{what} are nested too deeply") from None
    if not isinstance(value, dict):
        raise HTTPException(400, f"{what} must be a JSON object like {{\"name\": \"World\"}}, not {type(value).__name__}")
    return value


# ---------------------------------------------------------------- pages

@rt("/", methods=["get"])
async def index(request: Request):
    engine = engine_of(request)
    listing = engine.listing()
    cid = listing[0][0] if listing else engine.conversation().id
    return Redirect(chat.to(cid=cid))


@rt("/c/{cid}", methods=["get"])
async def chat(cid: str, request: Request, start: str = ""):
    engine = engine_of(request)
    try:
        # the turns playing now are taken first: one that ends while the file is read is still drawn, from its record
        running = board_of(request).running(cid)
        conversation, transcript = await engine.opened(cid)  # off the event loop: a long file takes seconds
    except TranscriptError as error:
        return Title("sidespin"), Main(H1("This conversation cannot be shown"), Pre(str(error)),
                                       A("← back to the chat", href="/"), cls="logs-page")
    return Title("sidespin"), Div(
        sidebar.Sidebar(engine.listing(conversation.id), conversation.id, len(engine.store.trashed()),
                        await servers_web.ServersPanel(engine, conversation.id, transcript)),
        Main(
            Header(H1("sidespin"), model_picker.ModelPicker(engine, conversation.id,
                                                            engine.pool.choose(transcript.meta.get("model"))),
                   versions_web.ExportLink(conversation.id), StatusDot()),
            Section(*await ChatHistory(transcript, running, conversation.id,
                                       int(start) if start.isdigit() else None), id="chat"),
            Composer(conversation.id, engine.registry_for(transcript).names()),
            cls="main",
        ),
        cls="layout",
    )


@rt(methods=["post"])
async def new(request: Request):
    conversation = engine_of(request).conversation()
    return Redirect(chat.to(cid=conversation.id))


def find_conversation(engine: Engine, cid: str):
    """The conversation, or the 404 a person can act on."""
    try:
        return engine.conversation(cid), None
    except TranscriptError as error:
        return None, refusal(str(error), 404)


@rt(methods=["post"])
async def send(cid: str, msg: str, request: Request):
    engine = engine_of(request)
    cid, msg = text_fields(cid=cid, msg=msg)
    text = msg.strip()
    if not text:
        return refusal("the message is empty")
    if len(text) > engine.settings.max_message_chars:
        return refusal(f"the message has {len(text)} characters; the limit is {engine.settings.max_message_chars} "
                         "(max_message_chars)", 413)
    conversation, refused = find_conversation(engine, cid)
    if refused:
        return refused
    try:
        message = await composer.message_of(request, text, conversation.id)  # `@` resources, read now
    except AttachmentRefused as error:
        return refusal(f"{error}; nothing was sent", 422)
    turn = board_of(request).start(conversation, message.text, note=message.note or None)
    return (UserMessage(message.text, versions_web.UserTools(turn.index, message.text), note=message.note,
                        id=user_dom_id(turn.index)), LiveAnswer(turn))


@rt(methods=["post"])
async def poke(cid: str, request: Request, tool: str = "get_cat_fact", arguments: str = ""):
    """Send the salted one-shot prompt asking for one call of `tool` (get_cat_fact by default)."""
    engine = engine_of(request)
    cid, tool, arguments = text_fields(cid=cid, tool=tool, arguments=arguments)
    conversation, refused = find_conversation(engine, cid)
    if refused:
        return refused
    if tool not in engine.registry:
        return refusal(f"no tool named {tool!r} is loaded", 404)
    if tool in engine.tools_off(engine.store.load(conversation.id)):
        return refusal(f"the tool {tool!r} is switched off for this conversation (Servers panel)", 409)
    parsed = json_object(arguments, "arguments")
    turn = board_of(request).start(conversation, None, poke_tool=tool, poke_arguments=parsed)
    # drawn from the prompt and note the turn writes (its salt aside), as a reload draws it: the same line and buttons
    prompt, note = poke_prompt([engine.registry.get(tool)], tool_name=tool, arguments=parsed), poke_note(tool, parsed)
    return (UserMessage(prompt, versions_web.UserTools(turn.index, prompt, note=note), note=note,
                        id=user_dom_id(turn.index)), LiveAnswer(turn))


@rt(methods=["post"])
async def approve(cid: str, call_id: str, choice: str, request: Request):
    """A choice on a waiting tool card; once no call waits, the rally goes on in a new live answer."""
    engine = engine_of(request)
    cid, call_id, choice = text_fields(cid=cid, call_id=call_id, choice=choice)
    conversation, refused = find_conversation(engine, cid)
    if refused:
        return refused
    try:
        decision = engine.decide(conversation, choice, call_id)
    except ValueError as error:
        return refusal(str(error))
    if decision.ready is None:  # others still wait: redraw the cards just decided
        record = engine.store.load(conversation.id).record()
        return tuple(ToolCard(record.calls[call_id], hx_swap_oob="true") for call_id in decision.decided
                     if call_id in record.calls)
    turn = board_of(request).start(conversation, None, decisions=decision.ready)
    return LiveAnswer(turn, replace=True)  # the turn goes on in its own message


@rt(methods=["get"])
async def stream(tid: str, request: Request):
    """Server-sent updates of one live turn: the first draws the whole turn, so a reconnect just redraws."""
    turn = board_of(request).get(tid)
    if turn is None:
        return refusal(f"no such turn {tid!r}", 404)

    async def updates():
        watch = TurnWatch(turn)
        async for version in turn.changes():
            if await request.is_disconnected():
                return
            sent = "".join(watch.messages()) if version >= 0 else ""
            if sent:
                yield sent  # one write (one HTTP chunk) for what changed in a frame
        yield sse_message(Div(), event="done")

    return EventStream(updates())


@rt(methods=["post"])
async def rerun(cid: str, call_id: str, request: Request):
    """Run a call again that a crash interrupted, by a person's choice; the rally goes on after it."""
    engine = engine_of(request)
    cid, call_id = text_fields(cid=cid, call_id=call_id)
    conversation, refused = find_conversation(engine, cid)
    if refused:
        return refused
    try:
        decisions = engine.rerun(conversation, call_id)
    except ValueError as error:
        return refusal(str(error))
    return LiveAnswer(board_of(request).start(conversation, None, decisions=decisions), replace=True)


@rt(methods=["post"])
async def stop(cid: str, request: Request):
    """Stop the running answer of a conversation; the transcript keeps what was said, marked stopped."""
    (cid,) = text_fields(cid=cid)
    stopped = board_of(request).stop(cid)
    return JSONResponse({"status": "success", "stopped": [turn.key for turn in stopped]})


@rt(methods=["get"])
async def pulse(request: Request):
    """A heartbeat the status dot listens to: connected while it beats, reconnecting when it stops."""
    async def beats():
        yield sse_message(Span("connected"), event="pulse")
        while not await request.is_disconnected():
            await asyncio.sleep(10)
            yield sse_message(Span("connected"), event="pulse")

    return EventStream(beats())


# ---------------------------------------------------------------- tool executor and JSON endpoints

@rt("/mcp-tool-executor", methods=["post"])
async def mcp_tool_executor(request: Request):
    """Run one registered tool: {"tool": name, "params": {...}} → {"status": "success", "result": ...}."""
    engine = engine_of(request)
    body = json_body(await request.body())
    if not isinstance(body, dict) or not isinstance(body.get("tool"), str):
        return refusal('expected a JSON object like {"tool": "say_hello", "params": {"name": "World"}}')
    params = body.get("params", {})
    if params is None:
        params = {}
    try:
        target = engine.registry.get(body["tool"])
        coerce_arguments(target.input_schema, params)
    except ToolNotFound as error:
        return refusal(str(error), 404)
    except BadArguments as error:
        return refusal(f"bad arguments for {body['tool']!r}: {error}")
    why = engine.outside_policy(target)
    if why is not None:
        logger.warning("TOOL_CALL_REFUSED {} {}", target.name, why)
        return refusal(why, 403)
    result = await engine.registry.execute(ToolCall(body["tool"], params), timeout=engine.settings.tool_timeout)
    if not result.ok:
        status = 504 if result.kind == "timeout" else 200
        return JSONResponse({"status": "error", "error": result.error, "kind": result.kind, "seconds": result.seconds},
                            status_code=status)
    return JSONResponse(
        {"status": "success", "result": result.output, "seconds": result.seconds},
        status_code=200,
    )


@rt(methods=["get"])
async def tools(request: Request):
    engine = engine_of(request)
    return JSONResponse({
        "count": len(engine.registry),
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema, "source": t.source,
             "read_only": t.read_only, "formatter": t.formatter is not None}
            for t in engine.registry
        ],
    })


@rt(methods=["get"])
async def health(request: Request):
    return JSONResponse(engine_of(request).health())


# ---------------------------------------------------------------- logs

@rt(methods=["get"])
async def logs(request: Request):
    return Title("sidespin · logs"), Main(
        Header(H1("Server log"), A("← chat", href="/")),
        Pre(*[line for line in request.app.state.log_hub.recent()], id="log", cls="log",
            hx_ext="sse", sse_connect=logs_stream.to(), sse_swap="line", hx_swap="beforeend"),
        cls="logs-page",
    )


@rt("/logs-stream", methods=["get"])
async def logs_stream(request: Request):
    hub: LogHub = request.app.state.log_hub

    async def lines():
        async with hub.subscribe() as queue:
            while not await request.is_disconnected():
                try:
                    line = await asyncio.wait_for(queue.get(), timeout=15)
                except asyncio.TimeoutError:
                    continue
                yield sse_message(Span(line), event="line")

    return EventStream(lines())


model_picker.install(rt)


class Uvicorn(uvicorn.Server):
    """uvicorn that stops promptly with a page open: a page's live streams (the pulse, a turn, the Servers panel)
    never end by themselves, so once short requests had `STREAMS_GRACE` seconds to finish, the connections still
    open are closed. Each stream then ends as on a closed tab (no traceback), and the app's shutdown runs (MCP
    servers and the model stopped). `timeout_graceful_shutdown` stays as the backstop."""

    STREAMS_GRACE = 1.0

    async def shutdown(self, sockets: list | None = None) -> None:
        closing = asyncio.create_task(self._close_streams())
        try:
            await super().shutdown(sockets)
        finally:
            closing.cancel()

    async def _close_streams(self) -> None:
        await asyncio.sleep(self.STREAMS_GRACE)
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()


def uvicorn_config(host: str, port: int, **options: Any) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, lifespan="on", timeout_graceful_shutdown=5, **options)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled (as uvicorn.run hides)
        Uvicorn(uvicorn_config(settings.host, settings.port)).run()
