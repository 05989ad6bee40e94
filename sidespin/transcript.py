"""Conversations as markdown files: the transcript is the state.

One file per conversation. Lines that start with a marker open a part of it
(Parley's format, from the seed `002`):

    💬: the user's text (it may go on over the following lines)

    🤖:[model name]

    🧠: a thought (a paragraph: it ends at a blank line or at a marker line)

    The answer, free text, kept byte for byte.

    ❓: `{"id":"call_1","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"x\\"}"}}`
    ❓:[yA] `{...}`                      the same proposal once a person chose (ya, yA, yo, yO or n)
    🛠️: [web_search][call_1]            the result of call_1, right after its proposal;
                                         `[error]` after the id marks a failed call
    <blank line>
    `the result on one line`             or, when it holds a newline, a backtick or a CR,
                                         a fenced block whose fence (3 or more backticks)
                                         is longer than any run of backticks inside it

    The model's continuation after the results, in the same 🤖: block.

    📝: a summary of the exchange (a paragraph, like a thought)

    💬:                                  an empty user turn: the answer is complete

    <!-- sidespin: {"started": "call_1"} -->   a note: what the page must show that Parley's
                                         markers have no place for; its own line inside a
                                         🤖: block, JSON in an HTML comment (Parley and any
                                         Markdown viewer skip it), never sent to the model

The notes, so that a reloaded page draws exactly what was seen live (`sidespin.record`):

    {"started": id}                      the call began to run (removed once its result is in)
    {"result": id, "seconds": 0.52, "kind": "timeout", "attachments": [...]}
                                         right after a 🛠️: block: its duration, its error's
                                         kind, the images (or other attachments) it returned
    {"interrupted": id}                  sidespin stopped while the call ran
    {"malformed": raw, "reason": why}    a tool call the model wrote and we could not read
    {"notice": message}                  a notice the person saw (a stop, a limit, an error)
    {"stopped": true}                    the answer was stopped before it was complete

In a 🛠️: header, `%`, `[`, `]`, CR and LF of a tool name or call id are written
%-escaped (`%25 %5B %5D %0D %0A`), so a call id of any characters round-trips.
`🛠️` is U+1F6E0 U+FE0F, exactly as in the seed. Everything that is not one of
these structures (blank lines, free text, text before the first 💬:) is kept
as written, so `parse(text).render() == text` for every text that parses.
When sidespin writes model or user text, a line that would begin with a
structural marker (💬 🤖 ❓ 🛠, and in thoughts 🧠 📝 too) or a note gets one
leading space, so what a model writes can never break the file or forge a note.

`to_messages` rebuilds the OpenAI-shaped messages without running a tool:
per 🤖: block, the text before a run of proposals and the proposals
themselves become ONE assistant message with `tool_calls` (as the seed's
example: both calls were proposed in the same answer), then one `tool`
message per proposal in proposal order (its result, a refusal for `[n]`, or for a
call that started and never finished, a result saying it was interrupted);
text after the results starts a new assistant message. Thoughts and notes are not sent.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

from loguru import logger

from sidespin.approvals import CHOICES
from sidespin.errors import TranscriptError
from sidespin.events import (
    ApprovalNeeded,
    CallDecided,
    ErrorNotice,
    Event,
    MalformedCall,
    TextDelta,
    Thought as ThoughtEvent,
    ToolFinished,
    ToolProposed,
    ToolStarted,
    TurnDone,
)
from sidespin.record import TurnRecord
from sidespin.tools import ToolCall, ToolResult

__all__ = [
    "USER",
    "ASSISTANT",
    "THOUGHT",
    "SUMMARY",
    "PROPOSAL",
    "RESULT",
    "DECISIONS",
    "REFUSED",
    "NOT_RUN",
    "CONDENSED",
    "Text",
    "Thought",
    "Summary",
    "Proposal",
    "Result",
    "Note",
    "Segment",
    "Turn",
    "Transcript",
    "parse",
    "TranscriptStore",
    "TranscriptRecorder",
]

USER = "💬:"
ASSISTANT = "🤖:"
THOUGHT = "🧠:"
SUMMARY = "📝:"
PROPOSAL = "❓:"
RESULT = "\U0001f6e0\ufe0f:"
MARKERS = (USER, ASSISTANT, THOUGHT, SUMMARY, PROPOSAL, RESULT)
DECISIONS = CHOICES  # a person's choices, written after ❓: (see sidespin.approvals)

REFUSED = "Error: the user refused this tool call"
NOT_RUN = "Error: this tool call was not run (no result was recorded)"
INTERRUPTED = ("Error: this tool call was interrupted (sidespin stopped while it ran) and did not complete; "
               "its effects, if any, are unknown")
NOTE_PREFIX = "<!-- sidespin: "
CONDENSED = "(An earlier exchange, condensed to its summary.)"

# First characters that get one leading space at the start of a written line.
_USER_BREAKS = "💬🤖"
_TEXT_BREAKS = "💬🤖❓\U0001f6e0"
_PARAGRAPH_BREAKS = "💬🤖❓\U0001f6e0🧠📝"

_HEADER = re.compile(r"🤖:[ \t]*(?:\[([^\]\n]*)\])?")
_PROPOSAL = re.compile(r"❓:(?:\[([^\]\n]*)\])?[ \t]*`(.*)`[ \t\r]*")
_DECISION = re.compile(r"❓:(?:\[[^\]\n]*\])?")
_RESULT = re.compile("\U0001f6e0\ufe0f:" + r"[ \t]*\[([^\]\n]*)\]\[(.*?)\](\[error\])?[ \t\r]*")
_NOTE = re.compile(r"<!-- sidespin: (\{.*\}) -->[ \t\r]*")
_FIELD_ESCAPES = {"%": "%25", "[": "%5B", "]": "%5D", "\r": "%0D", "\n": "%0A"}
_TITLE_CHARS = 60


def _marker(line: str) -> str | None:
    for marker in MARKERS:
        if line.startswith(marker):
            return marker
    if line.startswith(NOTE_PREFIX) and _note_data(line) is not None:
        return NOTE_PREFIX
    return None


def _note_data(line: str) -> dict[str, Any] | None:
    match = _NOTE.fullmatch(line.rstrip("\n"))
    if match is None:
        return None
    try:
        data = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _guard_notes(text: str, start: int = 0) -> str:
    """Give each line that would read as a note one leading space, from the line holding `start` on."""
    position = text.rfind("\n", 0, start) + 1
    while True:
        if text.startswith(NOTE_PREFIX, position):
            text = text[:position] + " " + text[position:]
        position = text.find("\n", position) + 1
        if position == 0:
            return text


def _split_lines(text: str) -> list[str]:
    """Lines with their "\\n", split on "\\n" only (str.splitlines also splits on CR, U+2028 …)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _escape(text: str, breaks: str, *, at_line_start: bool) -> str:
    """Give each line that would start with a marker character one leading space."""
    if at_line_start and text[:1] and text[0] in breaks:
        text = " " + text
    return re.sub("\n(?=[" + breaks + "])", "\n ", text)


