"""The constrained router with a fake completion function (no model), its llama.cpp client against an
in-memory server, and the reader of calls written without the `<mcp-request>` block."""

from __future__ import annotations

import contextlib
import json
from typing import Any, AsyncIterator

import pytest
from aiohttp import web

from sidespin.errors import BackendError, MalformedToolCall
from sidespin.route import (
    NONE,
    Example,
    LlamaServer,
    Router,
    arguments_schema,
    decision_grammar,
    find_loose_call,
    parse_loose_call,
)
from sidespin.tools import tool
from tests.conftest import serving


@tool
def roll_dice(sides: int = 6, count: int = 1) -> dict:
    """Roll dice and report each roll and the total."""
    return {}


@tool
def get_cat_fact() -> dict:
    """Get a random fact about cats."""
    return {}


@tool
def get_time(timezone: str = "UTC") -> dict:
    """Get the current date and time in a time zone."""
    return {}


@tool
def search(query: str, tags: list[str] | None = None, limit: int | None = None) -> dict:
    """Search the notes."""
    return {}


TOOLS = [roll_dice, get_cat_fact, get_time, search]
EXAMPLES = (
    Example("roll 2d10", "roll_dice", {"sides": 10, "count": 2}),
    Example("hello there"),
    Example("a kitty fact please", "get_cat_fact"),
    Example("send an email to Ann", "send_email", {"to": "Ann"}),  # no such tool here
)


