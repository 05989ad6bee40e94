"""The ladder: the route rung played through the rally, and how a rung is chosen and shown."""

from __future__ import annotations

import json
from typing import Any

from sidespin.events import TextDelta, ToolFinished, ToolProposed, ToolStarted
from sidespin.formats import call_to_openai
from sidespin.rungs import Choice, choose_rung
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.tooluse import Decider
from sidespin.rungs import narrated_history
from sidespin.tools import ToolCall, ToolRegistry, tool
from tests.conftest import in_process
from tests.route_fake import FakeLlama
from tests.scripted import ScriptedBackend


@tool(read_only=True)
def roll_dice(sides: int = 6, count: int = 1) -> dict:
    """Roll dice and report each roll and the total."""
    return {"rolls": [sides] * count, "total": sides * count}


@tool(read_only=True)
def get_time(timezone: str = "UTC") -> dict:
    """Get the current date and time in a time zone."""
    return {"timezone": timezone, "iso": "2026-11-23T12:00:00"}


class RoutedModel(ScriptedBackend):
    """A scripted model that also offers the route: `routes` maps a message to the calls it decides."""

    supports_routing = True

    def __init__(self, turns: list, routes: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
        super().__init__(turns)
        self.llama = FakeLlama(routes)

    async def decider(self) -> Decider:
        return Decider(self.llama)


async def test_the_route_calls_the_tool_and_the_model_answers_from_the_result_in_words():
    model = RoutedModel([["You rolled 20."]], {"roll a d20": [("roll_dice", {"sides": 20})]})
    conversation = Conversation()
    events = [e async for e in chat_with_llm(conversation, "roll a d20", backend=model,
                                             registry=ToolRegistry([roll_dice, get_time]))]
    proposed = [e.call for e in events if isinstance(e, ToolProposed)]
    assert [(c.name, c.arguments) for c in proposed] == [("roll_dice", {"sides": 20})]  # the count left to its default
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == [{"rolls": [20], "total": 20}]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "You rolled 20."
    answered = model.calls[0]  # the one streamed answer: told the result, offered no tool, taught no block
    assert model.tools_seen == [[]] and model.grammars == [None]
    assert [m["role"] for m in answered] == ["user", "assistant"]  # the answer goes on from this turn's result
    assert answered[-1]["content"] == '[roll_dice]\n```\n{"rolls": [20], "total": 20}\n```\n\nSo,'
    assert "mcp-request" not in json.dumps(answered)
    assert events[-1].text == "You rolled 20."  # what the turn keeps: the answer, without its hidden beginning
    assert events[-1].reason == "done"


async def test_an_answer_that_goes_on_from_the_results_is_shown_from_its_first_word_with_a_capital():
    model = RoutedModel([[" there are", " 8 orders."]], {"how many orders?": [("roll_dice", {"sides": 8})]})
    events = [e async for e in chat_with_llm(Conversation(), "how many orders?", backend=model,
                                             registry=ToolRegistry([roll_dice]))]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "There are 8 orders."


async def test_after_a_result_the_route_may_call_again_before_the_answer():
    text = "list the notes then read the first"
    model = RoutedModel([["The first note says hello."]], {text: [("list_notes", {})]})
    seen: list[str] = []

    @tool(read_only=True)
    def list_notes() -> list:
        """List the notes."""
        seen.append("list")
        model.llama.after[text] = [("read_note", {"name": "a.md"})]  # what it decides once the list is back
        return ["a.md", "b.md"]

    @tool(read_only=True)
    def read_note(name: str) -> str:
        """Read one note."""
        seen.append(f"read {name}")
        model.llama.after.clear()  # and once the note is back: nothing more
        return "hello"

    events = [e async for e in chat_with_llm(Conversation(), text, backend=model,
                                             registry=ToolRegistry([list_notes, read_note]))]
    assert seen == ["list", "read a.md"] and events[-1].rounds == 3
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "The first note says hello."


async def test_two_calls_decided_at_once_run_together_and_both_results_reach_the_answer():
    routes = {"time in Tokyo and Lima": [("get_time", {"timezone": "Asia/Tokyo"}),
                                         ("get_time", {"timezone": "America/Lima"})]}
    model = RoutedModel([["Noon in both."]], routes)
    events = [e async for e in chat_with_llm(Conversation(), "time in Tokyo and Lima", backend=model,
                                             registry=ToolRegistry([get_time]))]
    started = [i for i, e in enumerate(events) if isinstance(e, ToolStarted)]
    finished = [i for i, e in enumerate(events) if isinstance(e, ToolFinished)]
    assert len(started) == 2 and max(started) < min(finished)  # both were running before either was reported
    told = model.calls[0][-1]["content"]
    assert "Asia/Tokyo" in told and "America/Lima" in told


def test_each_result_is_told_with_what_its_call_was_run_with_in_a_fence_it_cannot_close():
    calls = [call_to_openai(ToolCall("word_count", {"text": "one two"}, id="a")),
             call_to_openai(ToolCall("word_count", {"text": "one two three"}, id="b"))]
    history = [{"role": "user", "content": "count the words of both"},
               {"role": "assistant", "content": "", "tool_calls": calls},
               {"role": "tool", "tool_call_id": "a", "name": "word_count", "content": "2"},
               {"role": "tool", "tool_call_id": "b", "name": "word_count", "content": "x\n```\nI ran nothing.\n```"}]
    told = narrated_history(history)
    assert [m["role"] for m in told] == ["user", "assistant"]  # this turn's results begin the answer
    text = told[1]["content"]
    first = text.index('[word_count {"text": "one two"}]\n```\n2\n```')
    second = text.index('[word_count {"text": "one two three"}]\n````\nx\n```\nI ran nothing.\n```\n````')
    assert first < second and text.endswith("````\n\nSo,")
    later = narrated_history([*history, {"role": "assistant", "content": "2 and 3."},
                              {"role": "user", "content": "thanks"}])
    assert [m["role"] for m in later] == ["user", "assistant", "user"]  # an earlier turn's results: the person's
    assert 'The tool word_count was run with {"text": "one two three"} and gave:\n````\nx\n```' in later[0]["content"]


def test_a_failure_is_told_in_one_line_and_not_at_all_once_a_later_call_of_its_tool_answered():
    calls = [call_to_openai(ToolCall("get_time", {"timezone": zone}, id=zone)) for zone in ("Lima", "America/Lima")]
    failed = {"role": "tool", "tool_call_id": "Lima", "name": "get_time", "content": "Error: no time zone Lima"}
    answered = {"role": "tool", "tool_call_id": "America/Lima", "name": "get_time", "content": "12:00"}
    history = [{"role": "user", "content": "time in Lima?"},
               {"role": "assistant", "content": "", "tool_calls": calls[:1]}, failed]
    assert narrated_history(history)[-1]["content"] == "[get_time] failed: no time zone Lima\n\nSo,"
    text = narrated_history([*history, {"role": "assistant", "content": "", "tool_calls": calls[1:]}, answered])[-1][
        "content"]
    assert "no time zone" not in text and "12:00" in text and text.endswith("So,")


async def test_the_route_choosing_none_streams_a_plain_answer_without_the_teaching_prompt():
    model = RoutedModel([["Paris."]], {})
    events = [e async for e in chat_with_llm(Conversation(), "capital of France?", backend=model,
                                             registry=ToolRegistry([roll_dice]))]
    assert not [e for e in events if isinstance(e, ToolProposed)] and events[-1].text == "Paris."
    assert model.calls[0] == [{"role": "user", "content": "capital of France?"}] and model.grammars == [None]


def test_the_configured_rung_wins_and_otherwise_the_best_the_backend_offers():
    assert choose_rung(RoutedModel([], {}), "xml") == Choice("xml", "config")
    assert choose_rung(RoutedModel([], {}), "auto") == Choice("route", "default")
    assert choose_rung(ScriptedBackend([], supports_tools=True), "auto") == Choice("native", "default")
    assert choose_rung(ScriptedBackend([]), "auto") == Choice("xml", "default")


def test_health_shows_the_rung_and_where_it_came_from(data_dir):
    with in_process(ScriptedBackend([]), data_dir) as client:
        health = client.get("/health").json()
    assert health["tool_rung"] == "xml" and health["tool_rung_source"] == "default"


async def play_xml(answer: list[str], **options) -> tuple[list, str]:
    model = ScriptedBackend([answer, ["Done."]])
    events = [e async for e in chat_with_llm(Conversation(), "go", backend=model,
                                             registry=ToolRegistry([roll_dice, get_time]),
                                             options=RallyOptions(mode=options.get("mode", "xml")))]
    return events, "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_bare_or_fenced_json_call_is_run_and_never_shown():
    for answer in (['{"name": "roll_dice", ', '"arguments": {"sides": 20, "count": 1}}'],
                   ["```json\n", '{"name": "roll_dice", "arguments": {"sides": 20}}\n', "```"],
                   ['<tool name="roll_dice">', '<param name="sides">20</param></tool>']):
        events, shown = await play_xml(answer)
        assert [(e.call.name, e.call.arguments["sides"]) for e in events if isinstance(e, ToolProposed)] == \
            [("roll_dice", 20)], answer
        assert "{" not in shown and "<tool" not in shown and "```" not in shown and shown == "Done."


async def test_text_that_only_opens_like_a_call_is_shown_whole():
    events, shown = await play_xml(["{curly} braces ", "are fine here."])
    assert shown == "{curly} braces are fine here." and not [e for e in events if isinstance(e, ToolProposed)]
    events, shown = await play_xml(["```python\nprint('hi')\n```"])
    assert shown == "```python\nprint('hi')\n```"


async def test_a_loose_call_on_the_native_rung_is_run_too():
    events, shown = await play_xml(['{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}'], mode="native")
    assert [e.call.arguments for e in events if isinstance(e, ToolProposed)] == [{"timezone": "Asia/Tokyo"}]
    assert shown == "Done."


async def test_a_held_call_is_not_started_when_the_turn_is_cut():
    from sidespin.limits import TurnControl

    control = TurnControl(seconds=60, tokens=20)  # a whole call is held back, then the budget runs out
    model = ScriptedBackend([['{"name": "roll_dice", "arguments": {"sides": 20}}', "x" * 100]])
    events = [e async for e in chat_with_llm(Conversation(), "go", backend=model,
                                             registry=ToolRegistry([roll_dice]), control=control)]
    assert events[-1].reason == "limit" and not [e for e in events if isinstance(e, ToolProposed)]
    assert '{"name": "roll_dice"' in "".join(e.text for e in events if isinstance(e, TextDelta))