def _clean_name(name: str) -> str:
    return name.replace("]", ")").replace("\n", " ").replace("\r", " ")


def _quote_field(value: str) -> str:
    """A tool name or call id as a 🛠️: header holds it: the characters that would break it %-escaped."""
    return "".join(_FIELD_ESCAPES.get(char, char) for char in value)


def _unquote_field(value: str) -> str:
    return re.sub("%(25|5B|5D|0D|0A)", lambda m: {v: k for k, v in _FIELD_ESCAPES.items()}[m.group(0)], value)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _paragraph(marker: str, text: str) -> str:
    """A one-paragraph 🧠:/📝: block: blank lines dropped, marker-like lines escaped."""
    lines = [line for line in text.strip().split("\n") if line.strip()]
    if not lines:
        return marker + " \n"
    rest = "".join(_escape(line, _PARAGRAPH_BREAKS, at_line_start=True) + "\n" for line in lines[1:])
    return f"{marker} {lines[0].strip()}\n{_guard_notes(rest)}"


def _result_body(text: str) -> str:
    if not any(char in text for char in "\n\r`"):
        return f"`{text}`\n"
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}\n"


@dataclass
class Text:
    """Free text of an answer, byte for byte (blank lines included)."""

    raw: str

    @property
    def text(self) -> str:
        return self.raw


@dataclass
class Thought:
    """A 🧠: paragraph. Built from `text` alone, `raw` is written in the canonical form."""

    text: str = ""
    raw: str = ""

    def __post_init__(self) -> None:
        if not self.raw:
            self.raw = _paragraph(THOUGHT, self.text)
        self.text = self.raw[len(THOUGHT):].strip()


@dataclass
class Summary:
    """A 📝: paragraph: the model's summary of the exchange, used to condense old turns."""

    text: str = ""
    raw: str = ""

    def __post_init__(self) -> None:
        if not self.raw:
            self.raw = _paragraph(SUMMARY, self.text)
        self.text = self.raw[len(SUMMARY):].strip()


