"""Serving the app with uvicorn, as `python server.py` and `sidespin serve` do.

`serve(app, host, port)` runs until Ctrl-C or SIGTERM. The access log hides the access token
(`TokenRedaction`), and the server stops promptly with a page open (`Uvicorn`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import uvicorn

from sidespin.guard import TokenRedaction

__all__ = ["Uvicorn", "uvicorn_config", "serve"]


class Uvicorn(uvicorn.Server):
    """uvicorn that stops promptly with a page open: a page's live streams (the pulse, a turn, the Servers panel)
    never end by themselves, so once short requests had `STREAMS_GRACE` seconds to finish, the connections still
    open are closed. Each stream then ends as on a closed tab (no traceback), and the app's shutdown runs (MCP
    servers and the model stopped). `timeout_graceful_shutdown` stays as the backstop."""

    STREAMS_GRACE = 1.0

    async def shutdown(self, sockets: list | None = None) -> None:
        closing = asyncio.create_task(self._close_streams())
        try:
            await super().shutdown(sockets)
        finally:
            closing.cancel()

    async def _close_streams(self) -> None:
        await asyncio.sleep(self.STREAMS_GRACE)
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()


def uvicorn_config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, lifespan="on", timeout_graceful_shutdown=5, **options)


def serve(app: Any, host: str, port: int, **options: Any) -> None:
    """Serve `app` on host:port until Ctrl-C or SIGTERM; `options` go to `uvicorn.Config`."""
    # uvicorn's access log writes every request's query: a visit with ?token= must not put the token there
    # (a logger's filters outlive uvicorn's dictConfig, which replaces only its handlers)
    logging.getLogger("uvicorn.access").addFilter(TokenRedaction())
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it handled (as uvicorn.run hides)
        Uvicorn(uvicorn_config(app, host, port, **options)).run()
