"""A server's question on the page: a form inside the running tool's card, and the route that answers it.

Its route (`ar`):

    POST /question   qid, action (accept, decline, cancel) and the form's fields (`field.NAME`):
                     the answer goes to the server and the form becomes its one-line summary;
                     a bad answer comes back as the form with the reasons (the question stays open);
                     409 once the question is closed (answered already, or its call ended), 404 if unknown.

The form is built from the requested schema (`sidespin.questions.fields`) and drawn by
`QuestionBox`, which `ToolCard` calls for every question of a call: live or reloaded, the same.
"""

from __future__ import annotations

from typing import Any

from fasthtml.common import (
    A, APIRouter, Button, Div, Form, Hidden, Input, Label, Option, P, Select, Small, Span,
)
from loguru import logger
from starlette.requests import Request

from sidespin.errors import BadAnswer, NoSuchQuestion, QuestionClosed
from sidespin.questions import Field, QuestionDesk, fields, summary
from sidespin.record import CallRecord, QuestionRecord
from sidespin.web.forms import refusal

__all__ = ["QuestionBox", "QuestionForm", "ar"]

FIELD_PREFIX = "field."
_MAX_FIELDS = 100
_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}

ar = APIRouter()


# ---------------------------------------------------------------- components

def _label(spec: Field) -> Any:
    return Span(spec.title, Span(" *", cls="required", title="required") if spec.required else "", cls="field-title")


def _default_text(spec: Field, typed: dict[str, list[str]] | None) -> str:
    if typed is not None:
        return (typed.get(spec.name) or [""])[-1]
    return "" if spec.default is None else str(spec.default)


def FieldInput(spec: Field, typed: dict[str, list[str]] | None = None):
    """One field as an input: its type, limits and default (or what was typed, after a bad answer)."""
    name = FIELD_PREFIX + spec.name
    if spec.kind == "boolean":
        checked = ("true" in (typed.get(spec.name) or [])) if typed is not None else spec.default is True
        return Input(type="checkbox", name=name, value="true", checked=checked)
    if spec.kind in ("choice", "choices"):
        if spec.kind == "choices":
            chosen = typed.get(spec.name, []) if typed is not None else [str(v) for v in spec.default or []]
        else:
            chosen = [_default_text(spec, typed)]
        blank = [] if spec.kind == "choices" or spec.required else [Option("—", value="")]
        return Select(*blank, *[Option(label, value=value, selected=value in chosen) for value, label in spec.options],
                      name=name, multiple=spec.kind == "choices", required=spec.required)
    limits: dict[str, Any] = {}
    if spec.kind in ("number", "integer"):
        limits = {"type": "number", "step": "1" if spec.kind == "integer" else "any"}
        limits.update({k: f"{v:g}" for k, v in (("min", spec.minimum), ("max", spec.maximum)) if v is not None})
    else:
        limits = {"type": _INPUT_TYPES.get(spec.format or "", "text")}
        limits.update({k: str(v) for k, v in (("minlength", spec.min_length), ("maxlength", spec.max_length))
                       if v is not None})
    return Input(name=name, value=_default_text(spec, typed), required=spec.required, **limits)


def QuestionForm(question_id: str, schema: dict[str, Any] | None, url: str | None = None, *,
                 typed: dict[str, list[str]] | None = None, problems: list[str] | None = None):
    """The fields of a question (or its link) with Accept, Decline and Cancel; `problems`: why an answer was refused."""
    if url is not None:
        safe = url.startswith(("https://", "http://"))
        body = [P(A(url, href=url, target="_blank", rel="noopener noreferrer") if safe else Span(url, cls="uri"),
                  cls="question-url")]
    else:
        body = [Label(_label(spec), FieldInput(spec, typed),
                      Small(spec.description, cls="field-help") if spec.description else "", cls=f"field {spec.kind}")
                for spec in fields(schema)[:_MAX_FIELDS]]
    refused = [Div(*[Div(problem) for problem in problems], cls="question-problems", role="alert")] if problems else []
    buttons = Div(
        Button("Accept", name="action", value="accept", type="submit", cls="accept"),
        Button("Decline", name="action", value="decline", type="submit", cls="decline", formnovalidate=True),
        Button("Cancel", name="action", value="cancel", type="submit", cls="cancel", formnovalidate=True),
        cls="question-buttons",
    )
    return Form(Hidden(name="qid", value=question_id), *refused, *body, buttons,
                hx_post=answer_question.to(), hx_target="this", hx_swap="outerHTML", novalidate=True,
                cls="question-form", id=f"form-{question_id}")


def QuestionSummary(action: str | None, content: dict[str, Any] | None):
    """A closed question in one line."""
    return Div(summary(action, content), cls="question-summary", data_action=action or "ended")


def QuestionBox(question: QuestionRecord, card: CallRecord):
    """A server's question on its call's card: the form while the call runs, its summary after."""
    waiting = question.action is None and card.status == "running"
    return Div(
        P(Span(f"❔ {question.server} asks:", cls="k"), Span(question.message, cls="question-text"),
          cls="question-message"),
        QuestionForm(question.question_id, question.schema, question.url) if waiting
        else QuestionSummary(question.action, question.content),
        cls="question", id=f"question-{question.question_id}", data_state="open" if waiting else "closed",
    )


# ---------------------------------------------------------------- the route

def _desk(request: Request) -> QuestionDesk | None:
    manager = getattr(request.app.state.engine, "mcp", None)
    return manager.questions if manager is not None else None


@ar("/question", methods=["post"])
async def answer_question(request: Request):
    """A person's answer to a server's question (see the module docstring)."""
    form = await request.form()
    qid, action = form.get("qid"), form.get("action")
    if not isinstance(qid, str) or not isinstance(action, str):
        return refusal("expected the fields qid and action (accept, decline or cancel)", 400)
    typed: dict[str, list[str]] = {}
    for key, value in form.multi_items():
        if key.startswith(FIELD_PREFIX) and isinstance(value, str):
            typed.setdefault(key[len(FIELD_PREFIX):], []).append(value)
    desk = _desk(request)
    if desk is None:
        return refusal(f"no question {qid!r} was asked here (no MCP server is configured)", 404)
    raw = {name: values if len(values) > 1 else values[0] for name, values in typed.items()}
    try:
        schema = desk.schema(qid)
        if schema is not None:  # a multi-select with one choice is still a list
            multiple = {spec.name for spec in fields(schema) if spec.kind == "choices"}
            raw = {name: typed[name] if name in multiple else value for name, value in raw.items()}
        content = desk.answer(qid, action, raw)
    except BadAnswer as error:
        logger.info("MCP_QUESTION_REFUSED id={} {} problem(s)", qid, len(error.problems))
        return QuestionForm(qid, schema, typed=typed, problems=error.problems)
    except QuestionClosed as error:
        return refusal(str(error), 409)
    except NoSuchQuestion as error:
        return refusal(str(error), 404)
    return QuestionSummary(action, content)
