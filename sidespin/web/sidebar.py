"""The sidebar: conversations grouped by day, full-text search, rename, and a trash to undo a delete.

Its routes (`ar`):

    POST /new                a new conversation, opened
    GET  /search?q=…&cid=…   the matching messages (or, for an empty query, the list again)
    POST /rename             cid, title: the title kept in the file's top note ("" gives the made one back)
    POST /delete             cid: the file moves to conversations/.trash/
    GET  /trash              the deleted conversations, each with Restore
    POST /restore            cid: the file moves back

A search hit links to its message: `/c/{id}#turn-{n}` (the answer) or `#user-{n}` (the question).
The footer links to the JSON endpoints (`sidespin.web.api`) and the server log (`sidespin.web.server_log`).
"""

from __future__ import annotations

import asyncio
import html
import json
import threading
from datetime import date, datetime, timedelta
from typing import Any, Iterable

from fasthtml.common import (
    A, APIRouter, Button, Details, Div, Footer, Form, H1, H2, Hidden, Input, Li, Main, NotStr, P, Redirect, Section,
    Span, Summary, Title, Ul,
)
from loguru import logger
from starlette.requests import Request

from sidespin.errors import SearchStopped, TranscriptError
from sidespin.search import MARK, Hit, SearchIndex
from sidespin.web.api import health, tools
from sidespin.web.forms import engine_of, refusal, text_fields
from sidespin.web.links import chat_link
from sidespin.web.live import dom_id, history_link, user_dom_id
from sidespin.web.server_log import logs
from sidespin.web.versions import ImportForm

__all__ = ["Sidebar", "ar"]

MAX_QUERY_CHARS = 500
MAX_TITLE_CHARS = 200
_CLIENT_CHECK = 0.25  # seconds between two looks at whether the person who searched is still there
Listing = Iterable[tuple[str, str, float]]

ar = APIRouter()


# ---------------------------------------------------------------- components

def day_label(moment: float, today: date) -> str:
    """Today, Yesterday, or the date (with its year when it is not this year's)."""
    day = datetime.fromtimestamp(moment).date()
    if day == today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    return f"{day:%A} {day.day} {day:%B}" + (f" {day.year}" if day.year != today.year else "")


def ConversationItem(cid: str, title: str, current: bool):
    """A conversation's link; the current one also holds its Rename and Delete."""
    link = A(title, href=chat_link(cid), title=title)
    if not current:
        return Li(link, data_cid=cid)
    actions = Details(
        Summary("⋯", title="Rename or delete this conversation"),
        Form(Hidden(name="cid", value=cid),
             Input(name="title", value=title, maxlength=str(MAX_TITLE_CHARS), aria_label="title", cls="title"),
             Button("Rename", cls="rename"), method="post", action=rename.to()),
        Form(Hidden(name="cid", value=cid), Button("Delete", cls="delete", title="Move it to the trash"),
             method="post", action=delete_conversation.to()),
        cls="actions",
    )
    return Li(link, actions, cls="current", data_cid=cid)


def _redrawn(current: str) -> dict[str, Any]:
    """The list, or the results, draws itself again when app.js says the conversations changed."""
    return dict(id="conversations", hx_get=search.to(), hx_vals=json.dumps({"cid": current}), hx_include="#search",
                hx_trigger="conversations-changed from:body", hx_target="this", hx_swap="outerHTML")


def ConversationGroups(listing: Listing, current: str, today: date | None = None):
    """The conversations, most recent first, under a heading per day."""
    today = today or date.today()
    groups: dict[str, list[Any]] = {}
    for cid, title, mtime in listing:
        groups.setdefault(day_label(mtime, today), []).append(ConversationItem(cid, title, cid == current))
    return Div(*[Section(H2(label), Ul(*items)) for label, items in groups.items()], cls="conversations",
               **_redrawn(current))


def Snippet(snippet: str):
    """A hit's snippet as HTML: everything escaped, then its marks turned into <mark>."""
    escaped = html.escape(snippet, quote=False)
    return NotStr(escaped.replace(MARK[0], "<mark>").replace(MARK[1], "</mark>"))


def SearchHit(hit: Hit):
    anchor = user_dom_id(hit.turn) if hit.role == "user" else dom_id(hit.turn)
    when = datetime.fromtimestamp(hit.when).strftime("%Y-%m-%d %H:%M")
    page = history_link(hit.conversation, hit.turn, hit.turns)  # a long conversation: the window that draws it
    return Li(A(Span(hit.title, cls="hit-title"), Span(Snippet(hit.snippet), cls="snippet"),
                Span(when, cls="hit-when"), href=f"{page}#{anchor}"),
              cls="hit", data_role=hit.role)


def SearchResults(hits: list[Hit], query: str, current: str = "", stopped: str = ""):
    """`stopped`: why the search found nothing to show (it ran out of time)."""
    count = f"{len(hits)} match" + ("" if len(hits) == 1 else "es") if hits else f"Nothing matches “{query}”."
    count = stopped[:1].upper() + stopped[1:] + "." if stopped else count
    return Div(P(count, cls="hits-count"), Ul(*[SearchHit(hit) for hit in hits]), cls="conversations results",
               **_redrawn(current))


