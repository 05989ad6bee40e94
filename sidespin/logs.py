"""Logging: loguru to the console, to `data/logs/server.log` (rotated), and to live watchers of /logs.

Every event is one line with a greppable marker: `grep TOOL_CALL_ data/logs/server.log`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import sys
from pathlib import Path
from typing import AsyncIterator

from loguru import logger

__all__ = ["LogHub", "setup_logging", "LINE_FORMAT"]

LINE_FORMAT = "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <7} | {message}"


class LogHub:
    """Keeps the last lines and hands new ones to every subscribed page, from any thread."""

    def __init__(self, keep: int = 300) -> None:
        self._recent: collections.deque[str] = collections.deque(maxlen=keep)
        self._queues: set[asyncio.Queue[str]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.sink_id: int | None = None

    def write(self, message: str) -> None:
        line = message if message.endswith("\n") else message + "\n"
        self._recent.append(line)
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        for queue in list(self._queues):
            loop.call_soon_threadsafe(_put_nowait, queue, line)

    def recent(self) -> list[str]:
        return list(self._recent)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[str]]:
        self._loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1000)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            self._queues.discard(queue)

    def close(self) -> None:
        if self.sink_id is not None:
            with contextlib.suppress(ValueError):
                logger.remove(self.sink_id)
            self.sink_id = None


def _put_nowait(queue: asyncio.Queue[str], line: str) -> None:
    with contextlib.suppress(asyncio.QueueFull):  # a watcher that stopped reading misses lines, nobody blocks
        queue.put_nowait(line)


def setup_logging(logs_dir: Path, *, console: bool = True) -> LogHub:
    """Console (INFO, or SIDESPIN_LOG_LEVEL), file (DEBUG, 5 MB rotation, 5 kept) and the /logs hub."""
    logs_dir = Path(logs_dir)
    logs_dir.mkdir(parents=True, exist_ok=True)
    logger.remove()
    level = os.environ.get("SIDESPIN_LOG_LEVEL", "INFO").upper()
    if console:
        logger.add(sys.stderr, level=level, format=LINE_FORMAT, colorize=False)
    logger.add(logs_dir / "server.log", level="DEBUG", format=LINE_FORMAT, rotation="5 MB", retention=5)
    hub = LogHub()
    hub.sink_id = logger.add(hub.write, level="DEBUG", format=LINE_FORMAT)
    return hub
