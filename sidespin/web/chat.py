"""The chat page: a conversation's messages, the composer, and the routes that start a turn.

    GET  /              the most recent conversation (a first, empty one on the first visit)
    GET  /c/{cid}       a conversation's page; `?start=N` draws the window of turns from N
    POST /send          cid, msg (and `attach` chips): the message, and its answer as it plays; 507 with the
                        reason when the message cannot be written (a full disk): the composer keeps it
    POST /poke          cid, tool, arguments: the salted one-shot prompt asking for one call of `tool` (one offered)
    GET  /pulse         SSE: a heartbeat the status dot listens to

The page is put together from the sidebar (`sidebar`, with the Servers panel of `servers`), the model
picker (`models`), the turns (`page`, which also holds the routes of a playing turn) and the composer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fasthtml.common import (
    A, APIRouter, Button, Div, Form, H1, Header, Hidden, Main, NotStr, Pre, Redirect, Section, Span,
    Textarea, Title, sse_message, to_xml,
)
from starlette.requests import Request

from sidespin.errors import AttachmentRefused, ToolNotFound, ToolNotOffered, ToolSwitchedOff, TranscriptError
from sidespin.protocol import poke_note, poke_prompt
from sidespin.versions import version_group
from sidespin.web import composer
from sidespin.web import models as model_picker
from sidespin.web import servers as servers_web
from sidespin.web import sidebar
from sidespin.web import versions as versions_web
from sidespin.web.composer import ComposerParts
from sidespin.web.forms import board_of, engine_of, find_conversation, json_object, refusal, text_fields
from sidespin.web.links import CHAT_PATH
from sidespin.web.live import HISTORY_WINDOW, LiveTurn, dom_id, history_window, user_dom_id
from sidespin.web.page import AssistantMessage, LiveAnswer, PokeTool, UserMessage
from sidespin.web.versions import Lineage, UserTools
from sidespin.web.sse import EventStream

__all__ = ["ar", "ChatHistory", "Composer", "StatusDot"]

ar = APIRouter()


# ---------------------------------------------------------------- components

def PastTurns(transcript: Any, cid: str, window: range, live: set[int]) -> NotStr:
    """The turns of `window` as the file has them (the answers of the `live` ones left out), as HTML.

    Each message is rendered on its own and the pieces joined once: a node of thousands of children
    costs fastcore's renderer time quadratic in the page's size. Reads the transcript only, so it can
    run off the event loop.
    """
    pieces: list[str] = []
    for index in window:
        turn = transcript.turns[index]
        if turn.is_placeholder:
            continue
        if turn.user:
            tools = UserTools(index, turn.user, version_group(transcript, index), cid, note=turn.user_note)
            # a search hit links to it
            pieces.append(to_xml(UserMessage(turn.user, tools, note=turn.user_note, id=user_dom_id(index))))
        if turn.model is not None and index not in live:
            pieces.append(to_xml(AssistantMessage(transcript.record(index), dom_id(index), index=index)))
    return NotStr("".join(pieces))


async def ChatHistory(transcript: Any, running: list[LiveTurn], cid: str = "", start: int | None = None) -> list[Any]:
    """A conversation's messages, `HISTORY_WINDOW` turns at a time: each turn drawn from its record (off the
    event loop: a long file takes seconds), a turn that plays from its live turn (it is always the last)."""
    count = transcript.filled_turns
    window = history_window(count, start)
    live = {turn.index: turn for turn in running}
    shown: list[Any] = [*Lineage(transcript.meta)]
    if window.start > 0:
        earlier = chat.to(cid=cid, start=max(0, window.start - HISTORY_WINDOW))
        shown.append(A(f"↑ {window.start} earlier messages", href=earlier, cls="history-page earlier"))
    shown.append(await asyncio.to_thread(PastTurns, transcript, cid, window, set(live)))
    last = max(0, count - HISTORY_WINDOW)
    if window.start < last:
        later = chat.to(cid=cid) if window.stop >= last else chat.to(cid=cid, start=window.stop)
        shown.append(A(f"↓ {count - window.stop} later messages", href=later, cls="history-page later"))
    else:
        shown.extend(LiveAnswer(turn) for _, turn in sorted(live.items()))  # what plays now, started or queued
    return shown


def Composer(cid: str, tool_names: list[str]):
    return Form(
        Hidden(name="cid", value=cid),
        *ComposerParts(),
        Textarea(name="msg", id="msg", placeholder="Ask something… (Enter to send, Shift+Enter for a new line; "
                 "@ attaches a resource, / at the start runs a prompt)", rows="2", required=True, autofocus=True),
        Button("Send", type="submit", id="send"),
        Div(Button("🏓 Poke", type="button", id="poke", hx_post=poke.to(), hx_vals=json.dumps({"cid": cid}),
                   hx_include="#poke-tool", hx_target="#chat", hx_swap="beforeend",
                   title="Send the salted one-shot prompt asking the model to call the chosen tool"),
            PokeTool(tool_names), cls="poke"),
        id="composer", hx_post=send.to(), hx_target="#chat", hx_swap="beforeend",
    )


def StatusDot():
    return Span(Span(cls="dot"), Span("connecting", cls="label"), id="status", data_state="connecting",
                hx_ext="sse", sse_connect=pulse.to(), title="connection to the server")


# ---------------------------------------------------------------- routes

@ar("/", methods=["get"])
async def index(request: Request):
    engine = engine_of(request)
    listing = engine.listing()
    cid = listing[0][0] if listing else engine.conversation().id
    return Redirect(chat.to(cid=cid))


@ar(CHAT_PATH, methods=["get"])
async def chat(cid: str, request: Request, start: str = ""):
    engine = engine_of(request)
    try:
        # the turns playing now are taken first: one that ends while the file is read is still drawn, from its record
        running = board_of(request).running(cid)
        conversation, transcript = await engine.opened(cid)  # off the event loop: a long file takes seconds
    except TranscriptError as error:
        return Title("sidespin"), Main(H1("This conversation cannot be shown"), Pre(str(error)),
                                       A("← back to the chat", href=index.to()), cls="logs-page")
    return Title("sidespin"), Div(
        sidebar.Sidebar(engine.listing(conversation.id), conversation.id, len(engine.store.trashed()),
                        await servers_web.ServersPanel(engine, conversation.id, transcript)),
        Main(
            Header(H1("sidespin"), model_picker.ModelPicker(engine, conversation.id,
                                                            engine.pool.choose(transcript.meta.get("model"))),
                   versions_web.ExportLink(conversation.id), StatusDot()),
            Section(*([] if transcript.filled_turns or running else [servers_web.ToolOffer(engine, transcript)]),
                    *await ChatHistory(transcript, running, conversation.id, int(start) if start.isdigit() else None),
                    id="chat"),
            Composer(conversation.id, engine.registry_for(transcript).names()),
            cls="main",
        ),
        cls="layout",
    )


@ar(methods=["post"])
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
    board = board_of(request)
    queued = bool(board.running(conversation.id))  # then it is written once the turns before it end
    turn = board.start(conversation, message.text, note=message.note or None)
    if not queued and (error := await turn.asked) is not None:  # the composer keeps the text, and says why
        return refusal(f"your message was not sent: {error}", 507)
    return (UserMessage(message.text, versions_web.UserTools(turn.index, message.text), note=message.note,
                        id=user_dom_id(turn.index)), LiveAnswer(turn))


@ar(methods=["post"])
async def poke(cid: str, request: Request, tool: str = "", arguments: str = ""):
    """Send the salted one-shot prompt asking for one call of `tool`, one the model is offered (by default
    get_cat_fact if it is, else the first: `Engine.poke_tool`)."""
    engine = engine_of(request)
    cid, tool, arguments = text_fields(cid=cid, tool=tool, arguments=arguments)
    conversation, refused = find_conversation(engine, cid)
    if refused:
        return refused
    try:
        loaded = engine.store.load_stamped(conversation.id)  # read once: for the switches, then by the turn
    except TranscriptError as error:
        return refusal(str(error), 422)
    try:
        tool = engine.poke_tool(loaded.transcript, tool or None)
    except ToolNotFound as error:
        return refusal(str(error), 404)
    except (ToolNotOffered, ToolSwitchedOff) as error:
        return refusal(str(error), 409)
    parsed = json_object(arguments, "arguments")
    turn = board_of(request).start(conversation, None, poke_tool=tool, poke_arguments=parsed, loaded=loaded)
    # drawn from the prompt and note the turn writes (its salt aside), as a reload draws it: the same line and buttons
    prompt, note = poke_prompt([engine.registry.get(tool)], tool_name=tool, arguments=parsed), poke_note(tool, parsed)
    return (UserMessage(prompt, versions_web.UserTools(turn.index, prompt, note=note), note=note,
                        id=user_dom_id(turn.index)), LiveAnswer(turn))


@ar(methods=["get"])
async def pulse(request: Request):
    """A heartbeat the status dot listens to: connected while it beats, reconnecting when it stops."""
    async def beats():
        yield sse_message(Span("connected"), event="pulse")
        while not await request.is_disconnected():
            await asyncio.sleep(10)
            yield sse_message(Span("connected"), event="pulse")

    return EventStream(beats())
