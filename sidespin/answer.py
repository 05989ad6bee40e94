"""A model's answer as it streams, read into events: text, thoughts, calls, and openings held back.

Each piece of a round's answer comes here: a backend's `Delta` (text, thinking, native
calls) and the interceptor's `Text` and `Block` events of its text. Visible text goes
out at once as `TextDelta`, unless it opens like a call written without the block
(`_Held`); a `<think>` block becomes a `Thought`; an echo of result markup is dropped.
A complete call (an `<mcp-request>` block, a call in another format's wrapper, a native
call, or held-back text that reads as one) goes to the turn's `dispatch`, which decides
what happens to it. What one answer produced is its `Round`.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from loguru import logger

from sidespin.errors import MalformedToolCall
from sidespin.events import Event, MalformedCall, TextDelta, Thought, Usage
from sidespin.formats import MALFORMED
from sidespin.intercept import Block, Interceptor, Text
from sidespin.llm.base import Delta
from sidespin.protocol import MCP_TAG, parse_request
from sidespin.protocol.loose import find_loose_call
from sidespin.tools import ToolCall, ToolRegistry, ToolResult

__all__ = ["TAGS", "Round", "AnswerReader"]

THINK_TAG = "think"
# A small model sometimes imitates the result markup it saw in the history; that is never answer text.
ECHO_TAGS = ("mcp-response", "tool_response")
# Call syntax in another format's wrapper (Qwen's and Hermes' `<tool_call>`; `<request-id>`, an echo of the
# salted prompt's "Request ID" line, once seen around a call): read as a call, or said to be malformed.
WRAPPER_TAGS = ("tool_call", "request-id")
TAGS = (MCP_TAG, THINK_TAG, *ECHO_TAGS, *WRAPPER_TAGS)


class Round:
    """What one model answer produced: its visible text, its calls and the running tool tasks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.tasks: dict[asyncio.Task[ToolResult], ToolCall] = {}
        self.results: dict[str, ToolResult] = {}
        self.pending: list[ToolCall] = []
        self.repeats = 0
        self.held = _Held()
        self.usage: Usage | None = None  # told after the text the stream still holds, so it follows the answer
        self.route_usage: Usage | None = None  # what the route's completions cost, before the answer
        self.answering = False  # the model's answer began to stream

    def take_usage(self, *, cut: bool = False) -> list[Event]:
        """The round's usage (its route's and its answer's added up), once. A round `cut` while its answer
        streamed, before the answer's count came, tells none: the route's alone would read as the answer's."""
        parts = [usage for usage in (self.route_usage, self.usage) if usage is not None]
        if cut and self.answering and self.usage is None:
            parts = []
        self.route_usage = self.usage = None
        return [parts[0].plus(parts[1]) if len(parts) == 2 else parts[0]] if parts else []


class _Held:
    """An answer that opens like a call written without the block (`{`, a ``` fence, `<tool`) is held back.

    Small models often answer with nothing but `{"name": …, "arguments": …}`: shown as it
    streams, the page would flash raw JSON. Such an opening is kept from the page until
    the round ends (or `LIMIT` characters prove it is prose), then read as a call or let go.
    """

    OPENINGS = ("{", "```", "<tool")
    LIMIT = 4000

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.decided = False  # once decided, text flows (or is held) without looking again
        self.holding = False

    def take(self, text: str) -> str:
        """What of `text` may be shown now."""
        if self.decided and not self.holding:
            return text
        self.pieces.append(text)
        so_far = "".join(self.pieces)
        start = so_far.lstrip()
        if not self.decided:
            if len(start) < 5 and any(opening.startswith(start) for opening in self.OPENINGS):
                return ""  # too short to tell yet
            self.decided = True
            self.holding = start.startswith(self.OPENINGS)
        if self.holding and len(so_far) <= self.LIMIT:
            return ""
        self.holding, self.pieces = False, []
        return so_far

    def release(self) -> str:
        """The text still held, at the end of the round."""
        held, self.pieces, self.holding, self.decided = "".join(self.pieces), [], False, True
        return held


Dispatch = Callable[[ToolCall, Round], list[Event]]  # a complete call: run it, refuse it, or wait for a person


