"""Killing the server in the middle of a streamed answer loses nothing that was shown, and a restart resumes."""

from __future__ import annotations

import html
import re
import signal

import aiohttp
import pytest

from sidespin.transcript import parse
from tests.conftest import LONG_PROMPTS, free_port, server_process
from tests.live_page import LivePage
from tests.test_server import turn_id

pytestmark = pytest.mark.model



def words(text: str) -> list[str]:
    """Words only: the page shows rendered Markdown, the transcript keeps its source."""
    return re.findall(r"[A-Za-z0-9']+", text)


def source_words(markdown: str) -> list[str]:
    """The words of Markdown source as the page shows them: a code fence's language is a class, not text."""
    return words(re.sub(r"^[ \t]*(```|~~~)[^\n]*$", " ", markdown, flags=re.MULTILINE))


def shown_words(page_text: str) -> list[str]:
    """The words a page shows: a finished block's code fence is rendered (its language a class, not text), but the
    live answer's tail is its source as it streams, where an opening fence "```python" is text."""
    return words(re.sub(r"(```|~~~)[^\s`~]*", " ", page_text))


async def stream_until_long(session: aiohttp.ClientSession, url: str, cid: str, prompt: str) -> str:
    """Send the prompt and read the answer until 25 words have streamed ('' if it ended first)."""
    async with session.post(url + "/send", data={"cid": cid, "msg": prompt}) as response:
        tid = turn_id(await response.text())
    page = LivePage()
    async with session.get(url + "/stream", params={"tid": tid}) as response:
        event, data = "", []
        async for raw in response.content:  # one SSE event spans several `data:` lines
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line:
                if event == "done":
                    return ""
                page.apply("\n".join(data), event or "message")  # no `event:` line: a plain message
                shown = html.unescape(re.sub(r"<[^>]+>", " ", page.body()))
                if len(words(shown)) >= 25:
                    return shown
                event, data = "", []
    return ""


async def test_kill_mid_answer_keeps_a_parseable_transcript_and_a_restart_shows_it(tmp_path):
    data = tmp_path / "data"
    seen = ""
    # no tools: offered get_cat_fact, the 0.5B answers "Count from 1 to 300" with a short cat fact
    with server_process(data, port=free_port(), SIDESPIN_PLUGINS="false") as (url, process):
        async with aiohttp.ClientSession() as session:
            for prompt in LONG_PROMPTS:  # a short answer ends before it can be interrupted: ask again, elsewhere
                async with session.post(url + "/new") as response:
                    cid = str(response.url).rsplit("/", 1)[1]
                seen = await stream_until_long(session, url, cid, prompt)
                if seen:
                    break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert seen, "no answer streamed 25 words before ending"

    path = data / "conversations" / f"{cid}.md"
    transcript = parse(path.read_text(encoding="utf-8"))  # parses: nothing half-written
    saved = transcript.turns[-1].render()
    assert prompt in saved
    # everything shown before the last write window (50 ms, a few tokens) is on disk
    shown, saved_words = shown_words(seen)[:-6], source_words(saved)
    start = saved_words.index(shown[0], len(words(prompt)))
    assert saved_words[start:start + len(shown)] == shown

    with server_process(data, port=free_port()) as (url, _):
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{url}/c/{cid}") as response:
                page = html.unescape(re.sub(r"<[^>]+>", " ", await response.text()))
                assert response.status == 200
    assert prompt in page
    assert " ".join(shown[:8]) in " ".join(words(page))
