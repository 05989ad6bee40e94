"""The limits of a turn: its wall clock, its token budget, a person's Stop, and an answer that loops.

`TurnControl` holds them for one running turn; whichever comes first ends the turn
with a `TurnCut`, which says why (for the person, and for a call it cut short). It also
holds the turn's tool calls in flight, so a person can cancel one of them (its card's
Cancel) while the turn goes on.

A small model's answer sometimes repeats one piece until its length limit: the 0.5B, told a
file's text and asked its size in German, wrote "The datei budget.csv ist 1000000…" for 1,024
tokens (26 s). An answer whose last `LOOP_SPAN` characters or more are one piece of up to
`LOOP_PIECE` characters repeated `LOOP_REPEATS` times or more is stopped there (`looping`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

__all__ = ["TurnControl", "TurnCut", "looping", "LOOP_SPAN", "LOOP_PIECE", "LOOP_REPEATS"]

LOOP_SPAN = 300  # characters: a rule of dashes or a table's border is shorter
LOOP_PIECE = 60  # characters of the piece repeated (a line of a list written again and again)
LOOP_REPEATS = 8
_LOOP_EVERY = 32  # characters streamed between two checks (17 µs each; a loop is caught this much later at most)


def looping(text: str) -> bool:
    """Whether `text` ends with one piece of up to `LOOP_PIECE` characters repeated to `LOOP_SPAN` characters or
    more, `LOOP_REPEATS` times at least."""
    for size in range(1, LOOP_PIECE + 1):
        times = max(LOOP_REPEATS, -(-LOOP_SPAN // size))
        if len(text) >= size * times and text[-size * times:] == text[-size:] * times:
            return True
    return False


class TurnCut(Exception):
    """A turn ended early: a person stopped it (`stopped`), it reached its `time` or `tokens` limit, or its answer
    began repeating itself (`loop`)."""

    def __init__(self, reason: str, message: str, why: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.why = why  # for the result of a call cut short: "<why> before this call finished"


class TurnControl:
    """A handle on one running turn: its wall clock and token budget end it, and so can a person.

    Every await of the rally that may take long (the model's next piece, the tools
    under way) runs inside `bounded()`; `stop()` ends the one under way at once (the
    clock's timeout is simply moved to now) and every later one before it starts.
    """

    def __init__(self, seconds: float = 300.0, tokens: int = 4096) -> None:
        self.seconds = seconds
        self.tokens = tokens
        self.spent = 0
        self._tail = ""  # the end of what was streamed, where a loop shows
        self._unchecked = 0  # characters streamed since the last look for a loop
        self.reason: str | None = None
        self._deadline: float | None = None
        self._scope: asyncio.Timeout | None = None
        self._calls: dict[str, asyncio.Task[object]] = {}  # call id: the task running it

    def track(self, call_id: str, task: asyncio.Task[object]) -> None:
        """A call of the turn runs in `task` until it is done."""
        self._calls[call_id] = task
        task.add_done_callback(lambda _: self._calls.pop(call_id, None))

    def cancel_call(self, call_id: str) -> bool:
        """A person's Cancel on one running call: its task is cancelled (its server told), the turn goes on.
        False when no such call is running."""
        task = self._calls.get(call_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def stop(self) -> None:
        """A person's Stop: the turn ends at its next (or current) await, keeping what was said."""
        self.reason = self.reason or "stopped"
        if self._scope is not None and not self._scope.expired():
            self._scope.reschedule(asyncio.get_running_loop().time())

    def spend(self, text: str) -> None:
        """Count a streamed piece: one token, or one per 4 characters of a longer piece; an answer that loops
        (`looping`) is cut too."""
        if not text:
            return
        self.spent += max(1, -(-len(text) // 4))
        if self.spent > self.tokens:
            self.reason = self.reason or "tokens"
            raise self.cut()
        self._tail = (self._tail + text)[-2 * LOOP_PIECE * LOOP_REPEATS - LOOP_SPAN:]
        self._unchecked += len(text)
        if self._unchecked < _LOOP_EVERY:
            return
        self._unchecked = 0
        if looping(self._tail):
            self.reason = self.reason or "loop"
            raise self.cut()

    def cut(self) -> TurnCut:
        if self.reason == "stopped":
            return TurnCut("stopped", "stopped by you; what was said so far is kept", "the turn was stopped")
        if self.reason == "tokens":
            return TurnCut("tokens", f"this turn reached its limit of {self.tokens} tokens (turn_tokens) and was "
                           "stopped; what was said so far is kept", "the turn reached its token limit")
        if self.reason == "loop":
            return TurnCut("loop", "the answer began repeating itself and was stopped; what was said so far is kept",
                           "the answer repeated itself")
        return TurnCut("time", f"this turn ran longer than {self.seconds:g} s (turn_seconds) and was stopped; "
                       "what was said so far is kept", "the turn ran out of time")

    @contextlib.asynccontextmanager
    async def bounded(self) -> AsyncIterator[None]:
        """Run the body within the turn's deadline; raise `TurnCut` if the turn is (or gets) cut."""
        if self._deadline is None:
            self._deadline = asyncio.get_running_loop().time() + self.seconds
        if self.reason is not None:
            raise self.cut()
        scope = asyncio.timeout_at(self._deadline)
        try:
            async with scope:
                self._scope = scope
                yield
        except TimeoutError:
            if not scope.expired():
                raise  # a timeout of the body's own, not the turn's
            self.reason = self.reason or "time"
            raise self.cut() from None
        finally:
            self._scope = None
