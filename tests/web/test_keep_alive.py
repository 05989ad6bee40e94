"""An idle live stream is kept open by keep-alive comments (sse-starlette) that the page's SSE extension ignores."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from sidespin.web import sse
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend


async def test_an_idle_pulse_stream_gets_keep_alive_comments_between_its_beats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sse, "PING", 0.2)  # the pulse itself beats every 10 s: anything sooner is the keep-alive
    with serve_app(ScriptedBackend([]), tmp_path / "data") as base:
        async with aiohttp.ClientSession() as session, session.get(base + "/pulse") as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            lines: list[str] = []

            async def read() -> None:
                while sum(line.startswith(":") for line in lines) < 2:
                    lines.append((await response.content.readline()).decode().rstrip("\r\n"))

            await asyncio.wait_for(read(), timeout=30)
    assert lines[0] == "event: pulse"  # the beat the status dot listens to comes first, as before
    comments = [line for line in lines if line.startswith(":")]
    assert len(comments) == 2 and all(not line.startswith("event:") for line in lines[2:] if line)
