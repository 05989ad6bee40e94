"""Provider formats in one place: pure conversions between MCP, OpenAI, Anthropic and Ollama.

Tools (each provider's shape is made from the MCP shape `{name, description, inputSchema}`):

| provider  | shape                                                        |
|-----------|--------------------------------------------------------------|
| MCP       | `{"name", "description", "inputSchema"}`                     |
| OpenAI    | `{"type": "function", "function": {"name", "description", "parameters"}}` |
| Anthropic | `{"name", "description", "input_schema"}`                    |
| Ollama    | the OpenAI shape                                             |

Tool calls: this module is the one place where a `ToolCall` becomes a provider's
shape or is read back from one (`call_to_openai` / `call_from_openai`, the same
for Ollama and Anthropic) and where a result becomes a tool message
(`tool_message`). Arguments that are not a JSON object are kept as
`{MALFORMED: raw}` so the model can be told what it wrote.

Messages: sidespin keeps OpenAI-shaped messages (`tool_calls` with JSON-string
arguments, `role="tool"` results with `tool_call_id`). Anthropic puts calls and
results in content blocks (`tool_use` in the assistant turn, `tool_result` in the
next user turn) and the system prompt at the top level. Ollama gives arguments as
objects, no call ids, and names the tool of a result with `tool_name`.

Images a tool returned ride on its tool message as `attachments` (sidespin's own
key, never sent as is). Each `to_*_messages(messages, images=...)` gives them to a
model with vision (`Backend.supports_images`) in its provider's shape, and to any
other model not at all: the result's text already holds a placeholder such as
`[image: image/png, 1234 bytes]`, never the base64.

| provider  | an image a tool returned                                          |
|-----------|-------------------------------------------------------------------|
| OpenAI    | tool messages take text only: a `user` message right after the results, with `image_url` data-URL parts |
| Anthropic | `image` blocks (base64 source) inside the `tool_result` content, after its text |
| Ollama    | `images` (a list of base64) on the tool message                   |

Images a person attached to their own message (a resource chosen with `@`) ride on the user
message as `ATTACHMENTS` too; with vision they become its content parts (OpenAI `image_url`,
Anthropic `image` blocks) or its `images` (Ollama); otherwise its text holds the placeholder.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sidespin.tools import Tool, ToolCall, ToolResult, new_call_id

__all__ = [
    "MALFORMED",
    "mcp_tool",
    "to_openai_tool",
    "to_anthropic_tool",
    "to_ollama_tool",
    "parse_arguments",
    "call_to_openai",
    "call_from_openai",
    "call_to_ollama",
    "call_from_ollama",
    "call_to_anthropic",
    "call_from_anthropic",
    "ATTACHMENTS",
    "image_attachments",
    "tool_message",
    "to_openai_messages",
    "to_anthropic_messages",
    "to_ollama_messages",
]

MALFORMED = "__malformed__"  # key of the arguments dict of a call whose JSON could not be read
ATTACHMENTS = "attachments"  # key of a tool message's images in sidespin's history (no provider reads it)

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


def to_openai_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool (`parameters` is the input schema)."""
    spec = mcp_tool(tool)
    function: dict[str, Any] = {"name": spec["name"]}
    if "description" in spec:
        function["description"] = spec["description"]
    function["parameters"] = spec["inputSchema"]
    return {"type": "function", "function": function}


def to_anthropic_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An Anthropic tool (`input_schema`, top-level `name` and `description`)."""
    spec = mcp_tool(tool)
    out: dict[str, Any] = {"name": spec["name"]}
    if "description" in spec:
        out["description"] = spec["description"]
    out["input_schema"] = spec["inputSchema"]
    return out


def to_ollama_tool(tool: Tool | dict[str, Any]) -> dict[str, Any]:
    """An Ollama tool: Ollama's `/api/chat` takes the OpenAI function shape."""
    return to_openai_tool(tool)


# ---------------------------------------------------------------- tool calls


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Arguments as a dict (a copy); JSON that is not an object becomes `{MALFORMED: raw}` so it can be reported."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return {MALFORMED: raw}
    return value if isinstance(value, dict) else {MALFORMED: raw}


def _arguments_json(arguments: dict[str, Any]) -> str:
    if set(arguments) == {MALFORMED}:
        return str(arguments[MALFORMED])  # give the model back exactly what it wrote
    return json.dumps(arguments, ensure_ascii=False)


def call_to_openai(call: ToolCall) -> dict[str, Any]:
    """An OpenAI `tool_calls` item for a call (unreadable arguments go back exactly as the model wrote them)."""
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments_json(call.arguments)}}


def call_from_openai(item: dict[str, Any]) -> ToolCall:
    """A `ToolCall` from an OpenAI `tool_calls` item (a missing id is generated)."""
    function = item.get("function") or {}
    return ToolCall(
        name=function.get("name", ""),
        arguments=parse_arguments(function.get("arguments")),
        id=item.get("id") or new_call_id(),
    )


def call_to_ollama(call: ToolCall) -> dict[str, Any]:
    """An Ollama `tool_calls` item: the OpenAI function with its arguments as an object, and no id."""
    return {"function": {"name": call.name, "arguments": call.arguments}}


def call_from_ollama(item: dict[str, Any]) -> ToolCall:
    """A `ToolCall` from an Ollama `tool_calls` item: arguments already an object, and no id (one is generated)."""
    return call_from_openai(item)


def call_to_anthropic(call: ToolCall) -> dict[str, Any]:
    """An Anthropic `tool_use` content block for a call."""
    return {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}


