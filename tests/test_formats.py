"""Provider formats: round trips on examples taken from each provider's documentation."""

from __future__ import annotations

import json
from typing import Any

from sidespin.formats import (
    MALFORMED,
    call_from_anthropic,
    call_from_ollama,
    call_from_openai,
    call_to_anthropic,
    call_to_ollama,
    call_to_openai,
    mcp_tool,
    parse_arguments,
    to_anthropic_messages,
    to_anthropic_tool,
    to_ollama_messages,
    to_ollama_tool,
    to_openai_messages,
    to_openai_tool,
    tool_message,
)
from sidespin.tools import ToolCall, ToolResult, tool

# MCP specification, "Listing Tools" response.
MCP_WEATHER = {
    "name": "get_weather",
    "title": "Weather Information Provider",
    "description": "Get current weather information for a location",
    "inputSchema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name or zip code"}},
        "required": ["location"],
    },
}

# OpenAI function-calling guide.
OPENAI_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City and country e.g. Bogotá, Colombia"}},
            "required": ["location"],
            "additionalProperties": False,
        },
    },
}

# Anthropic tool-use docs.
ANTHROPIC_WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a given location",
    "input_schema": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "The unit of temperature"},
        },
        "required": ["location"],
    },
}

# Ollama API docs, "Chat request (Streaming with tools)".
OLLAMA_WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather in a given city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city to get the weather for"}},
            "required": ["city"],
        },
    },
}


def mcp_core(spec: dict[str, Any]) -> dict[str, Any]:
    """The fields every provider can carry (MCP's `title` and annotations have no equivalent)."""
    return {key: spec[key] for key in ("name", "description", "inputSchema") if key in spec}


# ---------------------------------------------------------------- tools


def test_an_mcp_tool_keeps_its_name_description_and_schema_for_every_provider() -> None:
    core = mcp_core(MCP_WEATHER)
    function = {"name": core["name"], "description": core["description"], "parameters": core["inputSchema"]}
    assert mcp_tool(MCP_WEATHER) == core
    assert to_openai_tool(MCP_WEATHER) == {"type": "function", "function": function}
    assert to_anthropic_tool(MCP_WEATHER) == {"name": core["name"], "description": core["description"], "input_schema": core["inputSchema"]}
    assert to_ollama_tool(MCP_WEATHER) == {"type": "function", "function": function}


def test_the_documented_provider_tools_come_out_exactly() -> None:
    def mcp_of(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "description": description, "inputSchema": schema}

    for spec, convert in ((OPENAI_WEATHER, to_openai_tool), (OLLAMA_WEATHER, to_ollama_tool)):
        function = spec["function"]
        assert convert(mcp_of(function["name"], function["description"], function["parameters"])) == spec
    anthropic = ANTHROPIC_WEATHER
    assert to_anthropic_tool(mcp_of(anthropic["name"], anthropic["description"], anthropic["input_schema"])) == anthropic
    assert to_anthropic_tool(ANTHROPIC_WEATHER) == ANTHROPIC_WEATHER  # an Anthropic-shaped dict is read too


def test_each_provider_names_the_schema_its_own_way() -> None:
    assert to_openai_tool(MCP_WEATHER)["function"]["parameters"] == MCP_WEATHER["inputSchema"]
    assert to_anthropic_tool(MCP_WEATHER)["input_schema"] == MCP_WEATHER["inputSchema"]
    assert to_ollama_tool(MCP_WEATHER) == to_openai_tool(MCP_WEATHER)


def test_a_plugin_tool_converts_like_its_mcp_description() -> None:
    @tool
    def get_weather(location: str) -> str:
        """Get current weather information for a location.

        Args:
            location: City name or zip code
        """
        return "sunny"

    assert mcp_tool(get_weather) == {
        "name": "get_weather",
        "description": "Get current weather information for a location.",
        "inputSchema": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City name or zip code"}},
            "additionalProperties": False,
            "required": ["location"],
        },
    }
    assert to_anthropic_tool(get_weather)["input_schema"] == get_weather.input_schema


def test_a_tool_without_parameters_still_has_an_object_schema() -> None:
    assert to_openai_tool({"name": "get_cat_fact"})["function"]["parameters"] == {"type": "object", "properties": {}}


# ---------------------------------------------------------------- tool calls


