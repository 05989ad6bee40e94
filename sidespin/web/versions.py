"""Edit, regenerate, fork, export and import on the chat page: the buttons, the forms and their routes.

A user message carries ✎ Edit (a form that opens in place, with "run tools again"), ⎇ Fork and,
once it has more than one version, "‹ 2/3 ›" linking to the others; an answer carries ↻ Regenerate
and ⎇ Fork. What they change is done by `sidespin.versions`; the routes only check the input, start
the turn to play again (`TurnBoard.start`) and send the page to the conversation to open. Every
refusal is a 4xx JSON error with a reason; app.js shows it beside the button. Routes: POST
/edit_message, /regenerate, /fork, /import (multipart), GET /export.
"""

from __future__ import annotations

import asyncio
import functools
import json
from typing import Any, Awaitable, Callable

from fasthtml.common import (
    A, APIRouter, Button, Details, Div, Form, Input, JSONResponse, Label, Response, Span, Summary, Textarea,
)
from loguru import logger
from starlette.requests import Request
from starlette.responses import RedirectResponse

from sidespin import versions
from sidespin.errors import TranscriptError
from sidespin.protocol import poked
from sidespin.web.links import chat_link

__all__ = ["UserTools", "AnswerTools", "VersionNav", "Lineage", "ExportLink", "ImportForm", "ar"]

_CID = "#composer [name=cid]"  # the open conversation's id, as every button of the page sends it

ar = APIRouter()


def _post(path: str, index: int) -> dict[str, Any]:
    return {"hx_post": path, "hx_vals": json.dumps({"turn": index}), "hx_include": _CID, "hx_swap": "none"}


def VersionNav(ids: list[str], current: str, index: int):
    """"‹ 2/3 ›": the versions of message `index`, each a link to the file that holds it."""
    if len(ids) < 2 or current not in ids:
        return ()
    here = ids.index(current)

    def step(label: str, to: int, title: str):
        if 0 <= to < len(ids):
            return A(label, href=chat_link(ids[to]), cls=f"version-step {title.split()[0]}", title=title)
        return Span(label, cls="version-step off")

    return Span(step("‹", here - 1, "previous version"), Span(f"{here + 1}/{len(ids)}", cls="version-count"),
                step("›", here + 1, "next version"), cls="versions", data_turn=str(index),
                title=f"{len(ids)} versions of this message")


def UserTools(index: int, text: str, group: list[str] = (), current: str = "", *,
              note: dict[str, Any] | None = None):
    """Under a user message: its versions, ✎ Edit (opens a form in place) and ⎇ Fork (a Poke: no edit; `note`:
    what the message carries besides its text, a Poke's tool among it)."""
    edit = () if poked(note, text) else Details(
        Summary("✎ Edit", title="Edit this message and answer it again; the version it replaces is kept (↑ in an "
                                "empty composer edits your last message)"),
        Form(
            Textarea(text, name="text", rows="3", cls="edit-text", required=True,
                     aria_label="the edited message (Enter to send, Shift+Enter for a new line)"),
            Div(Label(Input(type="checkbox", name="rerun_tools", value="on"), " run tools again",
                      title="Run every tool call again; otherwise a call already made reuses its recorded result"),
                Button("Send edit", type="submit", cls="save-edit"), cls="edit-actions"),
            cls="edit-form", **_post(edit_message.to(), index),
        ),
        cls="edit",
    )
    return Div(VersionNav(list(group), current, index), edit,
               Button("⎇ Fork", cls="fork", title="A new conversation with the messages up to this one",
                      **_post(fork.to(), index)),
               Span(cls="version-error", role="alert"), cls="msg-tools", data_turn=str(index))


def AnswerTools(index: int):
    """Under an answer: ↻ Regenerate (with "run tools again") and ⎇ Fork. Hidden while the answer is written."""
    return Div(
        Form(Button("↻ Regenerate", type="submit", cls="regenerate",
                    title="Answer this message again; this answer is kept as a version"),
             Label(Input(type="checkbox", name="rerun_tools", value="on"), " run tools again",
                   title="Run every tool call again; otherwise a call already made reuses its recorded result"),
             cls="regenerate-form", **_post(regenerate.to(), index)),
        Button("⎇ Fork", cls="fork", title="A new conversation with the messages up to this answer",
               **_post(fork.to(), index)),
        Span(cls="version-error", role="alert"), cls="msg-tools", data_turn=str(index),
    )


def Lineage(meta: dict[str, Any]):
    """Where a conversation came from: the one it was forked from, or the file it was imported from."""
    shown = []
    source = meta.get(versions.FORKED_FROM)
    if isinstance(source, dict) and isinstance(source.get("id"), str) and isinstance(source.get("turn"), int):
        shown.append(Div("⎇ Forked from ", A("another conversation", href=chat_link(source['id'])),
                         f" at message {source['turn'] + 1}", cls="lineage forked"))
    imported = meta.get(versions.IMPORTED)
    if isinstance(imported, dict):
        shown.append(Div(f"⬆ Imported from {imported.get('name') or 'a file'}", cls="lineage imported"))
    return shown


def ExportLink(cid: str):
    return A("⬇ Export", href=export.to(cid=cid), download=f"{cid}.md", cls="export",
             title="Download this conversation as a markdown file (Parley's format)")


