"""The components a turn is drawn with, live or reloaded, and the routes of a turn that plays.

Every assistant message is drawn from a `TurnRecord` by `AssistantMessage`:
while a turn plays, from its `LiveTurn`'s record; after a reload, from the
record the transcript replays. `TurnWatch` sends a watching page only what
changed since its last update. The routes its buttons and streams use:

    POST /approve   cid, call_id, choice: a choice on a waiting tool card
    POST /rerun     cid, call_id: run again a call a crash interrupted
    POST /cancel    cid, call_id: cancel a running tool call (its server is told); the turn goes on
    POST /stop      cid: stop the conversation's running answer
    GET  /stream    tid: server-sent updates of one live turn
"""

from __future__ import annotations

import html
import json
from typing import Any, NamedTuple

from fasthtml.common import (
    APIRouter, Button, Details, Div, JSONResponse, NotStr, Option, Pre, Progress, Select, Span, Summary,
    sse_message,
)
from markdown_it import MarkdownIt
from starlette.requests import Request

from sidespin.approvals import CHOICES
from sidespin.mcp.attach import attached_blocks
from sidespin.offer import poke_default
from sidespin.protocol import poked
from sidespin.record import CallRecord, MarkdownStream, TurnRecord
from sidespin.web.apps import AppFrame, app_of
from sidespin.web.attachments import AttachedResources, Attachment
from sidespin.web.forms import board_of, engine_of, find_conversation, refusal, text_fields
from sidespin.web.live import LiveTurn
from sidespin.web.models import TurnMeter, meter_state
from sidespin.web.questions import QuestionBox
from sidespin.web.versions import AnswerTools
from sidespin.web.sse import EventStream

__all__ = [
    "render_markdown", "ChatMessage", "UserMessage", "AssistantMessage", "LiveAnswer", "ToolCard", "TurnWatch",
    "PokeTool", "ar",
]

ar = APIRouter()

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


def ChatMessage(role: str, content: Any, *after: Any, **kwargs: Any):
    """A message's bubble; `after`: what goes under it (its buttons)."""
    return Div(Div(content, cls="bubble"), *after, cls=f"msg {role}", data_role=role, **kwargs)


def UserMessage(text: str, *after: Any, note: dict[str, Any] | None = None, **kwargs: Any):
    """A user message; `note`: what it carries besides its text (resources attached with `@`, drawn under it;
    the tool a Poke asks for)."""
    tool = poked(note, text)
    if tool:  # the salted one-shot prompt is for the model; the page shows what the person did
        return ChatMessage("user", Div(f"🏓 Poke: call {tool}", cls="user-text"), *after, **kwargs)
    attached = ()
    if note and note.get("attached"):
        text, blocks = attached_blocks(text, note)
        attached = AttachedResources(blocks, note)
    if len(text) > 600:
        typed = Details(Summary(text[:120] + "…"), Pre(text), cls="prompt")
    else:
        typed = Div(text, cls="user-text")
    return ChatMessage("user", Div(typed, attached) if attached else typed, *after, **kwargs)


_STATUS_LABELS = {"proposed": "proposed", "waiting": "waiting for you", "running": "running…",
                  "approved": "approved", "refused": "refused", "interrupted": "interrupted · did not complete"}
_CHOICE_LABELS = {"yo": "Yes, this one", "yO": "Yes, and always for this tool", "ya": "Yes to all",
                  "yA": "Yes to all, always", "n": "No"}


def CallNews(card: CallRecord, **kwargs: Any):
    """How far a running call is, in its card's summary: a bar where the server says a total, and the words (its
    latest `ToolProgress`; empty before any). Its own id, so news replaces it alone and an open card stays open."""
    news, parts = card.progress, []
    if news is not None:
        if news.progress is not None and news.total:
            parts.append(Progress(value=f"{min(news.progress, news.total):g}", max=f"{news.total:g}",
                                  cls="call-progress"))
        parts.append(Span(news.line(), cls="progress-text"))
    task = {"data_task": news.task} if news is not None and news.task else {}
    return Span(*parts, cls="call-news", id=f"news-{card.call.id}", **task, **kwargs)


