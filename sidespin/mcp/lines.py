"""What one line of a stdio server may cost: its JSON cut down to size before it is parsed.

A stdio server sends one JSON-RPC message per line, of any length. `LineCutter` reads the bytes as they arrive,
in time linear in their number, and hands back each line as JSON of the same shape, bounded:

- a string over `max_string` bytes (a 60 MB text) keeps its first bytes and ends with a note saying how many
  more the server sent; base64 media (the value of a `data` or `blob` key) and the text of a resource a
  `resources/read` answer holds (`result.contents[i].text`: an MCP App's page) may be `max_data` bytes;
- the tools a `tools/list` answer lists (`result.tools`) stop at `max_tools`; how many were left out is told;
- once a line has `max_line` bytes, the elements that start in it are left out (the containers still close).

The JSON is only scanned, never parsed: strings and runs of plain bytes are skipped by regular expressions, and
Python looks at brackets, commas and colons alone. A line that is not JSON comes out as it came in, as far as it
goes, for the parser to refuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Cut", "LineCutter"]

_QUOTE, _BACKSLASH, _COMMA, _COLON = ord('"'), ord("\\"), ord(","), ord(":")
_OPENERS, _CLOSERS = (ord("{"), ord("[")), (ord("}"), ord("]"))
_PLAIN = re.compile(rb'[^"{}\[\],:]*')  # whitespace, numbers, true, false, null
_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)  # a string's bytes up to its closing quote
# what skipping the rest of a container passes over in one go: whole strings, and bytes that are no bracket or comma
_SKIPPED = re.compile(rb'(?:"[^"\\]*(?:\\.[^"\\]*)*"|[^"{}\[\],])*', re.DOTALL)
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\Z")
_MEDIA_KEYS = (b"data", b"blob")
_KEY_KEPT = 64  # bytes of a key remembered, to know what its value is
_NOTE_ROOM = 120  # bytes a cut string keeps free for its note


@dataclass
class Cut:
    """One line as it is handed on, and what was cut from it."""

    line: bytes
    size: int  # bytes the server sent, newline excluded
    strings: int = 0  # strings cut short
    dropped: int = 0  # bytes of strings left out
    tools_left_out: int = 0  # tools past `max_tools` in a tools/list answer
    left_out: int = 0  # other elements past `max_line`

    @property
    def cut(self) -> bool:
        return bool(self.strings or self.tools_left_out or self.left_out)


@dataclass
class _Frame:
    opener: int  # "{" or "["
    tools: bool = False  # the tools array of a tools/list answer
    state: str = "start"  # object: start, key, colon, value, comma; array: start, value, comma
    count: int = 0  # elements written
    key: bytes = b""  # the key of an object's current member

    def awaits_element(self) -> bool:
        return self.state in ("start", "next")


@dataclass
class _String:
    role: str  # key, value, or skipped
    cap: int
    kept: int = 0
    dropped: int = 0
    key: list[bytes] = field(default_factory=list)


class LineCutter:
    """Feed it the bytes of a stream as they come (`feed`); it hands back each complete line, bounded."""

    def __init__(self, *, max_string: int, max_data: int, max_tools: int, max_line: int) -> None:
        self.max_string, self.max_data, self.max_tools, self.max_line = max_string, max_data, max_tools, max_line
        self._reset()

    @property
    def pending(self) -> int:
        """Bytes of the line under way."""
        return self._size

    def _reset(self) -> None:
        self._out: list[bytes] = []
        self._written = 0
        self._size = 0
        self._stack: list[_Frame] = []
        self._string: _String | None = None
        self._carry = b""  # an escape a piece of a string ended in the middle of: read with the next piece
        self._skip: int | None = None  # the depth whose container's rest is left out
        self._skipped = 0
        self._report = Cut(b"", 0)

    def feed(self, data: bytes) -> list[Cut]:
        """The lines `data` completes (a line may have begun in earlier data), each as it is handed on."""
        done: list[Cut] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            self._size += len(piece)
            self._scan(piece)
            if end < 0:
                return done
            done.append(self._finish())
            start = end + 1

    def _finish(self) -> Cut:
        report = self._report
        report.line, report.size = b"".join(self._out), self._size
        self._reset()
        return report

    def _write(self, data: bytes) -> None:
        if data:
            self._out.append(data)
            self._written += len(data)

    # ---------------------------------------------------------------- the scan

    def _scan(self, data: bytes) -> None:
        if self._carry:
            data, self._carry = self._carry + data, b""
        pos, end = 0, len(data)
        while pos < end:
            if self._string is not None:
                pos = self._in_string(data, pos)
            elif self._skip is not None:
                pos = self._skipping(data, pos)
            else:
                pos = self._structure(data, pos)

    def _structure(self, data: bytes, pos: int) -> int:
        plain = _PLAIN.match(data, pos).end()
        if plain > pos:
            run = data[pos:plain]
            if run.strip() and self._stack and self._stack[-1].awaits_element() and not self._element_starts():
                return plain  # a number, true, false or null left out: skipping passes over the rest
            self._write(run)
            if self._stack and run.strip() and self._stack[-1].state == "value":
                self._stack[-1].state = "comma"
            if plain == len(data):
                return plain
        byte, pos = data[plain], plain + 1
        frame = self._stack[-1] if self._stack else None
        if byte == _QUOTE:
            if frame is not None and frame.awaits_element() and not self._element_starts():
                self._string = _String("skipped", 0)
                return pos
            role = "key" if frame is not None and frame.opener == _OPENERS[0] and frame.state == "key" else "value"
            media = frame is not None and role == "value" and (frame.key in _MEDIA_KEYS or self._resource_text())
            self._string = _String(role, self.max_data if media else self.max_string)
            self._write(b'"')
        elif byte in _OPENERS:
            if frame is not None and frame.awaits_element() and not self._element_starts():
                self._stack.append(_Frame(byte))
                return pos
            tools = (byte == _OPENERS[1] and len(self._stack) == 2 and self._stack[0].key == b"result"
                     and self._stack[1].key == b"tools")
            self._stack.append(_Frame(byte, tools=tools))
            self._write(bytes((byte,)))
        elif byte in _CLOSERS:
            self._close(byte)
        elif byte == _COMMA and frame is not None:
            frame.state = "next"
        elif byte == _COLON and frame is not None:
            frame.state = "value"
            self._write(b":")
        else:  # a comma or colon outside any container: not JSON, handed on for the parser to refuse
            self._write(bytes((byte,)))
        return pos

    def _resource_text(self) -> bool:
        """Whether the string starting now is the `text` of one of `result.contents` (a resources/read answer)."""
        stack = self._stack
        return (len(stack) == 4 and stack[0].key == b"result" and stack[1].key == b"contents"
                and stack[2].opener == _OPENERS[1] and stack[3].key == b"text")

    def _element_starts(self) -> bool:
        """Whether the element starting now in the innermost container is written (True) or left out, with the
        rest of the container (False)."""
        frame = self._stack[-1]
        if (frame.tools and frame.count >= self.max_tools) or self._written > self.max_line:
            self._skip, self._skipped = len(self._stack), 1
            return False
        if frame.count:
            self._write(b",")
        frame.count += 1
        frame.state = "key" if frame.opener == _OPENERS[0] else "value"
        return True

    def _close(self, byte: int) -> None:
        if self._stack:
            self._stack.pop()
        self._write(bytes((byte,)))
        if self._stack and self._stack[-1].state in ("value", "start", "next"):
            self._stack[-1].state = "comma"

    def _skipping(self, data: bytes, pos: int) -> int:
        """Pass over the rest of the container at depth `_skip`, counting its elements (one more at each comma)."""
        pos = _SKIPPED.match(data, pos).end()
        if pos == len(data):
            return pos
        byte, pos = data[pos], pos + 1
        if byte == _QUOTE:  # a string that goes on past this piece
            self._string = _String("skipped", 0)
        elif byte == _COMMA:
            if len(self._stack) == self._skip:  # another element of the container left out
                self._skipped += 1
        elif byte in _OPENERS:
            self._stack.append(_Frame(byte))
        elif len(self._stack) > self._skip:
            self._stack.pop()
        else:  # the container itself closes
            if self._stack[-1].tools:
                self._report.tools_left_out += self._skipped
            else:
                self._report.left_out += self._skipped
            self._skip = None
            self._close(byte)
        return pos

    # ---------------------------------------------------------------- strings

    def _in_string(self, data: bytes, pos: int) -> int:
        body = _BODY.match(data, pos).end()
        if body < len(data) and data[body] == _QUOTE:
            self._string_bytes(data[pos:body])
            self._end_string()
            return body + 1
        # the string goes on past this piece (which may end inside an escape, kept back for the next one)
        whole = _open_escape(data, pos)
        self._string_bytes(data[pos:whole])
        self._carry = data[whole:]
        return len(data)

    def _string_bytes(self, data: bytes) -> None:
        string = self._string
        assert string is not None
        if string.role == "skipped" or not data:
            return
        room = string.cap - _NOTE_ROOM - string.kept  # a string cut keeps room for its note within its cap
        if string.dropped or len(data) > room:
            keep = _safe_cut(data, max(0, room)) if not string.dropped else 0
            self._write(data[:keep])
            string.kept += keep
            string.dropped += len(data) - keep
        else:
            self._write(data)
            string.kept += len(data)
        if string.role == "key" and sum(map(len, string.key)) < _KEY_KEPT:
            string.key.append(data[:_KEY_KEPT])

    def _end_string(self) -> None:
        string, self._string = self._string, None
        assert string is not None
        if string.role == "skipped":
            return
        if string.dropped:
            self._report.strings += 1
            self._report.dropped += string.dropped
            note = (f"\\n… [cut: {string.dropped:,} more bytes not shown; the server sent "
                    f"{string.kept + string.dropped:,}]")
            self._write(note.encode())
        self._write(b'"')
        frame = self._stack[-1] if self._stack else None
        if frame is None:
            return
        if string.role == "key":
            frame.key, frame.state = b"".join(string.key)[:_KEY_KEPT], "colon"
        else:
            frame.state = "comma"


def _open_escape(data: bytes, pos: int) -> int:
    """Where the bytes of a string (`data` from `pos`) stop being whole: before an escape the piece ends in the middle
    of, and before a high surrogate whose pair may come with the next piece; else their end."""
    end = cut = len(data)
    start = data.rfind(b"\\", max(pos, end - 6), end)
    if start >= 0:
        run = start
        while run > pos and data[run - 1] == _BACKSLASH:
            run -= 1
        length = 6 if data[start + 1:start + 2] == b"u" else 2
        if (start - run) % 2 == 0 and start + length > end:  # an odd run: the last backslash begins an escape
            cut = start
    if cut - 6 >= pos and _HIGH_SURROGATE.match(data, cut - 6, cut):
        cut -= 6
    return cut


def _safe_cut(data: bytes, keep: int) -> int:
    """Where to cut a string's raw bytes at `keep` or before: not inside an escape, after no lone high surrogate,
    not inside a UTF-8 character."""
    if keep >= len(data):
        return len(data)
    start = data.rfind(b"\\", max(0, keep - 6), keep)
    if start >= 0:
        run = start
        while run > 0 and data[run - 1] == _BACKSLASH:
            run -= 1
        if (start - run) % 2 == 0:  # an odd run of backslashes: the last one begins an escape
            length = 6 if data[start + 1:start + 2] == b"u" else 2
            if start + length > keep:
                keep = start
    if _HIGH_SURROGATE.search(data, max(0, keep - 6), keep):
        keep -= 6
    while keep > 0 and (data[keep] & 0xC0) == 0x80:
        keep -= 1
    return keep
