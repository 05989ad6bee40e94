"""The JSON schema a call's arguments are written under (for the route, `sidespin.route`).

The tool's own schema, every field bounded so that a small model cannot write on and on: strings of
1 to `MAX_STRING` characters (less if the tool says so), numbers in the tool's range or within
±`INTEGER_BOUND`, widened to the largest number the conversation said, with at most `DECIMALS` digits
after the point, or as many as a number said has (`bounds_for`), arrays of at most `MAX_ITEMS`, or
as many items as the longest list said; a string whose tool names its form (a date, 'City, State')
under that form's pattern (`sidespin.patterns`). Only the subset llama.cpp turns into a grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sidespin.grounding import largest_number
from sidespin.patterns import pattern_for
from sidespin.tools import Tool

__all__ = ["MAX_STRING", "SHORT_STRING", "MAX_ITEMS", "INTEGER_BOUND", "DECIMALS", "Bounds", "arguments_schema",
           "bounds_for", "bounded", "token_budget"]

MAX_STRING = 600  # characters in one string argument (a file's new content fits; a loop stays short)
SHORT_STRING = 120  # ... when the arguments were cut off at MAX_STRING: asked once more
MAX_ITEMS = 8  # items in one array argument, unless the conversation said a longer list
MOST_ITEMS = 64  # ... at most
INTEGER_BOUND = 1_000_000  # |number| when the tool's schema gives no range and the conversation said none larger
DECIMALS = 6  # digits after a number's point, unless the conversation said a number with more
MOST_DECIMALS = 10  # ... at most: llama.cpp's llguidance drops a schema whose step is 1e-12 or finer, silently
_SAID_DECIMALS = re.compile(r"\d(?:\.(\d+))?(?:[eE]-(\d+))?")  # 0.25 has two, 1.256e-06 has nine
_SENTENCE_END = re.compile(r"[.;:!?\n](?!\d)")  # not a number's point: 1.5
_LIST_LINE = re.compile(r"(?:^|\n|\\n)[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+\S")  # "* Blue square", "2. eggs"


@dataclass(frozen=True)
class Bounds:
    """How large a number may be where its tool gives no range, and how many digits it may have after the point:
    unbounded, the 0.5B wrote a growth rate of 1.50000000000000015000000015… and a speed of 1.0555555… until
    the budget cut the arguments off."""

    largest: int = INTEGER_BOUND
    decimals: int = DECIMALS
    items: int = MAX_ITEMS  # in an array: a t-test on the 10 numbers said was run on the first 8


def arguments_schema(tool: Tool, *, max_string: int = MAX_STRING, bounds: Bounds = Bounds()) -> dict[str, Any]:
    """The JSON schema arguments are generated under: the tool's properties, every field bounded.

    Required: the tool's required properties; the others stay optional. No other keys are
    allowed. Strings are 1 to `max_string` characters (less if the tool says so), numbers
    lie in the tool's range or within `bounds` (`bounds_for`), arrays hold at most `bounds.items`; an
    untyped property is a string.
    """
    properties = {name: bounded(schema or {}, max_string, bounds) for name, schema in tool.parameters.items()}
    required = [name for name in tool.parameters if name in tool.required]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def bounds_for(said: str) -> Bounds:
    """The bounds of numbers for a conversation (`said`, from `said_in`): as large as `INTEGER_BOUND` or the largest
    number it said, up to 10**15 (a timestamp said in milliseconds, 1617176400000, was cut to 161717 by the bound
    alone, and then refused as made up); `DECIMALS` digits after the point, or as many as a number said has, up to
    `MOST_DECIMALS`. Of BFCL's 558 right values that hold a fraction, the 7 with more than six digits are constants
    no one said (8.854e-12). Arrays of `MAX_ITEMS`, or as many items as the longest list said (items between commas
    in a sentence, or lines of a list), up to `MOST_ITEMS`: of BFCL's right arrays, the 8 with more than eight items are
    each as long as a list said, at most."""
    said_decimals = (len(point or "") + int(power or 0) for point, power in _SAID_DECIMALS.findall(said))
    listed = max([part.count(",") + 1 for part in _SENTENCE_END.split(said)] + [len(_LIST_LINE.findall(said))])
    return Bounds(int(min(max(INTEGER_BOUND, largest_number(said)), 10**15)),
                  min(max([DECIMALS, *said_decimals]), MOST_DECIMALS), min(max(MAX_ITEMS, listed), MOST_ITEMS))


def bounded(schema: dict[str, Any], max_string: int, bounds: Bounds = Bounds()) -> dict[str, Any]:
    """One property's schema in the subset llama.cpp turns into a grammar, with bounds added."""
    for key in ("anyOf", "oneOf"):
        choices = [c for c in schema.get(key) or [] if isinstance(c, dict) and c.get("type") != "null"]
        if choices:
            return bounded(choices[0], max_string, bounds)
    if schema.get("enum"):
        return {"enum": list(schema["enum"])}
    if "const" in schema:
        return {"const": schema["const"]}
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "integer":
        low = schema.get("minimum", -bounds.largest)
        high = schema.get("maximum", bounds.largest)
        return {"type": "integer", "minimum": int(low), "maximum": int(high)}
    if kind == "number":  # bounded too: unbounded, a small model wrote a 0 after "head": 5 until the budget ran out
        step = schema.get("multipleOf")  # the tool's own step, when it gives one
        step = step if isinstance(step, (int, float)) and not isinstance(step, bool) and \
            step >= 10.0 ** -MOST_DECIMALS else None
        return {"type": "number", "minimum": schema.get("minimum", -bounds.largest),
                "maximum": schema.get("maximum", bounds.largest), "multipleOf": step or 10.0 ** -bounds.decimals}
    if kind == "boolean":
        return {"type": kind}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        limit = min(int(schema.get("maxItems", bounds.items)), bounds.items)
        return {"type": "array", "items": bounded(items, max_string, bounds), "maxItems": limit}
    if kind == "object" and schema.get("properties"):
        nested = {name: bounded(sub or {}, max_string, bounds) for name, sub in schema["properties"].items()}
        sub_schema: dict[str, Any] = {"type": "object", "properties": nested, "additionalProperties": False}
        if schema.get("required"):
            sub_schema["required"] = [name for name in schema["required"] if name in nested]
        return sub_schema
    if kind == "object":
        return {"type": "object"}
    pattern = pattern_for(schema) if kind in (None, "string") else None
    if pattern:  # the form its own text names: 'YYYY-MM-DD', 'City, State' (`sidespin.patterns`)
        return {"type": "string", "pattern": pattern}
    longest = min(int(schema.get("maxLength", max_string)), max_string)
    shortest = min(int(schema.get("minLength", 1)), longest)
    return {"type": "string", "minLength": shortest, "maxLength": longest}


def token_budget(schema: dict[str, Any]) -> int:
    """Enough tokens for any answer the schema admits at a few characters a token, capped."""
    budget = 12
    for sub in schema.get("properties", {}).values():
        if sub.get("type") == "string":
            budget += 8 + sub.get("maxLength", MAX_STRING) // 2
        elif sub.get("type") == "array":
            budget += 8 + sub.get("maxItems", MAX_ITEMS) * 24
        elif sub.get("type") == "object":
            budget += 8 + token_budget(sub)
        else:
            budget += 12
    return min(budget, 512)
