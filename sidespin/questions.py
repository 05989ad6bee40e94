"""Questions a server asks a person while one of its tools runs (MCP elicitation), and their answers.

    desk = QuestionDesk()
    with desk.running("everything"):            # in the task of a chat's tool call (see `CallScope`)
        await manager.call_tool(...)             # the server asks: desk.ask("everything", params, timeout)
    desk.answer(question_id, "accept", form)     # a person answers; the form is read by `read_answer`

Routing. The SDK calls a client's elicitation callback in the session's own task for an
`elicitation/create` request, and in the caller's task for a 2026-07-28 input-required result,
so the caller's context does not reliably reach it. The desk therefore keeps the calls in flight
per server and gives a question to the one running call on that server: if several run at once,
to the most recent (the protocol does not say which call a question belongs to). A question
with no running call of the chat (a CLI or `/mcp-tool-executor` call) is declined, and the log
says why.

Waiting. A question is bounded by its call: asking it moves the call's deadline to the server's
`timeout` from the moment it was asked (a person reading and typing is not the server stalling),
and answering moves it again, as progress does. When the call ends (timeout, Stop, cancel) the
question is closed: the server gets `cancel` if it still listens, and a late answer is refused
with `QuestionClosed`.

One validator, `read_answer`, turns what a person typed (form fields or terminal lines, all
text) into the values the schema asks for; the page and the terminal both use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlparse

import mcp_types as types
from loguru import logger

from sidespin.errors import BadAnswer, NoSuchQuestion, QuestionClosed
from sidespin.events import Event, QuestionAction, QuestionAnswered, QuestionAsked

__all__ = [
    "ACTIONS", "CallScope", "Field", "QuestionDesk", "current_call", "fields", "keep_call_alive", "read_answer",
    "summary",
]

ACTIONS: tuple[QuestionAction, ...] = ("accept", "decline", "cancel")
_CLOSED_KEPT = 200  # closed questions remembered, so a late answer gets "closed", not "unknown"
_GRACE = 5.0  # seconds a question may outlive its call's deadline before it gives up by itself


@dataclass
class CallScope:
    """A chat's tool call in flight: its id, where its turn's events go, and how to keep it alive."""

    call_id: str
    emit: Callable[[Event], None]
    keep_alive: Callable[[], None] | None = None


current_call: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar("sidespin_current_call", default=None)
"""Set by the rally in the task of each tool call it starts."""


def keep_call_alive(extend: Callable[[], None]) -> None:
    """Let a question asked during the current call move the call's deadline (`extend` moves it)."""
    scope = current_call.get()
    if scope is not None:
        scope.keep_alive = extend


# ---------------------------------------------------------------- the schema as fields

FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]


@dataclass
class Field:
    """One property of a requested schema (top-level only, as elicitation allows)."""

    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    options: list[tuple[str, str]] = field(default_factory=list)  # (value, label) of a choice
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    format: str | None = None


