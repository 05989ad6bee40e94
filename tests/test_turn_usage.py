"""The rounds of a turn: the tokens they cost added up and written in its transcript, and the rounds read back apart
after a reload or an approval, as they were live."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.events import Usage
from sidespin.llm import Delta, TokenUsage
from sidespin.protocol import format_block
from sidespin.llm.llama import LlamaServer
from sidespin.tooluse import Decider
from sidespin.tooluse.conversation import Talk
from sidespin.tools import ToolCall, tool
from sidespin.transcript import parse
from sidespin.web.live import LiveTurn, TurnBoard
from tests.route_fake import FakeLlama, serving_llama
from tests.scripted import ScriptedBackend


@tool(read_only=True)
def lookup(city: str) -> str:
    """Looks a city up."""
    return f"{city}: 12 °C"


@tool
def send_note(text: str) -> str:
    """Sends a note (asks first)."""
    return f"sent: {text}"


def settings_in(tmp_path: Path):
    return load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json", tool_mode="xml")


async def played(engine: Engine, conversation, text: str | None, **play) -> LiveTurn:
    """One turn played as the page plays it (in the background, on a `TurnBoard`), once it is over."""
    live = TurnBoard(engine).start(conversation, text, **play)
    await live.wait(timeout=10)
    return live


def used(tokens_in: int, tokens_out: int) -> Delta:
    return Delta(finish_reason="stop", usage=TokenUsage(tokens_in, tokens_out))


async def test_the_rounds_of_a_turn_add_up_and_a_reload_shows_the_same(tmp_path: Path) -> None:
    backend = ScriptedBackend([
        ["Let me look.", format_block(ToolCall("lookup", {"city": "Lyon"})), used(300, 20)],
        ["Lyon has 12 °C.", used(340, 8)],
    ])
    backend.context_window = 4096
    async with Engine.open(settings_in(tmp_path), backend=backend, approval="auto") as engine:
        engine.registry.add(lookup)
        conversation = engine.conversation()
        live = await played(engine, conversation, "Weather in Lyon?")
        text = engine.store.read(conversation.id)
        reloaded = engine.store.load(conversation.id).record(0)
    assert live.record.usage == Usage(640, 28, 348, 4096)  # in and out added up; the context of the last round
    assert reloaded.usage == live.record.usage
    assert text.count('"usage"') == 1  # one note per answer, at its end
    assert live.record.usage.line() == "640 tokens in · 28 out · context 348 / 4,096 (8%)"


async def test_an_answer_that_goes_on_after_an_approval_adds_to_its_usage(tmp_path: Path) -> None:
    backend = ScriptedBackend([
        ["I will send it.", format_block(ToolCall("send_note", {"text": "milk"})), used(200, 12)],
        ["Sent.", used(230, 3)],
    ])
    async with Engine.open(settings_in(tmp_path), backend=backend, approval="ask") as engine:
        engine.registry.add(send_note)
        conversation = engine.conversation()
        first = await played(engine, conversation, "Send a note: milk")
        assert first.record.usage == Usage(200, 12, 212)
        decision = engine.decide(conversation, "ya", None)
        after = await played(engine, conversation, None, decisions=decision.ready)
        reloaded = engine.store.load(conversation.id).record(0)
    assert after.record.usage == Usage(430, 15, 233)  # the continuation starts from the answer as recorded
    assert reloaded.usage == after.record.usage


async def test_a_turn_resumed_after_an_approval_reads_its_rounds_apart(tmp_path: Path) -> None:
    # Round 1 looks up (runs at once); round 2, after its result, sends (asks a person); the turn resumes from the
    # file. What the model and the decision read back must keep the two answers apart: merged into one, a turn
    # reads as one round however many it made, and a decision that counts its rounds goes on calling.
    backend = ScriptedBackend([
        [format_block(ToolCall("lookup", {"city": "Lyon"}))],
        [format_block(ToolCall("send_note", {"text": "12 °C in Lyon"}))],
        ["Sent."],
    ])
    async with Engine.open(settings_in(tmp_path), backend=backend, approval="ask") as engine:
        engine.registry.add(lookup)
        engine.registry.add(send_note)
        conversation = engine.conversation()
        await played(engine, conversation, "Look Lyon up and send me a note of it.")
        await played(engine, conversation, None, decisions=engine.decide(conversation, "ya", None).ready)
        messages = engine.store.load(conversation.id).to_messages()
    assert [(m["role"], [c["function"]["name"] for c in m.get("tool_calls", [])]) for m in messages] == [
        ("user", []), ("assistant", ["lookup"]), ("tool", []), ("assistant", ["send_note"]), ("tool", []),
        ("assistant", [])]
    assert Talk(messages[:-1]).rounds == 2


async def test_a_backend_that_reports_no_usage_leaves_no_line(tmp_path: Path) -> None:
    async with Engine.open(settings_in(tmp_path), backend=ScriptedBackend([["Hi."]]), approval="auto") as engine:
        conversation = engine.conversation()
        events = [event async for event in engine.events(conversation, "hello")]
        text = engine.store.read(conversation.id)
    assert not any(isinstance(event, Usage) for event in events)
    assert "usage" not in text


def test_a_usage_note_edited_by_hand_into_nonsense_reads_as_zero_not_a_crash() -> None:
    text = ('💬: hi\n\n🤖:[m]\n\nHello.\n'
            '<!-- sidespin: {"usage":{"input":"many","output":-3,"context":12,"window":true}} -->\n\n💬:\n')
    assert parse(text).record(0).usage == Usage(0, 0, 12, None)


async def test_the_usage_note_follows_the_whole_answer_even_when_its_last_text_came_with_the_usage(
    tmp_path: Path,
) -> None:
    # The stream's last piece carries the closing fence and the counts at once; the fence is held back
    # (it could open a call) until the answer ends. The note must not land inside the code block.
    answer = "Here are the numbers:\n\n```\n1\n2\n3\n"
    backend = ScriptedBackend([[answer, Delta(text="```", finish_reason="stop", usage=TokenUsage(44, 28))]])
    async with Engine.open(settings_in(tmp_path), backend=backend, approval="auto") as engine:
        conversation = engine.conversation()
        live = await played(engine, conversation, "Count to 3.")
        text = engine.store.read(conversation.id)
        reloaded = engine.store.load(conversation.id).record(0)
    assert text.index("3\n```") < text.index('"usage"')
    assert (answer + "```") in text  # the code block is whole in the file
    assert reloaded.answer.text.strip() == live.record.answer.text.strip() == answer + "```"


class RoutedBackend(ScriptedBackend):
    """The scripted model on the route rung: its decider asks `llama` (a fake llama.cpp server on loopback)."""

    supports_routing = True
    llama: LlamaServer

    async def decider(self):
        return Decider(self.llama)


def route_settings(tmp_path: Path):
    return load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json", tool_mode="route")


async def test_a_routed_turn_counts_what_the_route_cost_with_its_answer(tmp_path: Path) -> None:
    backend = RoutedBackend([["Hello to you.", used(300, 20)],  # the route chose no tool: the model answers
                             ["It is 12 °C.", used(350, 6)]])    # after the routed call's result
    backend.context_window = 4096
    fake = FakeLlama({"Weather in Lyon?": [("lookup", {"city": "Lyon"})]}, name_tokens={"": [('lookup"', 0.9)]})
    async with serving_llama(fake) as (url, received):
        async with LlamaServer(url) as backend.llama:
            async with Engine.open(route_settings(tmp_path), backend=backend, approval="auto") as engine:
                engine.registry.add(lookup)
                conversation = engine.conversation()
                greeted = await played(engine, conversation, "Hello!")
                first = len(received)
                weather = await played(engine, conversation, "Weather in Lyon?")
                reloaded = engine.store.load(conversation.id).record(1)

    def cost(requests: list) -> tuple[int, int]:
        completions = [body for path, body in requests if path == "/completion"]
        return sum(len(b["prompt"]) for b in completions), len(completions)

    # the route's decision, then the answer in words: their tokens add up, the context is the answer's
    (decided, asked) = cost(received[:first])
    assert asked == 1 and greeted.record.usage == Usage(decided + 300, len("Hello") + 20, 320, 4096)
    # a routed call (whether, which: one look at the likeliest next tokens, does it fit, its arguments; not whether
    # another, for the message asks one thing), no decision after its result (one request, one round of calls), the
    # answer
    (routed, asked) = cost(received[first:])
    assert asked == 4 and weather.record.usage.input == routed + 350 and weather.record.usage.context == 356
    assert reloaded.usage == weather.record.usage


async def test_an_answer_stopped_before_its_count_came_shows_no_usage_not_the_route_alone(tmp_path: Path) -> None:
    words = [f"{n} " for n in range(1, 200)]
    backend = RoutedBackend([[*words, used(300, 199)]], delay=0.02)  # the count would come with the last piece
    async with serving_llama(FakeLlama({})) as (url, received):
        async with LlamaServer(url) as backend.llama:
            async with Engine.open(route_settings(tmp_path), backend=backend, approval="auto") as engine:
                board = TurnBoard(engine)
                conversation = engine.conversation()
                live = board.start(conversation, "Count for me")
                async with asyncio.timeout(10):
                    while "5 " not in live.record.answer.text:
                        await asyncio.sleep(0.01)
                board.stop(conversation.id)
                await live.wait(timeout=10)
                text = engine.store.read(conversation.id)
    assert [path for path, _ in received if path == "/completion"] == ["/completion"]  # the route did run
    assert "1 2 3 4 5" in live.record.answer.text and live.record.reason == "stopped"
    assert live.record.usage is None and '"usage"' not in text  # "… in · 1 out" would read as the answer's
