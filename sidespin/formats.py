"""Provider formats in one place: pure conversions between MCP, OpenAI, Anthropic and Ollama.

Tools (all converted from and back to the MCP shape `{name, description, inputSchema}`):

| provider  | shape                                                        |
|-----------|--------------------------------------------------------------|
| MCP       | `{"name", "description", "inputSchema"}`                     |
| OpenAI    | `{"type": "function", "function": {"name", "description", "parameters"}}` |
| Anthropic | `{"name", "description", "input_schema"}`                    |
| Ollama    | the OpenAI shape                                             |

Messages: sidespin keeps OpenAI-shaped messages (`tool_calls` with JSON-string
arguments, `role="tool"` results with `tool_call_id`). Anthropic puts calls and
results in content blocks (`tool_use` in the assistant turn, `tool_result` in the
next user turn) and the system prompt at the top level. Ollama gives arguments as
objects, no call ids, and names the tool of a result with `tool_name`.
"""

from __future__ import annotations

import json
from typing import Any

from sidespin.tools import Tool, ToolCall, new_call_id

__all__ = [
    "MALFORMED",
    "mcp_tool",
    "to_openai_tool",
    "from_openai_tool",
    "to_anthropic_tool",
    "from_anthropic_tool",
    "to_ollama_tool",
    "from_ollama_tool",
    "parse_arguments",
    "tool_call_to_openai",
    "tool_call_from_openai",
    "to_anthropic_messages",
    "from_anthropic_messages",
    "to_ollama_messages",
    "from_ollama_messages",
]

MALFORMED = "__malformed__"  # key of the arguments dict of a call whose JSON could not be read

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


# ---------------------------------------------------------------- tools


def mcp_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """The MCP description of a tool: `name`, `description` (when there is one) and `inputSchema`."""
    if isinstance(tool, Tool):
        name, description, schema = tool.name, tool.description, tool.input_schema
    else:
        name, description = tool["name"], tool.get("description")
        schema = tool.get("inputSchema") or tool.get("input_schema")
    spec: dict[str, Any] = {"name": name}
    if description:
        spec["description"] = description
    spec["inputSchema"] = schema or dict(_EMPTY_SCHEMA)
    return spec


def _from_parts(name: str, description: str | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name}
    if description:
        spec["description"] = description
    spec["inputSchema"] = schema or dict(_EMPTY_SCHEMA)
    return spec


def to_openai_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool (`parameters` is the input schema)."""
    spec = mcp_tool(tool)
    function: dict[str, Any] = {"name": spec["name"]}
    if "description" in spec:
        function["description"] = spec["description"]
    function["parameters"] = spec["inputSchema"]
    return {"type": "function", "function": function}


def from_openai_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """The MCP shape of an OpenAI function tool."""
    function = spec.get("function", spec)
    return _from_parts(function["name"], function.get("description"), function.get("parameters"))


def to_anthropic_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An Anthropic tool (`input_schema`, top-level `name` and `description`)."""
    spec = mcp_tool(tool)
    out: dict[str, Any] = {"name": spec["name"]}
    if "description" in spec:
        out["description"] = spec["description"]
    out["input_schema"] = spec["inputSchema"]
    return out


def from_anthropic_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """The MCP shape of an Anthropic tool."""
    return _from_parts(spec["name"], spec.get("description"), spec.get("input_schema"))


def to_ollama_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An Ollama tool: Ollama's `/api/chat` takes the OpenAI function shape."""
    return to_openai_tool(tool)


def from_ollama_tool(spec: dict[str, Any]) -> dict[str, Any]:
    """The MCP shape of an Ollama tool."""
    return from_openai_tool(spec)


# ---------------------------------------------------------------- tool calls


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Arguments as a dict; JSON that cannot be read becomes `{"__malformed__": raw}` so it can be reported."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return {MALFORMED: raw}
    return value if isinstance(value, dict) else {MALFORMED: raw}


def _arguments_json(arguments: dict[str, Any]) -> str:
    if set(arguments) == {MALFORMED}:
        return str(arguments[MALFORMED])  # give the model back exactly what it wrote
    return json.dumps(arguments, ensure_ascii=False)


def tool_call_to_openai(call: ToolCall) -> dict[str, Any]:
    """An OpenAI `tool_calls` item for a call."""
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments_json(call.arguments)}}


