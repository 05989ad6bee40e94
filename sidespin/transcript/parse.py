"""Reading a transcript file into its model; every error names the line it cannot read."""

from __future__ import annotations

import json

from loguru import logger

from sidespin.errors import TranscriptError
from sidespin.tools import ToolCall
from sidespin.transcript.markers import (
    _HEADER, _PROPOSAL, _RESULT, ASSISTANT, DECISIONS, NOTE_PREFIX, PROPOSAL, RESULT, SUMMARY, THOUGHT, USER, _marker,
    _split_lines, _unquote_field,
)
from sidespin.transcript.model import Transcript
from sidespin.transcript.segments import Note, Proposal, Result, Segment, Summary, Text, Thought, _append
from sidespin.transcript.turn import Turn

__all__ = ["parse"]


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
        except RecursionError:
            raise self.error("the tool call after ❓: is nested too deeply to read") from None
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
