"""The pieces of an answer in a transcript file: free text, a 🧠: thought, a 📝: summary, a ❓: proposal,
a 🛠️: result and a sidespin note. Each keeps its `raw` text, so a file reads back exactly as written."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from sidespin.tools import FAILED, ToolCall, ToolResult
from sidespin.transcript.markers import (
    _DECISION, _PROPOSAL, NOTE_PREFIX, PROPOSAL, RESULT, SUMMARY, THOUGHT, _compact, _note_data, _paragraph,
    _quote_field, _result_body,
)

__all__ = ["Text", "Thought", "Summary", "Proposal", "Result", "Note", "Segment"]


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
            error = self.text.removeprefix(FAILED)
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
