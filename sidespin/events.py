"""The typed events `chat_with_llm` yields; the web page and the terminal each draw them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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
    "ToolProgress",
    "ToolFinished",
    "MalformedCall",
    "ErrorNotice",
    "Usage",
    "ModelLoading",
    "QuestionAsked",
    "QuestionAnswered",
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
    """The model asked for a tool call; `after_results`: the first call of a round that follows this turn's results
    (a new answer of the model, not one more call of the answer before)."""

    call: ToolCall
    after_results: bool = False


@dataclass
class ApprovalNeeded(Event):
    """A proposed call waits for a person's choice (ya, yA, yo, yO, n); `why`, in words for a person, when the
    reason is worth saying (it follows a tool result, a path lies outside its server's folders)."""

    call: ToolCall
    why: str = ""


@dataclass
class CallDecided(Event):
    """A person chose: the waiting call runs (`approved`) or is refused."""

    call: ToolCall
    approved: bool


@dataclass
class ToolStarted(Event):
    call: ToolCall


@dataclass
class ToolProgress(Event):
    """News of a running call from its server: `progress` of `total` (a progress notification), or the
    `status` of the task it runs as (`task`: its id) with its `message`. Drawn while the call runs, never
    kept in the transcript (its result is)."""

    call_id: str
    progress: float | None = None
    total: float | None = None
    message: str | None = None
    status: str | None = None
    task: str | None = None

    def line(self) -> str:
        """The news in a few words: `3 of 10 · copying`, or a task's `working · copying (3/10)`."""
        parts = [{"input_required": "waiting for input"}.get(self.status, self.status)] if self.status else []
        if self.progress is not None:
            parts.append(f"{self.progress:g} of {self.total:g}" if self.total else f"{self.progress:g}")
        if self.message:
            parts.append(self.message)
        return " · ".join(parts)


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
class Usage(Event):
    """Tokens an answer (or several, once folded) cost: `input` and `output` add up over the rounds of a
    turn; `context` is how many tokens the last one filled of the model's `window` (None: not known);
    `counted`: by the model's tokenizer, the backend did not say."""

    input: int = 0
    output: int = 0
    context: int = 0
    window: int | None = None
    counted: bool = False

    def plus(self, later: "Usage") -> "Usage":
        """This usage and a later one of the same turn: the tokens add up, the context is the later one's."""
        return Usage(self.input + later.input, self.output + later.output, later.context,
                     later.window or self.window, self.counted or later.counted)

    def line(self) -> str:
        """The usage as a person reads it: `812 tokens in · 64 out · context 876 / 8,192 (11%)`."""
        parts = [f"{self.input:,} tokens in", f"{self.output:,} out"]
        if self.window:
            parts.append(f"context {self.context:,} / {self.window:,} ({self.context / self.window:.0%})")
        else:
            parts.append(f"context {self.context:,}")
        return " · ".join(parts) + (" · counted by the model's tokenizer" if self.counted else "")


@dataclass
class ModelLoading(Event):
    """The conversation's model is being loaded (`seconds` so far); `done` once it is ready (or failed).

    No backend reports how far a load is, so this is elapsed time, never a percentage.
    """

    model: str
    seconds: float = 0.0
    done: bool = False


QuestionAction = Literal["accept", "decline", "cancel"]


@dataclass
class QuestionAsked(Event):
    """A server asked the person something while the call `call_id` runs (MCP elicitation).

    A form question carries the requested `schema`; a URL question the `url` to open (opening it
    is the person's business). It stays open until answered or until the call ends.
    """

    call_id: str
    question_id: str
    server: str
    message: str
    schema: dict[str, Any] | None = None
    url: str | None = None


@dataclass
class QuestionAnswered(Event):
    """The person answered a question: `accept` (with the `content` sent), `decline` or `cancel`."""

    question_id: str
    action: QuestionAction
    content: dict[str, Any] | None = None


@dataclass
class TurnDone(Event):
    """The rally is over for now: `done`, `approval` (a call waits), `limit`, `repeat`, `error` or `stopped`."""

    text: str = ""
    rounds: int = 0
    reason: EndReason = "done"
    pending: list[ToolCall] = field(default_factory=list)
