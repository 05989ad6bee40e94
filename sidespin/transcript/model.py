"""The document model of a transcript: its markers, its segments, a turn, the whole file, and the verbs
that write into it (each keeps the file parseable). The format is described in `sidespin.transcript`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Union

from loguru import logger

from sidespin.approvals import CHOICES
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
    QuestionAnswered,
    QuestionAsked,
    TurnDone,
    Usage,
)
from sidespin.formats import ATTACHMENTS, image_attachments
from sidespin.protocol import poke_target
from sidespin.questions import ACTIONS
from sidespin.record import TurnRecord
from sidespin.tools import ToolCall, ToolResult

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
UNTITLED = "(new conversation)"
IMPORTED = "imported"  # the conversation's note on the file it was imported from: {"name", "turns"} (sidespin.versions)

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
    except (json.JSONDecodeError, RecursionError):  # nested thousands deep: sidespin never wrote it
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
                  attachments: list[Any] | None = None, reused: bool = False, structured: Any = None) -> ToolResult:
        """The `ToolResult` this block was written from (with what its note adds)."""
        error = None
        if self.is_error:
            error = self.text[len("Error: "):] if self.text.startswith("Error: ") else self.text
        return ToolResult(call, output=None if self.is_error else self.text, error=error,
                          seconds=float(seconds) if isinstance(seconds, (int, float)) else None,
                          attachments=[a for a in attachments or [] if isinstance(a, dict)],
                          kind=kind if self.is_error and isinstance(kind, str) else None, reused=reused,
                          structured=structured)

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
        """This turn as chat messages; see the module docstring for the grouping."""
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
                return title_of(turn.user)
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

    def interrupted_ids(self) -> set[str]:
        """Calls a note says were interrupted by a crash (their result says so too)."""
        return {n["interrupted"] for turn in self.turns for n in turn.notes() if isinstance(n.get("interrupted"), str)}

    def end_turn(self) -> None:
        """The answer is complete: write the empty 💬: that waits for the next question."""
        if not self.turns or self.turns[-1].model is None:
            return  # no answer to complete (an empty or unanswered turn)
        self._pad(blank=True)
        self.turns.append(Turn(""))


def title_of(user_text: str) -> str:
    """A conversation's title made from its first message; a Poke reads as "🏓 get_cat_fact"."""
    tool = poke_target(user_text)
    return f"🏓 {tool}" if tool else _shorten(user_text)


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


def _shorten(text: str) -> str:
    line = text.strip().split("\n")[0].strip()
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1].rstrip() + "…"