def CancelButton(card: CallRecord):
    return Button("✕ Cancel", cls="cancel-call", hx_post=cancel.to(), hx_include="#composer [name=cid]",
                  hx_vals=json.dumps({"call_id": card.call.id}), hx_swap="none",
                  title="Cancel this call: its server is told (a task is cancelled there); the answer goes on without it")


def ToolCard(card: CallRecord, **kwargs: Any):
    """One tool call: name and arguments, then result or error and duration; collapsed by default. While it runs,
    its latest news (progress, its task's status) and a Cancel button show in the summary."""
    call = card.call
    seconds = f" · {card.seconds:.2f} s" if card.seconds is not None else ""
    label = _STATUS_LABELS.get(card.status) or f"{card.status}{seconds}"
    if card.kind == "cancelled":
        label = f"cancelled{seconds}"
    running = card.status == "running" and not card.imported
    news = (CallNews(card),) if running else ()
    if card.reused:  # an edited turn's call that already ran: its recorded result, not run again
        label = f"{card.status} · reused, not run again"
    if card.imported:  # what the file says, not what happened here
        label = f"{_STATUS_LABELS.get(card.status, card.status)} · imported, not run here"
    body = [Div(Span("arguments", cls="k"), Pre(card.arguments), cls="args")]
    if card.status in ("done", "error", "interrupted"):
        body.append(Div(Span("error" if card.status == "error" else "result", cls="k"), Pre(card.result), cls="result"))
    app = app_of(card.attachments)
    if app is not None:  # the app first, its text folded under it (static/apps.js opens the card)
        body = [AppFrame(card, app), Details(Summary("arguments and result"), *body, cls="app-text")]
    body += [Attachment(item) for item in card.attachments]
    body += [QuestionBox(question, card) for question in card.questions]
    if card.status == "waiting":
        body.append(ApprovalButtons(card))
    if card.status == "interrupted" and not card.imported:
        body.append(Button("↻ Run again", cls="rerun", hx_post=rerun.to(), hx_include="#composer [name=cid]",
                           hx_vals=json.dumps({"call_id": call.id}), hx_target="#chat", hx_swap="beforeend",
                           title="sidespin stopped while this call ran; run it again (nothing runs unless you ask)"))
    return Details(
        Summary(Span("🛠️", cls="icon"), Span(call.name, cls="tool-name"), *news, Span(label, cls="tool-status"),
                *((CancelButton(card),) if running else ())),
        *body,
        cls=f"tool-call {card.status}" + (" imported" if card.imported else ""), id=f"card-{call.id}",
        data_tool=call.name, data_status=card.status, data_call_id=call.id,
        **({"open": True} if card.status == "waiting" or card.open_questions() else {}),  # its buttons in sight
        **kwargs,
    )


def ApprovalButtons(card: CallRecord):
    return Div(
        *[Button(_CHOICE_LABELS[key], name="choice", value=key, title=key, cls=f"approve {key}",
                 hx_post=approve.to(), hx_include="#composer [name=cid]", hx_vals=json.dumps({"call_id": card.call.id}),
                 hx_target="#chat", hx_swap="beforeend") for key in CHOICES],
        Span(cls="action-error", role="alert"),  # a choice that could not be recorded (a full disk) says why
        cls="approvals",
    )


def Thoughts(turn_id: str, thoughts: list[str], **kwargs: Any):
    """Each thought collapsed; an empty one is drawn too (hidden by CSS), so streamed text has a place to go."""
    return Div(*[Details(Summary("💭 thought"), Div(t, cls="thought-text", id=f"{turn_id}-thought-{i}"), cls="thought")
                 for i, t in enumerate(thoughts)], **kwargs)


