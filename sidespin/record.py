"""The one record of a turn: what a person sees of it, folded from its events.

A turn's events (`sidespin.events`) come either live from `chat_with_llm` or
replayed from the transcript, which stores everything the page shows. Both go
through the same fold, `TurnRecord.apply`, and the web page draws a turn from
its `TurnRecord` alone: so a reloaded conversation is drawn exactly as it was
seen live.

    CallRecord     one tool call and its outcome: status, result, error kind,
                   duration, attachments, the questions its server asked, and
                   while it runs its latest news (progress, its task's status)
    QuestionRecord a server's question during a call and the person's answer
    TurnRecord     the answer (as Markdown blocks), thoughts, calls, unreadable
                   calls, notices, the tokens it cost (summed over its rounds),
                   the model loading for it, and whether the turn is over;
                   `TurnRecord.replay(events)` folds a whole list at once
                   (the transcript's `Turn.events()` gives them)
    waiting(...)   the calls that wait for a person's choice: the one answer
                   to "what waits", wherever the calls come from
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from sidespin.events import (
    ApprovalNeeded,
    CallDecided,
    EndReason,
    ErrorNotice,
    Event,
    MalformedCall,
    ModelLoading,
    QuestionAnswered,
    QuestionAsked,
    TextDelta,
    Thought,
    ToolFinished,
    ToolProgress,
    ToolProposed,
    ToolStarted,
    TurnDone,
    Usage,
)
from sidespin.tools import ToolCall, ToolResult

__all__ = ["CallStatus", "EndReason", "CallRecord", "QuestionRecord", "TurnRecord", "MarkdownStream", "waiting", "tidy_thought"]

CallStatus = Literal["proposed", "waiting", "approved", "refused", "running", "done", "error", "interrupted"]
ENDED: tuple[CallStatus, ...] = ("done", "error", "interrupted")

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class MarkdownStream:
    """Answer text as complete Markdown blocks and the tail still being written.

    A block is complete once text follows a blank line outside a fenced code block, so
    blank lines at the end (or the start) never change the blocks. A page renders each
    complete block once and shows the tail as plain text until the answer is over, so a
    long answer is sent about once, not once per token. Linear in the text's length.
    """

    def __init__(self, text: str = "") -> None:
        self.blocks: list[str] = []
        self.tail: list[str] = []  # pieces of the block being written
        self._line_start = 0  # index in `tail` of the first piece of the current line
        self._line_has_text = False
        self._block_has_text = False
        self._blank_seen = False  # a blank line after text: the block ends when text comes again
        self._fence: str | None = None
        self._line: list[str] = []
        if text:
            self.feed(text)

    @property
    def text(self) -> str:
        return "".join(self.blocks) + "".join(self.tail)

    def feed(self, text: str) -> None:
        start = 0
        while start < len(text):
            newline = text.find("\n", start)
            end = len(text) if newline < 0 else newline + 1
            piece = text[start:end]
            start = end
            if not self._line_has_text and piece.strip():
                self._line_has_text = True
                if self._blank_seen and self._fence is None:  # text after a blank line: the block before is done
                    self.blocks.append("".join(self.tail[:self._line_start]))
                    self.tail = self.tail[self._line_start:]
                    self._line_start = 0
                    self._blank_seen = False
            self.tail.append(piece)
            self._line.append(piece)
            if newline >= 0:
                self._end_line("".join(self._line))
                self._line = []
                self._line_start = len(self.tail)
                self._line_has_text = False

    def _end_line(self, line: str) -> None:
        stripped = line.strip()
        if self._fence is not None:
            if stripped.startswith(self._fence) and set(stripped) == {self._fence[0]}:
                self._fence = None
            return
        if not stripped:
            self._blank_seen = self._block_has_text
            return
        opener = _FENCE.match(line)
        if opener:
            self._fence = opener.group(1)
        self._block_has_text = True


def tidy_thought(text: str) -> str:
    """A thought as the transcript keeps it: paragraphs of non-blank lines, each line stripped."""
    paragraphs = re.split(r"\n[ \t\r]*\n", text)
    kept = ["\n".join(line.strip() for line in p.split("\n") if line.strip()) for p in paragraphs]
    return "\n\n".join(p for p in kept if p)


@dataclass
class QuestionRecord:
    """A server's question during a call (MCP elicitation) and what the person answered.

    `action` None: not answered; open while its call runs, "not answered" once the call ended.
    """

    question_id: str
    server: str
    message: str
    schema: dict[str, Any] | None = None
    url: str | None = None
    action: str | None = None
    content: dict[str, Any] | None = None


@dataclass
class CallRecord:
    """One tool call and its outcome, as the page shows it and the transcript keeps it."""

    call: ToolCall
    status: CallStatus = "proposed"
    result: str = ""
    kind: str | None = None  # an error's kind (sidespin.tools.ErrorKind), None on success
    seconds: float | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    reused: bool = False  # the result recorded in an earlier version of the turn, not run again
    imported: bool = False  # it came with an imported file: its choice and result were not made on this machine
    questions: list[QuestionRecord] = field(default_factory=list)
    progress: ToolProgress | None = None  # the latest news of it while it runs (not kept once it ends)
    version: int = 0  # bumped on every change but news, so a watcher sends a card only when it changed
    news_version: int = 0  # bumped on news: a watcher sends only the card's news then

    @property
    def arguments(self) -> str:
        return json.dumps(self.call.arguments, ensure_ascii=False, indent=1)

    def open_questions(self) -> list[QuestionRecord]:
        """The questions that wait for the person: unanswered while the call runs."""
        if self.status != "running":
            return []
        return [question for question in self.questions if question.action is None]

    def finish(self, result: ToolResult) -> None:
        self.progress = None
        self.status = "done" if result.ok else "error"
        self.result, self.seconds, self.attachments = result.text(), result.seconds, result.attachments
        self.kind = result.kind if not result.ok else None
        self.reused = result.reused
        if self.kind == "interrupted":
            self.status = "interrupted"


class TurnRecord:
    """The visible state of one turn (a 💬: question and its 🤖: answer, approvals included)."""

    def __init__(self) -> None:
        self.answer = MarkdownStream()
        self.thoughts: list[str] = []
        self.calls: dict[str, CallRecord] = {}
        self.malformed: list[MalformedCall] = []
        self.notices: list[str] = []
        self.done = False
        self.reason: EndReason | None = None
        self.usage: Usage | None = None  # every round's tokens added up; the context of the last
        self.loading: ModelLoading | None = None  # the model this turn waits for, while it loads
        self.version = 0
        self._answered = False  # some answer text that is not blank arrived
        self._gap = False  # something was written after the text: text that follows starts a new paragraph
        self._thinking = False  # the last event was a thought: a thought that follows continues it
        self._thought_closed = False
        self.thoughts_tidied = False  # the turn is over and its thoughts changed when tidied as the transcript keeps them

    @classmethod
    def replay(cls, events: Iterable[Event]) -> "TurnRecord":
        """The record of a turn whose events are known (a transcript's `Turn.events()`)."""
        record = cls()
        for event in events:
            record.apply(event)
        return record

    def apply(self, event: Event) -> None:
        """Fold one event in."""
        if isinstance(event, (Usage, ModelLoading)):  # beside the answer: its text, thoughts and gaps are untouched
            if isinstance(event, Usage):
                self.usage = self.usage.plus(event) if self.usage is not None else event
            else:
                self.loading = None if event.done else event
            self.version += 1
            return
        if isinstance(event, TextDelta):
            if event.text.strip():  # blank text changes nothing a page shows: the gap waits for real text
                if self._gap and self._answered:
                    self.answer.feed("\n\n")
                self._gap, self._answered = False, True
            self.answer.feed(event.text)
        elif isinstance(event, Thought):
            # a thought that follows a thought continues it; a closed one (or one after a closed one) is a
            # new paragraph of it, as the transcript writes them
            if not self.thoughts or not self._thinking:
                self.thoughts.append(event.text)
            elif (event.closed or self._thought_closed) and self.thoughts[-1].strip():
                self.thoughts[-1] += "\n\n" + event.text
            else:
                self.thoughts[-1] += event.text
            self._thought_closed = event.closed
        elif isinstance(event, ToolProposed):
            self.calls[event.call.id] = CallRecord(event.call)
        elif isinstance(event, ApprovalNeeded):
            self.call(event.call).status = "waiting"
        elif isinstance(event, CallDecided):
            self.call(event.call).status = "approved" if event.approved else "refused"
        elif isinstance(event, ToolStarted):
            self.call(event.call).status = "running"
        elif isinstance(event, ToolFinished):
            self.call(event.result.call).finish(event.result)
        elif isinstance(event, ToolProgress):
            card = self.calls.get(event.call_id)
            if card is not None and card.status == "running":
                card.progress = event
                card.news_version += 1
        elif isinstance(event, QuestionAsked):
            if event.call_id in self.calls:
                card = self.calls[event.call_id]
                card.questions.append(QuestionRecord(event.question_id, event.server, event.message, event.schema,
                                                     event.url))
                card.version += 1
        elif isinstance(event, QuestionAnswered):
            for card in self.calls.values():
                for question in card.questions:
                    if question.question_id == event.question_id:
                        question.action, question.content = event.action, event.content
                        card.version += 1
        elif isinstance(event, MalformedCall):
            self.malformed.append(event)
        elif isinstance(event, ErrorNotice):
            self.notices.append(event.message)
        elif isinstance(event, TurnDone):
            self.done, self.reason, self.loading = True, event.reason, None
            tidied = [tidy_thought(t) for t in self.thoughts]
            self.thoughts_tidied, self.thoughts = tidied != self.thoughts, tidied
        if isinstance(event, (ToolProposed, Thought, MalformedCall, ErrorNotice)):
            self._gap = True  # these are written at the end of the answer; a result goes beside its call
        blank = isinstance(event, TextDelta) and not event.text.strip()
        self._thinking = isinstance(event, Thought) or (self._thinking and blank)
        self.version += 1

    def call(self, call: ToolCall) -> CallRecord:
        """The record of `call` (made if the call was never proposed), its version bumped."""
        record = self.calls.setdefault(call.id, CallRecord(call))
        record.version += 1
        return record

    def waiting(self) -> list[ToolCall]:
        return waiting(self.calls.values())


def waiting(calls: Iterable[CallRecord]) -> list[ToolCall]:
    """The calls that wait for a person's choice."""
    return [record.call for record in calls if record.status == "waiting"]
