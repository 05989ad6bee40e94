"""Server-sent events through sse-starlette: the page's live streams (a turn, the pulse, the Servers panel, the log).

The rules, before the code:

- **What is sent is ours.** Each message is already an SSE message (FastHTML's `sse_message`, or
  several joined into one write); it goes out as is, one write per message.
- **Kept alive by the library.** A comment line every `PING` seconds keeps an idle stream open
  through proxies and lets a closed tab be noticed at the next write; htmx's SSE extension ignores
  comments, so nothing on the page changes.
- **A closed tab or a stopping server ends the stream** (sse-starlette listens for both and
  cancels the generator). The routes' generators still ask `request.is_disconnected()` between
  messages as well; that check is now a second guard, not the only one.
"""

from __future__ import annotations

from typing import AsyncIterator

from sse_starlette import EventSourceResponse

__all__ = ["EventStream", "PING"]

PING: float = 15  # seconds between keep-alive comments (read at each response)


def EventStream(messages: AsyncIterator[str]) -> EventSourceResponse:
    """A text/event-stream response writing each ready-made SSE message as it comes."""

    async def raw() -> AsyncIterator[bytes]:
        async for message in messages:
            yield message.encode()  # bytes go out as they are (a str would be wrapped in a `data:` line)

    return EventSourceResponse(raw(), ping=PING)
