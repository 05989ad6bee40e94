"""The reader of calls written without the `<mcp-request>` block."""

from __future__ import annotations

import pytest

from sidespin.errors import MalformedToolCall
from sidespin.protocol.loose import find_loose_call, parse_loose_call
from sidespin.tools import tool


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


TOOLS = [roll_dice, get_cat_fact, get_time]


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
