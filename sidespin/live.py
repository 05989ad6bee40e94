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
from sidespin.tools import ToolCall

__all__ = ["Card", "LiveTurn"]


@dataclass
class Card:
    """One tool call as the page shows it."""

    call: ToolCall
    status: str = "proposed"  # proposed, waiting, running, done, error
    result: str = ""
    seconds: float | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def arguments(self) -> str:
        return json.dumps(self.call.arguments, ensure_ascii=False, indent=1)


class LiveTurn:
    """The visible state of one turn, updated from rally events."""

    def __init__(self, conversation_id: str, on_event: Callable[[Event], None] | None = None) -> None:
        self.id = "t" + secrets.token_hex(5)
        self.conversation_id = conversation_id
        self.text = ""
        self.thoughts: list[str] = []
        self.cards: dict[str, Card] = {}
        self.malformed: list[MalformedCall] = []
        self.notices: list[str] = []
        self.done = False
        self.reason = ""
        self.version = 0
        self._changed = asyncio.Event()
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
                self.apply(TurnDone(text=self.text, reason="error"))

    def apply(self, event: Event) -> None:
        """Fold one event into the snapshot and wake every watcher."""
        if self._on_event is not None:
            self._on_event(event)
        if isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, Thought):
            if event.closed or not self.thoughts:
                self.thoughts.append(event.text)
            else:
                self.thoughts[-1] += event.text
        elif isinstance(event, ToolProposed):
            self.cards[event.call.id] = Card(event.call)
        elif isinstance(event, ApprovalNeeded):
            self._card(event.call).status = "waiting"
        elif isinstance(event, ToolStarted):
            card = self._card(event.call)
            card.status, card.started = "running", time.perf_counter()
        elif isinstance(event, ToolFinished):
            card = self._card(event.result.call)
            card.status = "done" if event.result.ok else "error"
            card.result = event.result.text()
            card.seconds = event.result.seconds
            card.attachments = event.result.attachments
        elif isinstance(event, MalformedCall):
            self.malformed.append(event)
        elif isinstance(event, ErrorNotice):
            self.notices.append(event.message)
        elif isinstance(event, TurnDone):
            self.done, self.reason = True, event.reason
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    def _card(self, call: ToolCall) -> Card:
        if call.id not in self.cards:
            self.cards[call.id] = Card(call)
        return self.cards[call.id]

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
