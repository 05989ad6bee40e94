"""The streaming interceptor: hides tool-call blocks from a model's text as it streams.

Feed it the model's chunks; it hands back `Text` for the user and `Block` for
every `<tag …>…</tag>` it caught (`tags=("mcp-request", "think")` catches both).

Rules:

- A block opens on `<` + a tag name followed by whitespace, `>` or `/`.
  Anything else is ordinary text: `<b>`, `3 < 4`, `<mcp-requests>`,
  `<mcp-request-x`, `<MCP-REQUEST>` (names are case-sensitive). A block ends at
  the first `</tag>` of the tag that opened it, spelt exactly so. `raw` runs from
  `<tag` to `</tag>` inclusive. Inside a block nothing else is interpreted (other
  tags, fences and `<tag/>` are just part of `raw`; `<tag/>` does not close it).
- Lossless: joining every `Text.text` and `Block.raw` in order gives back the
  input exactly, except for one case. A Markdown code fence whose only content
  is one block is dropped together with the block, so no empty fence reaches the
  screen: "Sure.\\n```xml\\n<mcp-request>…</mcp-request>\\n```\\nDone" gives
  `Text("Sure.\\n")`, `Block(raw="<mcp-request>…</mcp-request>")`, `Text("Done")`.
  What is dropped: the opening fence line (at the start of a line, 3 or more
  backticks or tildes, any info string without `<`, and without a backtick for
  backtick fences) with its line break, the whitespace between that line and
  the block, the whitespace after the block, and the closing fence line (same
  character, at least as long, indented by at most 3 spaces, nothing but
  whitespace after it) with its line break. An opening fence may be indented by
  up to 3 spaces too; those spaces have already streamed as `Text` (they are
  never held), so they stay. A fence left open at the end of the stream after
  such a block counts as closed there (CommonMark closes it at the end of the
  document) and is dropped too; a fence whose block was still open when the
  stream ended is kept as text.
- A fence with anything else in it (code, prose, a second block) is kept
  verbatim as `Text`, but a block inside it is still a `Block`: a tool call never
  reaches the screen, wherever the model put it.
- Text streams at once. The only text held back is a tail that could still
  become an opening tag (`<`, `<mc`, `<mcp-request` waiting for its next
  character) and, at the start of a line, a run of backticks or tildes that
  could still open a fence around a block: a fence line is held to its end, then
  until the first non-blank character after it shows whether a block follows.
- Events do not depend on how the stream is chunked, once consecutive `Text`
  events are merged: consumers must treat consecutive `Text` events as one
  concatenated text. One `feed` call never returns two `Text` events in a row.
- `close()` flushes held text; a block still open comes out as
  `Block(closed=False)` with everything received. It also resets the
  interceptor, so the same object can read the next stream.
- Work is linear in the stream's length: each character is looked at a bounded
  number of times, the common case is one `str.find` per chunk, and a block's
  raw text is kept as a list of parts joined once when it ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sidespin.protocol import MCP_TAG

__all__ = ["Interceptor", "Text", "Block", "Event"]


@dataclass(slots=True)
class Text:
    """Text for the user's screen."""

    text: str


@dataclass(slots=True)
class Block:
    """An intercepted `<tag …>…</tag>`; `closed` is False if the stream ended inside it."""

    tag: str
    raw: str
    closed: bool = True


Event = Text | Block

# States of the scanner.
_TEXT = 0  # ordinary text; `_line_start` says whether the next character starts a line
_LEAD = 1  # up to 3 spaces (already shown) at the start of a line: a fence may follow
_FENCE = 2  # holding a line that starts with a run of backticks or tildes
_GAP = 3  # holding an opening fence line and the whitespace after it
_TAG = 4  # holding a tail that could still become an opening tag
_BLOCK = 5  # inside a block, looking for its closing tag
_AFTER = 6  # a block that followed an opening fence has ended: looking for the closing fence

_TAG_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_BLANKS = re.compile(r"[ \t\r\n]*")
_INFO_END = {"`": re.compile(r"[\n<`]"), "~": re.compile(r"[\n<]")}
_SMALL = 256  # chunks up to this size are searched for a closing tag together with the held tail