@dataclass
class Proposal:
    """One ❓: line: a tool call the model proposed and the person's choice (None: not chosen)."""

    call: ToolCall
    decision: str | None = None
    raw: str = ""

    def __post_init__(self) -> None:
        if not self.raw:
            function = {"name": self.call.name, "arguments": _compact(self.call.arguments)}
            wire = _compact({"id": self.call.id, "type": "function", "function": function})
            chosen = f"[{self.decision}]" if self.decision else ""
            self.raw = f"{PROPOSAL}{chosen} `{wire}`\n"

    def decided(self, choice: str) -> Proposal:
        """The same line with `choice` written right after the marker."""
        raw = _DECISION.sub(f"{PROPOSAL}[{choice}]", self.raw, count=1)
        return Proposal(self.call, choice, raw)

    def wire(self) -> dict[str, Any]:
        """The call as an OpenAI `tool_calls` item, its `arguments` string exactly as written."""
        match = _PROPOSAL.match(self.raw.rstrip("\n"))
        assert match is not None
        item = json.loads(match.group(2))
        function = item["function"]
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = _compact(arguments)
        return {
            "id": item["id"],
            "type": item.get("type", "function"),
            "function": {"name": function["name"], "arguments": arguments},
        }


@dataclass
class Result:
    """A 🛠️: block: what a call returned (or its error), as the model reads it."""

    call_id: str
    tool: str
    text: str
    is_error: bool = False
    raw: str = ""

    def as_result(self, call: ToolCall, seconds: Any = None, kind: Any = None,
                  attachments: list[Any] | None = None) -> ToolResult:
        """The `ToolResult` this block was written from (with what its note adds)."""
        error = None
        if self.is_error:
            error = self.text[len("Error: "):] if self.text.startswith("Error: ") else self.text
        return ToolResult(call, output=None if self.is_error else self.text, error=error,
                          seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
                          attachments=[a for a in attachments or [] if isinstance(a, dict)],
                          kind=kind if self.is_error and isinstance(kind, str) else None)

    def __post_init__(self) -> None:
        if not self.raw:
            flag = "[error]" if self.is_error else ""
            header = f"{RESULT} [{_quote_field(self.tool)}][{_quote_field(self.call_id)}]{flag}"
            self.raw = f"{header}\n\n{_result_body(self.text)}"


@dataclass
class Note:
    """A sidespin note: `<!-- sidespin: {json} -->` on its own line; Parley reads it as a comment."""

    data: dict[str, Any] = field(default_factory=dict)
    raw: str = ""

    def __post_init__(self) -> None:
        if not self.raw:
            text = json.dumps(self.data, ensure_ascii=False, separators=(",", ":"))
            text = text.replace("<", "\\u003c").replace(">", "\\u003e")  # never closes the comment early
            self.raw = f"{NOTE_PREFIX}{text} -->\n"
        else:
            self.data = _note_data(self.raw) or {}


Segment = Union[Text, Thought, Summary, Proposal, Result, Note]