class FakeModel:
    """Answers completions from a script and records what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    async def render(self, messages: list[dict[str, str]]) -> str:
        return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in messages) + "<assistant>"

    async def complete(
        self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None, max_tokens: int
    ) -> str:
        self.asked.append({"prompt": prompt, "grammar": grammar, "json_schema": json_schema, "max_tokens": max_tokens})
        return self.answers.pop(0)


def router_for(model: FakeModel, tools: list = TOOLS) -> Router:
    return Router(tools, model.complete, model.render, examples=EXAMPLES)


def sentences_of(grammar: str) -> set[str]:
    """The literal alternatives of a one-rule grammar (all our decision grammar has)."""
    (rule,) = grammar.strip().splitlines()
    assert rule.startswith("root ::= ")
    return {json.loads(part.strip()) for part in rule.removeprefix("root ::= ").split(" | ")}


# ---------------------------------------------------------------- the decision


async def test_a_message_that_needs_no_tool_costs_one_completion_and_routes_to_none() -> None:
    model = FakeModel("none")
    assert await router_for(model).route("What is the capital of Peru?") is None
    assert len(model.asked) == 1
    assert sentences_of(model.asked[0]["grammar"]) == {"roll_dice", "get_cat_fact", "get_time", "search", NONE}
    assert model.asked[0]["json_schema"] is None


async def test_a_tool_with_parameters_gets_its_arguments_from_a_second_completion_under_its_schema() -> None:
    model = FakeModel("roll_dice", '{"sides": 20, "count": 3}')
    call = await router_for(model).route("Roll three d20s")
    assert call is not None and (call.name, call.arguments) == ("roll_dice", {"sides": 20, "count": 3})
    decision, arguments = model.asked
    assert arguments["grammar"] is None
    assert arguments["json_schema"] == arguments_schema(roll_dice)
    # the arguments continue the decision's own answer, so its whole prompt stays in llama.cpp's cache
    assert arguments["prompt"] == decision["prompt"] + "roll_dice "


async def test_a_tool_without_parameters_is_called_after_the_decision_alone() -> None:
    model = FakeModel("get_cat_fact")
    call = await router_for(model).route("Tell me something about cats")
    assert call is not None and (call.name, call.arguments) == ("get_cat_fact", {})
    assert len(model.asked) == 1


async def test_everything_before_the_message_is_the_same_text_on_every_call() -> None:
    model = FakeModel("none", "none")
    router = router_for(model)
    await router.route("first message")
    await router.route("a completely different second message")
    first, second = (asked["prompt"] for asked in model.asked)
    shared = first[: first.index("first message")]
    assert second.startswith(shared) and "<system>" in shared and "roll 2d10" in shared


async def test_worked_turns_answer_with_the_tool_name_and_json_arguments_or_none() -> None:
    model = FakeModel("none")
    await router_for(model).route("hi")
    prompt = model.asked[0]["prompt"]
    assert '<assistant>roll_dice {"sides": 10, "count": 2}</assistant>' in prompt
    assert "<assistant>get_cat_fact</assistant>" in prompt
    assert "<assistant>none</assistant>" in prompt


async def test_an_example_for_a_tool_that_is_not_offered_is_left_out_and_no_tool_examples_stay() -> None:
    model = FakeModel("none")
    await router_for(model, [get_cat_fact]).route("hi")
    prompt = model.asked[0]["prompt"]
    assert "send an email" not in prompt and "roll 2d10" not in prompt
    assert "a kitty fact please" in prompt and "hello there" in prompt
    assert sentences_of(model.asked[0]["grammar"]) == {"get_cat_fact", NONE}


def test_the_system_prompt_lists_each_tool_by_its_first_sentence_and_keeps_the_rest_for_its_arguments() -> None:
    @tool
    def lookup(sql: str) -> list:
        """Query the shop database, e.g. for orders. Tables: users and orders.

        Args:
            sql: one SELECT statement
        """
        return []

    system = router_for(FakeModel(), [get_cat_fact, lookup]).system_prompt()
    tools, arguments = system.split("\nArguments:\n")
    assert "- get_cat_fact: Get a random fact about cats.\n" in tools
    assert "- lookup: Query the shop database, e.g. for orders.\n" in tools and "Tables" not in tools
    assert f"- {NONE}: no tool." in tools
    assert arguments == "- lookup: Tables: users and orders. sql (string, one SELECT statement)."


async def test_earlier_turns_are_given_as_context_in_the_last_message_only() -> None:
    model = FakeModel("get_time", '{"timezone": "America/Lima"}')
    history = [
        {"role": "user", "content": "What time is it in Tokyo?"},
        {"role": "assistant", "content": "It is 9:00 in Tokyo."},
        {"role": "tool", "content": "{...}"},
    ]
    call = await router_for(model).route("and in Lima?", history)
    assert call is not None and call.arguments == {"timezone": "America/Lima"}
    last_user = model.asked[0]["prompt"].rsplit("<user>", 1)[1]
    assert "user: What time is it in Tokyo?" in last_user and "assistant: It is 9:00 in Tokyo." in last_user
    assert last_user.index("Tokyo") < last_user.index("and in Lima?")
    assert "{...}" not in model.asked[0]["prompt"]


async def test_a_decision_that_names_no_tool_raises_malformed_tool_call() -> None:
    with pytest.raises(MalformedToolCall, match="no tool"):
        await router_for(FakeModel("send_email")).route("mail Ann")


async def test_arguments_cut_off_by_the_token_limit_raise_malformed_tool_call() -> None:
    model = FakeModel("roll_dice", '{"sides": 20, "count": 9999999')
    with pytest.raises(MalformedToolCall, match="cut off") as caught:
        await router_for(model).route("roll a lot")
    assert caught.value.raw.startswith('{"sides"')


async def test_arguments_that_do_not_fit_the_tool_raise_malformed_tool_call() -> None:
    with pytest.raises(MalformedToolCall, match="whole number"):
        await router_for(FakeModel("roll_dice", '{"sides": "many", "count": 1}')).route("roll")


def test_a_tool_named_none_is_left_out_of_the_choices() -> None:
    @tool(name="none")
    def nothing() -> str:
        """Does nothing."""
        return ""

    router = router_for(FakeModel(), [nothing, get_cat_fact])
    assert sentences_of(router.grammar) == {"get_cat_fact", NONE}


def test_the_decision_grammar_escapes_quotes_and_backslashes_in_names() -> None:
    assert sentences_of(decision_grammar(['we"ird\\name'])) == {'we"ird\\name', NONE}


# ---------------------------------------------------------------- the arguments schema


def test_strings_integers_and_arrays_of_the_arguments_schema_are_bounded() -> None:
    schema = arguments_schema(search, max_string=120)
    query, tags, limit = (schema["properties"][name] for name in ("query", "tags", "limit"))
    assert query == {"type": "string", "minLength": 1, "maxLength": 120}
    assert tags["type"] == "array" and tags["maxItems"] <= 8 and tags["items"]["maxLength"] == 120
    assert limit["type"] == "integer" and -10**7 < limit["minimum"] and limit["maximum"] < 10**7
    assert schema["additionalProperties"] is False


def test_optional_properties_with_a_default_become_required_and_the_others_stay_optional() -> None:
    assert arguments_schema(roll_dice)["required"] == ["sides", "count"]
    assert arguments_schema(search)["required"] == ["query"]  # tags and limit default to None: no default kept
    assert "required" not in arguments_schema(get_cat_fact)


def test_the_tools_own_bounds_and_enums_are_kept() -> None:
    @tool
    def paint(color: str, size: int) -> str:
        """Paint."""
        return ""

    paint.input_schema["properties"]["color"] = {"type": "string", "enum": ["red", "blue"]}
    paint.input_schema["properties"]["size"] = {"type": "integer", "minimum": 1, "maximum": 5}
    properties = arguments_schema(paint)["properties"]
    assert properties["color"] == {"enum": ["red", "blue"]}
    assert properties["size"] == {"type": "integer", "minimum": 1, "maximum": 5}


# ---------------------------------------------------------------- llama.cpp's endpoints


@contextlib.asynccontextmanager
async def fake_llama(answers: list[str]) -> AsyncIterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A loopback server with llama.cpp's /apply-template and /completion; yields its URL and the requests."""
    received: list[tuple[str, dict[str, Any]]] = []

    async def apply_template(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/apply-template", {**body, "auth": request.headers.get("Authorization")}))
        return web.json_response({"prompt": "|".join(m["content"] for m in body["messages"]) + "|"})

    async def completion(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/completion", body))
        if not answers:
            return web.json_response({"error": {"code": 500, "message": "no answer scripted"}}, status=500)
        content = answers.pop(0)
        return web.json_response({"content": content, "timings": {"cache_n": 7, "prompt_n": 2},
                                  "tokens_evaluated": len(body["prompt"]), "tokens_predicted": len(content)})

    app = web.Application()
    app.router.add_post("/apply-template", apply_template)
    app.router.add_post("/completion", completion)
    async with serving(app) as url:
        yield url, received


async def test_the_llama_server_client_sends_grammar_schema_and_cache_prompt_and_renders_with_the_template() -> None:
    async with fake_llama(["roll_dice", '{"sides": 8, "count": 2}']) as (url, received):
        async with LlamaServer(url + "/v1", api_key="k3y") as server:
            call = await Router(TOOLS, server.complete, server.render, examples=()).route("roll 2d8")
            assert server.last_timings == {"cache_n": 7, "prompt_n": 2}
    assert call is not None and call.arguments == {"sides": 8, "count": 2}
    paths = [path for path, _ in received]
    assert paths == ["/apply-template", "/completion", "/completion"]
    template, decision, arguments = (body for _, body in received)
    assert template["auth"] == "Bearer k3y" and template["messages"][-1] == {"role": "user", "content": "roll 2d8"}
    assert decision["prompt"].endswith("roll 2d8|") and decision["cache_prompt"] is True
    assert decision["temperature"] == 0 and "json_schema" not in decision
    assert sentences_of(decision["grammar"]) == {t.name for t in TOOLS} | {NONE}
    assert arguments["json_schema"] == arguments_schema(roll_dice) and "grammar" not in arguments
    assert arguments["prompt"] == decision["prompt"] + "roll_dice " and arguments["n_predict"] > 0


async def test_what_the_route_costs_is_counted_per_turn_even_when_turns_route_at_once() -> None:
    import asyncio

    from sidespin.route import counting

    async with fake_llama(["none", "none", "roll_dice", '{"sides": 8, "count": 2}']) as (url, received):
        async with LlamaServer(url) as server:
            router = Router(TOOLS, server.complete, server.render, examples=())

            async def turn(text: str) -> list[tuple[int, int]]:
                with counting() as spent:
                    await router.route(text)
                return spent

            short, long = await asyncio.gather(turn("hi"), turn("a much longer message than the other one"))
            rolled = await turn("roll 2d8")
    prompts = sorted(len(body["prompt"]) for path, body in received[:4] if path == "/completion")
    assert short == [(prompts[0], len("none"))] and long == [(prompts[1], len("none"))]  # each its own
    decision, arguments = (body for _, body in received[-2:])
    assert rolled == [(len(decision["prompt"]), len("roll_dice")),
                      (len(arguments["prompt"]), len('{"sides": 8, "count": 2}'))]  # decision and arguments


async def test_an_error_answer_from_llama_cpp_becomes_a_backend_error_that_names_its_status() -> None:
    async with fake_llama([]) as (url, _):
        async with LlamaServer(url) as server:
            with pytest.raises(BackendError, match="HTTP 500.*no answer scripted"):
                await server.complete("prompt", None, None, 4)


async def test_the_llama_server_client_must_be_opened_before_use() -> None:
    with pytest.raises(BackendError, match="not open"):
        await LlamaServer("http://127.0.0.1:9").render([])


# ---------------------------------------------------------------- calls written without the block


def test_a_bare_json_call_is_read_as_a_call() -> None:
    call = parse_loose_call('{"name": "roll_dice", "arguments": {"sides": "20", "count": 2}}', TOOLS)
    assert call is not None and (call.name, call.arguments) == ("roll_dice", {"sides": 20, "count": 2})


def test_a_fenced_json_call_is_read_and_its_span_covers_the_fence() -> None:
    text = 'Sure!\n```json\n{"name": "get_time", "parameters": {"timezone": "Asia/Tokyo"}}\n```\nDone.'
    found = find_loose_call(text, TOOLS)
    assert found is not None and found.call.arguments == {"timezone": "Asia/Tokyo"}
    assert text[: found.start] == "Sure!\n" and text[found.end :] == "\nDone."


def test_a_tool_element_without_its_wrapper_is_read_with_its_params() -> None:
    text = 'Let me check.\n<tool name="get_time" />\n<param name="timezone">Europe/Paris</param>\nOne moment.'
    found = find_loose_call(text, TOOLS)
    assert found is not None and (found.call.name, found.call.arguments) == ("get_time", {"timezone": "Europe/Paris"})
    assert text[found.start : found.end].endswith("</param>") and text[found.end :] == "\nOne moment."


def test_params_written_as_self_closing_tags_with_a_value_attribute_are_read() -> None:
    text = '<tool name="roll_dice" />\n<param name="sides" value="8" />\n<param name="count" value="3" />\n<tool name="x" />'
    found = find_loose_call(text, TOOLS)
    assert found is not None and found.call.arguments == {"sides": 8, "count": 3}
    assert text[found.end :] == "\n<tool name=\"x\" />"


def test_openai_shaped_python_literal_and_tagged_calls_are_read() -> None:
    openai = '{"type": "function", "function": {"name": "roll_dice", "arguments": "{\\"count\\": 4}"}}'
    assert parse_loose_call(openai, TOOLS).arguments == {"count": 4}
    python = "{'name': 'get_cat_fact', 'arguments': {}}"
    assert parse_loose_call(python, TOOLS).name == "get_cat_fact"
    tagged = '<tool_call>\n{"name": "get_cat_fact", "arguments": {}}\n</tool_call>'
    found = find_loose_call(tagged, TOOLS)
    assert found is not None and (found.start, found.end) == (0, len(tagged))


def test_json_and_text_that_name_no_registered_tool_are_not_calls() -> None:
    assert parse_loose_call('{"name": "World"}', TOOLS) is None
    assert parse_loose_call('{"name": "send_email", "arguments": {"to": "Ann"}}', TOOLS) is None
    assert parse_loose_call("You could use roll_dice for that, or {braces} in code.", TOOLS) is None
    assert parse_loose_call("function f() { return get_time(); }", TOOLS) is None


def test_arguments_written_for_a_tool_that_takes_none_are_ignored() -> None:
    text = '{"name": "get_cat_fact", "arguments": {"type": "object", "properties": {}}}'
    assert parse_loose_call(text, TOOLS).arguments == {}


def test_a_loose_call_with_arguments_that_do_not_fit_raises_malformed_tool_call() -> None:
    with pytest.raises(MalformedToolCall, match="unknown argument"):
        parse_loose_call('{"name": "roll_dice", "arguments": {"faces": 6}}', TOOLS)


def test_the_first_of_two_loose_calls_is_the_one_read() -> None:
    text = '<tool name="get_cat_fact" /> and then {"name": "roll_dice", "arguments": {}}'
    assert parse_loose_call(text, TOOLS).name == "get_cat_fact"
