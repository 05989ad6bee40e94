"""Logging: loguru to the console, to `data/logs/server.log` (rotated), and to live watchers of /logs.

Every event is one line with a greppable marker: `grep TOOL_CALL_ data/logs/server.log`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import AsyncIterator

from loguru import logger

__all__ = ["LogHub", "setup_logging", "LINE_FORMAT"]

LINE_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <7} | {message}"


class LogHub:
    """Hands new log lines to every subscribed /logs page, from any thread.

    The hub's sink is attached only while a page watches, so logging costs nothing
    extra when nobody does; the lines before a page opened come from the log file.
    """

    def __init__(self, log_file: Path, keep: int = 300) -> None:
        self.log_file = Path(log_file)
        self.keep = keep
        self._queues: set[asyncio.Queue[str]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sink_id: int | None = None

    def write(self, message: str) -> None:
        line = message if message.endswith("\n") else message + "\n"
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        for queue in list(self._queues):
            loop.call_soon_threadsafe(_put_nowait, queue, line)

    def recent(self) -> list[str]:
        """The last lines of the log file (at most `keep`)."""
        try:
            with self.log_file.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 200 * self.keep))
                tail = handle.read().decode("utf-8", errors="replace").splitlines(keepends=True)
        except FileNotFoundError:
            return []
        return tail[-self.keep:]

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[str]]:
        self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1000)
        self._queues.add(queue)
        if self._sink_id is None:
            self._sink_id = logger.add(self.write, level="DEBUG", format=LINE_FORMAT)
        try:
            yield queue
        finally:
            self._queues.discard(queue)
            if not self._queues:
                self.close()

    def close(self) -> None:
        if self._sink_id is not None:
            with contextlib.suppress(ValueError):
                logger.remove(self._sink_id)
            self._sink_id = None


def _put_nowait(queue: asyncio.Queue[str], line: str) -> None:
    with contextlib.suppress(asyncio.QueueFull):  # a watcher that stopped reading misses lines, nobody blocks
        queue.put_nowait(line)


def _remove_sinks() -> None:
    """Remove every sink. A file sink on a full disk cannot flush its last lines and raises; loguru has removed it
    by then, so the others are removed in turn."""
    while True:
        try:
            logger.remove()
            return
        except OSError:
            continue


def setup_logging(logs_dir: Path, *, console: bool = True) -> LogHub:
    """Console (INFO, or SIDESPIN_LOG_LEVEL), file (DEBUG, 5 MB rotation, 5 kept) and the /logs hub."""
    logs_dir = Path(logs_dir)
    logs_dir.mkdir(parents=True, exist_ok=True)
    _remove_sinks()
    level = os.environ.get("SIDESPIN_LOG_LEVEL", "INFO").upper()
    if console:
        logger.add(sys.stderr, level=level, format=LINE_FORMAT, colorize=False)
    logger.add(logs_dir / "server.log", level="DEBUG", format=LINE_FORMAT, rotation="5 MB", retention=5)
    return LogHub(logs_dir / "server.log")
