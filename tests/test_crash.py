"""Killing the server in the middle of a streamed answer loses nothing that was shown, and a restart resumes."""

from __future__ import annotations

import html
import re
import signal

import aiohttp
import pytest

from sidespin.transcript import parse
from tests.conftest import free_port, server_process
from tests.test_server import turn_id

pytestmark = pytest.mark.model


async def test_kill_mid_answer_keeps_a_parseable_transcript_and_a_restart_shows_it(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    seen = ""
    with server_process(data, port=port) as (url, process):
        async with aiohttp.ClientSession() as session:
            async with session.get(url + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.post(url + "/send", data={"cid": cid, "msg": "Tell me a long story about a ping pong ball."}) as r:
                tid = turn_id(await r.text())
            async with session.get(url + "/stream", params={"tid": tid}) as response:
                async for raw in response.content:
                    line = raw.decode()
                    match = re.search(rf'id="{tid}-body"[^>]*><p>([^<]*)', line)
                    if match and len(match.group(1)) > 150:
                        seen = html.unescape(match.group(1))
                        break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert seen, "the answer never streamed 150 characters before the kill"

    path = data / "conversations" / f"{cid}.md"
    transcript = parse(path.read_text(encoding="utf-8"))  # parses: nothing half-written
    saved = transcript.turns[-1].render()
    assert "Tell me a long story about a ping pong ball." in saved
    # everything shown before the last write window (50 ms, a few tokens) is on disk
    assert seen[:-60] in saved

    with server_process(data, port=free_port()) as (url, _):
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/c/{cid}") as response:
                page = await response.text()
    assert response.status == 200
    assert "Tell me a long story about a ping pong ball." in page
    assert seen[:40] in html.unescape(page)
