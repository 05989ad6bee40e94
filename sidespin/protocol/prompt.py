"""The prompts that teach the block: the salted one-shot teaching prompt and the Poke.

The teaching prompt lists every tool with its parameters and shows one worked
example; a Poke adds the order to call one tool now and write only its block.
Which tool a Poke asks for is data beside its prompt, the note of its user
message (`poke_note`), read back by `poked`.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import datetime, timezone
from typing import Any, Iterable

from sidespin.errors import ToolNotFound
from sidespin.protocol.block import MCP_TAG, _json_type, format_block
from sidespin.tools import Tool, ToolCall

__all__ = ["teaching_prompt", "poke_prompt", "poke_target", "poke_note", "poked", "POKE"]

POKE = "poke"  # the key of a Poke's note: {"poke": {"tool": name, "arguments": {...}}}

_MAX_TOOL_DESCRIPTION = 200
_MAX_PARAM_DESCRIPTION = 120


def _salt_line(salt: str | None) -> str:
    """`Request ID: <salt>`; without a salt, a fresh random id and the current time (UTC)."""
    if salt is not None:
        return f"Request ID: {salt}"
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"Request ID: {secrets.token_hex(4)} | Timestamp: {stamp}"


def teaching_prompt(tools: Iterable[Tool], salt: str | None = None) -> str:
    """The one-shot prompt that teaches the block and lists every tool with its parameters.

    The worked example calls the first tool. The last line salts the prompt so no cache or
    de-duplication can ever swallow it: `Request ID: <salt>` with `salt` verbatim (say, one
    per conversation), or a fresh random id and timestamp when None. It comes last so that
    prefix caches still help.
    """
    listed = list(tools)
    example = ToolCall(listed[0].name, _example_arguments(listed[0])) if listed else None
    return _teach(listed, example, salt)


def poke_prompt(
    tools: Iterable[Tool],
    tool_name: str = "get_cat_fact",
    arguments: dict[str, Any] | None = None,
    salt: str | None = None,
) -> str:
    """The teaching prompt plus the order to call exactly one tool now and write only its block.

    The worked example is that very call, because a 135M model copies the example it saw.
    Raises `ToolNotFound` when `tool_name` is not among `tools`. Without `arguments`,
    required parameters get plausible example values.
    """
    listed = list(tools)
    by_name = {item.name: item for item in listed}
    if tool_name not in by_name:
        raise ToolNotFound(tool_name, list(by_name))
    target = by_name[tool_name]
    if arguments is None:
        arguments = {k: v for k, v in _example_arguments(target).items() if k in target.required}
    if arguments:
        given = ", ".join(f"{name}={_show_value(value)}" for name, value in arguments.items())
        task = f"Now call the {tool_name} tool with {given}."
    elif target.parameters:
        task = f"Now call the {tool_name} tool."
    else:
        task = f"Now call the {tool_name} tool. It needs no parameters."
    # the first line names the Poke, so a conversation list can show it without reading the whole prompt
    heading = f"Poke: call the {tool_name} tool."
    return "\n".join([heading, "", _teach(listed, ToolCall(tool_name, arguments), salt), "", task, _POKE_END])


_POKE_END = f"Output only the tool block, starting with <{MCP_TAG}>. Say nothing else."
_POKE_TASK = re.compile(r"^Now call the (\S+) tool\b", re.M)


def poke_note(tool_name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the user message of a Poke carries besides its prompt: the tool it asks for, and the arguments
    given (none: the prompt's example values)."""
    return {POKE: {"tool": tool_name, **({"arguments": arguments} if arguments else {})}}


def poked(note: dict[str, Any] | None, text: str = "") -> str | None:
    """The tool a user message Pokes (pages show a Poke as one line), or None: its note's (`poke_note`);
    for a message written before Pokes had a note, the one its prompt `text` asks for."""
    poke = (note or {}).get(POKE)
    if isinstance(poke, dict) and isinstance(poke.get("tool"), str):
        return poke["tool"]
    return poke_target(text) if text else None