def _append(segments: list[Segment], segment: Segment) -> None:
    """Append, merging adjacent free text so each text run is one segment."""
    if isinstance(segment, Text) and segments and isinstance(segments[-1], Text):
        segments[-1] = Text(segments[-1].raw + segment.raw)
    else:
        segments.append(segment)


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
            self.user_raw = f"{USER} {_escape(self.user.strip(), _USER_BREAKS, at_line_start=False)}\n"
        self.user = self.user_raw[len(USER):].strip()
        if self.model is not None and not self.header_raw:
            self.header_raw = ASSISTANT + (f"[{_clean_name(self.model)}]" if self.model else "")
            if not (self.segments and isinstance(self.segments[0], Text) and self.segments[0].raw.startswith("\n")):
                self.segments.insert(0, Text("\n\n"))

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
                        events.append(ToolFinished(ToolResult(call, error=INTERRUPTED[len("Error: "):],
                                                              kind="interrupted")))
                elif segment.decision is None and last:
                    events.append(ApprovalNeeded(call))
            elif isinstance(segment, Result):
                call = calls.get(segment.call_id) or ToolCall(segment.tool, {}, segment.call_id)
                note = details.get(segment.call_id, {})
                kind = "interrupted" if segment.call_id in interrupted else note.get("kind")
                events.append(ToolFinished(segment.as_result(call, note.get("seconds"), kind,
                                                             note.get("attachments") or [])))
            elif isinstance(segment, Note):
                if isinstance(segment.data.get("malformed"), str):
                    events.append(MalformedCall(segment.data["malformed"], str(segment.data.get("reason", ""))))
                elif isinstance(segment.data.get("notice"), str):
                    events.append(ErrorNotice(segment.data["notice"]))
        if ended:
            waits = any(isinstance(event, ApprovalNeeded) for event in events)
            events.append(TurnDone(reason="stopped" if self.stopped else "approval" if waits else "done"))
        return events

    def summary(self) -> str | None:
        found = [segment.text for segment in self.segments if isinstance(segment, Summary) and segment.text]
        return found[-1] if found else None

    def messages(self, *, last: bool) -> list[dict[str, Any]]:
        """This turn as chat messages; see the module docstring for the grouping."""
        messages: list[dict[str, Any]] = [{"role": "user", "content": self.user}] if self.user else []
        content: list[str] = []
        calls: list[Proposal] = []
        results: dict[str, Result] = {}
        started = self.started()

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
                    messages.append({"role": "tool", "tool_call_id": proposal.call.id, "name": name, "content": reply})
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

    def title(self) -> str:
        for turn in self.turns:
            if turn.user:
                return _shorten(turn.user)
        return "(new conversation)"

    def pending_calls(self) -> list[ToolCall]:
        """Proposals of the last turn with no choice recorded, not started, no result: they wait for a person."""
        return self.record().waiting() if self.turns else []

    def record(self, index: int = -1, *, ended: bool = True) -> TurnRecord:
        """What the page shows of the turn at `index` (see `sidespin.record`)."""
        last = index in (-1, len(self.turns) - 1)
        return TurnRecord.replay(self.turns[index].events(last=last, ended=ended))

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

    def add_user(self, text: str) -> Turn:
        """A new 💬: turn; an empty placeholder 💬: at the end is filled instead."""
        turn = Turn(text)
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

    def mark_stopped(self) -> None:
        """Note at the end of the answer that it was stopped before it was complete."""
        self.add_note({"stopped": True})

    def interrupted_ids(self) -> set[str]:
        """Calls a note says were interrupted by a crash (their result says so too)."""
        return {n["interrupted"] for turn in self.turns for n in turn.notes() if isinstance(n.get("interrupted"), str)}

    def end_turn(self) -> None:
        """The answer is complete: write the empty 💬: that waits for the next question."""
        if not self.turns or self.turns[-1].model is None:
            return  # no answer to complete (an empty or unanswered turn)
        self._pad(blank=True)
        self.turns.append(Turn(""))


def _details(result: ToolResult) -> dict[str, Any]:
    """What the page shows of a result beyond its text: duration, error kind, attachments."""
    details: dict[str, Any] = {"seconds": result.seconds}
    if getattr(result, "kind", None) and not result.ok:
        details["kind"] = result.kind
    if result.attachments:
        details["attachments"] = result.attachments
    return details


def _shorten(text: str) -> str:
    line = text.strip().split("\n")[0].strip()
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1].rstrip() + "…"


