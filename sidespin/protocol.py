"""The micro-MCP protocol: how any model asks for a tool in plain text.

A salted one-shot prompt teaches the block below; `parse_request` reads a block
back into a `ToolCall`, tolerating what small models really write (unescaped
`&` and `<` in values, single quotes, missing `/`, JSON in `<params>`);
`grammar_for` builds a llama.cpp GBNF grammar that only admits well-formed
blocks naming registered tools.

    <mcp-request>
      <tool name="say_hello" />
      <param name="name">World</param>
    </mcp-request>
"""

from __future__ import annotations

import html
import json
import re
import secrets
from datetime import datetime, timezone
from typing import Any, Iterable

from sidespin.errors import BadArguments, MalformedToolCall, ToolNotFound
from sidespin.tools import Tool, ToolCall, ToolRegistry, coerce_arguments

__all__ = [
    "TAG",
    "teaching_prompt",
    "poke_prompt",
    "format_block",
    "parse_request",
    "poke_target",
    "grammar_for",
]

TAG = "mcp-request"

_MAX_TOOL_DESCRIPTION = 200
_MAX_PARAM_DESCRIPTION = 120
_MAX_STRING_CHARS = 200
_EDGE_SPACE = " \t\r\n"  # stripped around a param's value: the indentation and newlines of the layout


# --- prompts ---------------------------------------------------------------


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


_POKE_END = "Output only the tool block, starting with <mcp-request>. Say nothing else."
_POKE_TASK = re.compile(r"^Now call the (\S+) tool\b", re.M)


def poke_target(text: str) -> str | None:
    """The tool a `poke_prompt` asked for, or None for any other text (pages show a Poke as one line)."""
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


def _json_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else "any"


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


# --- the block ---------------------------------------------------------------


def format_block(call: ToolCall) -> str:
    """The canonical block for a call; `parse_request(format_block(call))` gives its arguments back."""
    lines = [f"<{TAG}>", f'  <tool name="{html.escape(call.name)}" />']
    for name, value in call.arguments.items():
        lines.append(f'  <param name="{html.escape(str(name))}">{_escape_value(_param_text(value))}</param>')
    lines.append(f"</{TAG}>")
    return "\n".join(lines)


def _escape_value(text: str) -> str:
    """Escape `&`, `<`, `>`; leading and trailing layout whitespace becomes `&#N;` so parsing keeps it."""
    escaped = html.escape(text, quote=False)
    body = escaped.strip(_EDGE_SPACE)
    if body == escaped:
        return escaped
    start = escaped.index(body) if body else len(escaped)
    head, tail = escaped[:start], escaped[start + len(body) :]
    return "".join(f"&#{ord(c)};" for c in head) + body + "".join(f"&#{ord(c)};" for c in tail)


def _param_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


_OPEN = re.compile(rf"<{TAG}(?=[\s>/]|\Z)")
_CLOSE = re.compile(rf"</{TAG}\s*>")
# the next element we understand inside a block; anything else between elements is ignored
_ELEMENT = re.compile(r"<(/?)(tool|params|param)(?=[\s>/])", re.IGNORECASE)
_ATTRIBUTES = re.compile(r"""\s*([^\s=/<>"']+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>/]+)))?""")
# the rest of a tag up to '>', skipping stray characters; a '<' first means the tag was never closed
_TAG_END = re.compile(r"[^<>]*?(/?)\s*>")
_CDATA = re.compile(r"\A<!\[CDATA\[(.*)\]\]>\Z", re.DOTALL)
_TOOL_TEXT = re.compile(r"([^<]*)</tool\s*>", re.IGNORECASE)
_PARAM_CLOSE = re.compile(r"</param\s*>", re.IGNORECASE)
_PARAM_OPEN = re.compile(r"<param[\s>/]", re.IGNORECASE)
_PARAMS_CLOSE = re.compile(r"</params\s*>", re.IGNORECASE)


class _Block:
    """What a scan of one block found: the tool name and the arguments, in order."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.tool: str | None = None
        self.arguments: dict[str, Any] = {}

    def fail(self, reason: str) -> MalformedToolCall:
        return MalformedToolCall(reason, self.raw)

    def add(self, name: str, value: Any) -> None:
        if name in self.arguments:
            raise self.fail(f"parameter {name!r} is given twice")
        self.arguments[name] = value


def parse_request(raw: str, tools: ToolRegistry | Iterable[Tool] | None = None) -> ToolCall:
    """Read one `<mcp-request>` block into a `ToolCall` with a fresh id.

    With `tools`, the name must be registered and the values are coerced by its schema
    ("3" becomes 3 where an integer is expected; a string stays a string). Every problem
    raises `MalformedToolCall` with a reason a person understands.
    """
    block = _Block(raw)
    body = _body(block)
    _scan(block, body)
    if block.tool is None:
        raise block.fail('the block has no <tool name="…"> element')
    if tools is None:
        return ToolCall(block.tool, block.arguments)
    known = {item.name: item for item in tools}
    target = known.get(block.tool)
    if target is None:
        names = ", ".join(sorted(known)) or "none"
        raise block.fail(f"tool {block.tool!r} is not registered (known tools: {names})")
    try:
        arguments = coerce_arguments(target.input_schema, block.arguments)
    except BadArguments as error:
        raise block.fail(str(error)) from None
    return ToolCall(block.tool, arguments)


def _body(block: _Block) -> str:
    """The text between `<mcp-request …>` and `</mcp-request>`."""
    opening = _OPEN.search(block.raw)
    if opening is None:
        raise block.fail(f"the text has no <{TAG}> block")
    end = block.raw.find(">", opening.end())
    if end == -1:
        raise block.fail(f"the block was cut off before </{TAG}>")
    if block.raw[opening.end() : end].rstrip().endswith("/"):
        return ""  # <mcp-request/>: an empty block
    closing = _CLOSE.search(block.raw, end + 1)
    if closing is None:
        raise block.fail(f"the block was cut off before </{TAG}>")
    return block.raw[end + 1 : closing.start()]


def _scan(block: _Block, body: str) -> None:
    """Walk the body element by element; a param's value is consumed whole, never scanned for tags."""
    position = 0
    while (element := _ELEMENT.search(body, position)) is not None:
        closing, kind = element.group(1), element.group(2).lower()
        attributes, tag_end, self_closing = _read_tag(block, body, element.end(), kind)
        if closing:
            position = tag_end
        elif kind == "tool":
            position = _read_tool(block, body, attributes, tag_end, self_closing)
        elif kind == "params":
            position = _read_params(block, body, tag_end, self_closing)
        else:
            position = _read_param(block, body, attributes, tag_end, self_closing)


