"""Calls a model writes without the `<mcp-request>` block, read back as calls (or as malformed calls).

Small models, taught one format, often write another they saw in training: a bare
`{"name": …, "arguments": …}` object, the same in a ```json fence or in `<tool_call>` tags,
`<tool name="…">` with its params but no `<mcp-request>` wrapper. `find_loose_call` finds the
first such call to a registered tool and the span of text it occupies, so the page never shows it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable

from sidespin.errors import BadArguments, MalformedToolCall
from sidespin.protocol.block import MCP_TAG, parse_request
from sidespin.tools import Tool, ToolCall, coerce_arguments

__all__ = ["LooseCall", "find_loose_call", "parse_loose_call"]


@dataclass(frozen=True)
class LooseCall:
    """A call found in free text, and the span of text it occupies (fences and tags included)."""

    call: ToolCall
    start: int
    end: int


_NAME_KEYS = ("name", "tool", "tool_name", "function", "function_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "params", "args", "input")
_MAX_SCAN = 20_000  # characters of a reply searched for a call
_MAX_OBJECTS = 200  # "{" positions tried
_FENCE_BEFORE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?[ \t]*\Z")
_FENCE_AFTER = re.compile(r"[ \t]*\r?\n?[ \t]*```")
_TAG_BEFORE = re.compile(r"<(tool_call|function_call)>\s*\Z")
_TOOL_ELEMENT = re.compile(r"<tool(?=[\s/>])", re.IGNORECASE)
_PARAM_RUN = re.compile(
    r"""\A(?:\s*<param\b[^>]*/\s*>|\s*<param\b[^>]*>.*?</param\s*>|\s*<params\s*>.*?</params\s*>|\s*</tool\s*>)+""",
    re.IGNORECASE | re.DOTALL,
)
_TOOL_TAG_END = re.compile(r"[^<>]*>")
# <param name="x" value="v" />: how small models often write a param; read as <param name="x">v</param>
_VALUE_PARAM = re.compile(
    r"""<param\s+name\s*=\s*(["'])(.*?)\1\s+value\s*=\s*(["'])(.*?)\3\s*/\s*>""", re.IGNORECASE | re.DOTALL
)


def parse_loose_call(text: str, tools: Iterable[Tool]) -> ToolCall | None:
    """The first call to a registered tool written without the `<mcp-request>` block, or None.

    Raises `MalformedToolCall` when the text clearly calls a registered tool but its
    arguments do not fit the tool's schema (so the rally can say so instead of showing it).
    """
    found = find_loose_call(text, tools)
    return found.call if found else None


def find_loose_call(text: str, tools: Iterable[Tool]) -> LooseCall | None:
    """Like `parse_loose_call`, with the span to hide from the page."""
    known = {t.name: t for t in tools}
    text = text[:_MAX_SCAN]
    if not any(name in text for name in known):
        return None  # the common case, decided without parsing anything
    candidates = [c for c in (_first_json_call(text, known), _first_tool_element(text, known)) if c is not None]
    return min(candidates, key=lambda c: c.start) if candidates else None


def _first_json_call(text: str, known: dict[str, Tool]) -> LooseCall | None:
    position = text.find("{")
    for _ in range(_MAX_OBJECTS):
        if position == -1:
            break
        parsed = _object_at(text, position, known)
        named = _named_call(parsed[0], known) if parsed is not None else None
        if parsed is not None and named is not None:
            start, end = _widen(text, position, parsed[1])
            return LooseCall(_checked(known[named[0]], named[1], text[start:end]), start, end)
        position = text.find("{", position + 1)
    return None


def _object_at(text: str, start: int, known: dict[str, Tool]) -> tuple[Any, int] | None:
    """The JSON (or Python-literal) object starting at `start`, and where it ends."""
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
        return (value, end) if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    end = _balanced_end(text, start)
    if end is None or not any(name in text[start:end] for name in known):
        return None
    try:  # single quotes, True/False: what a model trained on Python writes
        value = ast.literal_eval(text[start:end])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return (value, end) if isinstance(value, dict) else None


def _balanced_end(text: str, start: int) -> int | None:
    depth, quote, escaped = 0, "", False
    for index in range(start, min(len(text), start + 4000)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _named_call(value: dict[str, Any], known: dict[str, Tool]) -> tuple[str, Any] | None:
    """(tool name, raw arguments) when the object is shaped like a call to a registered tool."""
    if isinstance(value.get("function"), dict):  # OpenAI: {"type": "function", "function": {...}}
        return _named_call(value["function"], known)
    for key in _NAME_KEYS:
        name = value.get(key)
        if isinstance(name, str) and name in known:
            arguments = next((value[k] for k in _ARGUMENT_KEYS if k in value), {})
            return name, arguments
    if len(value) == 1:  # {"get_time": {"timezone": "UTC"}}
        (name, arguments), = value.items()
        if name in known and isinstance(arguments, dict):
            return name, arguments
    return None


def _checked(tool: Tool, arguments: Any, raw: str) -> ToolCall:
    if not tool.parameters:
        # whatever a model writes for a tool that takes nothing (often a copy of a schema) means nothing
        return ToolCall(tool.name, {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            raise MalformedToolCall(f"the arguments of {tool.name!r} are not valid JSON", raw) from None
    if arguments is None:
        arguments = {}
    try:
        return ToolCall(tool.name, coerce_arguments(tool.input_schema, arguments))
    except BadArguments as error:
        raise MalformedToolCall(str(error), raw) from None


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a JSON call's span over a ``` fence or `<tool_call>` tags that wrap nothing else."""
    fence_before = _FENCE_BEFORE.search(text, 0, start)
    fence_after = _FENCE_AFTER.match(text, end)
    if fence_before and fence_after:
        return fence_before.start(), fence_after.end()
    tag_before = _TAG_BEFORE.search(text, 0, start)
    if tag_before:
        closing = re.compile(rf"\s*</{tag_before.group(1)}>").match(text, end)
        if closing:
            return tag_before.start(), closing.end()
    return start, end


def _first_tool_element(text: str, known: dict[str, Tool]) -> LooseCall | None:
    """`<tool name="x" />` and the `<param>`s after it, read as the block they lack."""
    for element in _TOOL_ELEMENT.finditer(text):
        tag_end = _TOOL_TAG_END.match(text, element.end())
        if tag_end is None:
            continue
        end = tag_end.end()
        params = _PARAM_RUN.match(text[end:])
        if params is not None:
            end += params.end()
        raw = text[element.start() : end]
        body = _VALUE_PARAM.sub(lambda m: f'<param name="{m.group(2)}">{m.group(4)}</param>', raw)
        try:
            call = parse_request(f"<{MCP_TAG}>{body}</{MCP_TAG}>", known.values())
        except MalformedToolCall as error:
            if any(f'"{name}"' in raw or f"'{name}'" in raw for name in known):
                raise MalformedToolCall(error.reason, raw) from None
            continue
        return LooseCall(call, element.start(), end)
    return None