class _Parser:
    """Reads the lines of a transcript; every error names its 1-based line."""

    def __init__(self, lines: list[str], path: str | None) -> None:
        self.lines = lines
        self.path = path
        self.i = 0

    def error(self, message: str, index: int | None = None) -> TranscriptError:
        line = (self.i if index is None else index) + 1
        logger.warning("TRANSCRIPT_PARSE_ERROR {} line {}: {}", self.path or "transcript", line, message)
        return TranscriptError(message, path=self.path, line=line)

    def marker(self) -> str | None:
        return _marker(self.lines[self.i]) if self.i < len(self.lines) else None

    def transcript(self, final_newline: bool) -> Transcript:
        preamble: list[str] = []
        if self.lines and self.lines[0].startswith("\ufeff"):
            preamble.append("\ufeff")
            self.lines[0] = self.lines[0][1:]
        while self.i < len(self.lines) and self.marker() != USER:
            if self.marker() in (ASSISTANT, PROPOSAL, RESULT):
                raise self.error(f"{self.marker()} comes before the first 💬: user turn")
            preamble.append(self.lines[self.i])
            self.i += 1
        turns: list[Turn] = []
        while self.i < len(self.lines):
            turns.append(self.turn())
        return Transcript(turns, "".join(preamble), final_newline)

    def turn(self) -> Turn:
        user_lines = [self.lines[self.i]]
        self.i += 1
        while self.i < len(self.lines) and self.marker() not in (USER, ASSISTANT):
            user_lines.append(self.lines[self.i])
            self.i += 1
        user_raw = "".join(user_lines)
        if self.marker() != ASSISTANT:
            return Turn(user_raw=user_raw)
        line = self.lines[self.i]
        header = _HEADER.match(line)
        assert header is not None
        segments: list[Segment] = [Text(line[header.end():])]
        self.i += 1
        while self.i < len(self.lines):
            marker = self.marker()
            if marker == USER:
                break
            if marker == ASSISTANT:
                raise self.error("a second 🤖: block in one turn; a new answer needs a 💬: turn before it")
            if marker == PROPOSAL:
                segment: Segment = self.proposal()
            elif marker == RESULT:
                segment = self.result()
            elif marker in (THOUGHT, SUMMARY):
                segment = self.paragraph(marker)
            elif marker == NOTE_PREFIX:
                segment = Note(raw=self.lines[self.i])
                self.i += 1
            else:
                segment = self.text()
            _append(segments, segment)
        if segments[0].raw == "":
            segments.pop(0)
        return Turn(
            user_raw=user_raw,
            model=header.group(1) or "",
            segments=segments,
            header_raw=line[: header.end()],
        )

    def text(self) -> Text:
        start = self.i
        self.i += 1
        while self.i < len(self.lines) and self.marker() is None:
            self.i += 1
        return Text("".join(self.lines[start:self.i]))

    def paragraph(self, marker: str) -> Segment:
        start = self.i
        self.i += 1
        while self.i < len(self.lines) and self.marker() is None and self.lines[self.i].strip():
            self.i += 1
        raw = "".join(self.lines[start:self.i])
        return Thought(raw=raw) if marker == THOUGHT else Summary(raw=raw)

    def proposal(self) -> Proposal:
        line = self.lines[self.i]
        match = _PROPOSAL.fullmatch(line.rstrip("\n"))
        if match is None:
            raise self.error('a ❓: line holds one tool call as JSON in backticks: ❓: `{"id": …, "function": …}`')
        decision, wire = match.groups()
        if decision is not None and decision not in DECISIONS:
            raise self.error(f"unknown choice [{decision}] after ❓:; the choices are {', '.join(DECISIONS)}")
        call = self.call(wire)
        self.i += 1
        return Proposal(call, decision, line)

    def call(self, wire: str) -> ToolCall:
        try:
            item = json.loads(wire)
            function = item["function"]
            arguments = function.get("arguments", "{}")
            if isinstance(arguments, str):
                arguments = json.loads(arguments) if arguments.strip() else {}
            if not isinstance(item["id"], str) or not isinstance(function["name"], str):
                raise TypeError("id and function.name must be strings")
            if not isinstance(arguments, dict):
                raise TypeError("function.arguments must be a JSON object")
        except json.JSONDecodeError as error:
            raise self.error(f"the tool call after ❓: is not valid JSON ({error.msg})") from None
        except (KeyError, TypeError, AttributeError) as error:
            raise self.error(f'the tool call after ❓: needs "id" and "function": {{"name", "arguments"}} ({error})') from None
        return ToolCall(name=function["name"], arguments=arguments, id=item["id"])

    def result(self) -> Result:
        start = self.i
        header = _RESULT.fullmatch(self.lines[self.i].rstrip("\n"))
        if header is None:
            raise self.error(f"a {RESULT} line reads {RESULT} [tool][call-id]")
        tool, call_id, failed = header.groups()
        tool, call_id = _unquote_field(tool), _unquote_field(call_id)
        self.i += 1
        while self.i < len(self.lines) and not self.lines[self.i].strip():
            self.i += 1
        if self.i >= len(self.lines) or not self.lines[self.i].startswith("`"):
            raise self.error(f"expected the result of [{tool}][{call_id}] in backticks (`…`) or in a ``` block")
        body = self.lines[self.i].rstrip("\n")
        if body.startswith("```"):
            fence = body[: len(body) - len(body.lstrip("`"))]
            opened = self.i
            self.i += 1
            while self.i < len(self.lines) and self.lines[self.i].rstrip("\r\n") != fence:
                self.i += 1
            if self.i >= len(self.lines):
                raise self.error(f"the {fence} block of [{tool}][{call_id}] is never closed", opened)
            text = "".join(self.lines[opened + 1:self.i])[:-1]
        else:
            body = body[:-1] if body.endswith("\r") else body
            if len(body) < 2 or not body.endswith("`"):
                raise self.error(f"the result of [{tool}][{call_id}] must end with a backtick")
            text = body[1:-1]
        self.i += 1
        raw = "".join(self.lines[start:self.i])
        return Result(call_id, tool, text, failed is not None, raw)