def _read_tag(block: _Block, body: str, start: int, kind: str) -> tuple[dict[str, str], int, bool]:
    """Attributes of a tag whose name ends at `start`; returns them, the index after `>`, and `/>`."""
    attributes: dict[str, str] = {}
    position = start
    while (match := _ATTRIBUTES.match(body, position)) is not None and match.end() > position:
        value = next((v for v in match.group(2, 3, 4) if v is not None), "")
        attributes[match.group(1).lower()] = html.unescape(value)
        position = match.end()
    rest = _TAG_END.match(body, position)
    if rest is None:
        raise block.fail(f"the <{kind}> tag is not closed with '>'")
    return attributes, rest.end(), bool(rest.group(1))


def _read_tool(block: _Block, body: str, attributes: dict[str, str], tag_end: int, self_closing: bool) -> int:
    name = attributes.get("name", "").strip()
    position = tag_end
    if not name and not self_closing:
        # <tool>say_hello</tool>: the name written as the element's text
        text = _TOOL_TEXT.match(body, tag_end)
        if text is not None:
            name, position = html.unescape(text.group(1)).strip(), text.end()
    if not name:
        raise block.fail('the <tool> element has no name; write <tool name="..." />')
    if block.tool is not None and block.tool != name:
        raise block.fail(f"the block names two tools ({block.tool!r} and {name!r}); write one block per call")
    block.tool = name
    return position


def _read_param(block: _Block, body: str, attributes: dict[str, str], tag_end: int, self_closing: bool) -> int:
    name = attributes.get("name", "").strip()
    if not name:
        raise block.fail('a <param> element has no name; write <param name="...">value</param>')
    if self_closing:  # <param name="k" value="v" />
        block.add(name, attributes.get("value", ""))
        return tag_end
    closing = _PARAM_CLOSE.search(body, tag_end)
    text = body[tag_end : closing.start()] if closing else ""
    if closing is None or _PARAM_OPEN.search(text):
        raise block.fail(f'the <param name="{name}"> element is not closed with </param>')
    block.add(name, _param_value(text))
    return closing.end()


def _param_value(text: str) -> str:
    """Strip the surrounding whitespace, then decode entities (or unwrap CDATA verbatim)."""
    text = text.strip(_EDGE_SPACE)
    cdata = _CDATA.match(text)
    return cdata.group(1) if cdata else html.unescape(text)


def _read_params(block: _Block, body: str, tag_end: int, self_closing: bool) -> int:
    if self_closing:
        return tag_end
    closing = _PARAMS_CLOSE.search(body, tag_end)
    if closing is None:
        raise block.fail("the <params> element is not closed with </params>")
    text = body[tag_end : closing.start()].strip()
    if text:
        for name, value in _json_object(block, text).items():
            block.add(str(name), value)
    return closing.end()


def _json_object(block: _Block, text: str) -> dict[str, Any]:
    """Parse `<params>` text; models sometimes entity-escape it, so that is tried second."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        unescaped = html.unescape(text)
        try:
            value = json.loads(unescaped) if unescaped != text else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            where = f"{error.msg} at line {error.lineno} column {error.colno}"
            raise block.fail(f"<params> is not a JSON object: {where}") from None
    if not isinstance(value, dict):
        raise block.fail(f"<params> is not a JSON object: got {type(value).__name__} {_shorten(text)}")
    return value


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the grammar ---------------------------------------------------------------

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
        parts = [_literal(f'<tool name="{item.name}" />')]
        required = set(item.required)
        for number, (name, schema) in enumerate(item.parameters.items(), start=1):
            value = _value_rule(schema or {}, f"{rule}-p{number}", rules, used)
            opening = _literal(f'<param name="{name}">')
            element = f'ws {opening} {value} "</param>"'
            parts.append(element if name in required else f"( {element} )?")
        rules.append(f"{rule} ::= {' '.join(parts)}")
    head = [
        f'root ::= "<{TAG}>" ws ( {" | ".join(calls)} ) ws "</{TAG}>"',
        "ws ::= [ \\t\\n]{0,8}",
    ]
    return "\n".join(head + rules + [_VALUE_RULES[kind] for kind in _VALUE_RULES if kind in used]) + "\n"


def _value_rule(schema: dict[str, Any], enum_rule: str, rules: list[str], used: set[str]) -> str:
    """The rule a value must match: an enum's alternatives, or the shared rule of its JSON type."""
    if schema.get("enum"):
        alternatives = " | ".join(_literal(_param_text(v)) for v in schema["enum"])
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


def _literal(text: str) -> str:
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