def ImportForm():
    """Import a Parley markdown file as a new conversation (app.js also takes a file dropped on the page)."""
    return Form(
        Label("⬆ Import .md", Input(type="file", name="file", id="import-file",
                                    accept=".md,.markdown,text/markdown,text/plain"), cls="import-pick"),
        Button("Import", type="submit", cls="import"),
        Div(id="import-status", role="status"),
        id="import-form", method="post", action=import_conversation.to(), enctype="multipart/form-data",
        title="Import a conversation file, or drop one on the page",
    )


# ---------------------------------------------------------------- routes

class Refused(Exception):
    """A request refused for a reason a person can act on: a 4xx JSON answer (`refusing`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def refusing(route: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Answer a `Refused` as `{"status": "error", "error": …}` with its status (FastHTML's own 404 page
    would take a raised 404 HTTPException)."""

    @functools.wraps(route)
    async def answered(*args: Any, **kwargs: Any) -> Any:
        try:
            return await route(*args, **kwargs)
        except Refused as refusal:
            logger.info("VERSIONS_REFUSED {} {}", refusal.status, refusal.message)
            return JSONResponse({"status": "error", "error": refusal.message}, status_code=refusal.status)

    return answered


async def _fields(request: Request, *names: str) -> list[str]:
    """Form fields that must be text (absent: empty); a file sent in their place is a 400."""
    form = await request.form()
    values = []
    for name in names:
        value = form.get(name) or ""
        if not isinstance(value, str):
            raise Refused(400, f"the field {name!r} must be text, not a file")
        values.append(value)
    return values


def _index(text: str) -> int:
    if not text.strip().isdigit():
        raise Refused(400, f"the field 'turn' must be a message number like 2, not {text[:40]!r}")
    return int(text)


def _ready(request: Request, cid: str) -> Any:
    """The conversation, when no answer of it is being written (a 404 or 409 a person can act on otherwise)."""
    try:
        conversation = request.app.state.engine.conversation(cid)
    except TranscriptError as error:
        raise Refused(404, str(error)) from None
    if request.app.state.board.running(conversation.id):
        raise Refused(409, "an answer is still being written in this conversation: wait for it or stop it")
    return conversation


def _open(request: Request, cid: str) -> Response:
    """Send the page to a conversation: htmx follows HX-Redirect, a plain form a 303."""
    url = chat_link(cid)
    if request.headers.get("hx-request"):
        return Response(status_code=200, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


async def _replay(request: Request, text: str | None) -> Response:
    """Edit (or, with `text` None, regenerate) a message and play it again; the old version stays a file."""
    cid, turn, rerun = await _fields(request, "cid", "turn", "rerun_tools")
    index = _index(turn)
    engine = request.app.state.engine
    if text is not None:
        text = text.strip()
        if not text:
            raise Refused(400, "the message is empty")
        if len(text) > engine.settings.max_message_chars:
            raise Refused(413, f"the message has {len(text)} characters; the limit is "
                                     f"{engine.settings.max_message_chars} (max_message_chars)")
    conversation = _ready(request, cid)
    try:
        replay = versions.edit(engine.store, conversation.id, index, text)
    except ValueError as error:
        raise Refused(400, str(error)) from None
    except TranscriptError as error:
        raise Refused(409, f"{error} — fix or move the file; it was not changed") from None
    reuse = [] if rerun else replay.reuse
    request.app.state.board.start(conversation, replay.text, reuse=reuse, note=replay.note or None)
    logger.info("MESSAGE_{} conv={} turn={} version={} reuse={}", "EDITED" if text is not None else "REGENERATED",
                conversation.id, index, replay.version, len(reuse))
    return _open(request, conversation.id)


@ar("/edit_message", methods=["post"])
@refusing
async def edit_message(request: Request):
    (text,) = await _fields(request, "text")
    return await _replay(request, text)


@ar("/regenerate", methods=["post"])
@refusing
async def regenerate(request: Request):
    return await _replay(request, None)


@ar("/fork", methods=["post"])
@refusing
async def fork(request: Request):
    cid, turn = await _fields(request, "cid", "turn")
    index = _index(turn)
    engine = request.app.state.engine
    try:
        forked = versions.fork(engine.store, cid, index)
    except ValueError as error:
        raise Refused(400, str(error)) from None
    except TranscriptError as error:
        raise Refused(404, str(error)) from None
    return _open(request, forked)


@ar("/export", methods=["get"])
@refusing
async def export(request: Request, cid: str = ""):
    try:
        text = request.app.state.engine.store.read(cid)
    except TranscriptError as error:
        raise Refused(404, str(error)) from None
    logger.info("CONVERSATION_EXPORTED conv={} chars={}", cid, len(text))
    return Response(text.encode("utf-8"), media_type="text/markdown; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{cid}.md"'})


@ar("/import", methods=["post"])
@refusing
async def import_conversation(request: Request):
    upload = (await request.form()).get("file")
    if upload is None or isinstance(upload, str):
        raise Refused(400, "choose a markdown file to import (the form field 'file')")
    engine = request.app.state.engine
    limit = engine.settings.max_body_bytes
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise Refused(413, f"the file is larger than {limit} bytes (max_body_bytes)")
    try:
        # off the event loop: a file of thousands of turns takes a while to read and index
        cid = await asyncio.to_thread(versions.import_bytes, engine.store, data, upload.filename or "", limit)
    except TranscriptError as error:  # the answer names the line, for app.js and any other client
        logger.info("CONVERSATION_IMPORT_REFUSED line={} {}", error.line, error)
        return JSONResponse({"status": "error", "error": str(error), "line": error.line}, status_code=400)
    except ValueError as error:
        raise Refused(400, str(error)) from None
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"status": "success", "id": cid, "url": chat_link(cid)})
    return _open(request, cid)
