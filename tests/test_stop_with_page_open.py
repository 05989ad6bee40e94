"""Stopping the server (Ctrl-C) while a page is open: its live streams never end by themselves, yet the server
stops at once and cleanly, its shutdown run (the model's process ended), without a traceback."""

from __future__ import annotations

import asyncio
import signal

import aiohttp
import pytest

from tests.conftest import server_process

pytestmark = pytest.mark.model


async def open_streams(url: str) -> tuple[aiohttp.ClientSession, list[aiohttp.ClientResponse]]:
    session = aiohttp.ClientSession()
    streams = []
    for path in ("/pulse", "/logs-stream"):
        response = await session.get(url + path)
        assert response.status == 200  # the stream is open
        streams.append(response)
    return session, streams


def test_ctrl_c_with_a_page_open_stops_the_server_cleanly(tmp_path) -> None:
    data = tmp_path / "data"
    with server_process(data) as (url, process):
        loop = asyncio.new_event_loop()
        session, streams = loop.run_until_complete(open_streams(url))
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)  # before: it waited for the page to close, forever
        loop.run_until_complete(session.close())
        loop.close()
    output = next(data.glob("server-output-*.log")).read_text(encoding="utf-8")
    assert code == 0
    assert "Application shutdown complete" in output and "EMBEDDED_SERVER_STOP" in output
    assert "Traceback" not in output
