"""A turn of a transcript: a 💬: user message and the 🤖: answer to it, and what it stands for: the
events it was played as (a reload draws them again) and the chat messages it sends to the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from sidespin.events import (
    ApprovalNeeded,
    CallDecided,
    ErrorNotice,
    Event,
    MalformedCall,
    QuestionAnswered,
    TextDelta,
    Thought as ThoughtEvent,
    ToolFinished,
    ToolProposed,
    ToolStarted,
    TurnDone,
)
from sidespin.formats import ATTACHMENTS, image_attachments
from sidespin.protocol import poked
from sidespin.questions import ACTIONS
from sidespin.tools import FAILED, ToolCall, ToolResult
from sidespin.transcript.markers import (
    _USER_BREAKS, INTERRUPTED, NOT_RUN, REFUSED, USER, _escape, _guard_notes, _note_data, _split_lines,
)
from sidespin.transcript.notes import _question_event, _usage_event
from sidespin.transcript.segments import Note, Proposal, Result, Segment, Summary, Text, Thought

__all__ = ["Turn"]


@dataclass
class Turn:
    """A 💬: user turn and, once the model answered, its 🤖: block (`model` is None before)."""

    user: str = ""
    model: str | None = None
    segments: list[Segment] = field(default_factory=list)
    user_raw: str = ""
    header_raw: str = ""

    def __post_init__(self) -> None:
        if not self.user_raw:
            typed = _guard_notes(_escape(self.user.strip(), _USER_BREAKS, at_line_start=False))
            self.user_raw = f"{USER} {typed}\n"
        lines = _split_lines(self.user_raw[len(USER):])
        self.user = "".join(line for line in lines if _note_data(line) is None).strip()

    @property
    def user_note(self) -> dict[str, Any]:
        """What the user message carries besides its text (resources attached with `@`), merged from its notes."""
        merged: dict[str, Any] = {}
        for line in _split_lines(self.user_raw[len(USER):]):
            merged.update(_note_data(line) or {})
        return merged

    @property
    def poke(self) -> str | None:
        """The tool this user message Pokes (`sidespin.protocol.poked`), or None."""
        return poked(self.user_note, self.user)

    @property
    def is_placeholder(self) -> bool:
        """An empty 💬: with no answer: the previous answer is complete, nothing asked yet."""
        return not self.user and self.model is None

    def render(self) -> str:
        return self.user_raw + self.header_raw + "".join(segment.raw for segment in self.segments)

    def proposals(self) -> list[Proposal]:
        return [segment for segment in self.segments if isinstance(segment, Proposal)]

    def results(self) -> list[Result]:
        return [segment for segment in self.segments if isinstance(segment, Result)]

    def notes(self) -> list[dict[str, Any]]:
        return [segment.data for segment in self.segments if isinstance(segment, Note)]

    def started(self) -> set[str]:
        """Ids of the calls a note says were started."""
        return {note["started"] for note in self.notes() if isinstance(note.get("started"), str)}

    def interrupted(self) -> list[ToolCall]:
        """Calls that started and have no result: sidespin stopped while they ran."""
        answered = {result.call_id for result in self.results()}
        started = self.started()
        return [p.call for p in self.proposals() if p.call.id in started and p.call.id not in answered]

    @property
    def stopped(self) -> bool:
        return any(note.get("stopped") for note in self.notes())

    def events(self, *, last: bool, ended: bool = True) -> list[Event]:
        """The events this turn stands for, in order, as they were when it was played live.

        `last`: the conversation's last turn (its undecided calls wait for a person); `ended`:
        no turn plays it now (a call started without a result was interrupted; the turn is over).
        Fold them with `TurnRecord.replay` to draw the turn exactly as it was seen.
        """
        events: list[Event] = []
        answered = {result.call_id for result in self.results()}
        started = self.started()
        notes = self.notes()
        details = {n["result"]: n for n in notes if isinstance(n.get("result"), str)}
        interrupted = {n["interrupted"] for n in notes if isinstance(n.get("interrupted"), str)}
        calls: dict[str, ToolCall] = {}
        for segment in self.segments:
            if isinstance(segment, Text):
                if segment.raw.strip():
                    events.append(TextDelta(segment.raw))
            elif isinstance(segment, Thought):
                events.append(ThoughtEvent(segment.text))
            elif isinstance(segment, Proposal):
                call = calls[segment.call.id] = segment.call
                events.append(ToolProposed(call))
                if call.id in answered:
                    continue
                if segment.decision is not None:
                    events.append(CallDecided(call, segment.decision != "n"))
                if call.id in started:
                    events.append(ToolStarted(call))
                    if ended:
                        events.append(ToolFinished(ToolResult(call, error=INTERRUPTED.removeprefix(FAILED),
                                                              kind="interrupted")))
                elif segment.decision is None and last:
                    events.append(ApprovalNeeded(call))
            elif isinstance(segment, Result):
                call = calls.get(segment.call_id) or ToolCall(segment.tool, {}, segment.call_id)
                note = details.get(segment.call_id, {})
                kind = "interrupted" if segment.call_id in interrupted else note.get("kind")
                events.append(ToolFinished(segment.as_result(call, note.get("seconds"), kind,
                                                             note.get("attachments") or [],
                                                             reused=note.get("reused") is True,
                                                             structured=note.get("structured"))))
            elif isinstance(segment, Note):
                if isinstance(segment.data.get("malformed"), str):
                    events.append(MalformedCall(segment.data["malformed"], str(segment.data.get("reason", ""))))
                elif isinstance(segment.data.get("notice"), str):
                    events.append(ErrorNotice(segment.data["notice"]))
                elif isinstance(segment.data.get("usage"), dict):
                    events.append(_usage_event(segment.data["usage"]))
                elif isinstance(segment.data.get("question"), str):
                    events.append(_question_event(segment.data))
                elif isinstance(segment.data.get("answered"), str) and segment.data.get("action") in ACTIONS:
                    content = segment.data.get("content")
                    events.append(QuestionAnswered(segment.data["answered"], segment.data["action"],
                                                   content if isinstance(content, dict) else None))
        if ended:
            waits = any(isinstance(event, ApprovalNeeded) for event in events)
            events.append(TurnDone(reason="stopped" if self.stopped else "approval" if waits else "done"))
        return events

    def summary(self) -> str | None:
        found = [segment.text for segment in self.segments if isinstance(segment, Summary) and segment.text]
        return found[-1] if found else None

    def messages(self, *, last: bool) -> list[dict[str, Any]]:
        """This turn as chat messages; the grouping is described in `sidespin.transcript`."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.user}] if self.user else []
        images = image_attachments(self.user_note.get("attachments"))
        if messages and images:
            messages[0][ATTACHMENTS] = images  # resources attached with `@`, for a model with vision
        content: list[str] = []
        calls: list[Proposal] = []
        results: dict[str, Result] = {}
        started = self.started()
        details = {n["result"]: n for n in self.notes() if isinstance(n.get("result"), str)}

        def flush(final: bool) -> None:
            text = "".join(content).strip()
            if calls:
                message: dict[str, Any] = {"role": "assistant"}
                if text:
                    message["content"] = text
                message["tool_calls"] = [proposal.wire() for proposal in calls]
                messages.append(message)
                for proposal in calls:
                    result = results.pop(proposal.call.id, None)
                    if result is not None:
                        reply = result.text
                    elif proposal.decision == "n":
                        reply = REFUSED
                    elif proposal.call.id in started:
                        reply = INTERRUPTED
                    elif not final:
                        reply = NOT_RUN
                    else:
                        continue  # still waiting: the rally finds it as a pending call
                    name = result.tool if result is not None else proposal.call.name
                    message = {"role": "tool", "tool_call_id": proposal.call.id, "name": name, "content": reply}
                    images = [a for a in details.get(proposal.call.id, {}).get("attachments") or []
                              if isinstance(a, dict) and a.get("type") == "image" and a.get("data")]
                    if result is not None and images:
                        message[ATTACHMENTS] = images  # for a model with vision (see sidespin.formats)
                    messages.append(message)
            elif text:
                messages.append({"role": "assistant", "content": text})
            for orphan in results.values():
                logger.warning("TRANSCRIPT_ORPHAN_RESULT {} id={}: no proposal before it", orphan.tool, orphan.call_id)
            content.clear()
            calls.clear()
            results.clear()

        for segment in self.segments:
            if isinstance(segment, Proposal):
                calls.append(segment)
            elif isinstance(segment, Result):
                results[segment.call_id] = segment
            elif isinstance(segment, Note) and segment.data.get("round") is True and calls:
                flush(final=False)  # the calls after it are the model's next answer, after the results above
            elif isinstance(segment, (Thought, Note)):
                continue
            elif segment.raw.strip():
                if calls or results:
                    flush(final=False)
                content.append(segment.raw)
            elif not calls:
                content.append(segment.raw)
        flush(final=last)
        return messages
