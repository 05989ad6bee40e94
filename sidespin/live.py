"""A turn being played in the background, watched by any number of pages.

`LiveTurn` consumes the events of `chat_with_llm` in its own task and keeps a
snapshot of what a person should see: the answer so far, thoughts, one card
per tool call. Watchers wait for the next change and redraw from the
snapshot, so a page that connects late, or reconnects, loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from loguru import logger

from sidespin.events import (
    ApprovalNeeded,
    ErrorNotice,
    Event,
    MalformedCall,
    TextDelta,
    Thought,
    ToolFinished,
    ToolProposed,
    ToolStarted,
    TurnDone,
)
from sidespin.rally import TurnControl
from sidespin.tools import ToolCall

__all__ = ["Card", "LiveTurn", "MarkdownStream"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


class MarkdownStream:
    """Answer text as complete Markdown blocks and the tail still being written.

    A block ends at a blank line outside a fenced code block. A page renders each
    complete block once and shows the tail as plain text until it completes, so a
    long answer is sent about once, not once per token. Linear in the text's length.
    """

    def __init__(self, text: str = "") -> None:
        self.blocks: list[str] = []
        self.tail: list[str] = []  # pieces of the block being written
        self._line: list[str] = []
        self._has_text = False
        self._fence: str | None = None
        if text:
            self.feed(text)

    @property
    def text(self) -> str:
        return "".join(self.blocks) + "".join(self.tail)

    def feed(self, text: str) -> None:
        start = 0
        while start < len(text):
            newline = text.find("\n", start)
            end = len(text) if newline < 0 else newline + 1
            piece = text[start:end]
            self.tail.append(piece)
            self._line.append(piece)
            start = end
            if newline >= 0:
                line, self._line = "".join(self._line), []
                if self._ends_block(line):
                    self.blocks.append("".join(self.tail))
                    self.tail = []

    def _ends_block(self, line: str) -> bool:
        stripped = line.strip()
        if self._fence is not None:
            if stripped.startswith(self._fence) and set(stripped) == {self._fence[0]}:
                self._fence = None
            return False
        if not stripped:
            ended, self._has_text = self._has_text, False
            return ended
        opener = _FENCE.match(line)
        if opener:
            self._fence = opener.group(1)
        self._has_text = True
        return False


@dataclass
class Card:
    """One tool call as the page shows it."""

    call: ToolCall
    status: str = "proposed"  # proposed, waiting, running, done, error
    result: str = ""
    seconds: float | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    version: int = 0  # bumped on every change, so a watcher sends a card only when it changed

    @property
    def arguments(self) -> str:
        return json.dumps(self.call.arguments, ensure_ascii=False, indent=1)


class LiveTurn:
    """The visible state of one turn, updated from rally events."""

    def __init__(self, conversation_id: str, control: TurnControl | None = None,
                 on_event: Callable[[Event], None] | None = None) -> None:
        self.id = "t" + secrets.token_hex(5)
        self.conversation_id = conversation_id
        self.control = control or TurnControl()
        self.answer = MarkdownStream()
        self.thoughts: list[str] = []
        self.cards: dict[str, Card] = {}
        self.malformed: list[MalformedCall] = []
        self.notices: list[str] = []
        self.done = False
        self.reason = ""
        self.version = 0
        self._changed = asyncio.Event()
        self._wake: asyncio.TimerHandle | None = None
        self.frame = 0.03  # seconds between two updates of streamed text (about 30 a second)
        self._on_event = on_event
        self.task: asyncio.Task[None] | None = None

    def start(self, events: AsyncIterator[Event]) -> "LiveTurn":
        self.task = asyncio.create_task(self._consume(events), name=f"turn-{self.id}")
        return self

    async def _consume(self, events: AsyncIterator[Event]) -> None:
        try:
            async with contextlib.aclosing(events):  # a cancelled turn still closes (and saves) at once
                async for event in events:
                    self.apply(event)
        except Exception as error:  # the top edge of a background turn: tell the person, keep serving
            logger.exception("TURN_CRASHED turn={} conv={}", self.id, self.conversation_id)
            self.apply(ErrorNotice(f"internal error: {type(error).__name__}: {error}"))
        finally:
            if not self.done:
                self.apply(TurnDone(text=self.answer.text, reason="error"))

    def apply(self, event: Event) -> None:
        """Fold one event into the snapshot and wake every watcher."""
        if self._on_event is not None:
            self._on_event(event)
        if isinstance(event, TextDelta):
            self.answer.feed(event.text)
        elif isinstance(event, Thought):
            if event.closed or not self.thoughts:
                self.thoughts.append(event.text)
            else:
                self.thoughts[-1] += event.text
        elif isinstance(event, ToolProposed):
            self.cards[event.call.id] = Card(event.call)
        elif isinstance(event, ApprovalNeeded):
            self._card(event.call, status="waiting")
        elif isinstance(event, ToolStarted):
            self._card(event.call, status="running", started=time.perf_counter())
        elif isinstance(event, ToolFinished):
            result = event.result
            self._card(result.call, status="done" if result.ok else "error", result=result.text(),
                       seconds=result.seconds, attachments=result.attachments)
        elif isinstance(event, MalformedCall):
            self.malformed.append(event)
        elif isinstance(event, ErrorNotice):
            self.notices.append(event.message)
        elif isinstance(event, TurnDone):
            self.done, self.reason = True, event.reason
        self.version += 1
        if isinstance(event, (TextDelta, Thought)) and not self.done:
            # streamed pieces wake the watchers at most once per `frame`: one update carries many tokens
            if self._wake is None:
                self._wake = asyncio.get_running_loop().call_later(self.frame, self._notify)
        else:
            self._notify()

    def _notify(self) -> None:
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        self._changed.set()
        self._changed = asyncio.Event()

    def _card(self, call: ToolCall, **changes: Any) -> Card:
        """The call's card, with `changes` applied and its version bumped."""
        card = self.cards.setdefault(call.id, Card(call))
        for name, value in changes.items():
            setattr(card, name, value)
        card.version += 1
        return card

    async def changes(self, idle_timeout: float = 15.0) -> AsyncIterator[int]:
        """Yield the version after each change (at once for the current one); None-free heartbeat on idle."""
        seen = -1
        while True:
            if self.version != seen:
                seen = self.version
                yield seen
                if self.done:
                    return
            waiter = self._changed
            try:
                await asyncio.wait_for(waiter.wait(), timeout=idle_timeout)
            except asyncio.TimeoutError:
                yield -1  # a heartbeat, so a watcher can notice its client left

    async def wait(self, timeout: float | None = None) -> None:
        """Wait until the turn is over."""
        if self.task is not None:
            await asyncio.wait_for(asyncio.shield(self.task), timeout=timeout)
