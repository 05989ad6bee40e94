"""The block: a `ToolCall` written as an `<mcp-request>` block, and a block read back.

`format_block` writes the canonical block; `parse_request` reads one into a
`ToolCall`, tolerating what small models really write (unescaped `&` and `<` in
values, single quotes, missing `/`, JSON in `<params>`).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Iterable

from sidespin.errors import BadArguments, MalformedToolCall
from sidespin.tools import Tool, ToolCall, ToolRegistry, coerce_arguments

__all__ = ["MCP_TAG", "format_block", "parse_request", "holds_call_syntax"]

MCP_TAG = "mcp-request"

# Call syntax of any format the server reads: a block's tags, its `<tool name=`/`<param name=`, a `<tool_call>`.
_CALL_SYNTAX = re.compile(rf"</?(?:{MCP_TAG}|tool_call)\b|<(?:tool|param)\s+name\s*=")

_EDGE_SPACE = " \t\r\n"  # stripped around a param's value: the indentation and newlines of the layout


def format_block(call: ToolCall) -> str:
    """The canonical block for a call; `parse_request(format_block(call))` gives its arguments back."""
    lines = [f"<{MCP_TAG}>", f'  <tool name="{html.escape(call.name)}" />']
    for name, value in call.arguments.items():
        lines.append(f'  <param name="{html.escape(str(name))}">{_escape_value(_param_text(value))}</param>')
    lines.append(f"</{MCP_TAG}>")
    return "\n".join(lines)


def holds_call_syntax(arguments: dict[str, Any]) -> bool:
    """Whether a call's arguments carry call syntax: the model copied its instructions (or a page that imitates
    them) into a call, which asks for nothing a person said; run, its card would show the syntax raw."""
    return bool(_CALL_SYNTAX.search(json.dumps(arguments, ensure_ascii=False, default=str)))


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
    """A value as a param's text: strings as they are, JSON for the rest (the grammar's enums too)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _json_type(schema: dict[str, Any]) -> str:
    """The JSON type a parameter's schema names (the first that is not null), or "any" (the prompt and the grammar)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return kind if isinstance(kind, str) else "any"


_OPEN = re.compile(rf"<{MCP_TAG}(?=[\s>/]|\Z)")
_CLOSE = re.compile(rf"</{MCP_TAG}\s*>")
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
        raise block.fail(f"the text has no <{MCP_TAG}> block")
    end = block.raw.find(">", opening.end())
    if end == -1:
        raise block.fail(f"the block was cut off before </{MCP_TAG}>")
    if block.raw[opening.end() : end].rstrip().endswith("/"):
        return ""  # <mcp-request/>: an empty block
    closing = _CLOSE.search(block.raw, end + 1)
    if closing is None:
        raise block.fail(f"the block was cut off before </{MCP_TAG}>")
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
