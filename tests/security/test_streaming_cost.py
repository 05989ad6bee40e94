"""7. Streaming cost: an update carries what changed; a 1 MB answer costs a watcher about 1 MB, not 100."""

from __future__ import annotations

import asyncio
import html
import re

import aiohttp
from bs4 import BeautifulSoup

from sidespin.llm import Backend, Delta
from tests.conftest import serve_app
from tests.live_page import page_of
from tests.scripted import ScriptedBackend
from tests.test_server import read_stream, turn_id


class FastModel(Backend):
    """Streams its pieces as fast as the event loop lets it (a real backend awaits each read too)."""

    name = "fast"

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces

    async def stream(self, messages, **_):
        for piece in self.pieces:
            await asyncio.sleep(0)
            yield Delta(text=piece)


def long_answer() -> list[str]:
    """About 1 MB in 4-character pieces: paragraphs, a code block and one very long paragraph."""
    # nothing repeated over and over: that would be an answer in a loop, which is stopped (`sidespin.limits`)
    text = "".join(f"Paragraph {n}: " + "".join(f"ping pong{k} " for k in range(40)) + "\n\n" for n in range(2000))
    text += "```python\n" + "".join(f"print('a', {i % 50})\n" for i in range(3000)) + "```\n\n"
    text += "".join(f"word{i % 97} " for i in range(40_000))
    return [text[i:i + 4] for i in range(0, len(text), 4)]


async def test_a_one_megabyte_answer_costs_a_watcher_about_one_megabyte(data_dir):
    pieces = long_answer()
    answer = "".join(pieces)
    assert len(answer) > 1_000_000
    with serve_app(FastModel(pieces), data_dir, turn_tokens=10**7) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.post(base + "/send", data={"cid": cid, "msg": "a long one"}) as response:
                tid = turn_id(await response.text())
            events = await asyncio.wait_for(read_stream(session, base, tid), 120)
            late = await read_stream(session, base, tid)  # a watcher that (re)connects gets everything at once
    updates = [data for name, data in events if name != "done"]
    page = page_of(events)
    received = sum(len(data.encode()) for data in updates)
    assert len(updates) > 20, "the answer should have streamed in many updates"
    assert received < 3 * len(answer.encode()), f"{received} bytes sent for a {len(answer)}-character answer"
    shown = BeautifulSoup(page.body(), "html.parser").get_text()
    assert shown.count("ping pong") == 2000 * 40 and shown.count("print('a', ") == 3000
    assert shown.count("word") == 40_000 and "repeating itself" not in shown
    def squeezed(markup: str) -> str:
        return re.sub(r">\s+<", "><", markup)

    assert squeezed(page_of(late).body()) == squeezed(page.body())  # a redraw equals the sum of the updates


async def test_updates_after_the_first_do_not_repeat_the_answer(data_dir):
    pieces = [f"sentence {n}. " for n in range(400)]
    scripted = ScriptedBackend([pieces], delay=0.002)
    with serve_app(scripted, data_dir) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.post(base + "/send", data={"cid": cid, "msg": "count"}) as response:
                tid = turn_id(await response.text())
            events = await read_stream(session, base, tid)
    updates = [html.unescape(data) for name, data in events if name != "done"]
    assert len(updates) > 5
    everything = " ".join(updates)
    for n in range(400):  # each piece streamed once, then once more when the finished paragraph is rendered
        assert everything.count(f"sentence {n}. ") + everything.count(f"sentence {n}.<") <= 2, n
    assert all(len(update) < 4000 for update in updates[:-1])


async def test_a_streamed_thought_arrives_whole_and_each_piece_once(data_dir):
    from sidespin.llm import Delta as Piece

    pieces = [Piece(thinking=f"step {n}; ") for n in range(300)] + ["The answer is 42."]
    with serve_app(ScriptedBackend([pieces], delay=0.002), data_dir) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.post(base + "/send", data={"cid": cid, "msg": "think"}) as response:
                tid = turn_id(await response.text())
            events = await read_stream(session, base, tid)
    page = page_of(events)
    thought = page.find(f"{page.tid}-thought-0").get_text()
    assert thought == "".join(f"step {n}; " for n in range(300)).strip() and "The answer is 42." in page.body()
    updates = [data for name, data in events if name == "update"]
    # while it streams each piece is sent once; the last update redraws the thought as the transcript keeps it
    assert len(updates) > 3 and " ".join(updates[:-1]).count("step 150;") == 1