def SearchBox(current: str):
    return Input(type="search", name="q", id="search", placeholder="Search all chats (Ctrl+K)", autocomplete="off",
                 aria_label="Search all conversations", hx_get=search.to(), hx_vals=json.dumps({"cid": current}),
                 hx_trigger="input changed delay:200ms, search", hx_target="#conversations", hx_swap="outerHTML")


def Sidebar(listing: Listing, current: str, trashed: int = 0, panel: Any = None):
    """`panel`: a collapsible section under the list (the Servers panel)."""
    return Div(
        # an ASCII plus: Debian's fonts have no fullwidth ＋ (U+FF0B), which drew as an empty box
        Form(Button("+ New chat", cls="new-chat"), method="post", action=new.to()),
        SearchBox(current),
        ConversationGroups(listing, current),
        panel,
        A(f"🗑 Trash ({trashed})" if trashed else "🗑 Trash", href=trash.to(), cls="trash-link"),
        ImportForm(),
        Footer(A("tools", href=tools.to()), " · ", A("health", href=health.to()), " · ", A("logs", href=logs.to())),
        cls="sidebar",
    )


def TrashItem(cid: str, title: str, mtime: float):
    when = datetime.fromtimestamp(mtime).strftime("%Y-%m-%d %H:%M")
    return Li(Span(title, cls="title"), Span(when, cls="hit-when"),
              Form(Hidden(name="cid", value=cid), Button("Restore", cls="restore"), method="post",
                   action=restore.to()),
              cls="trashed", data_cid=cid)


# ---------------------------------------------------------------- routes

@ar(methods=["post"])
async def new(request: Request):
    conversation = engine_of(request).conversation()
    return Redirect(chat_link(conversation.id))


@ar("/search", methods=["get"])
async def search(request: Request, q: str = "", cid: str = ""):
    """The sidebar's search: the hits for `q`, or the conversation list when `q` is empty."""
    engine = request.app.state.engine
    q, cid = text_fields(q=q, cid=cid)
    if len(q) > MAX_QUERY_CHARS:
        return refusal(f"the search has {len(q)} characters; the limit is {MAX_QUERY_CHARS}", 400)
    if not q.strip():
        return ConversationGroups(engine.listing(cid), cid)
    try:
        hits = await searched(request, engine.search, q)
    except SearchStopped as stopped:
        return SearchResults([], q.strip(), cid, stopped=str(stopped))
    logger.info("SEARCH hits={} chars={}", len(hits), len(q))
    return SearchResults(hits, q.strip(), cid)


async def searched(request: Request, index: SearchIndex, query: str) -> list[Hit]:
    """The hits for `query`, found off the event loop; the search stops when the person who asked leaves
    (SearchStopped), or runs out of its time (`sidespin.search.SEARCH_SECONDS`)."""
    cancel = threading.Event()
    finding = asyncio.ensure_future(asyncio.to_thread(index.search, query, cancel=cancel))
    try:
        while not finding.done():
            await asyncio.wait({finding}, timeout=_CLIENT_CHECK)
            if not finding.done() and await request.is_disconnected():
                logger.info("SEARCH_ABANDONED chars={}: the client left", len(query))
                cancel.set()
        return finding.result()
    finally:
        cancel.set()  # the route itself cancelled (a shutdown): the search stops too


@ar("/rename", methods=["post"])
async def rename(request: Request, cid: str, title: str = ""):
    engine = request.app.state.engine
    cid, title = text_fields(cid=cid, title=title)
    title = " ".join(title.split())
    if len(title) > MAX_TITLE_CHARS:
        return refusal(f"the title has {len(title)} characters; the limit is {MAX_TITLE_CHARS}", 400)
    try:
        transcript = engine.store.load(cid)
    except TranscriptError as error:
        return refusal(str(error), 404)
    transcript.set_meta("title", title or None)  # none: the title made from the first message again
    engine.store.save(cid, transcript)
    logger.info("CONVERSATION_RENAMED {} chars={}", cid, len(title))
    return Redirect(chat_link(cid))


@ar("/delete", methods=["post"])
async def delete_conversation(request: Request, cid: str):
    engine = request.app.state.engine
    (cid,) = text_fields(cid=cid)
    if request.app.state.board.running(cid):
        return refusal(f"an answer is being written in {cid!r}; stop it or wait, then delete it", 409)
    try:
        engine.store.trash(cid)
    except TranscriptError as error:
        return refusal(str(error), 404)
    return Redirect("/")


@ar("/trash", methods=["get"])
async def trash(request: Request):
    trashed = request.app.state.engine.store.trashed()
    return Title("Trash · sidespin"), Main(
        H1("🗑 Trash"),
        P("Deleted conversations stay here, in data/conversations/.trash/, until you restore them "
          "or remove the files."),
        Ul(*[TrashItem(*item) for item in trashed], cls="trash") if trashed else P("The trash is empty."),
        A("← back to the chat", href="/"),
        cls="logs-page trash-page",
    )


@ar("/restore", methods=["post"])
async def restore(request: Request, cid: str):
    engine = request.app.state.engine
    (cid,) = text_fields(cid=cid)
    try:
        engine.store.restore(cid)
    except TranscriptError as error:
        return refusal(str(error), 404)
    except FileExistsError as error:
        return refusal(str(error), 409)
    return Redirect(chat_link(cid))