def test_openai_tool_call_round_trips() -> None:
    item = {"id": "call_12345xyz", "type": "function", "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'}}
    call = call_from_openai(item)
    assert call == ToolCall("get_weather", {"location": "Paris, France"}, id="call_12345xyz")
    back = call_to_openai(call)
    assert back["id"] == item["id"] and back["type"] == "function" and back["function"]["name"] == "get_weather"
    assert json.loads(back["function"]["arguments"]) == {"location": "Paris, France"}
    assert call_from_openai(back) == call


def test_an_openai_call_without_arguments_or_id_still_reads() -> None:
    for arguments in (None, "", {}):
        call = call_from_openai({"function": {"name": "get_cat_fact", "arguments": arguments}})
        assert call.name == "get_cat_fact" and call.arguments == {} and call.id.startswith("call_")
    already = {"location": "Paris"}
    call = call_from_openai({"id": "c1", "function": {"name": "get_weather", "arguments": already}})
    assert call.arguments == already and call.arguments is not already


def test_unreadable_arguments_are_kept_for_the_report() -> None:
    assert parse_arguments('{"location": "Par') == {MALFORMED: '{"location": "Par'}
    assert parse_arguments("[1, 2]") == {MALFORMED: "[1, 2]"}
    assert parse_arguments("") == {}
    item = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "Par'}}
    call = call_from_openai(item)
    assert call == ToolCall("get_weather", {MALFORMED: '{"location": "Par'}, id="call_1")
    assert call_to_openai(call) == item  # given back exactly as the model wrote it
    assert call_from_openai({"id": "c", "function": {"name": "x", "arguments": "[1, 2]"}}).arguments == {MALFORMED: "[1, 2]"}


def test_ollama_tool_calls_read_and_write() -> None:
    item = OLLAMA_CONVERSATION[1]["tool_calls"][0]
    call = call_from_ollama(item)
    assert call.name == "get_temperature" and call.arguments == {"city": "Toronto"} and call.id.startswith("call_")
    assert call_to_ollama(call) == item


def test_anthropic_tool_use_blocks_read_and_write() -> None:
    block = ANTHROPIC_CONVERSATION[1]["content"][1]
    call = call_from_anthropic(block)
    assert call == ToolCall("get_weather", {"location": "San Francisco, CA", "unit": "celsius"}, id="toolu_01A09q90qw90lq917835lq9")
    assert call_to_anthropic(call) == block
    streamed = call_from_anthropic({"id": "toolu_1", "name": "get_weather", "input": '{"location": "Paris"}'})
    assert streamed == ToolCall("get_weather", {"location": "Paris"}, id="toolu_1")
    assert call_from_anthropic({"id": "toolu_2", "name": "x", "input": '{"loc'}).arguments == {MALFORMED: '{"loc'}


def test_a_result_goes_back_as_a_tool_message() -> None:
    call = ToolCall("get_weather", {"location": "Paris"}, id="call_1")
    assert tool_message(ToolResult(call, output="14")) == {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "14"}
    failed = tool_message(ToolResult(call, error="no such city"))
    assert failed["tool_call_id"] == "call_1" and failed["content"] == ToolResult(call, error="no such city").text()


# ---------------------------------------------------------------- messages

# OpenAI function-calling guide: the question, the model's call, the result, the answer.
OPENAI_CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather like in Paris today?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_12345xyz", "type": "function", "function": {"name": "get_weather", "arguments": '{"location":"Paris, France"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_12345xyz", "content": "14"},
    {"role": "assistant", "content": "The current temperature in Paris is 14°C (57.2°F)."},
]

# Anthropic tool-use docs: the call with its thinking text, then the result in a user turn.
ANTHROPIC_CONVERSATION = [
    {"role": "user", "content": "What's the weather like in San Francisco?"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I need to use get_weather, and the user wants SF, which is likely San Francisco, CA."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "San Francisco, CA", "unit": "celsius"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees"}]},
]

# Ollama API docs, "Chat request (With history, with tools)".
OLLAMA_CONVERSATION = [
    {"role": "user", "content": "what is the weather in Toronto?"},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_temperature", "arguments": {"city": "Toronto"}}}]},
    {"role": "tool", "content": "11 degrees celsius", "tool_name": "get_temperature"},
]


