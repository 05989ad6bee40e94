"""Turns played in the background for the web page, watched by any number of pages.

`LiveTurn` consumes the events of a turn in its own task and folds them into the
turn's `TurnRecord` (the same fold a reload replays from the transcript).
Watchers wait for the next change and redraw from the record, so a page that
connects late, or reconnects, loses nothing. `TurnBoard` starts, finds and
stops the live turns of every conversation. Here too: where a turn is on the page
(`dom_id`, `user_dom_id`) and which window of a long conversation's turns a page draws.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from typing import TYPE_CHECKING, Any, AsyncIterator

from loguru import logger

from sidespin.errors import NotSaved, TranscriptError
from sidespin.events import ErrorNotice, Event, TextDelta, Thought, TurnDone
from sidespin.limits import TurnControl
from sidespin.record import TurnRecord
from sidespin.transcript import Loaded, Transcript

if TYPE_CHECKING:
    from sidespin.engine import Engine
    from sidespin.rally import Conversation

__all__ = ["LiveTurn", "TurnBoard", "dom_id", "user_dom_id", "HISTORY_WINDOW", "history_window", "history_link"]


HISTORY_WINDOW = 200  # turns a page draws at once; a longer conversation pages through links


def dom_id(index: int) -> str:
    """The page's id of the assistant message of the conversation's turn number `index` (live or reloaded)."""
    return f"turn-{index}"


def user_dom_id(index: int) -> str:
    """The page's id of the person's message of the conversation's turn number `index`."""
    return f"user-{index}"


def history_window(count: int, start: int | None = None) -> range:
    """The turns a page draws of `count`: `HISTORY_WINDOW` from `start`, the last ones by default."""
    last = max(0, count - HISTORY_WINDOW)
    begin = last if start is None else min(max(0, start), last)
    return range(begin, min(count, begin + HISTORY_WINDOW))


def history_link(cid: str, turn: int, count: int) -> str:
    """The page of conversation `cid` that draws its turn number `turn` (of `count`)."""
    if turn >= count - HISTORY_WINDOW:
        return f"/c/{cid}"
    return f"/c/{cid}?start={max(0, turn - HISTORY_WINDOW // 2)}"


class LiveTurn:
    """One play of a turn (a question, or a continuation after an approval), updated from its events.

    `id` is the page's id of the turn's message (`dom_id`); `key` names this play's update stream.
    A continuation starts from `seed`, the turn as recorded so far, so its message shows the whole turn.
    """

    def __init__(self, conversation_id: str, index: int = 0, control: TurnControl | None = None,
                 seed: TurnRecord | None = None) -> None:
        self.key = "t" + secrets.token_hex(5)
        self.index = index
        self.id = dom_id(index)
        self.conversation_id = conversation_id
        self.control = control or TurnControl()
        self.record = seed or TurnRecord()
        # seconds between two updates of streamed text (8 a second): a small model's tokens are a few
        # characters each, and an update's framing would outweigh one or two of them (bench/bench_stream.py)
        self.frame = 0.125
        self.task: asyncio.Task[None] | None = None
        # the person's message in the file (None), or the NotSaved that kept it out (`Engine.events`); None too
        # when the turn ends without writing one (a continuation, an unreadable file)
        self.asked: asyncio.Future[NotSaved | None] = asyncio.get_running_loop().create_future()
        self._changed = asyncio.Event()
        self._wake: asyncio.TimerHandle | None = None

    @property
    def done(self) -> bool:
        return self.record.done

    def start(self, events: AsyncIterator[Event]) -> "LiveTurn":
        self.task = asyncio.create_task(self._consume(events), name=f"turn-{self.key}")
        return self

    async def _consume(self, events: AsyncIterator[Event]) -> None:
        try:
            async with contextlib.aclosing(events):  # a cancelled turn still closes (and saves) at once
                async for event in events:
                    self.apply(event)
        except Exception as error:  # the top edge of a background turn: tell the person, keep serving
            logger.exception("TURN_CRASHED turn={} conv={}", self.key, self.conversation_id)
            self.apply(ErrorNotice(f"internal error: {type(error).__name__}: {error}"))
        finally:
            self.told_asked(None)
            if not self.done:
                self.apply(TurnDone(reason="error"))

    def told_asked(self, error: NotSaved | None) -> None:
        """The person's message is in the file (None), or could not be written (`error`)."""
        if not self.asked.done():
            self.asked.set_result(error)

    def apply(self, event: Event) -> None:
        """Fold one event into the record and wake every watcher."""
        self.record.apply(event)
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

    async def changes(self, idle_timeout: float = 15.0) -> AsyncIterator[int]:
        """Yield the version after each change (at once for the current one); -1 as a heartbeat when idle."""
        seen = -1
        while True:
            if self.record.version != seen:
                seen = self.record.version
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