def tool_call_from_openai(item: dict[str, Any]) -> ToolCall:
    """A `ToolCall` from an OpenAI `tool_calls` item (a missing id is generated)."""
    function = item.get("function", {})
    return ToolCall(
        name=function.get("name", ""),
        arguments=parse_arguments(function.get("arguments")),
        id=item.get("id") or new_call_id(),
    )


# ---------------------------------------------------------------- messages


def _text(content: Any) -> str:
    """The text of an OpenAI or Anthropic content value (string, None, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text")
    return str(content)


def to_anthropic_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """`(system, messages)` for the Messages API.

    System messages are joined into the top-level `system`; tool results become
    `tool_result` blocks of one user turn, followed by the user's own text if it
    comes next, since Anthropic wants the results right after the `tool_use` turn.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def results_turn() -> list[dict[str, Any]] | None:
        last = out[-1] if out else None
        if last and last["role"] == "user" and isinstance(last["content"], list):
            if any(block.get("type") == "tool_result" for block in last["content"]):
                return last["content"]
        return None

    for message in messages:
        role, text = message["role"], _text(message.get("content"))
        if role == "system":
            system.append(text)
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""), "content": text}
            turn = results_turn()
            if turn is None:
                out.append({"role": "user", "content": [block]})
            else:
                turn.append(block)
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if not calls:
                if text:
                    out.append({"role": "assistant", "content": text})
                continue
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for item in calls:
                call = tool_call_from_openai(item)
                blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
            out.append({"role": "assistant", "content": blocks})
        else:
            turn = results_turn()
            if turn is None:
                out.append({"role": "user", "content": text})
            elif text:
                turn.append({"type": "text", "text": text})
    return "\n\n".join(part for part in system if part), out


def from_anthropic_messages(messages: list[dict[str, Any]], system: str | list[dict[str, Any]] = "") -> list[dict[str, Any]]:
    """OpenAI-shaped messages from Anthropic's `system` and `messages` (thinking blocks are dropped)."""
    out: list[dict[str, Any]] = []
    if _text(system):
        out.append({"role": "system", "content": _text(system)})
    for message in messages:
        role, content = message["role"], message.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        blocks = content or []
        if role == "assistant":
            converted: dict[str, Any] = {"role": "assistant", "content": _text(blocks)}
            calls = [
                tool_call_to_openai(ToolCall(name=b["name"], arguments=b.get("input") or {}, id=b["id"]))
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            if calls:
                converted["tool_calls"] = calls
            out.append(converted)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": _text(block.get("content"))})
        if any(block.get("type") == "text" for block in blocks):
            out.append({"role": role, "content": _text(blocks)})
    return out


def to_ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for Ollama's `/api/chat`: arguments as objects, results named by `tool_name`."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        role, text = message["role"], _text(message.get("content"))
        converted: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for item in message["tool_calls"]:
                call = tool_call_from_openai(item)
                names[call.id] = call.name
                calls.append({"function": {"name": call.name, "arguments": call.arguments}})
            converted["tool_calls"] = calls
        elif role == "tool":
            converted["tool_name"] = message.get("name") or names.get(message.get("tool_call_id", ""), "")
        if message.get("images"):
            converted["images"] = message["images"]
        out.append(converted)
    return out


def from_ollama_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-shaped messages from Ollama's; each result is matched to the oldest open call of its tool."""
    open_calls: list[tuple[str, str]] = []  # (tool name, call id) still waiting for a result
    out: list[dict[str, Any]] = []
    for message in messages:
        role, text = message["role"], message.get("content") or ""
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for item in message["tool_calls"]:
                function = item.get("function", {})
                call = ToolCall(
                    name=function.get("name", ""),
                    arguments=parse_arguments(function.get("arguments")),
                    id=item.get("id") or new_call_id(),
                )
                open_calls.append((call.name, call.id))
                calls.append(tool_call_to_openai(call))
            out.append({"role": "assistant", "content": text, "tool_calls": calls})
        elif role == "tool":
            name = message.get("tool_name", "")
            match = next((pair for pair in open_calls if pair[0] == name), None)
            if match:
                open_calls.remove(match)
            out.append({"role": "tool", "tool_call_id": match[1] if match else new_call_id(), "content": text})
        else:
            out.append({"role": role, "content": text})
    return out
