"""Writing a turn's events into its conversation file as they arrive."""

from __future__ import annotations

import json
import time
from typing import Any, Callable

from loguru import logger

from sidespin.errors import TranscriptError
from sidespin.events import (
    ApprovalNeeded,
    ErrorNotice,
    Event,
    MalformedCall,
    ModelLoading,
    QuestionAnswered,
    QuestionAsked,
    TextDelta,
    Thought as ThoughtEvent,
    ToolFinished,
    ToolProgress,
    ToolProposed,
    ToolStarted,
    TurnDone,
    Usage,
)
from sidespin.tools import ToolCall, ToolResult
from sidespin.transcript.store import Loaded, TranscriptStore

__all__ = ["TranscriptRecorder"]


MAX_STRUCTURED_CHARS = 100_000  # a larger structuredContent is not kept in the note (its text still is, cut)


def _json_size(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except RecursionError:  # nested too deeply to write in a note: as if too large
        return MAX_STRUCTURED_CHARS + 1


def _details(result: ToolResult) -> dict[str, Any]:
    """What the page shows of a result beyond its text: duration, error kind, attachments, and an MCP
    server's `structuredContent` (so a reload, a fork and an edit's reused result still carry it)."""
    details: dict[str, Any] = {"seconds": result.seconds}
    if getattr(result, "kind", None) and not result.ok:
        details["kind"] = result.kind
    if result.attachments:
        details["attachments"] = result.attachments
    if result.structured is not None and _json_size(result.structured) <= MAX_STRUCTURED_CHARS:
        details["structured"] = result.structured
    if result.reused:
        details["reused"] = True
    return details


class TranscriptRecorder:
    """Writes rally events into a conversation file as they arrive, atomically.

    Every event is saved at once, except streamed text and thoughts: those are
    written at most once per `min_interval` seconds (and always with the next
    other event, on `TurnDone` and on `flush()`): a kill loses at most the text
    that arrived less than `min_interval` (50 ms) after the last write and was
    followed by no other event. With `min_interval=0` it loses at most the token
    being written (each save costs about 1.5 to 3 ms here, mostly fsync).
    A file that does not parse is never written over: the constructor raises
    `TranscriptError`, and so does any event that finds the file broken on disk
    in the meantime. A file rewritten by someone else is reloaded as the truth
    before the next event is recorded; streamed text not yet written is then
    appended to the reloaded version. Held-back text is kept as pieces and joined
    once per write, so recording a long answer stays linear in its length.
    `loaded`: the file as the caller read it already (`TranscriptStore.load_stamped`); it is read
    again only if it changed since, so a turn reads and parses its file once.
    """

    def __init__(
        self,
        store: TranscriptStore,
        conversation_id: str,
        model_name: str,
        *,
        min_interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        loaded: Loaded | None = None,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.model_name = model_name
        self.min_interval = min_interval
        self.clock = clock
        if loaded is not None and loaded.stamp != store.stamp(conversation_id):
            logger.debug("TRANSCRIPT_READ_AGAIN conv={}: written since it was read", conversation_id)
            loaded = None  # a turn before this one wrote it meanwhile (a queued question)
        self.transcript, self._stamp = loaded or store.load_stamped(conversation_id)
        self.writes = 0
        self._last_write = float("-inf")
        self._dirty = False
        self._thought: str | None = None
        self._thought_at: int | None = None
        self._text: list[str] = []

    def user(self, text: str, note: dict[str, Any] | None = None) -> None:
        """A new user turn; `note`: what it carries besides its text (see `Transcript.add_user`)."""
        self._sync()
        self._thought = None
        self.transcript.add_user(text, note)
        self._save()

    def record_decision(self, call_id: str, choice: str) -> None:
        """Write a person's choice (ya, yA, yo, yO, n) after the call's ❓: marker."""
        self._sync()
        self.transcript.decide(call_id, choice)
        logger.info("TRANSCRIPT_DECISION conv={} id={} {}", self.conversation_id, call_id, choice)
        self._save()

    def close_interrupted(self) -> list[ToolCall]:
        """Give the calls that started and never finished a result saying so (`Transcript.close_interrupted`)."""
        self._sync()
        closed = self.transcript.close_interrupted()
        if closed:
            self._save()
        return closed

    def apply(self, event: Event) -> None:
        """Record one rally event."""
        if isinstance(event, (ModelLoading, ToolProgress)):
            return  # only while it lasts: a reloaded turn shows its answer and results, not the waits for them
        if isinstance(event, TextDelta):
            # held in memory until the next write: one join per write keeps a long answer linear
            self._sync()
            self._thought = None
            self._text.append(event.text)
            self._save(streaming=True)
            return
        self._write_text()
        self._sync()
        transcript = self.transcript
        if isinstance(event, ThoughtEvent):
            transcript.start_answer(self.model_name)
            if event.closed or self._thought is None:
                self._thought, self._thought_at = "", None
            self._thought += event.text
            self._thought_at = transcript.put_thought(self._thought, self._thought_at)
            if event.closed:
                self._thought = None
            self._save(streaming=True)
            return
        self._thought = None
        if isinstance(event, ApprovalNeeded):
            self.flush()  # what waits is read from the ❓: lines: nothing new to write
            return
        if isinstance(event, MalformedCall):
            transcript.start_answer(self.model_name)
            transcript.add_note({"malformed": event.raw, "reason": event.reason})
        elif isinstance(event, ErrorNotice):
            transcript.start_answer(self.model_name)
            transcript.add_note({"notice": event.message})
        elif isinstance(event, Usage):
            transcript.start_answer(self.model_name)
            transcript.add_usage(event)
        elif isinstance(event, QuestionAsked):
            transcript.add_question(event)
        elif isinstance(event, QuestionAnswered):
            transcript.add_answer(event)
        elif isinstance(event, ToolProposed):
            transcript.start_answer(self.model_name)
            if event.after_results:
                transcript.add_note({"round": True})
            transcript.add_proposal(event.call)
        elif isinstance(event, ToolStarted):
            transcript.mark_started(event.call)
        elif isinstance(event, ToolFinished):
            transcript.add_result(event.result.call, event.result.text(), is_error=not event.result.ok,
                                  details=_details(event.result))
        elif isinstance(event, TurnDone):
            if event.reason == "stopped":
                transcript.mark_stopped()
            if event.reason != "approval":
                transcript.end_turn()
        self._save()

    def flush(self) -> None:
        """Write text still held back by the 50 ms window."""
        if self._dirty:
            self._save()

    def _sync(self) -> None:
        """If someone else rewrote the file, their version is the truth; if it is broken, stop."""
        stamp = self.store.stamp(self.conversation_id)
        if stamp == self._stamp:
            return
        try:
            self.transcript = self.store.load(self.conversation_id)
        except TranscriptError:
            logger.error("TRANSCRIPT_REFUSE_OVERWRITE conv={}: the file on disk does not parse", self.conversation_id)
            raise
        logger.warning("TRANSCRIPT_CHANGED_ON_DISK conv={}: reloaded", self.conversation_id)
        self._stamp = stamp
        self._dirty = False
        self._thought = None

    def _write_text(self) -> None:
        """Put the answer text held in memory into the transcript."""
        if not self._text:
            return
        self._sync()
        text, self._text = "".join(self._text), []
        self.transcript.start_answer(self.model_name)
        self.transcript.append_text(text)

    def _save(self, *, streaming: bool = False) -> None:
        now = self.clock()
        if streaming and now - self._last_write < self.min_interval:
            self._dirty = True
            return
        self._write_text()
        self.store.save(self.conversation_id, self.transcript)
        logger.debug("TRANSCRIPT_SAVED conv={} writes={}", self.conversation_id, self.writes + 1)
        self._stamp = self.store.stamp(self.conversation_id)
        self._last_write = now
        self._dirty = False
        self.writes += 1