class Interceptor:
    """Splits a stream of model text into visible `Text` and intercepted `Block` events."""

    def __init__(self, tags: tuple[str, ...] = (MCP_TAG,)) -> None:
        if isinstance(tags, str):
            tags = (tags,)
        if not tags:
            raise ValueError("Interceptor needs at least one tag name")
        for tag in tags:
            if not _TAG_NAME.fullmatch(tag):
                raise ValueError(f"{tag!r} is not a tag name: use letters, digits, '-', '_', '.' or ':'")
        self.tags = tuple(tags)
        self._opens = {"<" + tag: tag for tag in self.tags}
        self._closes = {tag: "</" + tag + ">" for tag in self.tags}
        self._prefixes = frozenset(
            opening[:n] for opening in self._opens for n in range(1, len(opening) + 1)
        )
        self._reset()

    def feed(self, chunk: str) -> list[Event]:
        """Read one chunk; return the events it completes, in order."""
        if self._plain and "<" not in chunk and "\n" not in chunk:
            return [Text(chunk)] if chunk else []
        self._scan(chunk)
        return self._drain()

    def close(self) -> list[Event]:
        """End the stream: flush held text and any unfinished block, then reset."""
        state = self._state
        if state == _TAG:
            if self._gapped:
                self._emit("".join(self._gap))
            self._emit(self._cand)
        elif state == _FENCE:
            self._emit("".join(self._held))
        elif state == _GAP:
            self._emit("".join(self._gap))
        elif state == _BLOCK:
            if self._gapped:
                self._emit("".join(self._gap))
            self._emit_block(Block(self._tag, "".join(self._parts), False))
        elif state == _AFTER:
            phase, fence_len = self._phase, self._open_fence[1]
            if phase != 2 or self._run >= fence_len:
                self._emit_block(self._block)
            else:
                self._emit("".join(self._gap))
                self._emit_block(self._block)
                self._emit("".join(self._held))
        events = self._drain()
        self._reset()
        return events

    def _reset(self) -> None:
        self._state = _TEXT
        self._line_start = True
        self._plain = False  # True when `feed` may pass a chunk without '<' or '\n' straight through
        self._pending: list[str] = []  # text of the current `feed` call, merged into one Text
        self._out: list[Event] = []
        self._lead = 0  # spaces at the start of the current line
        self._held: list[str] = []  # the fence line being held, or the text after a block (_AFTER)
        self._run_char = ""
        self._run = 0
        self._in_info = False
        self._in_fence: tuple[str, int] | None = None  # a fence kept on screen that is still open
        self._open_fence: tuple[str, int] = ("", 0)  # the opening fence that may be dropped
        self._gap: list[str] = []  # that opening fence line and the whitespace after it
        self._gapped = False  # the tag or block being read follows such an opening fence
        self._cand = ""
        self._tag = ""
        self._close = ""
        self._parts: list[str] = []
        self._tail = ""  # the last len(close) - 1 characters of the block, for a split closing tag
        self._block = Block("", "", True)
        self._phase = 0

    def _emit(self, text: str) -> None:
        if text:
            self._pending.append(text)

    def _emit_block(self, block: Block) -> None:
        if self._pending:
            self._out.append(Text("".join(self._pending)))
            self._pending = []
        self._out.append(block)

    def _drain(self) -> list[Event]:
        if self._pending:
            self._out.append(Text("".join(self._pending)))
            self._pending = []
        events = self._out
        self._out = []
        self._plain = self._state == _TEXT and not self._line_start
        return events

    def _to_text(self, line_start: bool) -> None:
        self._state = _TEXT
        self._line_start = line_start

    def _scan(self, s: str) -> None:
        """Advance the state machine over `s`; events go to `_pending` and `_out`."""
        i, n = 0, len(s)
        lt = nl = -2  # next '<' and '\n' at or after i (-1: none left, -2: not searched yet)
        while i < n:
            state = self._state
            if state == _TEXT:
                if self._line_start:
                    c = s[i]
                    self._line_start = False
                    if c == " ":
                        self._state, self._lead = _LEAD, 1
                        self._emit(" ")
                        i += 1
                    elif c == "`" or c == "~":
                        self._start_fence_line(c)
                        i += 1
                    continue
                if -1 != lt < i:
                    lt = s.find("<", i)
                if -1 != nl < i:
                    nl = s.find("\n", i)
                if lt == -1 and nl == -1:
                    self._emit(s[i:] if i else s)
                    return
                if nl == -1 or -1 != lt < nl:
                    self._emit(s[i:lt])
                    self._state, self._cand, self._gapped = _TAG, "<", False
                    i = lt + 1
                else:
                    self._emit(s[i : nl + 1])
                    self._line_start = True
                    i = nl + 1
            elif state == _BLOCK:
                i = self._scan_block(s, i)
            elif state == _TAG:
                c = s[i]
                cand = self._cand
                if (c.isspace() or c == ">" or c == "/") and cand in self._opens:
                    self._open_block(self._opens[cand], cand + c)
                    i += 1
                elif cand + c in self._prefixes:
                    self._cand = cand + c
                    i += 1
                else:
                    if self._gapped:
                        self._emit("".join(self._gap))
                        self._gap, self._gapped, self._in_fence = [], False, self._open_fence
                    self._emit(cand)
                    self._to_text(False)
            elif state == _LEAD:
                c = s[i]
                if c == " " and self._lead < 3:
                    self._lead += 1
                    self._emit(" ")
                    i += 1
                elif c == "`" or c == "~":
                    self._start_fence_line(c)
                    i += 1
                else:
                    self._to_text(False)
            elif state == _FENCE:
                i = self._scan_fence_line(s, i)
            elif state == _GAP:
                c = s[i]
                if c in " \t\r\n":
                    end = _BLANKS.match(s, i).end()
                    self._gap.append(s[i:end])
                    i = end
                elif c == "<":
                    self._state, self._cand, self._gapped = _TAG, "<", True
                    i += 1
                else:
                    self._keep_gap()
            else:
                i = self._scan_after(s, i)

    def _start_fence_line(self, char: str) -> None:
        self._state = _FENCE
        self._run_char, self._run, self._in_info = char, 1, False
        self._held = [char]  # the indent, if any, has streamed already

    def _scan_fence_line(self, s: str, i: int) -> int:
        """Read a line that starts with a fence run; decide at its end what it was."""
        if not self._in_info:
            c = s[i]
            if c == self._run_char:
                self._run += 1
                self._held.append(c)
                return i + 1
            if self._run < 3:  # "`code`" or "~~": just text
                self._emit("".join(self._held))
                self._to_text(False)
                return i
            self._in_info = True
        match = _INFO_END[self._run_char].search(s, i)
        if match is None:
            self._held.append(s[i:])
            return len(s)
        j = match.start()
        self._held.append(s[i:j])
        if s[j] != "\n":  # '<' or a backtick: not a fence we could drop, show it
            self._emit("".join(self._held))
            self._to_text(False)
            return j
        self._held.append("\n")
        line = "".join(self._held)
        if self._in_fence is None:
            self._open_fence = (self._run_char, self._run)
            self._gap = [line]
            self._state = _GAP
        else:
            char, length = self._in_fence
            info = line[self._run :]
            if self._run_char == char and self._run >= length and not info.strip():
                self._in_fence = None
            self._emit(line)
            self._to_text(True)
        return j + 1

    def _keep_gap(self) -> None:
        """Real content follows an opening fence: show the fence, re-read the last line's indent."""
        gap = "".join(self._gap)
        cut = gap.rfind("\n") + 1
        self._emit(gap[:cut])
        self._gap, self._in_fence = [], self._open_fence
        self._to_text(True)
        self._scan(gap[cut:])

    def _open_block(self, tag: str, head: str) -> None:
        self._state = _BLOCK
        self._tag, self._close = tag, self._closes[tag]
        self._parts, self._tail = [head], ""

    def _scan_block(self, s: str, i: int) -> int:
        """Look for the closing tag in `s[i:]`, counting one split across the previous chunk."""
        close, tail = self._close, self._tail
        keep = len(close) - 1
        end = -1
        if len(s) - i <= _SMALL:
            probe = tail + s[i:] if i else tail + s
            p = probe.find(close)
            if p < 0:
                self._parts.append(s[i:] if i else s)
                self._tail = probe[-keep:]
                return len(s)
            end = i + p + len(close) - len(tail)
        else:
            if tail:
                p = (tail + s[i : i + keep]).find(close)
                if p >= 0:
                    end = i + p + len(close) - len(tail)
            if end < 0:
                p = s.find(close, i)
                if p < 0:
                    self._parts.append(s[i:])
                    self._tail = s[-keep:]
                    return len(s)
                end = p + len(close)
        self._parts.append(s[i:end])
        block = Block(self._tag, "".join(self._parts), True)
        self._parts, self._tail = [], ""
        if self._gapped:
            self._state, self._block, self._held, self._phase = _AFTER, block, [], 0
        else:
            self._emit_block(block)
            self._to_text(False)
        return end

    def _scan_after(self, s: str, i: int) -> int:
        """After a block that followed an opening fence: is the next thing its closing fence?"""
        char, length = self._open_fence
        held = self._held
        while i < len(s):
            c = s[i]
            phase = self._phase
            if phase == 0:  # rest of the block's line
                if c == "\n":
                    self._phase, self._lead = 1, 0
                elif c not in " \t\r":
                    break
            elif phase == 1:  # start of a line: blank, or the closing fence
                if c == " ":
                    self._lead += 1
                elif c == "\t" or c == "\r":
                    self._lead = 4
                elif c == "\n":
                    self._lead = 0
                elif c == char and self._lead <= 3:
                    self._phase, self._run = 2, 1
                else:
                    break
            elif phase == 2:  # the fence run
                if c == char:
                    self._run += 1
                elif self._run >= length and c == "\n":
                    self._drop_fence()
                    return i + 1
                elif self._run >= length and c in " \t\r":
                    self._phase = 3
                else:
                    break
            else:  # whitespace after the closing fence
                if c == "\n":
                    self._drop_fence()
                    return i + 1
                if c not in " \t\r":
                    break
            held.append(c)
            i += 1
        else:
            return i
        self._keep_fence()
        return i

    def _drop_fence(self) -> None:
        self._emit_block(self._block)
        self._gap, self._held, self._gapped = [], [], False
        self._to_text(True)

    def _keep_fence(self) -> None:
        """The fence holds more than the block: show it, with what followed the block."""
        # What followed holds no '<' and no closing fence line, so it is plain text inside the fence.
        after = "".join(self._held)
        self._emit("".join(self._gap))
        self._emit_block(self._block)
        self._emit(after)
        self._gap, self._held, self._gapped = [], [], False
        self._in_fence = self._open_fence
        self._to_text(after.endswith("\n"))
