"""sidespin's web app: the chat page, the Poke button, streaming replies and the tool-executor endpoints.

Thin by design: routes render pages and turn engine events into HTML; all logic
lives in `sidespin/`. Run with `./run` (or `python server.py`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
from typing import Any

from fasthtml.common import (
    A, Button, Details, Div, EventStream, Footer, Form, H1, Header, Hidden, Img, JSONResponse, Li, Link,
    Main, Meta, NotStr, Option, Pre, Redirect, Script, Section, Select, Span, Summary, Textarea, Title, Ul, fast_app,
    serve,
    sse_message,
)
from loguru import logger
from markdown_it import MarkdownIt
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sidespin.config import PROJECT_DIR, load_settings
from sidespin.engine import Engine
from sidespin.errors import BadArguments, ToolNotFound, TranscriptError
from sidespin.guard import BodyLimit, GuardPolicy, OriginGuard, SecurityHeaders
from sidespin.live import Card, LiveTurn, MarkdownStream
from sidespin.logs import LogHub, setup_logging
from sidespin.mcp import build_mcp_server
from sidespin.protocol import poke_target
from sidespin.tools import ToolCall, ToolRegistry, coerce_arguments

settings = load_settings()
STATIC_DIR = PROJECT_DIR / "static"
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def _image_as_link(renderer: Any, tokens: list, index: int, options: Any, env: Any) -> str:
    """A Markdown image in model output is a link, never fetched: an image URL can carry data away."""
    token = tokens[index]
    src = _markdown.utils.escapeHtml(token.attrGet("src") or "")
    alt = _markdown.utils.escapeHtml(token.content or "image")
    return f'<a href="{src}" class="image-link" rel="noopener noreferrer nofollow">🖼 {alt}</a>'


_markdown.add_render_rule("image", _image_as_link)


def render_markdown(text: str) -> NotStr:
    """Model output as HTML: Markdown with raw HTML disabled, so it is never trusted as markup."""
    return NotStr(_markdown.render(text))


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
    state.guard = GuardPolicy.for_settings(state.settings, access_token(state.settings))
    logger.info("GUARD hosts={} token={}", ",".join(sorted(state.guard.allowed_hosts)),
                "required" if state.guard.token else "not needed (loopback)")
    async with Engine.open(state.settings, backend=getattr(state, "backend", None), approval="ask") as engine:
        state.engine = engine
        plugins = ToolRegistry([t for t in engine.registry if t.source.startswith("plugin:")],
                               max_result_chars=state.settings.max_result_chars)
        state.mcp_endpoint = build_mcp_server(
            plugins, port=state.settings.port, allowed_hosts=sorted(state.guard.allowed_hosts),
            policy=engine.outside_policy,
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
    return JSONResponse({"status": "error", "error": error.detail}, status_code=error.status_code)


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
        Link(rel="icon", href="data:,"),  # no favicon request, no 404 in the console
        Script(src="/static/htmx.min.js"),
        Script(src="/static/htmx-ext-sse.min.js"),
        Script(src="/static/app.js", defer=True),
    ),
)
app.state.settings = settings
# FastHTML's catch-all static route joins any path onto a folder without keeping it inside; only static/ is served,
# by Starlette's StaticFiles, which refuses every path that resolves outside it.
app.routes[:] = [r for r in app.routes if getattr(r, "path", "") != "/{fname:path}.{ext:static}"]
app.routes.insert(0, Route("/mcp", endpoint=MCPMount(), methods=["GET", "POST", "DELETE"]))
app.routes.insert(1, Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"))


def engine_of(request: Request) -> Engine:
    return request.app.state.engine


# ---------------------------------------------------------------- components

def ChatMessage(role: str, content: Any, **kwargs: Any):
    return Div(Div(content, cls="bubble"), cls=f"msg {role}", data_role=role, **kwargs)


def ToolCard(card: Card, **kwargs: Any):
    """One tool call: name and arguments, then result or error and duration; collapsed by default."""
    call = card.call
    seconds = f"{card.seconds:.2f} s" if card.seconds is not None else ""
    label = {"proposed": "proposed", "waiting": "waiting for you", "running": "running…",
             "approved": "approved", "refused": "refused",
             "done": f"done · {seconds}", "error": f"error · {seconds}",
             "interrupted": "interrupted · did not complete"}[card.status]
    body = [Div(Span("arguments", cls="k"), Pre(card.arguments), cls="args")]
    if card.status in ("done", "error", "interrupted"):
        body.append(Div(Span("error" if card.status == "error" else "result", cls="k"), Pre(card.result), cls="result"))
    for item in card.attachments:
        if item.get("type") == "image" and item.get("data"):
            body.append(Img(src=f"data:{item.get('mimeType', 'image/png')};base64,{item['data']}", cls="attachment"))
    if card.status == "waiting":
        body.append(ApprovalButtons(card.call))
    if card.status == "interrupted":
        body.append(Button("↻ Run again", cls="rerun", hx_post=rerun.to(), hx_include="#composer [name=cid]",
                           hx_vals=json.dumps({"call_id": call.id}), hx_target="#chat", hx_swap="beforeend",
                           title="sidespin stopped while this call ran; run it again (nothing runs unless you ask)"))
    return Details(
        Summary(Span("🛠️", cls="icon"), Span(call.name, cls="tool-name"), Span(label, cls="tool-status")),
        *body,
        cls=f"tool-call {card.status}", id=f"card-{call.id}", data_tool=call.name, data_status=card.status,
        data_call_id=call.id, **kwargs,
    )


def ApprovalButtons(call: ToolCall):
    labels = {"yo": "Yes, this one", "yO": "Yes, and always for this tool", "ya": "Yes to all",
              "yA": "Yes to all, always", "n": "No"}
    return Div(
        *[Button(text, name="choice", value=key, title=key, cls=f"approve {key}",
                 hx_post=approve.to(), hx_include="#composer [name=cid]", hx_vals=json.dumps({"call_id": call.id}),
                 hx_target="#chat", hx_swap="beforeend") for key, text in labels.items()],
        cls="approvals",
    )


def Thoughts(turn_id: str, thoughts: list[str], **kwargs: Any):
    """Each thought collapsed; an empty one is drawn too (hidden by CSS), so streamed text has a place to go."""
    return Div(*[Details(Summary("💭 thought"), Div(t, cls="thought-text", id=f"{turn_id}-thought-{i}"), cls="thought")
                 for i, t in enumerate(thoughts)], **kwargs)


def Notices(turn: LiveTurn, **kwargs: Any):
    items = [Div(f"⚠️ could not read a tool call: {m.reason}", Pre(m.raw), cls="notice malformed") for m in turn.malformed]
    items += [Div(f"⚠️ {message}", cls="notice") for message in turn.notices]
    return Div(*items, **kwargs)


def AnswerBody(answer: MarkdownStream, body_id: str | None = None, *, done: bool = True, **kwargs: Any):
    """An answer as complete Markdown blocks, each rendered once, then the block being written.

    While the answer streams its last block shows as plain text (a watcher is sent only what was
    added); once done it is rendered like the others. A reload draws the same blocks.
    """
    tail = "".join(answer.tail)
    ids = (lambda part: {"id": f"{body_id}-{part}"}) if body_id else (lambda part: {})
    return Div(
        Div(*[render_markdown(block) for block in answer.blocks], cls="blocks", **ids("blocks")),
        Div(render_markdown(tail) if done else tail, cls="tail" if done else "tail writing", **ids("tail")),
        cls="body markdown", **({"id": body_id} if body_id else {}), **kwargs,
    )


def TurnState(turn: LiveTurn, **kwargs: Any):
    """Whether the turn runs; while it does, its Stop button (Esc does the same)."""
    stop_button = Button("■ Stop", cls="stop", hx_post=stop.to(), hx_vals=json.dumps({"cid": turn.conversation_id}),
                         hx_swap="none", title="Stop this answer (Esc); what was said so far is kept")
    return Span(() if turn.done else stop_button, cls="turn-state", id=f"{turn.id}-state",
                data_state="done" if turn.done else "running", **kwargs)


def TurnParts(turn: LiveTurn, oob: bool = False):
    """The live parts of an assistant turn, each with a stable id so an update replaces it in place."""
    swap = {"hx_swap_oob": "true"} if oob else {}
    return (
        Thoughts(turn.id, turn.thoughts, id=f"{turn.id}-thoughts", cls="thoughts", **swap),
        Div(*[ToolCard(card) for card in turn.cards.values()], id=f"{turn.id}-tools", cls="tools", **swap),
        AnswerBody(turn.answer, f"{turn.id}-body", done=turn.done, **swap),
        Notices(turn, id=f"{turn.id}-notices", cls="notices", **swap),
        TurnState(turn, **swap),
    )


class TurnWatch:
    """What one watcher of a live turn has been sent, so each update carries only what changed.

    The first update is the whole turn (a reconnect redraws everything); after that: the
    answer's new blocks and the text added to its last one, cards whose version moved, the
    text added to the last thought, and the notices and state when they change.
    """

    def __init__(self, turn: LiveTurn) -> None:
        self.turn = turn
        self.first = True
        self.blocks = 0
        self.tail_pieces = 0
        self.cards: dict[str, int] = {}
        self.thoughts = (0, 0)
        self.notices = 0
        self.done = False

    def update(self) -> list[Any]:
        turn, tid, parts = self.turn, self.turn.id, []
        if self.first:
            self.first = False
            parts.extend(TurnParts(turn, oob=True))
        else:
            parts.extend(self._answer_parts())
            parts.extend(ToolCard(card, hx_swap_oob="true") for card in turn.cards.values()
                         if self.cards.get(card.call.id) != card.version and card.call.id in self.cards)
            new_cards = [card for card in turn.cards.values() if card.call.id not in self.cards]
            if new_cards:
                parts.append(Div(*[ToolCard(card) for card in new_cards], hx_swap_oob=f"beforeend:#{tid}-tools"))
            parts.extend(self._thought_parts())
            if len(turn.malformed) + len(turn.notices) != self.notices:
                parts.append(Notices(turn, id=f"{tid}-notices", cls="notices", hx_swap_oob="true"))
            if turn.done and not self.done:
                done_tail = render_markdown("".join(turn.answer.tail))
                parts += [Div(done_tail, id=f"{tid}-body-tail", cls="tail", hx_swap_oob="true"),
                          TurnState(turn, hx_swap_oob="true")]
        self.blocks, self.tail_pieces = len(turn.answer.blocks), len(turn.answer.tail)
        self.cards = {card.call.id: card.version for card in turn.cards.values()}
        self.thoughts = (len(turn.thoughts), len(turn.thoughts[-1]) if turn.thoughts else 0)
        self.notices = len(turn.malformed) + len(turn.notices)
        self.done = turn.done
        return parts

    def _answer_parts(self) -> list[Any]:
        answer, tid = self.turn.answer, self.turn.id
        if len(answer.blocks) > self.blocks:  # blocks completed: add them, restart the tail
            new = [render_markdown(block) for block in answer.blocks[self.blocks:]]
            return [Div(*new, hx_swap_oob=f"beforeend:#{tid}-body-blocks"),
                    Div("".join(answer.tail), id=f"{tid}-body-tail", cls="tail writing", hx_swap_oob="true")]
        if len(answer.tail) > self.tail_pieces:
            return [Span("".join(answer.tail[self.tail_pieces:]), hx_swap_oob=f"beforeend:#{tid}-body-tail")]
        return []

    def _thought_parts(self) -> list[Any]:
        turn, tid = self.turn, self.turn.id
        count, length = self.thoughts
        if len(turn.thoughts) != count:
            return [Thoughts(tid, turn.thoughts, id=f"{tid}-thoughts", cls="thoughts", hx_swap_oob="true")]
        if count and len(turn.thoughts[-1]) > length:
            added = turn.thoughts[-1][length:]
            return [Span(added, hx_swap_oob=f"beforeend:#{tid}-thought-{count - 1}")]
        return []


def LiveAnswer(turn: LiveTurn):
    """An assistant message that streams: the SSE extension applies each update out of band."""
    return Div(
        Div(*TurnParts(turn), cls="bubble"),
        cls="msg assistant live", id=turn.id, data_role="assistant",
        hx_ext="sse", sse_connect=stream.to(tid=turn.id), sse_swap="update", hx_swap="none", sse_close="done",
    )


def HistoryMessages(messages: list[dict[str, Any]], waiting: set[str] = frozenset(),
                    interrupted: set[str] = frozenset()):
    """A conversation's messages as the page shows them after a reload.

    `waiting`: ids of the calls that wait for a person's choice (only those get its buttons);
    `interrupted`: ids of calls a crash cut short (they offer to run again).
    """
    shown: list[Any] = []
    cards: dict[str, Card] = {}
    for message in messages:
        role = message["role"]
        if role == "user":
            shown.append(UserMessage(message))
        elif role == "assistant":
            parts: list[Any] = []
            for item in message.get("tool_calls") or []:
                arguments = item["function"].get("arguments") or "{}"
                try:
                    parsed = json.loads(arguments)
                except json.JSONDecodeError:
                    parsed = {"__malformed__": arguments}
                status = "waiting" if item["id"] in waiting else "proposed"
                card = Card(ToolCall(item["function"]["name"], parsed, item["id"]), status=status)
                cards[item["id"]] = card
                parts.append(card)
            content = message.get("content") or ""
            shown.append((parts, content))
        elif role == "tool" and message.get("tool_call_id") in cards:
            card = cards[message["tool_call_id"]]
            card.result = message.get("content", "")
            card.status = "error" if card.result.startswith("Error:") else "done"
            if card.call.id in interrupted:
                card.status = "interrupted"
    return [
        item if not isinstance(item, tuple) else ChatMessage(
            "assistant",
            (Div(*[ToolCard(c) for c in item[0]], cls="tools"), AnswerBody(MarkdownStream(item[1]))),
        )
        for item in shown
    ]


def UserMessage(message: dict[str, Any]):
    content = message.get("content", "")
    tool = poke_target(content)
    if tool:  # the salted one-shot prompt is for the model; the page shows what the person did
        return ChatMessage("user", Div(f"🏓 Poke: call {tool}", cls="user-text"))
    if len(content) > 600:
        return ChatMessage("user", Details(Summary(content[:120] + "…"), Pre(content), cls="prompt"))
    return ChatMessage("user", Div(content, cls="user-text"))


def ConversationList(engine: Engine, current: str):
    items = [
        Li(A(title, href=chat.to(cid=cid)), cls="current" if cid == current else "")
        for cid, title, _ in engine.listing()
    ]
    return Div(
        # an ASCII plus: Debian's fonts have no fullwidth ＋ (U+FF0B), which drew as an empty box
        Form(Button("+ New chat", cls="new-chat"), method="post", action=new.to()),
        Ul(*items, id="conversations"),
        Footer(A("tools", href="/tools"), " · ", A("health", href="/health"), " · ", A("logs", href=logs.to())),
        cls="sidebar",
    )


def PokeTool(engine: Engine):
    """Which tool the Poke button asks the model to call (get_cat_fact, the seed's, by default)."""
    return Select(*[Option(name, value=name, selected=name == "get_cat_fact") for name in engine.registry.names()],
                  id="poke-tool", name="tool", title="the tool Poke asks for")


def Composer(cid: str, engine: Engine):
    return Form(
        Hidden(name="cid", value=cid),
        Textarea(name="msg", id="msg", placeholder="Ask something… (Enter to send, Shift+Enter for a new line)",
                 rows="2", required=True, autofocus=True),
        Button("Send", type="submit", id="send"),
        Div(Button("🏓 Poke", type="button", id="poke", hx_post=poke.to(), hx_vals=json.dumps({"cid": cid}),
                   hx_include="#poke-tool", hx_target="#chat", hx_swap="beforeend",
                   title="Send the salted one-shot prompt asking the model to call the chosen tool"),
            PokeTool(engine), cls="poke"),
        id="composer", hx_post=send.to(), hx_target="#chat", hx_swap="beforeend",
    )


def StatusDot():
    return Span(Span(cls="dot"), Span("connecting", cls="label"), id="status", data_state="connecting",
                hx_ext="sse", sse_connect=pulse.to(), title="connection to the server")


def ErrorText(message: str, status: int = 400):
    return JSONResponse({"status": "error", "error": message}, status_code=status)


def form_text(**fields: Any) -> list[str]:
    """The values of form fields that must be text: a file sent in their place is a 400, not a crash."""
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise HTTPException(400, f"the field {name!r} must be text, not {type(value).__name__}")
    return [value or "" for value in fields.values()]


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

@rt("/")
async def index(request: Request):
    engine = engine_of(request)
    listing = engine.listing()
    cid = listing[0][0] if listing else engine.conversation().id
    return Redirect(chat.to(cid=cid))


@rt("/c/{cid}")
async def chat(cid: str, request: Request):
    engine = engine_of(request)
    try:
        conversation = engine.conversation(cid)
        running = [t for t in engine.turns.values() if t.conversation_id == conversation.id and not t.done]
        transcript = engine.store.load(cid)
        if not running:  # the file is the truth: re-read it, a hand edit included
            conversation.messages = transcript.to_messages()
    except TranscriptError as error:
        return Title("sidespin"), Main(H1("This conversation cannot be shown"), Pre(str(error)),
                                       A("← back to the chat", href="/"), cls="logs-page")
    return Title("sidespin"), Div(
        ConversationList(engine, conversation.id),
        Main(
            Header(H1("sidespin"), Span(engine.backend.model or engine.backend.name, cls="model"), StatusDot()),
            Section(*HistoryMessages(conversation.messages, {c.id for c in transcript.pending_calls()},
                                     transcript.interrupted_ids()), *[LiveAnswer(t) for t in running], id="chat"),
            Composer(conversation.id, engine),
            cls="main",
        ),
        cls="layout",
    )


@rt
async def new(request: Request):
    conversation = engine_of(request).conversation()
    return Redirect(chat.to(cid=conversation.id))


def find_conversation(engine: Engine, cid: str):
    """The conversation, or the 404 a person can act on."""
    try:
        return engine.conversation(cid), None
    except TranscriptError as error:
        return None, ErrorText(str(error), 404)


@rt
async def send(cid: str, msg: str, request: Request):
    engine = engine_of(request)
    cid, msg = form_text(cid=cid, msg=msg)
    text = msg.strip()
    if not text:
        return ErrorText("the message is empty")
    if len(text) > engine.settings.max_message_chars:
        return ErrorText(f"the message has {len(text)} characters; the limit is {engine.settings.max_message_chars} "
                         "(max_message_chars)", 413)
    conversation, refusal = find_conversation(engine, cid)
    if refusal:
        return refusal
    turn = engine.start_turn(conversation, text)
    return ChatMessage("user", Div(text, cls="user-text")), LiveAnswer(turn)


@rt
async def poke(cid: str, request: Request, tool: str = "get_cat_fact", arguments: str = ""):
    """Send the salted one-shot prompt asking for one call of `tool` (get_cat_fact by default)."""
    engine = engine_of(request)
    cid, tool, arguments = form_text(cid=cid, tool=tool, arguments=arguments)
    conversation, refusal = find_conversation(engine, cid)
    if refusal:
        return refusal
    if tool not in engine.registry:
        return ErrorText(f"no tool named {tool!r} is loaded", 404)
    parsed = json_object(arguments, "arguments")
    turn = engine.start_turn(conversation, None, poke_tool=tool, poke_arguments=parsed)
    return ChatMessage("user", Div(f"🏓 Poke: call {tool}", cls="user-text")), LiveAnswer(turn)


@rt
async def approve(cid: str, call_id: str, choice: str, request: Request):
    """A choice on a waiting tool card; once no call waits, the rally goes on in a new live answer."""
    engine = engine_of(request)
    cid, call_id, choice = form_text(cid=cid, call_id=call_id, choice=choice)
    conversation, refusal = find_conversation(engine, cid)
    if refusal:
        return refusal
    try:
        decision = engine.decide(conversation, choice, call_id)
    except ValueError as error:
        return ErrorText(str(error))
    decided = [ToolCard(Card(call, status="approved" if decision.decided[call.id] else "refused"), hx_swap_oob="true")
               for call in decision.calls if call.id in decision.decided]
    if decision.ready is None:
        return tuple(decided)
    turn = engine.start_turn(conversation, None, decisions=decision.ready)
    return (*decided, LiveAnswer(turn))



@rt
async def stream(tid: str, request: Request):
    """Server-sent updates of one live turn; each is idempotent, so a reconnect just redraws."""
    engine = engine_of(request)
    turn = engine.turns.get(tid)
    if turn is None:
        return ErrorText(f"no such turn {tid!r}", 404)

    async def updates():
        watch = TurnWatch(turn)
        async for version in turn.changes():
            if await request.is_disconnected():
                return
            if version >= 0:
                parts = watch.update()
                if parts:
                    yield sse_message(Div(*parts), event="update")
        yield sse_message(Div(), event="done")

    return EventStream(updates())


@rt
async def rerun(cid: str, call_id: str, request: Request):
    """Run a call again that a crash interrupted, by a person's choice; the rally goes on after it."""
    engine = engine_of(request)
    cid, call_id = form_text(cid=cid, call_id=call_id)
    conversation, refusal = find_conversation(engine, cid)
    if refusal:
        return refusal
    try:
        turn = engine.rerun(conversation, call_id)
    except ValueError as error:
        return ErrorText(str(error))
    return LiveAnswer(turn)


@rt
async def stop(cid: str, request: Request):
    """Stop the running answer of a conversation; the transcript keeps what was said, marked stopped."""
    (cid,) = form_text(cid=cid)
    stopped = engine_of(request).stop(cid)
    return JSONResponse({"status": "success", "stopped": [turn.id for turn in stopped]})


@rt
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
        return ErrorText('expected a JSON object like {"tool": "say_hello", "params": {"name": "World"}}')
    params = body.get("params", {})
    if params is None:
        params = {}
    try:
        target = engine.registry.get(body["tool"])
        coerce_arguments(target.input_schema, params)
    except ToolNotFound as error:
        return ErrorText(str(error), 404)
    except BadArguments as error:
        return ErrorText(f"bad arguments for {body['tool']!r}: {error}")
    refusal = engine.outside_policy(target)
    if refusal is not None:
        logger.warning("TOOL_CALL_REFUSED {} {}", target.name, refusal)
        return ErrorText(refusal, 403)
    result = await engine.registry.execute(ToolCall(body["tool"], params), timeout=engine.settings.tool_timeout)
    if not result.ok:
        status = 504 if "did not answer within" in (result.error or "") else 200
        return JSONResponse({"status": "error", "error": result.error, "seconds": result.seconds}, status_code=status)
    return JSONResponse(
        {"status": "success", "result": result.output, "seconds": result.seconds},
        status_code=200,
    )


@rt
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


@rt
async def health(request: Request):
    return JSONResponse(engine_of(request).health())


# ---------------------------------------------------------------- logs

@rt
async def logs(request: Request):
    return Title("sidespin · logs"), Main(
        Header(H1("Server log"), A("← chat", href="/")),
        Pre(*[line for line in request.app.state.log_hub.recent()], id="log", cls="log",
            hx_ext="sse", sse_connect=logs_stream.to(), sse_swap="line", hx_swap="beforeend"),
        cls="logs-page",
    )


@rt("/logs-stream")
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


if __name__ == "__main__":
    serve(host=settings.host, port=settings.port, reload=False)
