"""The ladder: the route rung played through the rally, and how a rung is chosen, recorded and shown."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from sidespin.events import TextDelta, ToolFinished, ToolProposed
from sidespin.ladder import choose_rung
from sidespin.testing.scripted import ScriptedBackend
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.route import NONE, Router
from sidespin.tools import ToolRegistry, tool
from tests.conftest import serve_app


@tool(read_only=True)
def roll_dice(sides: int = 6, count: int = 1) -> dict:
    """Roll dice and report each roll and the total."""
    return {"rolls": [sides] * count, "total": sides * count}


@tool(read_only=True)
def get_time(timezone: str = "UTC") -> dict:
    """Get the current date and time in a time zone."""
    return {"timezone": timezone, "iso": "2026-11-23T12:00:00"}


class RoutedModel(ScriptedBackend):
    """A scripted model that also offers the route: `routes` maps a message to (tool or None, arguments)."""

    supports_routing = True

    def __init__(self, turns: list, routes: dict[str, tuple[str | None, dict[str, Any]]]) -> None:
        super().__init__(turns)
        self.routes = routes
        self.routed: list[str] = []

    async def router(self, tools: list) -> Router:
        async def render(messages: list[dict[str, str]]) -> str:
            return json.dumps(messages)

        async def complete(prompt: str, grammar: str | None, schema: dict | None, max_tokens: int) -> str:
            chat, _ = json.JSONDecoder().raw_decode(prompt)  # step 2 continues the prompt after the tool's name
            message = chat[-1]["content"].split("\n\n")[-1]
            tool_name, arguments = self.routes.get(message, (None, {}))
            if schema is None:
                self.routed.append(message)
                return tool_name or NONE
            return json.dumps(arguments)

        return Router(tools, complete, render)


async def test_the_route_calls_the_tool_and_the_model_answers_from_the_result_in_words():
    model = RoutedModel([["You rolled 20."]], {"roll a d20": ("roll_dice", {"sides": 20, "count": 1})})
    conversation = Conversation()
    events = [e async for e in chat_with_llm(conversation, "roll a d20", backend=model,
                                             registry=ToolRegistry([roll_dice, get_time]))]
    proposed = [e.call for e in events if isinstance(e, ToolProposed)]
    assert [(c.name, c.arguments) for c in proposed] == [("roll_dice", {"sides": 20, "count": 1})]
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == [{"rolls": [20], "total": 20}]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "You rolled 20."
    answered = model.calls[0]  # the one streamed answer: told the result, offered no tool, taught no block
    assert model.tools_seen == [[]] and model.grammars == [None]
    assert "the tool roll_dice answered" in answered[-1]["content"] and "mcp-request" not in json.dumps(answered)
    assert events[-1].reason == "done"


async def test_the_route_choosing_none_streams_a_plain_answer_without_the_teaching_prompt():
    model = RoutedModel([["Paris."]], {})
    events = [e async for e in chat_with_llm(Conversation(), "capital of France?", backend=model,
                                             registry=ToolRegistry([roll_dice]))]
    assert not [e for e in events if isinstance(e, ToolProposed)] and events[-1].text == "Paris."
    assert model.calls[0] == [{"role": "user", "content": "capital of France?"}] and model.grammars == [None]


async def test_a_probe_picks_the_route_when_it_decides_better_and_the_choice_is_recorded(tmp_path):
    routes = {"Throw one twelve-sided die for me.": ("roll_dice", {"sides": 12, "count": 1}),
              "What's the local time in Lima at the moment?": ("get_time", {"timezone": "America/Lima"})}
    model = RoutedModel([["I cannot do that."]] * 10, routes)
    registry = ToolRegistry([roll_dice, get_time])
    record = tmp_path / "ladder.json"
    rung = await choose_rung(model, registry, "auto", record)
    assert (rung.name, rung.source, rung.scores) == ("route", "probe", {"route": 4, "xml": 2})
    saved = json.loads(record.read_text())["scripted:scripted"]
    assert saved["rung"] == "route"
    again = await choose_rung(model, registry, "auto", record)  # a second load reads the record, probes nothing
    assert (again.name, again.source) == ("route", "record") and len(model.routed) == 4


async def test_the_configured_rung_wins_and_a_native_server_needs_no_probe(tmp_path):
    registry = ToolRegistry([roll_dice])
    assert (await choose_rung(RoutedModel([], {}), registry, "xml", tmp_path / "l.json")).source == "config"
    native = ScriptedBackend([], supports_tools=True)
    rung = await choose_rung(native, registry, "auto", tmp_path / "l.json")
    assert (rung.name, rung.source) == ("native", "server") and not (tmp_path / "l.json").exists()


async def test_health_shows_the_rung_and_where_it_came_from(data_dir):
    with serve_app(ScriptedBackend([]), data_dir) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/health") as response:
                health = await response.json()
    assert health["tool_rung"] == "xml" and health["tool_rung_source"] == "only"


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
    from sidespin.rally import TurnControl

    control = TurnControl(seconds=60, tokens=20)  # a whole call is held back, then the budget runs out
    model = ScriptedBackend([['{"name": "roll_dice", "arguments": {"sides": 20}}', "x" * 100]])
    events = [e async for e in chat_with_llm(Conversation(), "go", backend=model,
                                             registry=ToolRegistry([roll_dice]), control=control)]
    assert events[-1].reason == "limit" and not [e for e in events if isinstance(e, ToolProposed)]
    assert '{"name": "roll_dice"' in "".join(e.text for e in events if isinstance(e, TextDelta))
