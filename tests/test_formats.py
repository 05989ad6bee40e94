"""Provider formats: round trips on examples taken from each provider's documentation."""

from __future__ import annotations

import copy
import json
from typing import Any

from sidespin.formats import (
    MALFORMED,
    from_anthropic_messages,
    from_anthropic_tool,
    from_ollama_messages,
    from_ollama_tool,
    from_openai_tool,
    mcp_tool,
    parse_arguments,
    to_anthropic_messages,
    to_anthropic_tool,
    to_ollama_messages,
    to_ollama_tool,
    to_openai_tool,
    tool_call_from_openai,
    tool_call_to_openai,
)
from sidespin.tools import ToolCall, tool

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


def test_mcp_tool_round_trips_through_every_provider() -> None:
    assert from_openai_tool(to_openai_tool(MCP_WEATHER)) == mcp_core(MCP_WEATHER)
    assert from_anthropic_tool(to_anthropic_tool(MCP_WEATHER)) == mcp_core(MCP_WEATHER)
    assert from_ollama_tool(to_ollama_tool(MCP_WEATHER)) == mcp_core(MCP_WEATHER)


def test_provider_tools_round_trip_through_mcp() -> None:
    assert to_openai_tool(from_openai_tool(OPENAI_WEATHER)) == OPENAI_WEATHER
    assert to_anthropic_tool(from_anthropic_tool(ANTHROPIC_WEATHER)) == ANTHROPIC_WEATHER
    assert to_ollama_tool(from_ollama_tool(OLLAMA_WEATHER)) == OLLAMA_WEATHER


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
    call = tool_call_from_openai(item)
    assert call == ToolCall("get_weather", {"location": "Paris, France"}, id="call_12345xyz")
    back = tool_call_to_openai(call)
    assert back["id"] == item["id"] and back["function"]["name"] == "get_weather"
    assert json.loads(back["function"]["arguments"]) == {"location": "Paris, France"}


def test_unreadable_arguments_are_kept_for_the_report() -> None:
    assert parse_arguments('{"location": "Par') == {MALFORMED: '{"location": "Par'}
    assert parse_arguments("[1, 2]") == {MALFORMED: "[1, 2]"}
    assert parse_arguments("") == {}
    call = ToolCall("get_weather", {MALFORMED: '{"location": "Par'}, id="call_1")
    assert tool_call_to_openai(call)["function"]["arguments"] == '{"location": "Par'


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


def normalized(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages compared by meaning: null content is empty text, arguments are compared parsed."""
    out = copy.deepcopy(messages)
    for message in out:
        message["content"] = message.get("content") or ""
        for call in message.get("tool_calls", []):
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return out


def test_openai_messages_round_trip_through_anthropic() -> None:
    system, anthropic = to_anthropic_messages(OPENAI_CONVERSATION)
    assert system == "You are a helpful assistant."
    assert anthropic[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "call_12345xyz", "name": "get_weather", "input": {"location": "Paris, France"}}],
    }
    assert anthropic[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_12345xyz", "content": "14"}]}
    assert normalized(from_anthropic_messages(anthropic, system)) == normalized(OPENAI_CONVERSATION)


def test_anthropic_messages_round_trip_through_openai() -> None:
    openai = from_anthropic_messages(ANTHROPIC_CONVERSATION)
    assert openai[1]["tool_calls"][0]["id"] == "toolu_01A09q90qw90lq917835lq9"
    assert openai[2] == {"role": "tool", "tool_call_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees"}
    assert to_anthropic_messages(openai) == ("", ANTHROPIC_CONVERSATION)


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
    assert anthropic[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "content": "14"},
            {"type": "tool_result", "tool_use_id": "call_b", "content": "21"},
            {"type": "text", "text": "And tomorrow?"},
        ],
    }
    assert normalized(from_anthropic_messages(anthropic)) == normalized(messages)


def test_openai_messages_round_trip_through_ollama() -> None:
    ollama = to_ollama_messages(OPENAI_CONVERSATION)
    assert ollama[2] == {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"location": "Paris, France"}}}]}
    assert ollama[3] == {"role": "tool", "content": "14", "tool_name": "get_weather"}
    back = from_ollama_messages(ollama)
    # Ollama carries no call ids: new ones are made, and each result still points at its call.
    assert back[3]["tool_call_id"] == back[2]["tool_calls"][0]["id"]
    expected = normalized(OPENAI_CONVERSATION)
    got = normalized(back)
    expected[2]["tool_calls"][0]["id"] = got[2]["tool_calls"][0]["id"]
    expected[3]["tool_call_id"] = got[3]["tool_call_id"]
    assert got == expected


def test_ollama_messages_round_trip_through_openai() -> None:
    openai = from_ollama_messages(OLLAMA_CONVERSATION)
    assert openai[1]["tool_calls"][0]["function"]["name"] == "get_temperature"
    assert json.loads(openai[1]["tool_calls"][0]["function"]["arguments"]) == {"city": "Toronto"}
    assert openai[2]["tool_call_id"] == openai[1]["tool_calls"][0]["id"]
    assert to_ollama_messages(openai) == OLLAMA_CONVERSATION


def test_ollama_results_find_their_calls_by_tool_name_in_order() -> None:
    ollama = [
        {"role": "user", "content": "two dice and the time"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "roll_dice", "arguments": {"sides": 6}}},
                {"function": {"name": "get_time", "arguments": {"timezone": "UTC"}}},
                {"function": {"name": "roll_dice", "arguments": {"sides": 20}}},
            ],
        },
        {"role": "tool", "content": "4", "tool_name": "roll_dice"},
        {"role": "tool", "content": "12:00", "tool_name": "get_time"},
        {"role": "tool", "content": "17", "tool_name": "roll_dice"},
    ]
    openai = from_ollama_messages(ollama)
    ids = [call["id"] for call in openai[1]["tool_calls"]]
    assert [m["tool_call_id"] for m in openai[2:]] == [ids[0], ids[1], ids[2]]
