"""The typed events `chat_with_llm` yields; the web page and the terminal each draw them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sidespin.tools import ToolCall, ToolResult

__all__ = [
    "EndReason",
    "Event",
    "TextDelta",
    "Thought",
    "ToolProposed",
    "ApprovalNeeded",
    "CallDecided",
    "ToolStarted",
    "ToolFinished",
    "MalformedCall",
    "ErrorNotice",
    "TurnDone",
]


EndReason = Literal["done", "approval", "limit", "repeat", "error", "stopped"]


@dataclass
class Event:
    """Base of every rally event."""


@dataclass
class TextDelta(Event):
    """Visible answer text, streamed as it arrives."""

    text: str


@dataclass
class Thought(Event):
    """Reasoning the model wrote inside `<think>`; shown collapsed, never mixed into the answer."""

    text: str
    closed: bool = True


@dataclass
class ToolProposed(Event):
    """The model asked for a tool call."""

    call: ToolCall


@dataclass
class ApprovalNeeded(Event):
    """A proposed call waits for a person's choice (ya, yA, yo, yO, n)."""

    call: ToolCall


@dataclass
class CallDecided(Event):
    """A person chose: the waiting call runs (`approved`) or is refused."""

    call: ToolCall
    approved: bool


@dataclass
class ToolStarted(Event):
    call: ToolCall


@dataclass
class ToolFinished(Event):
    """A call ended: `result.error` is None on success; `result.seconds` is its duration."""

    result: ToolResult


@dataclass
class MalformedCall(Event):
    """The model wrote a tool call we could not read; `reason` says why."""

    raw: str
    reason: str


@dataclass
class ErrorNotice(Event):
    """Something went wrong that the person should know about; the conversation is intact."""

    message: str


@dataclass
class TurnDone(Event):
    """The rally is over for now: `done`, `approval` (a call waits), `limit`, `repeat`, `error` or `stopped`."""

    text: str = ""
    rounds: int = 0
    reason: EndReason = "done"
    pending: list[ToolCall] = field(default_factory=list)
