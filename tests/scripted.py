"""A fake model that replays scripted turns: makes the rally testable offline and deterministic.

It lives with the tests: no setting of the product chooses it. A test hands it to what it builds
(`Engine.open(settings, backend=...)`, `create_app(settings, backend=...)`), or starts a server or
the terminal chat with it through `tests/scripted_server.py` and `tests/scripted_chat.py`.

    backend = ScriptedBackend([
        ["Let me look. ", ToolCall("get_time", {"timezone": "UTC"})],   # first call to stream()
        ["It is noon."],                                                 # second call
        lambda messages: [f"You said {messages[-1]['content']!r}."],     # computed from what was sent
    ])

Strings come out as text deltas, `ToolCall`s as native tool calls, `Delta`s as they
are. Every call to `stream()` records a deep copy of its messages in `.calls`.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, AsyncIterator, Callable, Union

from sidespin.errors import BackendError
from sidespin.llm.base import Backend, Delta, Grammar
from sidespin.tools import Tool, ToolCall

__all__ = ["ScriptedBackend", "Item", "Turn"]

Item = Union[str, ToolCall, Delta]
Turn = Union[list[Item], Callable[[list[dict[str, Any]]], list[Item]]]


class ScriptedBackend(Backend):
    """Replays one scripted turn per call to `stream()`; raises `BackendError` when the script runs out."""

    name = "scripted"
    model = "scripted"

    def __init__(
        self,
        turns: list[Turn],
        supports_tools: bool = False,
        delay: float = 0.0,
        *,
        supports_grammar: bool = False,
    ) -> None:
        self.turns = list(turns)
        self.supports_tools = supports_tools
        self.supports_grammar = supports_grammar
        self.delay = delay
        self.calls: list[list[dict[str, Any]]] = []
        self.tools_seen: list[list[str]] = []
        self.grammars: list[Grammar | None] = []

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        self.calls.append(copy.deepcopy(messages))
        self.tools_seen.append([t.name for t in tools or []])
        self.grammars.append(grammar)
        turn_number = len(self.calls)
        if turn_number > len(self.turns):
            raise BackendError(f"the scripted backend has no turn {turn_number}: its script has {len(self.turns)}")
        turn = self.turns[turn_number - 1]
        items = turn(copy.deepcopy(messages)) if callable(turn) else turn
        called = False
        for item in items:
            if self.delay:
                await asyncio.sleep(self.delay)  # only to imitate a model that streams
            if isinstance(item, str):
                yield Delta(text=item)
            elif isinstance(item, ToolCall):
                called = True
                yield Delta(tool_calls=[item])
            elif isinstance(item, Delta):
                called = called or bool(item.tool_calls)
                yield item
                if item.finish_reason is not None:
                    return  # the script chose its own ending
            else:
                raise TypeError(f"a scripted turn holds str, ToolCall or Delta items, not {type(item).__name__}")
        yield Delta(finish_reason="tool_calls" if called else "stop")