def parse(text: str, path: str | None = None) -> Transcript:
    """Read a transcript; raises `TranscriptError` naming the line it cannot read."""
    final_newline = not text or text.endswith("\n")
    lines = _split_lines(text if final_newline else text + "\n")
    return _Parser(lines, path).transcript(final_newline)


# ---- files ----

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
Stamp = tuple[int, int, int]


def _write_atomic(path: Path, text: str) -> None:
    """Write a whole file or nothing: temp file beside it, fsync, rename over."""
    data = text.encode("utf-8")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    replaced = False
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        replaced = True
    finally:
        if not replaced:
            Path(temporary).unlink(missing_ok=True)


class TranscriptStore:
    """One markdown file per conversation, `<id>.md`, in one folder (usually data/conversations/)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, conversation_id: str) -> Path:
        if not _ID.fullmatch(conversation_id):
            raise TranscriptError(f"not a conversation id: {conversation_id!r}")
        return self.directory / f"{conversation_id}.md"

    def new(self) -> str:
        """Create an empty conversation file and return its id."""
        while True:
            conversation_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
            try:
                with self.path(conversation_id).open("x", encoding="utf-8"):
                    pass
            except FileExistsError:
                continue
            logger.info("TRANSCRIPT_NEW {}", conversation_id)
            return conversation_id

    def exists(self, conversation_id: str) -> bool:
        return self.path(conversation_id).is_file()

    def list(self) -> list[tuple[str, str, float]]:
        """(id, title, mtime) of every conversation, the most recent first."""
        found = []
        for path in self.directory.glob("*.md"):
            if path.name.startswith(".") or not _ID.fullmatch(path.stem):
                continue
            try:
                stat = path.stat()
                title = _scan_title(path.read_bytes().decode("utf-8", errors="replace"))
            except FileNotFoundError:
                continue  # deleted meanwhile
            found.append((path.stem, title, stat.st_mtime))
        return sorted(found, key=lambda item: item[2], reverse=True)

    def read(self, conversation_id: str) -> str:
        path = self.path(conversation_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TranscriptError(f"no conversation {conversation_id!r}", path=str(path)) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            raise TranscriptError("not UTF-8 text", path=str(path), line=line) from None

    def load(self, conversation_id: str) -> Transcript:
        """Parse the file as it is now on disk (a hand edit is the new truth)."""
        return parse(self.read(conversation_id), path=str(self.path(conversation_id)))

    def save(self, conversation_id: str, transcript: Transcript) -> None:
        _write_atomic(self.path(conversation_id), transcript.render())

    def stamp(self, conversation_id: str) -> Stamp | None:
        """What changes when anyone rewrites the file: inode, size, mtime."""
        try:
            stat = self.path(conversation_id).stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _scan_title(text: str) -> str:
    for line in _split_lines(text):
        if line.startswith(USER) and line[len(USER):].strip():
            return _shorten(line[len(USER):])
    return "(new conversation)"


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
    """

    def __init__(
        self,
        store: TranscriptStore,
        conversation_id: str,
        model_name: str,
        *,
        min_interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.model_name = model_name
        self.min_interval = min_interval
        self.clock = clock
        self.transcript = store.load(conversation_id)
        self.writes = 0
        self._stamp = store.stamp(conversation_id)
        self._last_write = float("-inf")
        self._dirty = False
        self._thought: str | None = None
        self._thought_at: int | None = None
        self._text: list[str] = []

    def user(self, text: str) -> None:
        """A new user turn."""
        self._sync()
        self._thought = None
        self.transcript.add_user(text)
        self._save()

    def record_decision(self, call_id: str, choice: str) -> None:
        """Write a person's choice (ya, yA, yo, yO, n) after the call's ❓: marker."""
        self._sync()
        self.transcript.decide(call_id, choice)
        logger.info("TRANSCRIPT_DECISION conv={} id={} {}", self.conversation_id, call_id, choice)
        self._save()

    def apply(self, event: Event) -> None:
        """Record one rally event."""
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
        elif isinstance(event, ToolProposed):
            transcript.start_answer(self.model_name)
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
            self.transcript = parse(transcript.render(), path=str(self.store.path(self.conversation_id)))
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
