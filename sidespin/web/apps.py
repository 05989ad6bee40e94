"""MCP Apps on the chat page: where a tool card draws its app, and the routes the page's bridge uses.

A result that carries an app (`{"type": "app", …}` among its attachments, `sidespin.mcp.apps`) is
drawn by `AppFrame` in its tool card; `static/apps.js` frames the sandbox origin
(`sidespin.web.sandbox`) there and speaks the ext-apps JSON-RPC bridge with the app over
`postMessage`. What the app asks of the host comes here, from the page only (the guard refuses
any other origin, the app's opaque one included):

    GET  /apps/view     cid, call_id: the app's HTML, CSP, tool, input and result, from the transcript
                        and the app shelf (never by calling the tool again)
    POST /apps/call     {cid, call_id, name, arguments}: a tool call of the app, only to a tool of its own
                        server that lets apps call it; the conversation's approval policy decides: run
                        it, refuse it, or ask the person ({"status": "ask", "ask": id})
    POST /apps/answer   {cid, ask, allow}: the person's answer to such a question; the call runs only then
    POST /apps/context  {cid, call_id, content, structuredContent}: what the app wants the model to know
                        from the next turn on (kept in the transcript's `app_context` note)

Every refusal is JSON with a reason the page hands to the app as a JSON-RPC error.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fasthtml.common import APIRouter, Div, JSONResponse, Span
from loguru import logger
from starlette.requests import Request

from sidespin.errors import MCPServerError, TranscriptError
from sidespin.events import ToolFinished
from sidespin.mcp.apps import APP_CONTEXT, AppView, context_text, for_app
from sidespin.mcp.content import tool_from_mcp
from sidespin.record import CallRecord
from sidespin.tools import ToolCall, Tool, ToolResult
from sidespin.web.forms import engine_of, json_body, refusal

if TYPE_CHECKING:
    from sidespin.engine import Engine
    from sidespin.mcp.manager import MCPManager
    from sidespin.transcript import Transcript

__all__ = ["ar", "AppFrame", "AppAsks", "app_of"]

ar = APIRouter()

_MAX_ASKS = 64  # questions to the person that wait at once, every app together; the oldest is dropped past that
_ASK_SECONDS = 600.0  # how long such a question may wait for its answer


def app_of(attachments: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The app a result carries among its attachments, or None."""
    return next((item for item in attachments if isinstance(item, dict) and item.get("type") == "app"), None)


def AppFrame(card: CallRecord, app: dict[str, Any]):
    """Where a tool card draws its app: `static/apps.js` frames the sandbox in `.app-stage`, asks the person
    about the app's tool calls in `.app-asks` and says what the app did in `.app-log`. A result that came
    with an imported file draws no app: it did not run here."""
    head = Div(Span("🧩", cls="icon"), Span(f"app of {app.get('server')}", cls="app-name"),
               Span(str(app.get("uri", "")), cls="app-uri"), cls="app-head")
    if card.imported:
        return Div(head, Div("not drawn: this result came with an imported file, it did not run here",
                             cls="app-note"), cls="app-view imported")
    return Div(head, Div(cls="app-stage"), Div(cls="app-asks"), Div(cls="app-log"), cls="app-view",
               data_call_id=card.call.id, data_server=str(app.get("server", "")), data_view=view.to())


@dataclass
class _Ask:
    cid: str
    call_id: str
    server: str
    tool: str
    arguments: dict[str, Any]
    at: float


class AppAsks:
    """Tool calls of apps that wait for a person's answer, by a random id the page shows the answer
    buttons with. At most `_MAX_ASKS` wait; each is answered once, within `_ASK_SECONDS`."""

    def __init__(self) -> None:
        self._waiting: OrderedDict[str, _Ask] = OrderedDict()

    def ask(self, ask: _Ask) -> str:
        key = "ask_" + secrets.token_urlsafe(12)
        self._waiting[key] = ask
        while len(self._waiting) > _MAX_ASKS:
            dropped, old = self._waiting.popitem(last=False)
            logger.warning("APP_ASK_DROPPED {} {} {}: too many questions wait", old.server, old.tool, dropped)
        return key

    def take(self, key: str, cid: str) -> _Ask | None:
        """The question `key` of conversation `cid`, no longer waiting; None if there is no such question."""
        ask = self._waiting.get(key)
        if ask is None or ask.cid != cid:
            return None
        del self._waiting[key]
        return ask if time.monotonic() - ask.at <= _ASK_SECONDS else None


def _asks(request: Request) -> AppAsks:
    state = request.app.state
    if not hasattr(state, "app_asks"):
        state.app_asks = AppAsks()
    return state.app_asks


