"""The tool registry gives every failed call an error kind: what went wrong, not only the words for the model;
arguments are coerced leniently, then validated against the tool's JSON schema, every problem named."""

from __future__ import annotations

import asyncio
import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import pytest
from loguru import logger
from pydantic import Field

from sidespin.errors import BadArguments
from sidespin.tools import (
    Tool,
    ToolCall,
    ToolRegistry,
    ToolResult,
    coerce_arguments,
    function_schema,
    tool,
)


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


@tool
def broken() -> str:
    """Always fails."""
    raise ValueError("out of order")


@tool
async def slow() -> str:
    """Never answers in time."""
    await asyncio.sleep(5)
    return "late"


@tool
async def remote_error() -> ToolResult:
    """Like an MCP tool whose server answered with an error result."""
    return ToolResult(call=ToolCall("remote_error", {}), error="no such city")


async def test_each_failure_has_its_kind_and_success_has_none() -> None:
    with ToolRegistry([double, broken, slow, remote_error]) as registry:
        ok = await registry.execute(ToolCall("double", {"n": "4"}))
        assert ok.ok and ok.output == 8 and ok.kind is None
        cases = {
            "not_found": ToolCall("triple", {"n": 1}),
            "bad_arguments": ToolCall("double", {"n": "four"}),
            "failed": ToolCall("broken", {}),
            "timeout": ToolCall("slow", {}),
        }
        for kind, call in cases.items():
            result = await registry.execute(call, timeout=0.1)
            assert (result.kind, result.ok) == (kind, False), result.error
        mcp = await registry.execute(ToolCall("remote_error", {}))
        assert (mcp.kind, mcp.error) == ("failed", "no such city")


# --- arguments: coerced leniently, then validated against the tool's JSON schema --------------

TRIP = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "enum": ["km", "mi"]},
        "stops": {"type": "integer", "minimum": 1, "maximum": 6},
        "car": {"type": "object", "properties": {"seats": {"type": "integer", "minimum": 1}}},
        "towns": {"type": "array", "items": {"type": "string", "minLength": 2}},
    },
    "required": ["unit"],
}


def refusal(schema: dict, arguments: dict) -> str:
    with pytest.raises(BadArguments) as refused:
        coerce_arguments(schema, arguments)
    return str(refused.value)


def test_a_valid_call_passes_with_its_strings_coerced_inside_objects_and_arrays_too() -> None:
    arguments = {"unit": "mi", "stops": "3", "car": {"seats": "4"}, "towns": ["Ely", 12]}
    assert coerce_arguments(TRIP, arguments) == {"unit": "mi", "stops": 3, "car": {"seats": 4}, "towns": ["Ely", "12"]}


def test_numbers_in_a_list_are_floats_and_a_parameters_own_number_stays_as_written() -> None:
    """BFCL's checker refuses [12, 15] for a list of floats; "add 17 and 25" is shown as 17 and 25."""
    schema = {"type": "object", "properties": {"numbers": {"type": "array", "items": {"type": "number"}},
                                               "rate": {"type": "number"}, "count": {"type": "integer"}}}
    coerced = coerce_arguments(schema, {"numbers": [12, "15", 2.5], "rate": 5, "count": 3.0})
    assert json.dumps(coerced) == '{"numbers": [12.0, 15.0, 2.5], "rate": 5, "count": 3}'


def test_an_optional_argument_given_as_null_is_left_out_and_a_required_one_is_refused() -> None:
    # MCP's conformance suite calls a tool with {"verbose": null} for an optional boolean (SEP-2243)
    assert coerce_arguments(TRIP, {"unit": "km", "stops": None}) == {"unit": "km"}
    assert "unit" in refusal(TRIP, {"unit": None})
    nullable = {"type": "object", "properties": {"note": {"type": ["string", "null"]}}}
    assert coerce_arguments(nullable, {"note": None}) == {"note": None}


def test_a_value_outside_the_enum_is_refused_with_the_choices() -> None:
    assert refusal(TRIP, {"unit": "furlong"}) == "argument 'unit': 'furlong' is not one of ['km', 'mi']"


def test_a_choice_written_otherwise_is_that_choice() -> None:
    """A choice written in another type or case (2010 for '2010', "KM " for "km") was refused as not one of the
    choices, and no call was made."""
    years = {"type": "object", "properties": {"year": {"enum": ["2010", "2011", "dontcare"]}}}
    assert coerce_arguments(years, {"year": 2010}) == {"year": "2010"}
    assert coerce_arguments(TRIP, {"unit": "KM "}) == {"unit": "km"}
    counts = {"type": "object", "properties": {"n": {"enum": [1, 2, 3]}}}
    assert coerce_arguments(counts, {"n": "2"}) == {"n": 2}
    twins = {"type": "object", "properties": {"mode": {"enum": ["Fast", "fast", "slow"]}}}
    assert "is not one of" in refusal(twins, {"mode": "FAST"})  # two choices read so: which one is not guessed