def Notices(record: TurnRecord, **kwargs: Any):
    # what the model wrote stays folded: call syntax is never on the page unless a person opens it
    items = [Div(f"⚠️ could not read a tool call: {m.reason}", Details(Summary("what the model wrote"), Pre(m.raw)),
                 cls="notice malformed") for m in record.malformed]
    items += [Div(f"⚠️ {message}", cls="notice") for message in record.notices]
    return Div(*items, **kwargs)


def AnswerBody(answer: MarkdownStream, body_id: str, *, done: bool = True, **kwargs: Any):
    """An answer as complete Markdown blocks, each rendered once, then the block being written.

    While the answer streams its last block shows as plain text: it takes the turn stream's plain
    messages (text added) and `block` messages (blocks completed, rendered: app.js puts them after
    the others and empties the tail), sent by `TurnWatch`. Once done it is rendered like the others.
    """
    tail = "".join(answer.tail)
    writing = {} if done else {"sse_swap": "message,block", "hx_swap": "beforeend", "hx_target": "this"}
    return Div(
        Div(*[render_markdown(block) for block in answer.blocks], cls="blocks", id=f"{body_id}-blocks"),
        Div(render_markdown(tail) if done else tail, cls="tail" if done else "tail writing", id=f"{body_id}-tail",
            **writing),
        cls="body markdown", id=body_id, **kwargs,
    )


def TurnState(record: TurnRecord, turn_id: str, **kwargs: Any):
    """Whether the turn runs; while it does, its Stop button (Esc does the same)."""
    stop_button = Button("■ Stop", cls="stop", hx_post=stop.to(), hx_include="#composer [name=cid]", hx_swap="none",
                         title="Stop this answer (Esc); what was said so far is kept")
    return Span(() if record.done else stop_button, cls="turn-state", id=f"{turn_id}-state",
                data_state="done" if record.done else "running", **kwargs)


def TurnParts(record: TurnRecord, turn_id: str, oob: bool = False):
    """The parts of an assistant turn, each with a stable id so an update replaces it in place."""
    swap = {"hx_swap_oob": "true"} if oob else {}
    return (
        Thoughts(turn_id, record.thoughts, id=f"{turn_id}-thoughts", cls="thoughts", **swap),
        Div(*[ToolCard(card) for card in record.calls.values()], id=f"{turn_id}-tools", cls="tools", **swap),
        AnswerBody(record.answer, f"{turn_id}-body", done=record.done, **swap),
        TurnMeter(record, turn_id, **swap),
        Notices(record, id=f"{turn_id}-notices", cls="notices", **swap),
        TurnState(record, turn_id, **swap),
    )


def AssistantMessage(record: TurnRecord, turn_id: str, *, index: int | None = None, cls: str = "msg assistant",
                     **kwargs: Any):
    """A turn's answer, tool cards, thoughts and notices: the one way a turn is drawn, live or reloaded.
    `index`: the turn's number, for its buttons under the bubble (regenerate, fork)."""
    tools = (AnswerTools(index),) if index is not None else ()
    return Div(Div(*TurnParts(record, turn_id), cls="bubble"), *tools, cls=cls, id=turn_id, data_role="assistant",
               **kwargs)


def LiveAnswer(turn: LiveTurn, *, replace: bool = False):
    """A turn that plays: the SSE extension applies each `update` out of band; the answer's text and blocks
    go to its tail (`AnswerBody`). `replace`: it takes the place of the turn's message already on the page
    (a continuation after an approval)."""
    return AssistantMessage(
        turn.record, turn.id, index=turn.index, cls="msg assistant live",
        hx_ext="sse", sse_connect=stream.to(tid=turn.key), sse_swap="update", hx_swap="none", sse_close="done",
        **({"hx_swap_oob": "true"} if replace else {}),
    )