@dataclass
class _Found:
    transcript: "Transcript"
    result: ToolResult
    app: dict[str, Any]
    manager: "MCPManager"


class _Refused(Exception):
    def __init__(self, reason: str, status: int = 403) -> None:
        super().__init__(reason)
        self.status = status


async def _found(engine: "Engine", cid: str, call_id: str) -> _Found:
    """The result of call `call_id` in conversation `cid` and the app it carries; `_Refused` when there is none,
    or it came with an imported file."""
    manager = engine.mcp
    if manager is None or manager.apps is None:
        raise _Refused("no MCP server is configured, so no app can be drawn", 404)
    try:
        _, transcript = await engine.opened(cid)
    except TranscriptError as error:
        raise _Refused(str(error), 404) from None
    for index, turn in enumerate(transcript.turns):
        for event in turn.events(last=False):
            if isinstance(event, ToolFinished) and event.result.call.id == call_id:
                app = app_of(event.result.attachments)
                if app is None:
                    raise _Refused(f"the result of {call_id!r} has no app", 404)
                if index < transcript.imported_turns:
                    raise _Refused("this result came with an imported file; its app is not drawn")
                return _Found(transcript, event.result, app, manager)
    raise _Refused(f"no result of a call {call_id!r} in this conversation", 404)


def _tool_info(found: _Found) -> dict[str, Any]:
    """The tool as the app's host context names it (as its server listed it, when the server is there)."""
    server, name = str(found.app.get("server")), str(found.app.get("tool"))
    try:
        listed = found.manager.listed_tool(server, name)
    except MCPServerError:
        listed = None
    if listed is None:
        return {"name": name, "inputSchema": {"type": "object"}}
    return listed.model_dump(by_alias=True, exclude_none=True, mode="json", include={"name", "title", "description",
                                                                                   "input_schema"})


def _result_for_app(result: ToolResult) -> dict[str, Any]:
    """A recorded result as the CallToolResult an app reads (`ui/notifications/tool-result`)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": result.text()}]
    content += [{"type": item["type"], "mimeType": item.get("mimeType"), "data": item.get("data")}
                for item in result.attachments if item.get("type") in ("image", "audio") and item.get("data")]
    answer: dict[str, Any] = {"content": content, "isError": not result.ok}
    if result.structured is not None:
        answer["structuredContent"] = result.structured
    return answer


async def _view_of(found: _Found) -> AppView:
    """The app as it was drawn (the shelf); read from its server again only if the shelf lost it."""
    app, shelf = found.app, found.manager.apps
    assert shelf is not None
    view = shelf.get(str(app.get("sha")))
    if view is None:
        logger.info("APP_READ_AGAIN {} {}: not on the shelf", app.get("server"), app.get("uri"))
        try:
            view = await found.manager.read_app(str(app.get("server")), str(app.get("tool")))
        except MCPServerError as error:
            raise _Refused(f"the app cannot be drawn: {error}", 502) from None
        if view is None:
            raise _Refused("the app is not kept here any more and its server does not give it now", 404)
    if view.server != app.get("server"):
        raise _Refused("the app kept under that name belongs to another server")
    return view


def _refused(error: _Refused) -> JSONResponse:
    logger.warning("APP_REFUSED {}", error)
    return refusal(str(error), error.status)


@ar("/apps/view", methods=["get"])
async def view(cid: str, call_id: str, request: Request):
    """The app of one result, to draw: HTML, CSP domains, tool, input and result, and the sandbox's port."""
    try:
        found = await _found(engine_of(request), cid, call_id)
        shown = await _view_of(found)
    except _Refused as error:
        return _refused(error)
    return JSONResponse({
        "server": shown.server, "tool": _tool_info(found), "input": found.result.call.arguments,
        "result": _result_for_app(found.result), "html": shown.html, "csp": shown.csp,
        "prefersBorder": shown.prefers_border, "sandbox": {"port": request.app.state.sandbox_port, "path": "/sandbox"},
    })


def _policy_tool(engine: "Engine", manager: "MCPManager", server: str, name: str) -> Tool:
    """The tool an app asks for, as the approval policy reads it: its name in the registry (maybe `server__tool`),
    or the server's own name for a tool only apps see."""
    listed = manager.listed_tool(server, name)
    if listed is None:
        raise _Refused(f"an app may call only the tools of its own server {server!r}, which has no tool {name!r}")
    for tool in engine.registry.base:
        if tool.source == f"mcp:{server}" and tool.name in (name, f"{server}__{name}"):
            return tool
    return tool_from_mcp(listed, lambda **_: None, source=f"mcp:{server}", timeout=0)