def test_a_value_out_of_range_is_refused_with_the_limit() -> None:
    assert refusal(TRIP, {"unit": "km", "stops": "9"}) == "argument 'stops': 9 is greater than the maximum of 6"


def test_a_nested_field_or_item_that_does_not_fit_is_refused_by_its_path() -> None:
    assert refusal(TRIP, {"unit": "km", "car": {"seats": "many"}}) == (
        "argument 'car.seats' should be a whole number, got 'many'")
    assert refusal(TRIP, {"unit": "km", "car": {"seats": 0}}) == (
        "argument 'car.seats': 0 is less than the minimum of 1")
    assert refusal(TRIP, {"unit": "km", "towns": ["Ely", "X"]}) == "argument 'towns[1]': 'X' is too short"


def test_every_problem_is_listed_not_only_the_first() -> None:
    said = refusal(TRIP, {"unit": "furlong", "stops": 0, "car": {"seats": "many"}, "colour": "red"})
    assert said.startswith("3 problems with the arguments: ")
    for problem in ("argument 'unit': 'furlong' is not one of", "argument 'stops': 0 is less than the minimum of 1",
                    "argument 'car.seats' should be a whole number"):
        assert problem in said
    plugin = refusal(double.input_schema, {"n": "four", "m": 1})
    assert plugin == "2 problems with the arguments: argument 'n' should be a whole number, got 'four'; " \
                     "unknown argument 'm' (expected: n)"


@pytest.mark.parametrize("schema", [
    {"type": "objekt"},  # not a JSON schema type
    {"properties": ["n"]},  # properties that are no object
    {"$schema": 5, "properties": {"n": True}},  # an odd dialect, a boolean schema
    {"properties": {"n": {"type": "integer"}}, "required": "n"},  # required that is no list
    {"$ref": "https://tools.invalid/schema.json"},  # a reference nobody fetches
])
def test_a_schema_that_is_not_valid_is_not_checked_and_says_so_in_the_log(schema: dict) -> None:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="WARNING")
    try:
        coerced = coerce_arguments(schema, {"n": "1", "other": [1]})
    finally:
        logger.remove(sink)
    assert coerced["other"] == [1] and coerced["n"] in ("1", 1)
    assert [line.split()[0] for line in lines] == ["TOOL_SCHEMA_SKIPPED"]


async def test_the_registry_refuses_a_call_out_of_range_before_the_tool_runs() -> None:
    ran: list[dict] = []

    async def roll(**arguments: object) -> str:
        ran.append(arguments)
        return "rolled"

    dice = Tool("roll", "Roll dice.", {"type": "object", "properties": {"sides": {"type": "integer", "maximum": 20}}},
                roll, source="mcp:dice")
    with ToolRegistry([dice]) as registry:
        refused = await registry.execute(ToolCall("roll", {"sides": 100}))
        assert (refused.kind, refused.error) == ("bad_arguments", "argument 'sides': 100 is greater than the maximum of 20")
        assert (await registry.execute(ToolCall("roll", {"sides": "12"}))).ok and ran == [{"sides": 12}]


# --- schemas from signatures: each parameter's type read by pydantic ----------------------------

class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Box:
    width: float
    label: str = "box"


def paint(
    sides: Annotated[int, Field(ge=3, le=12)],
    colour: Colour = Colour.RED,
    box: Box | None = None,
    note: str | None = None,
    unit: Literal["cm", "in"] | None = None,
    where: Path = Path("."),
    then: Callable[[], None] | None = None,
) -> str:
    """Paint a polygon.

    Args:
        sides: how many sides
    """
    return "painted"


def test_a_signature_becomes_a_plain_schema_with_its_limits_choices_and_nested_fields() -> None:
    description, schema = function_schema(paint)
    assert description == "Paint a polygon."
    assert schema == {
        "type": "object",
        "properties": {
            "sides": {"type": "integer", "minimum": 3, "maximum": 12, "description": "how many sides"},
            "colour": {"type": "string", "enum": ["red", "blue"], "default": "red"},
            "box": {"type": ["object", "null"], "properties": {"width": {"type": "number"},
                                                               "label": {"type": "string", "default": "box"}},
                    "required": ["width"]},
            "note": {"type": ["string", "null"]},
            "unit": {"type": "string", "enum": ["cm", "in"]},
            "where": {"type": "string", "format": "path", "default": "."},
            "then": {},  # a callable has no JSON form: any value
        },
        "additionalProperties": False,
        "required": ["sides"],
    }
    assert refusal(schema, {"sides": "13"}) == "argument 'sides': 13 is greater than the maximum of 12"
    assert coerce_arguments(schema, {"sides": "5", "note": None, "box": {"width": "2"}}) == {
        "sides": 5, "note": None, "box": {"width": 2.0}}
