"""6. Turns end: a wall-clock and a token cap for every backend, and a Stop that keeps what was said."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import aiohttp

from sidespin.events import ErrorNotice, TextDelta, ToolFinished, ToolStarted, TurnDone
from sidespin.limits import TurnControl
from sidespin.llm import Backend, Delta
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.tools import ToolCall, ToolRegistry, tool
from sidespin.transcript import parse
from tests.conftest import serve_app
from tests.live_page import page_of
from tests.scripted import ScriptedBackend
from tests.test_server import read_stream, turn_id


class EndlessBackend(Backend):
    """A model that never stops talking (one word every `pause` seconds)."""

    name = "endless"

    def __init__(self, pause: float = 0.01) -> None:
        self.pause = pause

    async def stream(self, messages: list[dict[str, Any]], **_: Any) -> AsyncIterator[Delta]:
        while True:
            await asyncio.sleep(self.pause)
            yield Delta(text="la ")


class SilentBackend(Backend):
    """A model that accepts the request and then never sends a byte."""

    name = "silent"

    async def stream(self, messages: list[dict[str, Any]], **_: Any) -> AsyncIterator[Delta]:
        await asyncio.Event().wait()
        yield Delta(text="never")


@tool
async def hang() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "never"


async def play(backend: Backend, options: RallyOptions, control: TurnControl | None = None,
               registry: ToolRegistry | None = None) -> list:
    conversation = Conversation()
    run = chat_with_llm(conversation, "sing", backend=backend, registry=registry or ToolRegistry([hang]),
                        options=options, control=control)
    return [event async for event in run]


async def test_a_model_that_never_ends_is_stopped_by_the_turn_clock():
    events = await asyncio.wait_for(play(EndlessBackend(), RallyOptions(turn_seconds=0.5, turn_tokens=10**6)), 10)
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "limit" and done.text.startswith("la la")
    assert any(isinstance(e, ErrorNotice) and "turn_seconds" in e.message for e in events)


async def test_a_model_that_never_answers_is_stopped_by_the_turn_clock():
    events = await asyncio.wait_for(play(SilentBackend(), RallyOptions(turn_seconds=0.3)), 10)
    assert events[-1].reason == "limit"


async def test_a_model_that_talks_too_much_is_stopped_by_the_token_cap():
    events = await asyncio.wait_for(play(EndlessBackend(pause=0), RallyOptions(turn_tokens=50)), 10)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert events[-1].reason == "limit" and text.count("la") == 50
    assert any(isinstance(e, ErrorNotice) and "turn_tokens" in e.message for e in events)


class LoopingBackend(Backend):
    """A model that begins a sentence, then writes one piece again and again (the 0.5B's "1000000…")."""

    name = "looping"

    def __init__(self, start: str, piece: str, pieces: int = 1000) -> None:
        self.start, self.piece, self.pieces, self.sent = start, piece, pieces, 0

    async def stream(self, messages: list[dict[str, Any]], **_: Any) -> AsyncIterator[Delta]:
        yield Delta(text=self.start)
        for _ in range(self.pieces):
            self.sent += 1
            yield Delta(text=self.piece)
        yield Delta(text=".", finish_reason="stop")


async def test_an_answer_that_repeats_one_piece_is_stopped_and_says_so():
    for start, piece in [("Die Datei budget.csv ist 1", "000"), ("Groceries:\n", "- bread\n")]:
        model = LoopingBackend(start, piece)
        events = await asyncio.wait_for(play(model, RallyOptions(turn_tokens=10**6)), 10)
        assert model.sent < 150, piece  # stopped near 300 characters, not written on to its end
        assert events[-1].reason == "limit" and events[-1].text.startswith(start + piece * 3)
        assert any(isinstance(e, ErrorNotice) and "repeating itself" in e.message for e in events)


async def test_an_answer_with_rules_tables_and_long_lists_is_not_taken_for_a_loop():
    table = "| month | amount |\n|---|---|\n" + "".join(f"| {m} | {n} |\n" for m, n in zip("ABCDEFGHIJKL", range(12)))
    text = "=" * 80 + "\n" + table + "".join(f"- item {i}\n" for i in range(60)) + "-" * 120 + "\nDone."
    events = await play(ScriptedBackend([[text]]), RallyOptions(turn_tokens=10**6))
    assert events[-1].reason == "done" and events[-1].text == text


async def test_stop_ends_a_streaming_answer_at_once_and_keeps_the_words():
    control = TurnControl(seconds=60, tokens=10**6)
    history: list = []
    events = []
    async for event in chat_with_llm(Conversation(), "sing", backend=EndlessBackend(), registry=ToolRegistry([hang]),
                                     history=history, control=control):
        events.append(event)
        if sum(isinstance(e, TextDelta) for e in events) == 5:
            control.stop()
    assert events[-1].reason == "stopped" and events[-1].text == "la " * 5
    assert history[-1] == {"role": "assistant", "content": "la " * 5}


async def test_stop_ends_a_hung_tool_and_the_model_reads_why():
    control = TurnControl(seconds=60, tokens=1000)
    backend = ScriptedBackend([[ToolCall("hang", {}, id="call_h")]], supports_tools=True)
    history: list = []
    events = []
    async for event in chat_with_llm(Conversation(), "wait", backend=backend, registry=ToolRegistry([hang]),
                                     history=history, control=control):
        events.append(event)
        if isinstance(event, ToolStarted):
            asyncio.get_running_loop().call_later(0.1, control.stop)
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished and "stopped" in finished[0].result.error and events[-1].reason == "stopped"
    assert history[-1]["role"] == "tool" and "did not complete" in history[-1]["content"]


async def test_the_stop_button_ends_a_running_answer_and_the_conversation_goes_on(data_dir):
    scripted = ScriptedBackend([["la "] * 100_000, ["Fine, stopping. "]], delay=0.005)
    with serve_app(scripted, data_dir, turn_tokens=10**6) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/") as response:
                cid = str(response.url).rsplit("/", 1)[1]
            async with session.post(base + "/send", data={"cid": cid, "msg": "sing forever"}) as response:
                fragment = await response.text()
            assert 'class="stop"' in fragment
            tid = turn_id(fragment)
            reading = asyncio.create_task(read_stream(session, base, tid))
            await asyncio.sleep(0.5)
            async with session.post(base + "/stop", data={"cid": cid}) as response:
                assert response.status == 200 and (await response.json())["stopped"] == [tid]
            page = page_of(await asyncio.wait_for(reading, 20))
            assert page.find(f"{page.tid}-state")["data-state"] == "done" and "stopped by you" in page.html()
            async with session.post(base + "/send", data={"cid": cid, "msg": "and now?"}) as response:
                tid2 = turn_id(await response.text())
            assert "Fine, stopping." in page_of(await read_stream(session, base, tid2)).body()
    transcript = parse((data_dir / "conversations" / f"{cid}.md").read_text())
    first = transcript.turns[0]
    assert first.stopped and "la la la" in "".join(s.raw for s in first.segments)
    assert transcript.turns[1].user == "and now?"


async def test_an_answer_cut_at_max_tokens_says_so():
    from sidespin.llm import Delta as Piece

    backend = ScriptedBackend([["la " * 3, Piece(finish_reason="length")]])
    events = [e async for e in chat_with_llm(Conversation(), "sing", backend=backend, registry=ToolRegistry([hang]))]
    assert any(isinstance(e, ErrorNotice) and "max_tokens" in e.message for e in events)