def call_from_anthropic(block: dict[str, Any]) -> ToolCall:
    """A `ToolCall` from an Anthropic `tool_use` block; its `input` may be the object or the JSON text streamed for it."""
    return ToolCall(
        name=block.get("name") or "",
        arguments=parse_arguments(block.get("input")),
        id=block.get("id") or new_call_id(),
    )


_FRACTION = re.compile(r'^(-?\d+)/(\d+)$|"(-?\d+)/(\d+)"')  # an exact fraction: the whole result, or a JSON text


def with_decimals(text: str) -> str:
    """`text`, with a line after it giving the decimal value of each exact fraction it gives, whole or as a JSON
    string value ("625/4": "(625/4 = 156.25)"): a small model reads "625/4" as 625. Other texts as they are."""
    pairs = [(a or c, b or d) for a, b, c, d in _FRACTION.findall(text.strip())]
    found = dict.fromkeys(f"{p}/{q} = {int(p) / int(q):.10g}" for p, q in pairs if int(q) > 1)
    return f"{text}\n({'; '.join(found)})" if found else text


def tool_message(result: ToolResult) -> dict[str, Any]:
    """The OpenAI-shaped `role="tool"` message that gives a call's result (or error) back to the model, exact
    fractions also as decimals (`with_decimals`); the images it returned ride along as `ATTACHMENTS`, for a model
    with vision."""
    message = {"role": "tool", "tool_call_id": result.call.id, "name": result.call.name,
               "content": with_decimals(result.text())}
    images = [item for item in result.attachments if item.get("type") == "image" and item.get("data")]
    if images:
        message[ATTACHMENTS] = images
    return message


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


def image_attachments(items: Any) -> list[dict[str, Any]]:
    """The images among attachments (`{"type": "image", "mimeType", "data"}`); anything else is left out."""
    return [item for item in items or [] if isinstance(item, dict) and item.get("type") == "image" and item.get("data")]


def _images(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The images a tool or user message carries."""
    return image_attachments(message.get(ATTACHMENTS))


def _mime_type(image: dict[str, Any]) -> str:
    return image.get("mimeType") or "image/png"


def to_openai_messages(messages: list[dict[str, Any]], *, images: bool = False) -> list[dict[str, Any]]:
    """Messages for an OpenAI-compatible `/chat/completions`: sidespin's own, without their `ATTACHMENTS`.

    With `images`, the images of a run of tool results follow it in one `user` message
    (OpenAI's tool messages take text only, and nothing may come between a call and its result).
    """
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] != "tool" and parts:
            out.append({"role": "user", "content": parts})
            parts = []
        out.append({key: value for key, value in message.items() if key != ATTACHMENTS})
        if images and message["role"] == "user" and _images(message):
            out[-1]["content"] = [{"type": "text", "text": _text(message.get("content"))}] + [
                {"type": "image_url", "image_url": {"url": f"data:{_mime_type(i)};base64,{i['data']}"}}
                for i in _images(message)]
        if images and message["role"] == "tool" and _images(message):
            parts.append({"type": "text", "text": f"What {message.get('name') or 'the tool'} returned:"})
            parts += [{"type": "image_url", "image_url": {"url": f"data:{_mime_type(i)};base64,{i['data']}"}}
                      for i in _images(message)]
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def _tool_result_content(message: dict[str, Any], text: str, images: bool) -> str | list[dict[str, Any]]:
    if not images or not _images(message):
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    return blocks + _image_blocks(message)


def _image_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "image", "source": {"type": "base64", "media_type": _mime_type(i), "data": i["data"]}}
            for i in _images(message)]


def to_anthropic_messages(
    messages: list[dict[str, Any]], *, images: bool = False
) -> tuple[str, list[dict[str, Any]]]:
    """`(system, messages)` for the Messages API.

    System messages are joined into the top-level `system`; tool results become
    `tool_result` blocks of one user turn, followed by the user's own text if it
    comes next, since Anthropic wants the results right after the `tool_use` turn.
    With `images`, a result's images are `image` blocks of its `tool_result`.
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
            block = {"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""),
                     "content": _tool_result_content(message, text, images)}
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
            blocks += [call_to_anthropic(call_from_openai(item)) for item in calls]
            out.append({"role": "assistant", "content": blocks})
        else:
            turn = results_turn()
            pictures = _image_blocks(message) if images else []
            if turn is None:
                out.append({"role": "user", "content": [{"type": "text", "text": text}, *pictures] if pictures else text})
            else:
                turn += ([{"type": "text", "text": text}] if text else []) + pictures
    return "\n\n".join(part for part in system if part), out


def to_ollama_messages(messages: list[dict[str, Any]], *, images: bool = False) -> list[dict[str, Any]]:
    """Messages for Ollama's `/api/chat`: arguments as objects, results named by `tool_name`;
    with `images`, a result's images as its `images` (base64)."""
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for message in messages:
        role, text = message["role"], _text(message.get("content"))
        converted: dict[str, Any] = {"role": role, "content": text}
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for item in message["tool_calls"]:
                call = call_from_openai(item)
                names[call.id] = call.name
                calls.append(call_to_ollama(call))
            converted["tool_calls"] = calls
        elif role == "tool":
            converted["tool_name"] = message.get("name") or names.get(message.get("tool_call_id", ""), "")
        if images and role in ("tool", "user") and _images(message):
            converted["images"] = [image["data"] for image in _images(message)]
        if message.get("images"):
            converted["images"] = message["images"]
        out.append(converted)
    return out
