"""The marks of a transcript file and how text is written so it never reads as one: the markers that
open its parts, a person's choices, the fixed texts of calls that gave no result, the note line
(`<!-- sidespin: {json} -->`), and the escapes that keep written text from forging any of them.
The format is described in `sidespin.transcript`."""

from __future__ import annotations

import json
import re
from typing import Any, Literal, get_args

__all__ = [
    "Choice", "CHOICES", "DECISIONS", "USER", "ASSISTANT", "THOUGHT", "SUMMARY", "PROPOSAL", "RESULT", "MARKERS",
    "REFUSED", "NOT_RUN", "INTERRUPTED", "NOTE_PREFIX", "CONDENSED", "IMPORTED", "fence_for",
]

# A person's answer to a proposed call, written after ❓: (what each means: `sidespin.approvals`).
Choice = Literal["ya", "yA", "yo", "yO", "n"]
CHOICES: tuple[Choice, ...] = get_args(Choice)
DECISIONS = CHOICES  # the same keys, by the name the transcript's readers use

USER = "💬:"
ASSISTANT = "🤖:"
THOUGHT = "🧠:"
SUMMARY = "📝:"
PROPOSAL = "❓:"
RESULT = "\U0001f6e0\ufe0f:"
MARKERS = (USER, ASSISTANT, THOUGHT, SUMMARY, PROPOSAL, RESULT)

REFUSED = "Error: the user refused this tool call"
NOT_RUN = "Error: this tool call was not run (no result was recorded)"
INTERRUPTED = ("Error: this tool call was interrupted (sidespin stopped while it ran) and did not complete; "
               "its effects, if any, are unknown")
NOTE_PREFIX = "<!-- sidespin: "
CONDENSED = "(An earlier exchange, condensed to its summary.)"
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


def fence_for(text: str) -> str:
    """A Markdown code fence `text` cannot close: longer than any run of backticks in it, three at least."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _result_body(text: str) -> str:
    if not any(char in text for char in "\n\r`"):
        return f"`{text}`\n"
    fence = fence_for(text)
    return f"{fence}\n{text}\n{fence}\n"