def sse_event(data: str, event: str | None = None) -> str:
    """One SSE message whose data is `data` exactly: a `data:` line for each of its lines, which the
    browser joins with newlines again. SSE also ends a line at a carriage return: one is sent as the
    newline an HTML parser makes of it anyway. No `event:` line: a plain `message`."""
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return (f"event: {event}\n" if event else "") + "".join(f"data: {line}\n" for line in lines) + "\n"


class Changes(NamedTuple):
    """What a watcher of a live turn has not been sent yet."""

    parts: list[Any]  # elements to swap out of band: the whole turn at first, then what changed beside the answer
    blocks: str = ""  # HTML: the answer's blocks completed since, rendered; its tail then starts again
    added: str = ""  # text added to the answer's tail


class TurnWatch:
    """What one watcher of a live turn has been sent, so each update carries only what changed.

    The first update is the whole turn (a reconnect redraws everything); after that: the
    answer's new blocks and the text added to its last one, cards whose version moved (of a
    running card whose news alone moved, just its news: an open card stays open), the
    text added to the last thought, and the notices and state when they change.
    `messages` puts them on the wire with as little framing as the page allows: new blocks of the
    answer as a `block` message, the text added to it as a plain message (both taken by the
    answer's tail, `AnswerBody`), everything else as one `update` of out-of-band swaps.
    """

    def __init__(self, turn: LiveTurn) -> None:
        self.turn = turn
        self.first = True
        self.blocks = 0
        self.tail_pieces = 0
        self.cards: dict[str, int] = {}
        self.news: dict[str, int] = {}  # each card's news version sent
        self.thoughts = (0, 0)
        self.notices = 0
        self.meter: Any = None
        self.done = False

    def messages(self) -> list[str]:
        """The SSE messages that bring a watcher's page up to date (none when nothing it shows changed)."""
        changes = self.update()
        sent = [sse_message(Div(*changes.parts), event="update")] if changes.parts else []
        if changes.blocks:
            sent.append(sse_event(changes.blocks, "block"))
        if changes.added:
            sent.append(sse_event(html.escape(changes.added, quote=False)))
        return sent

    def update(self) -> Changes:
        record, tid = self.turn.record, self.turn.id
        if self.first:
            changes = Changes(list(TurnParts(record, tid, oob=True)))
        elif record.done and not self.done:  # the answer's tail is drawn again, rendered: no text is added to it
            changes = Changes([*self._changed_parts(), *self._end_parts()])
        else:
            changes = Changes(self._changed_parts(), *self._answer_changes())
        self.first = False
        self.blocks, self.tail_pieces = len(record.answer.blocks), len(record.answer.tail)
        self.cards = {card.call.id: card.version for card in record.calls.values()}
        self.news = {card.call.id: card.news_version for card in record.calls.values()}
        self.thoughts = (len(record.thoughts), len(record.thoughts[-1]) if record.thoughts else 0)
        self.notices = len(record.malformed) + len(record.notices)
        self.meter = meter_state(record)
        self.done = record.done
        return changes

    def _changed_parts(self) -> list[Any]:
        """Cards, thoughts, meter and notices that changed, to swap out of band."""
        record, tid = self.turn.record, self.turn.id
        parts: list[Any] = [ToolCard(card, hx_swap_oob="true") for card in record.calls.values()
                            if self.cards.get(card.call.id) != card.version and card.call.id in self.cards]
        parts += [CallNews(card, hx_swap_oob="true") for card in record.calls.values()
                  if self.cards.get(card.call.id) == card.version and card.status == "running"
                  and self.news.get(card.call.id) != card.news_version]
        new_cards = [card for card in record.calls.values() if card.call.id not in self.cards]
        if new_cards:
            parts.append(Div(*[ToolCard(card) for card in new_cards], hx_swap_oob=f"beforeend:#{tid}-tools"))
        if record.done and not self.done and record.thoughts_tidied:  # the thoughts as kept: tidied once
            parts.append(Thoughts(tid, record.thoughts, id=f"{tid}-thoughts", cls="thoughts", hx_swap_oob="true"))
        else:
            parts.extend(self._thought_parts())
        if meter_state(record) != self.meter:
            parts.append(TurnMeter(record, tid, hx_swap_oob="true"))
        if len(record.malformed) + len(record.notices) != self.notices:
            parts.append(Notices(record, id=f"{tid}-notices", cls="notices", hx_swap_oob="true"))
        return parts

    def _end_parts(self) -> list[Any]:
        """The turn's end: blocks completed since, the tail rendered as Markdown (it replaces the tail
        that took streamed text), the state without its Stop button."""
        record, tid = self.turn.record, self.turn.id
        new = self._new_blocks()
        return [*([Div(*new, hx_swap_oob=f"beforeend:#{tid}-body-blocks")] if new else []),
                Div(render_markdown("".join(record.answer.tail)), id=f"{tid}-body-tail", cls="tail",
                    hx_swap_oob="true"),
                TurnState(record, tid, hx_swap_oob="true")]

    def _answer_changes(self) -> tuple[str, str]:
        """Blocks completed since, rendered (HTML), and the text added to the tail: all of it once it starts again."""
        answer = self.turn.record.answer
        new = self._new_blocks()
        if new:
            return "".join(map(str, new)), "".join(answer.tail)
        return "", "".join(answer.tail[self.tail_pieces:])

    def _new_blocks(self) -> list[Any]:
        """The answer's blocks completed since the last update, rendered."""
        return [render_markdown(block) for block in self.turn.record.answer.blocks[self.blocks:]]

    def _thought_parts(self) -> list[Any]:
        record, tid = self.turn.record, self.turn.id
        count, length = self.thoughts
        if len(record.thoughts) != count:
            return [Thoughts(tid, record.thoughts, id=f"{tid}-thoughts", cls="thoughts", hx_swap_oob="true")]
        if count and len(record.thoughts[-1]) > length:
            added = record.thoughts[-1][length:]
            return [Span(added, hx_swap_oob=f"beforeend:#{tid}-thought-{count - 1}")]
        return []


