"""The GBNF grammar (llama.cpp) that only admits a well-formed block naming a registered tool."""

from __future__ import annotations

import re
from typing import Any, Iterable

from sidespin.protocol.block import MCP_TAG, _json_type, _param_text
from sidespin.tools import Tool

__all__ = ["grammar_for", "gbnf_literal"]

_MAX_STRING_CHARS = 200

_VALUE_RULES = {
    "string": f"string ::= [^<\\n\\r]{{1,{_MAX_STRING_CHARS}}}",
    "integer": 'integer ::= "-"? [0-9]{1,15}',
    "number": 'number ::= "-"? [0-9]{1,15} ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": 'boolean ::= "true" | "false"',
}


def grammar_for(tools: Iterable[Tool]) -> str:
    """A GBNF grammar (llama.cpp) admitting only a well-formed block that names a registered tool.

    Each tool's parameters appear in schema order, required ones always, optional ones
    maybe. The language starts with "<mcp-request", so the grammar also works lazily,
    triggered by that word. Raises ValueError for an empty tool list.
    """
    listed = list(tools)
    if not listed:
        raise ValueError("grammar_for needs at least one tool")
    calls: list[str] = []
    rules: list[str] = []
    used: set[str] = set()
    for index, item in enumerate(listed, start=1):
        rule = _rule_name(f"call-{index}", item.name)
        calls.append(rule)
        parts = [gbnf_literal(f'<tool name="{item.name}" />')]
        required = set(item.required)
        for number, (name, schema) in enumerate(item.parameters.items(), start=1):
            value = _value_rule(schema or {}, f"{rule}-p{number}", rules, used)
            opening = gbnf_literal(f'<param name="{name}">')
            element = f'ws {opening} {value} "</param>"'
            parts.append(element if name in required else f"( {element} )?")
        rules.append(f"{rule} ::= {' '.join(parts)}")
    head = [
        f'root ::= "<{MCP_TAG}>" ws ( {" | ".join(calls)} ) ws "</{MCP_TAG}>"',
        "ws ::= [ \\t\\n]{0,8}",
    ]
    return "\n".join(head + rules + [_VALUE_RULES[kind] for kind in _VALUE_RULES if kind in used]) + "\n"


def _value_rule(schema: dict[str, Any], enum_rule: str, rules: list[str], used: set[str]) -> str:
    """The rule a value must match: an enum's alternatives, or the shared rule of its JSON type."""
    if schema.get("enum"):
        alternatives = " | ".join(gbnf_literal(_param_text(v)) for v in schema["enum"])
        rules.append(f"{enum_rule} ::= {alternatives}")
        return enum_rule
    kind = _json_type(schema)
    kind = kind if kind in ("integer", "number", "boolean") else "string"  # arrays/objects as JSON text
    used.add(kind)
    return kind


def _rule_name(prefix: str, name: str) -> str:
    """A valid GBNF identifier (letters, digits, '-'); the prefix keeps it unique and readable."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
    return f"{prefix}-{slug}" if slug else prefix


def gbnf_literal(text: str) -> str:
    """A GBNF string literal: quotes, backslashes and control characters escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
