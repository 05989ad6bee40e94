"""A whole transcript file: its turns, what it stands for (its notes, its title, the record of a turn, the
messages sent to the model), and the verbs that write into it (each keeps the file parseable). The format
is described in `sidespin.transcript`; its marks are in `markers`, the pieces of an answer in `segments`,
a turn in `turn`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sidespin.events import QuestionAnswered, QuestionAsked, Usage
from sidespin.protocol import poked
from sidespin.record import TurnRecord
from sidespin.tools import ToolCall
from sidespin.transcript.markers import (
    _TEXT_BREAKS, ASSISTANT, CONDENSED, DECISIONS, IMPORTED, INTERRUPTED, NOTE_PREFIX, USER, _clean_name, _escape,
    _guard_notes, _note_data, _split_lines,
)
from sidespin.transcript.notes import _question_note, _usage_event
from sidespin.transcript.segments import Note, Proposal, Result, Segment, Text, Thought, _append
from sidespin.transcript.turn import Turn

__all__ = ["Transcript", "title_of", "UNTITLED"]

UNTITLED = "(new conversation)"
_TITLE_CHARS = 60


@dataclass
class Transcript:
    """A whole conversation file: free text before the first turn, then the turns."""

    turns: list[Turn] = field(default_factory=list)
    preamble: str = ""
    final_newline: bool = True

    # ---- reading ----

    def render(self) -> str:
        text = self.preamble + "".join(turn.render() for turn in self.turns)
        return text if self.final_newline or not text.endswith("\n") else text[:-1]

    @property
    def meta(self) -> dict[str, Any]:
        """What is kept about the whole conversation (a title, where it was forked from, …): the notes
        before the first 💬: turn, merged; Parley reads the lines before the first marker as free text."""
        merged: dict[str, Any] = {}
        for line in _split_lines(self.preamble):
            data = _note_data(line)
            if data is not None:
                merged.update(data)
        return merged

    def set_meta(self, key: str, value: Any) -> None:
        """Keep `value` under `key` in the conversation's note at the top (None removes the key)."""
        meta = self.meta
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
        kept = "".join(line for line in _split_lines(self.preamble) if _note_data(line) is None)
        bom = "\ufeff" if kept.startswith("\ufeff") else ""
        self.preamble = bom + (Note(meta).raw if meta else "") + kept[len(bom):]

    def title(self) -> str:
        """The title a person gave (`set_meta("title", …)`), else one made from the first message."""
        given = self.meta.get("title")
        if isinstance(given, str) and given.strip():
            return _shorten(given)
        for turn in self.turns:
            if turn.user:
                return title_of(turn.user, turn.user_note)
        for turn in self.turns:
            answer = "".join(s.raw for s in turn.segments if isinstance(s, Text)).strip()
            if answer:
                return _shorten(answer)
        return UNTITLED

    def pending_calls(self) -> list[ToolCall]:
        """Proposals of the last turn with no choice recorded, not started, no result: they wait for a person."""
        return self.record().waiting() if self.turns else []

    @property
    def filled_turns(self) -> int:
        """The turns that hold something: all but the empty 💬: at the end that waits for the next question."""
        return len(self.turns) - (1 if self.turns and self.turns[-1].is_placeholder else 0)

    @property
    def imported_turns(self) -> int:
        """How many turns at the top came from an imported file (its `imported` note, written by the import,
        never taken from the file): the choices written in them were not made on this machine, and their
        results did not run here. A file written here, by sidespin or by hand, has none."""
        imported = self.meta.get(IMPORTED)
        turns = imported.get("turns") if isinstance(imported, dict) else None
        return turns if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 else 0

    def record(self, index: int = -1, *, ended: bool = True) -> TurnRecord:
        """What the page shows of the turn at `index` (see `sidespin.record`); an imported turn's calls say so."""
        position = index % len(self.turns) if self.turns else index
        record = TurnRecord.replay(self.turns[index].events(last=position == len(self.turns) - 1, ended=ended))
        if position < self.imported_turns:
            for card in record.calls.values():
                card.imported = True
        return record

    def open_calls(self) -> list[ToolCall]:
        """Calls of the last answer with no result that a person has yet to choose on, or approved and not yet
        run: what a turn that goes on after a choice runs, or still waits for (the record says, as it says
        `pending_calls`). A refused call is not open: the model reads the refusal."""
        if not self.turns:
            return []
        return [card.call for card in self.record().calls.values() if card.status in ("waiting", "approved")]

    def decided_unrun(self) -> dict[str, bool]:
        """Calls of the last answer a person decided that have no result yet: {call id: approved}."""
        if not self.turns:
            return {}
        calls = self.record().calls.values()
        return {c.call.id: c.status == "approved" for c in calls if c.status in ("approved", "refused")}

    def find_proposal(self, call_id: str) -> tuple[Turn, int] | None:
        for turn in reversed(self.turns):
            for index, segment in enumerate(turn.segments):
                if isinstance(segment, Proposal) and segment.call.id == call_id:
                    return turn, index
        return None

    def to_messages(self, summarize_after: int | None = None) -> list[dict[str, Any]]:
        """The chat messages this file stands for, without running any tool.

        With `summarize_after=N`, each turn older than the last N that has a 📝: summary
        is sent as a short user/assistant pair holding only that summary.
        """
        turns = [turn for turn in self.turns if not turn.is_placeholder]
        complete = bool(self.turns) and self.turns[-1].is_placeholder  # no call of it waits any more
        cut = len(turns) - summarize_after if summarize_after is not None else 0
        messages: list[dict[str, Any]] = []
        for number, turn in enumerate(turns):
            summary = turn.summary()
            if number < cut and summary:
                messages.append({"role": "user", "content": CONDENSED})
                messages.append({"role": "assistant", "content": summary})
            else:
                messages.extend(turn.messages(last=number == len(turns) - 1 and not complete))
        return messages

    # ---- writing (the recorder's verbs; each keeps the file parseable) ----

    def _tail(self) -> str:
        pieces = [self.preamble]
        for turn in self.turns[-2:]:
            pieces += [turn.user_raw, turn.header_raw] + [segment.raw for segment in turn.segments[-2:]]
        return "".join(pieces)[-2:]

    def _pad(self, *, blank: bool) -> None:
        """Make the text end at the start of a line (`blank`: after an empty line)."""
        self.final_newline = True
        tail = self._tail()
        if not tail:
            return
        pad = "" if tail.endswith("\n") else "\n"
        if blank and not (tail + pad).endswith("\n\n"):
            pad += "\n"
        if not pad:
            return
        if not self.turns:
            self.preamble += pad
        elif self.turns[-1].model is None:
            self.turns[-1].user_raw += pad
        else:
            _append(self.turns[-1].segments, Text(pad))

    def _fills_placeholder(self) -> bool:
        return bool(self.turns) and self.turns[-1].is_placeholder and self.turns[-1].user_raw.strip() == USER

    def next_user_index(self) -> int:
        """The index the turn `add_user` makes next will have."""
        return len(self.turns) - 1 if self._fills_placeholder() else len(self.turns)

    def add_user(self, text: str, note: dict[str, Any] | None = None) -> Turn:
        """A new 💬: turn; an empty placeholder 💬: at the end is filled instead.
        `note`: what the message carries besides its text, on a note line under it."""
        turn = Turn(text)
        if note:
            turn.user_raw += Note(note).raw
        if self._fills_placeholder():
            self.final_newline = True
            self.turns[-1] = turn
        else:
            self._pad(blank=True)
            self.turns.append(turn)
        return turn

    def start_answer(self, model: str) -> Turn:
        """Open the 🤖: block of the last turn, unless it is open already (a continuation)."""
        if not self.turns:
            self.turns.append(Turn(""))
        turn = self.turns[-1]
        if turn.model is None:
            self._pad(blank=True)
            turn.model = model
            turn.header_raw = ASSISTANT + (f"[{_clean_name(model)}]" if model else "")
            turn.segments = [Text("\n\n")]
        return turn

    def append_text(self, delta: str) -> None:
        """Stream answer text into the open 🤖: block."""
        turn = self.turns[-1]
        if not isinstance(turn.segments[-1], Text):
            self._pad(blank=True)
        elif not self.final_newline:  # the file stopped mid-line: go on on that line
            turn.segments[-1] = Text(turn.segments[-1].raw[:-1])
        self.final_newline = True
        at_line_start = self._tail().endswith("\n")
        _append(turn.segments, Text(_escape(delta, _TEXT_BREAKS, at_line_start=at_line_start)))
        # a note-like line may arrive over several pieces: look again at the lines this piece touched
        last = turn.segments[-1]
        window = max(0, len(last.raw) - len(delta) - len(NOTE_PREFIX) - 1)
        if NOTE_PREFIX[:2] in last.raw[window:]:
            turn.segments[-1] = Text(_guard_notes(last.raw, window))

    def put_thought(self, text: str, at: int | None) -> int:
        """Write the thought `text` from segment `at` on (None: a new thought); return `at`."""
        turn = self.turns[-1]
        if at is None:
            self._pad(blank=True)
            at = len(turn.segments)
        paragraphs = [p for p in re.split(r"\n[ \t\r]*\n", text) if p.strip()]
        written: list[Segment] = []
        for paragraph in paragraphs:
            if written:
                written.append(Text("\n"))
            written.append(Thought(paragraph))
        turn.segments[at:] = written
        return at

    def add_proposal(self, call: ToolCall) -> Proposal:
        turn = self.turns[-1]
        self._pad(blank=not isinstance(turn.segments[-1], (Proposal, Result)))
        proposal = Proposal(call)
        turn.segments.append(proposal)
        return proposal

    def decide(self, call_id: str, choice: str) -> None:
        """Write a person's choice after the ❓: marker of the call."""
        if choice not in DECISIONS:
            raise ValueError(f"unknown choice {choice!r}; the choices are {', '.join(DECISIONS)}")
        found = self.find_proposal(call_id)
        if found is None:
            raise ValueError(f"no proposal with the call id {call_id!r}")
        turn, index = found
        turn.segments[index] = turn.segments[index].decided(choice)  # type: ignore[union-attr]

    def _proposal_of(self, call: ToolCall) -> tuple[Turn, int]:
        """Where the call's ❓: line is (proposing the call first if it was not)."""
        found = self.find_proposal(call.id)
        if found is None:
            self.add_proposal(call)
            found = self.find_proposal(call.id)
            assert found is not None
        return found

    def add_result(self, call: ToolCall, text: str, *, is_error: bool = False,
                   details: dict[str, Any] | None = None) -> Result:
        """Insert a 🛠️: block right after the call's proposal (proposing it first if it was not).

        `details` (duration, error kind, attachments) go in a note right after the block.
        """
        self.final_newline = True
        turn, index = self._proposal_of(call)
        # once the result is there, the note that the call started has done its job
        turn.segments[:] = [s for s in turn.segments if not (isinstance(s, Note) and s.data.get("started") == call.id)]
        position = index + 1
        while position < len(turn.segments) and isinstance(turn.segments[position], (Result, Note)):
            position += 1
        result = Result(call.id, call.name, text, is_error)
        after = turn.segments[position] if position < len(turn.segments) else None
        gap = [] if isinstance(after, Text) and after.raw.startswith("\n") else [Text("\n")]
        note = [Note({"result": call.id, **details})] if details else []
        turn.segments[position:position] = [result, *note, *gap]
        return result

    def mark_started(self, call: ToolCall) -> None:
        """Note, right after its proposal, that a call began to run: a crash can then never re-run it silently.

        `add_result` removes the note again: a result says as much.
        """
        turn, index = self._proposal_of(call)
        if call.id in turn.started():
            return
        position = index + 1
        while position < len(turn.segments) and isinstance(turn.segments[position], Note):
            position += 1
        turn.segments.insert(position, Note({"started": call.id}))

    def add_note(self, data: dict[str, Any]) -> None:
        """A note at the end of the open answer (see `Note`)."""
        if not self.turns or self.turns[-1].model is None:
            return
        self._pad(blank=False)
        self.turns[-1].segments.append(Note(data))

    def add_usage(self, usage: Usage) -> None:
        """Add `usage` to the open answer's usage note (one per answer, kept at its end)."""
        if not self.turns or self.turns[-1].model is None:
            return
        turn = self.turns[-1]
        known = [s for s in turn.segments if isinstance(s, Note) and isinstance(s.data.get("usage"), dict)]
        total = _usage_event(known[-1].data["usage"]).plus(usage) if known else usage
        turn.segments[:] = [s for s in turn.segments if not any(s is note for note in known)]
        data = {"input": total.input, "output": total.output, "context": total.context}
        if total.window:
            data["window"] = total.window
        if total.counted:
            data["counted"] = True
        self.add_note({"usage": data})

    def add_question(self, event: QuestionAsked) -> None:
        """Note a server's question at the end of the open answer (a reload draws it on its call's card)."""
        self.add_note(_question_note(event))

    def add_answer(self, event: QuestionAnswered) -> None:
        """Note the person's answer to a question: the action, and the content sent (their own conversation)."""
        data: dict[str, Any] = {"answered": event.question_id, "action": event.action}
        if event.content is not None:
            data["content"] = event.content
        self.add_note(data)

    def mark_stopped(self) -> None:
        """Note at the end of the answer that it was stopped before it was complete."""
        self.add_note({"stopped": True})

    def close_interrupted(self) -> list[ToolCall]:
        """Calls of the last turn that started and never finished (sidespin stopped while they ran) get a result
        saying so, and a note; the calls so closed. Only for a conversation no turn plays: the model then reads
        that the call did not complete, and nothing runs again unless a person asks."""
        closed = self.turns[-1].interrupted() if self.turns else []
        for call in closed:
            self.add_result(call, INTERRUPTED, is_error=True)
            self.add_note({"interrupted": call.id})
        return closed

    def interrupted_ids(self) -> set[str]:
        """Calls a note says were interrupted by a crash (their result says so too)."""
        return {n["interrupted"] for turn in self.turns for n in turn.notes() if isinstance(n.get("interrupted"), str)}

    def end_turn(self) -> None:
        """The answer is complete: write the empty 💬: that waits for the next question."""
        if not self.turns or self.turns[-1].model is None:
            return  # no answer to complete (an empty or unanswered turn)
        self._pad(blank=True)
        self.turns.append(Turn(""))


def title_of(user_text: str, note: dict[str, Any] | None = None) -> str:
    """A conversation's title made from its first message (and its `note`); a Poke reads as "🏓 get_cat_fact"."""
    tool = poked(note, user_text)
    return f"🏓 {tool}" if tool else _shorten(user_text)


def _shorten(text: str) -> str:
    line = text.strip().split("\n")[0].strip()
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1].rstrip() + "…"