def PokeTool(tool_names: list[str], **kwargs: Any):
    """Which of the tools the model is offered the Poke button asks it to call (`poke_default` first chosen)."""
    chosen = poke_default(tool_names)
    return Select(*[Option(name, value=name, selected=name == chosen) for name in tool_names],
                  id="poke-tool", name="tool", title="the tool Poke asks for", **kwargs)


# ---------------------------------------------------------------- routes

@ar(methods=["post"])
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
        record = decision.loaded.transcript.record()
        return tuple(ToolCard(record.calls[call_id], hx_swap_oob="true") for call_id in decision.decided
                     if call_id in record.calls)
    turn = board_of(request).start(conversation, None, decisions=decision.ready, loaded=decision.loaded)
    return LiveAnswer(turn, replace=True)  # the turn goes on in its own message


@ar(methods=["get"])
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


@ar(methods=["post"])
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


@ar(methods=["post"])
async def cancel(cid: str, call_id: str, request: Request):
    """Cancel one running tool call: its task is cancelled, its server told; the turn goes on, the card says so."""
    cid, call_id = text_fields(cid=cid, call_id=call_id)
    if not board_of(request).cancel_call(cid, call_id):
        return refusal(f"no call {call_id!r} is running in this conversation", 409)
    return JSONResponse({"status": "success", "cancelled": call_id})


@ar(methods=["post"])
async def stop(cid: str, request: Request):
    """Stop the running answer of a conversation; the transcript keeps what was said, marked stopped."""
    (cid,) = text_fields(cid=cid)
    stopped = board_of(request).stop(cid)
    return JSONResponse({"status": "success", "stopped": [turn.key for turn in stopped]})
