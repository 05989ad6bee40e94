"""The lines a person types at the terminal, read by a thread so the event loop goes on meanwhile."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from loguru import logger

__all__ = ["KEYBOARD", "Keyboard"]


class Keyboard:
    """The lines a person types, read one at a time by a daemon thread, so the event loop (sign-ins,
    server connections, a running call) goes on while a prompt waits, and a prompt left waiting never
    holds the program open.

    A prompt can be abandoned: a server's question whose call ended. Its thread still waits for a line,
    and the next prompt takes that read over (printing its own prompt), so the line typed after it goes
    where the person sees it going. A line that reached an abandoned prompt before any other asked
    is dropped, as typed to a question that is gone.
    """

    def __init__(self) -> None:
        self._reading: concurrent.futures.Future[str] | None = None

    def _read(self, prompt: str) -> concurrent.futures.Future[str]:
        reading = self._reading
        if reading is not None and not reading.done():
            print(f"\n{prompt}", end="", flush=True)
            return reading
        if reading is not None and reading.exception() is None:
            logger.info("TERMINAL_LINE_DROPPED {} chars typed to a question that is gone", len(reading.result()))
        reading = concurrent.futures.Future()

        def read() -> None:
            try:
                reading.set_result(input(prompt))
            except (EOFError, OSError) as error:
                reading.set_exception(EOFError(str(error)))

        threading.Thread(target=read, name="terminal-line", daemon=True).start()
        self._reading = reading
        return reading

    async def line(self, prompt: str) -> str:
        """The next line, awaited; a cancelled wait leaves the read to the next prompt."""
        text = await asyncio.shield(asyncio.wrap_future(self._read(prompt)))
        self._reading = None
        return text

    def line_now(self, prompt: str) -> str:
        """The next line, blocking (outside the event loop)."""
        text = self._read(prompt).result()
        self._reading = None
        return text


KEYBOARD = Keyboard()  # one reader for the process: standard input has one reader thread at a time