# The OpenAI-shaped history sidespin keeps for ANTHROPIC_CONVERSATION and OLLAMA_CONVERSATION.
OPENAI_OF_ANTHROPIC = [
    {"role": "user", "content": "What's the weather like in San Francisco?"},
    {
        "role": "assistant",
        "content": "I need to use get_weather, and the user wants SF, which is likely San Francisco, CA.",
        "tool_calls": [
            {
                "id": "toolu_01A09q90qw90lq917835lq9",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": "San Francisco, CA", "unit": "celsius"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "content": "15 degrees"},
]

OPENAI_OF_OLLAMA = [
    {"role": "user", "content": "what is the weather in Toronto?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_temperature", "arguments": '{"city": "Toronto"}'}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "11 degrees celsius"},
]


def test_openai_messages_become_anthropic_ones() -> None:
    system, anthropic = to_anthropic_messages(OPENAI_CONVERSATION)
    assert system == "You are a helpful assistant."
    assert anthropic == [
        {"role": "user", "content": "What's the weather like in Paris today?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_12345xyz", "name": "get_weather", "input": {"location": "Paris, France"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_12345xyz", "content": "14"}]},
        {"role": "assistant", "content": "The current temperature in Paris is 14°C (57.2°F)."},
    ]


def test_text_and_a_call_in_one_turn_give_the_documented_anthropic_turns() -> None:
    assert to_anthropic_messages(OPENAI_OF_ANTHROPIC) == ("", ANTHROPIC_CONVERSATION)


def test_several_results_and_the_next_question_share_one_user_turn() -> None:
    messages = [
        {"role": "user", "content": "Weather in Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "Paris"}'}},
                {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "Tokyo"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "14"},
        {"role": "tool", "tool_call_id": "call_b", "content": "21"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    _, anthropic = to_anthropic_messages(messages)
    assert anthropic == [
        {"role": "user", "content": "Weather in Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_a", "name": "get_weather", "input": {"location": "Paris"}},
                {"type": "tool_use", "id": "call_b", "name": "get_weather", "input": {"location": "Tokyo"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "14"},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "21"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]


def test_openai_messages_become_ollama_ones() -> None:
    ollama = to_ollama_messages(OPENAI_CONVERSATION)
    assert ollama == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather like in Paris today?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"location": "Paris, France"}}}]},
        {"role": "tool", "content": "14", "tool_name": "get_weather"},
        {"role": "assistant", "content": "The current temperature in Paris is 14°C (57.2°F)."},
    ]


def test_a_history_gives_the_documented_ollama_messages() -> None:
    assert to_ollama_messages(OPENAI_OF_OLLAMA) == OLLAMA_CONVERSATION


def test_each_ollama_result_is_named_by_the_tool_of_its_call() -> None:
    def item(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}

    messages = [
        {"role": "user", "content": "two dice and the time"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [item("a", "roll_dice", {"sides": 6}), item("b", "get_time", {"timezone": "UTC"}), item("c", "roll_dice", {"sides": 20})],
        },
        {"role": "tool", "tool_call_id": "b", "content": "12:00"},
        {"role": "tool", "tool_call_id": "a", "content": "4"},
        {"role": "tool", "tool_call_id": "c", "content": "17"},
    ]
    ollama = to_ollama_messages(messages)
    assert [call["function"] for call in ollama[1]["tool_calls"]] == [
        {"name": "roll_dice", "arguments": {"sides": 6}},
        {"name": "get_time", "arguments": {"timezone": "UTC"}},
        {"name": "roll_dice", "arguments": {"sides": 20}},
    ]
    assert [(m["tool_name"], m["content"]) for m in ollama[2:]] == [("get_time", "12:00"), ("roll_dice", "4"), ("roll_dice", "17")]


# ---------------------------------------------------------------- images a tool returned

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SNAP = ToolCall("snapshot", {}, "call_s")
SNAP_RESULT = ToolResult(SNAP, output="a page\n[image: image/png, 70 bytes]", attachments=[
    {"type": "image", "mimeType": "image/png", "data": PIXEL},
    {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},  # no backend here hears sound
])
ASKED = {"role": "user", "content": "what is on the page?"}
CALLED = {"role": "assistant", "content": "", "tool_calls": [call_to_openai(SNAP)]}
PLAIN_TOOL_MESSAGE = {"role": "tool", "tool_call_id": "call_s", "name": "snapshot",
                      "content": "a page\n[image: image/png, 70 bytes]"}


def image_history() -> list[dict[str, Any]]:
    return [ASKED, CALLED, tool_message(SNAP_RESULT)]


def test_a_tool_message_carries_only_the_images_of_a_result() -> None:
    message = tool_message(SNAP_RESULT)
    assert message["attachments"] == [{"type": "image", "mimeType": "image/png", "data": PIXEL}]
    assert "attachments" not in tool_message(ToolResult(SNAP, output="text only"))


def test_a_model_without_vision_gets_the_placeholder_and_never_the_base64() -> None:
    openai = to_openai_messages(image_history())
    assert openai == [ASKED, CALLED, PLAIN_TOOL_MESSAGE]
    ollama = to_ollama_messages(image_history())
    assert ollama[-1] == {"role": "tool", "content": PLAIN_TOOL_MESSAGE["content"], "tool_name": "snapshot"}
    _, anthropic = to_anthropic_messages(image_history())
    assert anthropic[-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_s", "content": PLAIN_TOOL_MESSAGE["content"]}]}
    for wire in (openai, ollama, anthropic):
        assert PIXEL not in json.dumps(wire) and "UklGRg" not in json.dumps(wire)


def test_openai_with_vision_gets_the_images_in_a_user_message_after_the_results() -> None:
    other = ToolCall("clock", {}, "call_c")
    history = [ASKED, {"role": "assistant", "content": "", "tool_calls": [call_to_openai(SNAP), call_to_openai(other)]},
               tool_message(SNAP_RESULT), tool_message(ToolResult(other, output="noon")),
               {"role": "assistant", "content": "A red pixel, at noon."}]
    assert to_openai_messages(history, images=True) == [
        history[0], history[1], PLAIN_TOOL_MESSAGE,
        {"role": "tool", "tool_call_id": "call_c", "name": "clock", "content": "noon"},
        {"role": "user", "content": [  # after every result: nothing may come between a call and its result
            {"type": "text", "text": "What snapshot returned:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PIXEL}},
        ]},
        history[-1],
    ]


def test_ollama_with_vision_gets_the_images_on_the_tool_message() -> None:
    assert to_ollama_messages(image_history(), images=True)[-1] == {
        "role": "tool", "content": PLAIN_TOOL_MESSAGE["content"], "tool_name": "snapshot", "images": [PIXEL]}


def test_anthropic_with_vision_gets_image_blocks_inside_the_tool_result() -> None:
    _, anthropic = to_anthropic_messages(image_history(), images=True)
    assert anthropic[-1] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_s", "content": [
        {"type": "text", "text": PLAIN_TOOL_MESSAGE["content"]},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]}]}