class AnswerReader:
    """Reads the pieces of a turn's answers into events; each complete call goes to `dispatch`."""

    def __init__(
        self,
        conversation_id: str,
        registry: ToolRegistry,
        dispatch: Dispatch,
        holds_openings: Callable[[], bool],
    ) -> None:
        self.conversation_id = conversation_id  # for the log lines
        self.registry = registry
        self.dispatch = dispatch
        self.holds_openings = holds_openings  # whether text that opens like a call is held back (asked each time)

    def on_block(self, block: Block, current: Round) -> list[Event]:
        if block.tag in ECHO_TAGS:
            logger.info("MCP_RESPONSE_ECHO_HIDDEN conv={} chars={}", self.conversation_id, len(block.raw))
            logger.debug("MCP_RESPONSE_ECHO_RAW {}", block.raw)
            return []
        if block.tag in WRAPPER_TAGS:
            return self.on_wrapper(block, current)
        if block.tag == THINK_TAG:
            inner = block.raw[len("<think>"):]
            inner = inner[: -len("</think>")] if block.closed else inner
            return [Thought(inner.strip(), closed=block.closed)]
        logger.info("MCP_BLOCK_HIDDEN conv={} chars={} closed={}", self.conversation_id, len(block.raw), block.closed)
        logger.debug("MCP_BLOCK_RAW {}", block.raw)
        if not block.closed:
            reason = f"the model stopped in the middle of a tool call (no </{MCP_TAG}>)"
            logger.warning("MCP_BLOCK_MALFORMED {}", reason)
            return [MalformedCall(block.raw, reason)]
        try:
            # read against every tool: a call to one switched off is then refused as such, not as unknown
            call = parse_request(block.raw, self.registry.base)
        except MalformedToolCall as error:
            logger.warning("MCP_BLOCK_MALFORMED {}", error.reason)
            return [MalformedCall(block.raw, error.reason)]
        return self.dispatch(call, current)

    def on_wrapper(self, block: Block, current: Round) -> list[Event]:
        """A call in another format's wrapper: run it when it names a tool, else say so (never shown raw)."""
        logger.info("MCP_WRAPPER_HIDDEN conv={} tag={} chars={}", self.conversation_id, block.tag, len(block.raw))
        logger.debug("MCP_WRAPPER_RAW {}", block.raw)
        inner = block.raw[block.raw.find(">") + 1:]
        inner = inner.removesuffix(f"</{block.tag}>")
        try:
            found = find_loose_call(inner, list(self.registry.base))
        except MalformedToolCall as error:
            return [MalformedCall(block.raw, error.reason)]
        if found is not None:
            return self.dispatch(found.call, current)
        if block.tag == "request-id" and "<" not in inner and "{" not in inner:
            return []  # only the id echoed back: nothing to show, nothing to run
        reason = f"the model wrote a <{block.tag}> that calls no offered tool in a form this server can read"
        logger.warning("MCP_WRAPPER_MALFORMED {}", reason)
        return [MalformedCall(block.raw, reason)]

    def on_native(self, call: ToolCall, current: Round) -> list[Event]:
        if MALFORMED in call.arguments:
            reason = f"the arguments of {call.name!r} are not valid JSON"
            return [MalformedCall(str(call.arguments[MALFORMED]), reason)]
        return self.dispatch(call, current)

    def on_events(self, found: list[Text | Block], current: Round) -> list[Event]:
        events: list[Event] = []
        for item in found:
            if isinstance(item, Text):
                shown = current.held.take(item.text) if self.holds_openings() else item.text
                if shown:
                    current.text.append(shown)
                    events.append(TextDelta(shown))
            else:
                events.extend(self.on_block(item, current))
        return events

    def on_held(self, current: Round, *, calls: bool = True) -> list[Event]:
        """At the end of an answer: read held-back text as a call written without the block, or show it.

        With `calls` False (the turn was cut) nothing new may start: the text is kept as it was written.
        """
        held = current.held.release()
        if not held:
            return []
        if not calls:
            current.text.append(held)
            return [TextDelta(held)]
        try:
            found = find_loose_call(held, list(self.registry))
        except MalformedToolCall as error:
            logger.warning("MCP_LOOSE_MALFORMED {}", error.reason)
            return [MalformedCall(held, error.reason)]
        if found is None:
            current.text.append(held)
            return [TextDelta(held)]
        logger.info("MCP_LOOSE_CALL_HIDDEN conv={} {} chars={}", self.conversation_id, found.call.name, len(held))
        logger.debug("MCP_LOOSE_CALL_RAW {}", held[found.start:found.end])
        events: list[Event] = []
        for shown in (held[:found.start], held[found.end:]):
            if shown.strip():
                current.text.append(shown)
                events.append(TextDelta(shown))
        return events + self.dispatch(found.call, current)

    def on_delta(self, delta: Delta, interceptor: Interceptor, current: Round) -> list[Event]:
        events: list[Event] = [Thought(delta.thinking, closed=False)] if delta.thinking else []
        if delta.text:
            events.extend(self.on_events(interceptor.feed(delta.text), current))
        for call in delta.tool_calls:
            events.extend(self.on_native(call, current))
        return events
