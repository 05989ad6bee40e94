"""The server log in the browser: the recent lines, then each new one as it is written.

    GET /logs          the page
    GET /logs-stream   SSE: each new line (`LogHub`, set up by the app's lifespan)
"""

from __future__ import annotations

import asyncio

from fasthtml.common import A, APIRouter, H1, Header, Main, Pre, Span, Title, sse_message
from starlette.requests import Request

from sidespin.logs import LogHub
from sidespin.web.sse import EventStream

__all__ = ["ar", "logs"]

ar = APIRouter()


@ar(methods=["get"])
async def logs(request: Request):
    return Title("sidespin · logs"), Main(
        Header(H1("Server log"), A("← chat", href="/")),
        Pre(*[line for line in request.app.state.log_hub.recent()], id="log", cls="log",
            hx_ext="sse", sse_connect=logs_stream.to(), sse_swap="line", hx_swap="beforeend"),
        cls="logs-page",
    )


@ar("/logs-stream", methods=["get"])
async def logs_stream(request: Request):
    hub: LogHub = request.app.state.log_hub

    async def lines():
        async with hub.subscribe() as queue:
            while not await request.is_disconnected():
                try:
                    line = await asyncio.wait_for(queue.get(), timeout=15)
                except asyncio.TimeoutError:
                    continue
                yield sse_message(Span(line), event="line")

    return EventStream(lines())