def test_vision_changes_nothing_for_a_result_without_images() -> None:
    history = [ASKED, CALLED, tool_message(ToolResult(SNAP, output="nothing to see"))]
    assert to_openai_messages(history, images=True) == to_openai_messages(history) == history
    assert to_ollama_messages(history, images=True) == to_ollama_messages(history)
    assert to_anthropic_messages(history, images=True) == to_anthropic_messages(history)


def test_structured_content_is_the_text_of_a_result_without_text() -> None:
    result = ToolResult(SNAP, output="", structured={"temperature": 14})
    assert tool_message(result)["content"] == '{"temperature": 14}'
    assert ToolResult(SNAP, output="14 °C", structured={"temperature": 14}).text() == "14 °C"


def test_an_exact_fraction_a_result_gives_reaches_the_model_with_its_decimal_value() -> None:
    """An exact calculator's "625/4" (the whole result, or a JSON text in it) is read by a small model as 625: the
    model's tool message adds each fraction's decimal value after the result; a date, a path, a ratio of words and
    an error are given as they are."""
    from sidespin.formats import tool_message

    def content(output: Any, error: str | None = None) -> str:
        return tool_message(ToolResult(ToolCall("evaluate", {}), output=output, error=error))["content"]

    assert content('{"expression": "1250 / 8", "symbolic_form": "625/4"}').endswith("\n(625/4 = 156.25)")
    assert content("96/5") == "96/5\n(96/5 = 19.2)"
    assert content({"value": "-7/2", "also": "-7/2"}).endswith("\n(-7/2 = -3.5)")  # once each
    for plain in ('{"date": "2025/11/30"}', "see notes/2024/plan.md", "4/4 time", '{"value": "12/1"}'):
        assert content(plain) == plain
    assert content(None, error="division 1/0") == "Error: division 1/0"
