"""The sidespin notes that stand for events: a server's question, and the tokens an answer cost,
written into a transcript and read back as the events they were written from."""

from __future__ import annotations

from typing import Any

from sidespin.events import QuestionAsked, Usage


def _question_note(event: QuestionAsked) -> dict[str, Any]:
    """A server's question as its note keeps it."""
    data: dict[str, Any] = {"question": event.question_id, "call": event.call_id, "server": event.server,
                            "message": event.message}
    if event.schema is not None:
        data["schema"] = event.schema
    if event.url is not None:
        data["url"] = event.url
    return data


def _question_event(data: dict[str, Any]) -> QuestionAsked:
    """A `{"question": …}` note as the event it was written from."""
    schema, url = data.get("schema"), data.get("url")
    return QuestionAsked(str(data.get("call", "")), data["question"], str(data.get("server", "")),
                         str(data.get("message", "")), schema if isinstance(schema, dict) else None,
                         url if isinstance(url, str) else None)


def _usage_event(data: dict[str, Any]) -> Usage:
    """A `{"usage": …}` note's figures as the event they were written from (what is not a number is 0)."""
    def number(key: str) -> int:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
    return Usage(number("input"), number("output"), number("context"), number("window") or None,
                 data.get("counted") is True)