class TurnBoard:
    """The web page's live turns: each played in the background by the engine, watched, stoppable."""

    def __init__(self, engine: Engine, keep: int = 50) -> None:
        self.engine = engine
        self.keep = keep  # finished turns stay watchable for a while (a late page), then go
        self.turns: dict[str, LiveTurn] = {}

    def get(self, key: str) -> LiveTurn | None:
        return self.turns.get(key)

    def running(self, conversation_id: str) -> list[LiveTurn]:
        return [t for t in self.turns.values() if t.conversation_id == conversation_id and not t.done]

    def start(self, conversation: Conversation, user_text: str | None, *, loaded: Loaded | None = None,
              **play: Any) -> LiveTurn:
        """Play a turn in the background (`play`: poke_tool, poke_arguments, decisions, as `Engine.events`).

        A new question gets a new message; a continuation (decisions) goes on in the message of the last turn.
        Turns of one conversation queue up, never interleave. The file is read here, once: the turn records
        into what was read (read again only if a turn before it wrote it meanwhile). A caller that has just
        read it (to check a Poke's tool, to record a choice) hands it over as `loaded`.
        """
        engine = self.engine
        loaded = loaded or self._read(conversation.id)
        transcript = loaded.transcript if loaded is not None else Transcript()
        control = TurnControl(engine.settings.turn_seconds, engine.settings.turn_tokens)
        if user_text is not None or play.get("poke_tool"):
            # a turn still queued has not written its question yet: the next one comes after it
            queued = [turn.index + 1 for turn in self.running(conversation.id)]
            live = LiveTurn(conversation.id, max([transcript.next_user_index(), *queued]), control)
        else:
            index = max(0, len(transcript.turns) - 1)
            seed = transcript.record(index, ended=False) if transcript.turns else None
            live = LiveTurn(conversation.id, index, control, seed)

        async def serialized() -> AsyncIterator[Event]:
            turn = engine.events(conversation, user_text, control=control, loaded=loaded, on_asked=live.told_asked,
                                 **play)
            async with conversation.lock, contextlib.aclosing(turn):
                async for event in turn:
                    yield event

        self._forget_old()
        self.turns[live.key] = live
        live.start(serialized())
        live.task.add_done_callback(lambda _: self._forget_old())
        return live

    def _read(self, conversation_id: str) -> Loaded | None:
        """The conversation's file as it is now; None when it cannot be read (the turn then says why)."""
        try:
            return self.engine.store.load_stamped(conversation_id)
        except TranscriptError as error:
            logger.warning("TURN_FILE_UNREADABLE conv={} {}", conversation_id, error)
            return None

    def stop(self, conversation_id: str) -> list[LiveTurn]:
        """A person's Stop: every running (or queued) turn of the conversation ends, keeping what was said."""
        stopped = self.running(conversation_id)
        for turn in stopped:
            turn.control.stop()
            logger.info("TURN_STOP_ASKED turn={} conv={}", turn.key, conversation_id)
        return stopped

    def cancel_call(self, conversation_id: str, call_id: str) -> bool:
        """A person's Cancel on one running tool call of the conversation (the turn goes on); False if none runs."""
        for turn in self.running(conversation_id):
            if turn.control.cancel_call(call_id):
                logger.info("TOOL_CANCEL_ASKED turn={} conv={} id={}", turn.key, conversation_id, call_id)
                return True
        return False

    def _forget_old(self) -> None:
        finished = [key for key, turn in self.turns.items() if turn.done]
        for key in finished[: max(0, len(finished) - self.keep)]:
            del self.turns[key]