def poke_target(text: str) -> str | None:
    """The tool a `poke_prompt` asked for, read from its text, or None for any other text (`poked` reads a
    Poke's note first; this is for a message written before, or a Poke prompt pasted by hand)."""
    if not text.rstrip().endswith(_POKE_END):
        return None
    found = _POKE_TASK.findall(text)
    return found[-1] if found else None


def _teach(listed: list[Tool], example: ToolCall | None, salt: str | None) -> str:
    lines = ["You can use tools. To use one, write a tool block like this one and then stop:", ""]
    lines.append(format_block(example or ToolCall("tool_name", {"parameter": "value"})))
    lines += [
        "",
        'Put the tool\'s name in <tool name="..." /> and each parameter in its own '
        '<param name="...">value</param>. Write the block, then stop: the result comes back '
        "to you in a tool message. If no tool is needed, answer normally without a block.",
        "",
        "Tools:" if listed else "No tools are available right now.",
    ]
    for item in listed:
        lines += _describe_tool(item)
    lines += ["", _salt_line(salt)]
    return "\n".join(lines)


def _describe_tool(item: Tool) -> list[str]:
    description = _first_paragraph(item.description, _MAX_TOOL_DESCRIPTION)
    head = f"- {item.name}: {description}" if description else f"- {item.name}"
    if not item.parameters:
        return [head + (" " if description else ": ") + "No parameters."]
    lines = [head]
    required = set(item.required)
    for name, schema in item.parameters.items():
        schema = schema or {}
        kind = _json_type(schema)
        facts = [kind, "required" if name in required else "optional"]
        if "default" in schema and name not in required:
            facts.append(f"default {_show_value(schema['default'])}")
        if schema.get("enum"):
            facts.append("one of " + ", ".join(_show_value(v) for v in schema["enum"]))
        line = f"    {name} ({', '.join(facts)})"
        note = _first_paragraph(str(schema.get("description") or ""), _MAX_PARAM_DESCRIPTION)
        lines.append(f"{line}: {note}" if note else line)
    return lines


def _first_paragraph(text: str, limit: int) -> str:
    """The first paragraph on one line, cut at `limit` characters; keeps prompts short."""
    paragraph = " ".join(text.strip().split("\n\n", 1)[0].split())
    return paragraph if len(paragraph) <= limit else paragraph[: limit - 1].rstrip() + "…"


def _show_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


_EXAMPLE_STRINGS = {
    "name": "World",
    "who": "World",
    "timezone": "Europe/Paris",
    "tz": "Europe/Paris",
    "city": "Paris",
    "location": "Paris",
    "place": "Paris",
    "query": "cats",
    "q": "cats",
    "search": "cats",
    "topic": "cats",
    "url": "https://example.com",
    "uri": "https://example.com",
    "path": "notes.txt",
    "file": "notes.txt",
    "filename": "notes.txt",
    "text": "Hello!",
    "message": "Hello!",
    "content": "Hello!",
    "email": "ada@example.com",
    "date": "2025-01-31",
    "language": "en",
    "sql": "SELECT 1",
}


def _example_value(name: str, schema: dict[str, Any]) -> Any:
    """A plausible value for a parameter: its first enum value, its default, or one by name and type."""
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("default") is not None:
        return schema["default"]
    kind = _json_type(schema)
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return True
    if kind == "array":
        return ["example"]
    if kind == "object":
        return {}
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return next((_EXAMPLE_STRINGS[w] for w in reversed(words) if w in _EXAMPLE_STRINGS), "example")


def _example_arguments(item: Tool) -> dict[str, Any]:
    """Example arguments: every required parameter, then optional ones up to three in all."""
    required = item.required
    names = [n for n in item.parameters if n in required]
    names += [n for n in item.parameters if n not in required][: max(0, 3 - len(names))]
    return {n: _example_value(n, item.parameters[n] or {}) for n in names}