async def _run(found_manager: "MCPManager", server: str, name: str, arguments: dict[str, Any]) -> JSONResponse:
    started = time.perf_counter()
    logger.info("APP_TOOL_CALL {} {}", server, name)
    try:
        answer = await found_manager.call_for_app(server, name, arguments)
    except MCPServerError as error:
        logger.warning("APP_TOOL_FAILED {} {}: {}", server, name, error)
        return refusal(str(error), 502)
    seconds = time.perf_counter() - started
    logger.info("APP_TOOL_DONE {} {} {:.3f}s", server, name, seconds)
    return JSONResponse({"status": "success", "seconds": seconds,
                         "result": answer.model_dump(by_alias=True, exclude_none=True, mode="json")})


def _fields(body: Any, *names: str) -> list[Any]:
    if not isinstance(body, dict):
        raise _Refused("expected a JSON object", 400)
    for name in names:
        if not isinstance(body.get(name), str) or not body[name]:
            raise _Refused(f"the field {name!r} must be text", 400)
    return [body[name] for name in names]


@ar("/apps/call", methods=["post"])
async def call(request: Request):
    """A tool call an app makes: refused, run, or asked of the person, as the conversation's policy says."""
    engine = engine_of(request)
    body = json_body(await request.body())
    try:
        cid, call_id, name = _fields(body, "cid", "call_id", "name")
        arguments = body.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise _Refused("arguments must be a JSON object", 400)
        found = await _found(engine, cid, call_id)
        server = str(found.app.get("server"))
        tool = _policy_tool(engine, found.manager, server, name)
        if not for_app(found.manager.listed_tool(server, name)):
            raise _Refused(f"the tool {name!r} of {server!r} is only for the model, not for its apps")
        if tool.name in engine.tools_off(found.transcript):
            raise _Refused(f"the tool {tool.name!r} is switched off in this conversation")
        # an app is its server's code: its call is checked as one a tool result may have asked for (a change asks)
        # and its paths against its server's folders
        policy = engine.approvals(found.transcript).policy_for(tool, ToolCall(tool.name, arguments), after_result=True)
    except _Refused as error:
        return _refused(error)
    except MCPServerError as error:  # the app's server is gone from mcp.json
        return refusal(str(error), 502)
    if policy == "deny":
        logger.warning("APP_TOOL_DENIED {} {}", server, name)
        return refusal(f"the tool {tool.name!r} is not allowed (approval policy: deny)", 403)
    if policy == "ask":
        key = _asks(request).ask(_Ask(cid, call_id, server, name, arguments, time.monotonic()))
        logger.info("APP_TOOL_ASK {} {} {}", server, name, key)
        return JSONResponse({"status": "ask", "ask": key, "tool": tool.name, "arguments": arguments})
    return await _run(found.manager, server, name, arguments)


@ar("/apps/answer", methods=["post"])
async def answer(request: Request):
    """The person's answer to an app's tool call: it runs now (`allow` true) or the app is told it was refused."""
    engine = engine_of(request)
    body = json_body(await request.body())
    try:
        cid, key = _fields(body, "cid", "ask")
    except _Refused as error:
        return _refused(error)
    asked = _asks(request).take(key, cid)
    if asked is None:
        return refusal("no such question waits (answered already, too old, or never asked)", 404)
    if body.get("allow") is not True:
        logger.info("APP_TOOL_REFUSED {} {} by the person", asked.server, asked.tool)
        return refusal(f"you refused the call of {asked.tool!r}", 403)
    manager = engine.mcp
    if manager is None:
        return refusal("no MCP server is configured", 404)
    return await _run(manager, asked.server, asked.tool, asked.arguments)


@ar("/apps/context", methods=["post"])
async def context(request: Request):
    """What an app wants the model to know from the next turn on; it replaces what that app said before."""
    engine = engine_of(request)
    body = json_body(await request.body())
    try:
        cid, call_id = _fields(body, "cid", "call_id")
        found = await _found(engine, cid, call_id)
    except _Refused as error:
        return _refused(error)
    text = context_text(body.get("content"), body.get("structuredContent"))
    try:
        transcript = engine.store.load(cid)
        contexts = transcript.meta.get(APP_CONTEXT)
        contexts = dict(contexts) if isinstance(contexts, dict) else {}
        contexts.pop(call_id, None)
        if text:
            contexts[call_id] = {"server": found.app.get("server"), "tool": found.app.get("tool"), "text": text}
        transcript.set_meta(APP_CONTEXT, contexts or None)
        engine.store.save(cid, transcript)
    except TranscriptError as error:
        return refusal(str(error), 409)
    logger.info("APP_CONTEXT {} {} conv={} {} chars", found.app.get("server"), call_id, cid, len(text))
    return JSONResponse({"status": "success"})