def _options(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """The choices of an enum: `enum` (with legacy `enumNames`) or `oneOf`/`anyOf` of `const` + `title`."""
    if isinstance(spec.get("enum"), list):
        names = spec.get("enumNames") if isinstance(spec.get("enumNames"), list) else []
        return [(str(v), str(names[i]) if i < len(names) else str(v)) for i, v in enumerate(spec["enum"])]
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            return [(str(o["const"]), str(o.get("title") or o["const"]))
                    for o in spec[key] if isinstance(o, dict) and "const" in o]
    return []


def fields(schema: dict[str, Any] | None) -> list[Field]:
    """The fields of a requested schema, in its order; a property of another shape is read as text."""
    schema = schema or {}
    required = set(schema.get("required") or [])
    found: list[Field] = []
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type")
        common = dict(name=name, title=str(spec.get("title") or name), description=str(spec.get("description") or ""),
                      required=name in required, default=spec.get("default"))
        if kind == "array":
            items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
            found.append(Field(kind="choices", options=_options(items), min_items=spec.get("minItems"),
                               max_items=spec.get("maxItems"), **common))
        elif kind == "boolean":
            found.append(Field(kind="boolean", **common))
        elif kind in ("number", "integer"):
            found.append(Field(kind=kind, minimum=spec.get("minimum"), maximum=spec.get("maximum"), **common))
        elif _options(spec):
            found.append(Field(kind="choice", options=_options(spec), **common))
        else:
            found.append(Field(kind="string", min_length=spec.get("minLength"), max_length=spec.get("maxLength"),
                               format=spec.get("format"), **common))
    return found


# ---------------------------------------------------------------- reading an answer

_TRUE = {"true", "on", "yes", "y", "1"}
_FALSE = {"false", "off", "no", "n", "0", ""}
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _format_problem(value: str, fmt: str | None) -> str | None:
    if fmt == "email" and not _EMAIL.fullmatch(value):
        return "is not an email address"
    if fmt == "uri":
        parsed = urlparse(value)
        if not (parsed.scheme and (parsed.netloc or parsed.path)):
            return "is not a URI (like https://example.org)"
    if fmt == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return "is not a date (YYYY-MM-DD)"
    if fmt == "date-time":
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return "is not a date and time (YYYY-MM-DDTHH:MM)"
    return None


def _read_number(spec: Field, text: str) -> tuple[Any, str | None]:
    try:
        number: float | int = int(text) if spec.kind == "integer" else float(text)
    except ValueError:
        return None, "must be a whole number" if spec.kind == "integer" else "must be a number"
    if not math.isfinite(number):
        return None, "must be a finite number"
    if spec.minimum is not None and number < spec.minimum:
        return None, f"must be at least {spec.minimum:g}"
    if spec.maximum is not None and number > spec.maximum:
        return None, f"must be at most {spec.maximum:g}"
    return number, None


def _read_one(spec: Field, raw: str | list[str]) -> tuple[Any, str | None]:
    """One field's value from what was typed, or the problem with it."""
    if spec.kind == "choices":
        chosen = raw if isinstance(raw, list) else [part.strip() for part in raw.split(",") if part.strip()]
        allowed = {value for value, _ in spec.options}
        unknown = [value for value in chosen if allowed and value not in allowed]
        if unknown:
            return None, f"{', '.join(unknown)} is not one of the choices"
        if spec.min_items is not None and len(chosen) < spec.min_items:
            return None, f"choose at least {spec.min_items}"
        if spec.max_items is not None and len(chosen) > spec.max_items:
            return None, f"choose at most {spec.max_items}"
        return chosen, None
    text = (raw[-1] if raw else "") if isinstance(raw, list) else raw
    if spec.kind == "boolean":
        lowered = text.strip().lower()
        if lowered not in _TRUE | _FALSE:
            return None, "must be yes or no"
        return lowered in _TRUE, None
    if spec.kind in ("number", "integer"):
        return _read_number(spec, text.strip())
    if spec.kind == "choice":
        if text not in {value for value, _ in spec.options}:
            return None, "is not one of the choices"
        return text, None
    if spec.min_length is not None and len(text) < spec.min_length:
        return None, f"must have at least {spec.min_length} characters"
    if spec.max_length is not None and len(text) > spec.max_length:
        return None, f"must have at most {spec.max_length} characters"
    return text, _format_problem(text, spec.format)


def read_answer(schema: dict[str, Any] | None, raw: Mapping[str, str | list[str]]) -> dict[str, Any]:
    """The content to send for an accepted form: each field read and checked against `schema`.

    `raw` holds what a person typed, as text (a list for a multi-select). An empty field is left
    out unless it is required; a boolean missing from `raw` is false (an unticked checkbox).
    Raises `BadAnswer` naming every field that does not fit.
    """
    content: dict[str, Any] = {}
    problems: list[str] = []
    for spec in fields(schema):
        value = raw.get(spec.name)
        if spec.kind == "boolean" and value is None:
            value = "false"
        empty = value is None or value == "" or value == [] or (isinstance(value, str) and not value.strip()
                                                                 and spec.kind != "string")
        if empty:
            if spec.required:
                problems.append(f"{spec.title}: an answer is required")
            continue
        read, problem = _read_one(spec, value)
        if problem:
            problems.append(f"{spec.title}: {problem}")
        else:
            content[spec.name] = read
    if problems:
        raise BadAnswer(problems)
    return content


def summary(action: str | None, content: dict[str, Any] | None) -> str:
    """A closed question in one line: `answered: accept` with its values, `declined`, `cancelled`."""
    if action == "accept":
        values = ", ".join(f"{key}={value}" for key, value in (content or {}).items())
        return "answered: accept" + (f" · {values}" if values else "")
    return {"decline": "declined", "cancel": "cancelled"}.get(action or "", "not answered (the call ended)")


# ---------------------------------------------------------------- the desk

@dataclass
class _Open:
    """A question waiting for its person."""

    question_id: str
    server: str
    scope: CallScope
    schema: dict[str, Any] | None
    reply: asyncio.Future[types.ElicitResult]


class QuestionDesk:
    """The calls in flight per server, and the questions their servers asked, until answered or ended."""

    def __init__(self) -> None:
        self._calls: dict[str, list[CallScope]] = {}
        self._open: dict[str, _Open] = {}
        self._closed: OrderedDict[str, str] = OrderedDict()  # question id: why it is closed

    @contextlib.contextmanager
    def running(self, server: str) -> Iterator[None]:
        """While the body runs, the current chat call (if any) takes `server`'s questions; after, they close."""
        scope = current_call.get()
        if scope is None:
            yield
            return
        calls = self._calls.setdefault(server, [])
        calls.append(scope)
        try:
            yield
        finally:
            calls.remove(scope)
            for question in [q for q in self._open.values() if q.scope is scope]:
                self._close(question, "its tool call ended before it was answered")
                question.reply.set_result(types.ElicitResult(action="cancel"))
                logger.info("MCP_QUESTION_ENDED {} id={} call={}", server, question.question_id, scope.call_id)

    def is_open(self, question_id: str) -> bool:
        return question_id in self._open

    async def wait_closed(self, question_id: str) -> None:
        """Return once the question is closed (answered, timed out, or its call ended)."""
        question = self._open.get(question_id)
        if question is not None:
            await asyncio.shield(question.reply)

    def schema(self, question_id: str) -> dict[str, Any] | None:
        """The schema of an open question (None for a URL question); `NoSuchQuestion` or `QuestionClosed`."""
        return self._find(question_id).schema

    async def ask(self, server: str, params: types.ElicitRequestParams, timeout: float) -> types.ElicitResult:
        """A server's question, routed to the chat call that asked it; the person's answer.

        A 2026-07-28 input-required result is answered inside the call's own task, so the call is known.
        A session's `elicitation/create` arrives on the session's reader, which does not say which call
        it belongs to: it goes to the most recent chat call running on that server.
        """
        calls = self._calls.get(server)
        if not calls:
            logger.warning("MCP_QUESTION_DECLINED {}: no tool call of a chat is running on this server, so no person "
                           "can be asked", server)
            return types.ElicitResult(action="decline")
        own = current_call.get()
        scope = own if own in calls else calls[-1]
        question_id = "q" + secrets.token_hex(6)
        url = params.url if isinstance(params, types.ElicitRequestURLParams) else None
        schema = params.requested_schema if isinstance(params, types.ElicitRequestFormParams) else None
        question = _Open(question_id, server, scope, schema, asyncio.get_running_loop().create_future())
        self._open[question_id] = question
        logger.info("MCP_QUESTION_ASKED {} id={} call={} mode={}", server, question_id, scope.call_id,
                    "url" if url else "form")
        scope.emit(QuestionAsked(scope.call_id, question_id, server, params.message, schema, url))
        if scope.keep_alive is not None:
            scope.keep_alive()
        try:
            # the call's own deadline (moved just now) ends it first; this only guards against a call that never ends
            return await asyncio.wait_for(asyncio.shield(question.reply), timeout + _GRACE)
        except TimeoutError:
            self._close(question, "it was not answered in time")
            logger.warning("MCP_QUESTION_TIMEOUT {} id={} after {:g}s", server, question_id, timeout + _GRACE)
            return types.ElicitResult(action="cancel")

    def answer(self, question_id: str, action: str, raw: Mapping[str, str | list[str]] | None = None) -> dict[str, Any] | None:
        """A person's answer: `accept` (with `raw` read against the schema), `decline` or `cancel`.

        Returns the content sent (None unless accepted). Raises `NoSuchQuestion`, `QuestionClosed`
        (answered already, or its call ended), or `BadAnswer` (the question stays open).
        """
        question = self._find(question_id)
        if action not in ACTIONS:
            raise BadAnswer([f"the action must be one of {', '.join(ACTIONS)}, not {action!r}"])
        content = read_answer(question.schema, raw or {}) if action == "accept" and question.schema is not None \
            else None
        self._close(question, f"it was answered already ({action})")
        question.scope.emit(QuestionAnswered(question_id, action, content))  # type: ignore[arg-type]
        if question.scope.keep_alive is not None:
            question.scope.keep_alive()
        question.reply.set_result(types.ElicitResult(action=action, content=content))  # type: ignore[arg-type]
        logger.info("MCP_QUESTION_ANSWERED {} id={} action={}", question.server, question_id, action)  # never the content
        return content

    def _find(self, question_id: str) -> _Open:
        question = self._open.get(question_id)
        if question is not None:
            return question
        if question_id in self._closed:
            raise QuestionClosed(f"this question is closed: {self._closed[question_id]}")
        raise NoSuchQuestion(f"no question {question_id!r} was asked here")

    def _close(self, question: _Open, why: str) -> None:
        self._open.pop(question.question_id, None)
        self._closed[question.question_id] = why
        while len(self._closed) > _CLOSED_KEPT:
            self._closed.popitem(last=False)
