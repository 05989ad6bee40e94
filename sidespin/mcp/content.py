"""What an external MCP server says, as sidespin reads it: results as text and attachments, tools as `Tool`s.

    render_result(call_tool_result, call)      # -> ToolResult: text, placeholders, JSON; images attached
    render_blocks(prompt_message_contents)     # -> texts, attachments (what a tool result or a prompt says)
    render_resource_contents(read_result.contents)   # -> texts, attachments (what a resource read gives)
    tool_from_mcp(listed, fn, source=..., timeout=...)   # a listed MCP tool -> a registry Tool

An attachment is `{"type": "image"|"audio", "mimeType", "data"}` (base64), and its text a placeholder;
an embedded resource is also `{"type": "resource", "uri", "mimeType", "text"}`, for the page to show.
A result's `structuredContent` is kept as `ToolResult.structured`: it is the model's text when the
result has no text, and is added to the text when no text block already says it. A result not flagged `isError`
whose only content is a JSON object reporting a failure and nothing else (`reported_failure`:
`{"error": "no such table: x"}`, `{"success": false, "message": …}`) is a failure all the same.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import mcp_types as types

from sidespin.tools import Tool, ToolCall, ToolFn, ToolResult
from sidespin.tools.schema import as_meant

__all__ = ["render_blocks", "render_resource_contents", "render_result", "reported_failure", "tool_from_mcp"]


def _placeholder(kind: str, mime_type: str, data: str) -> str:
    return f"[{kind}: {mime_type}, {len(data) * 3 // 4} bytes]"


def _resource_text(block: types.EmbeddedResource) -> str:
    resource = block.resource
    if isinstance(resource, types.TextResourceContents):
        return resource.text
    return _placeholder(
        "resource " + str(resource.uri), resource.mime_type or "application/octet-stream", resource.blob
    )


def render_blocks(blocks: list[types.ContentBlock]) -> tuple[list[str], list[dict[str, Any]]]:
    """Content blocks as texts and placeholders, with images and audio as attachments."""
    texts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, (types.ImageContent, types.AudioContent)):
            attachments.append({"type": block.type, "mimeType": block.mime_type, "data": block.data})
            texts.append(_placeholder(block.type, block.mime_type, block.data))
        elif isinstance(block, types.ResourceLink):
            texts.append(f"[resource: {block.name}]({block.uri})")
        elif isinstance(block, types.EmbeddedResource):
            text = _resource_text(block)
            attachments.append({"type": "resource", "uri": str(block.resource.uri),
                                "mimeType": block.resource.mime_type or "", "text": text})
            texts.append(text)
    return texts, attachments


def render_resource_contents(
    contents: list[types.TextResourceContents | types.BlobResourceContents],
) -> tuple[list[str], list[dict[str, Any]]]:
    """A resource's contents as texts and placeholders; image and audio blobs also as attachments."""
    texts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for item in contents:
        if isinstance(item, types.TextResourceContents):
            texts.append(item.text)
            continue
        mime_type = item.mime_type or "application/octet-stream"
        kind = mime_type.split("/")[0]
        if kind in ("image", "audio"):
            attachments.append({"type": kind, "mimeType": mime_type, "data": item.blob})
            texts.append(_placeholder(kind, mime_type, item.blob))
        else:
            texts.append(_placeholder("resource " + str(item.uri), mime_type, item.blob))
    return texts, attachments


def render_result(result: types.CallToolResult, call: ToolCall) -> ToolResult:
    """Turn an MCP tool result into what the model reads: text, placeholders, JSON; images as attachments."""
    texts, attachments = render_blocks(result.content)
    structured = result.structured_content
    if structured is not None and texts and not any(_same_json(text, structured) for text in texts):
        texts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(texts)
    if result.is_error or reported_failure(text, structured):
        error = text or (json.dumps(structured, ensure_ascii=False) if structured is not None else "")
        return ToolResult(call=call, error=error or "the tool reported an error", attachments=attachments,
                          kind="failed", structured=structured)
    return ToolResult(call=call, output=text, attachments=attachments, structured=structured)


# what an object that reports a failure may hold besides it: its message, code and details, never a payload
_FAILURE_KEYS = {"error", "errors", "success", "ok", "status", "message", "code", "detail", "details", "hint"}


def reported_failure(text: str, structured: Any = None) -> bool:
    """Whether a result's content is one JSON object that reports a failure and holds nothing else: keys only among
    `_FAILURE_KEYS`, and a non-empty `error` or `errors`, `success` or `ok` false, or `status` "error" (JSend's; a
    status "failed" is as likely a job's). An object with any other key (a row whose `error` column is set, `{"error":
    null, "rows": [...]}`) or any text beside it is not one."""
    try:
        value = json.loads(text) if text.strip() else structured
    except ValueError:
        return False
    if not isinstance(value, Mapping) or not value or not set(value) <= _FAILURE_KEYS:
        return False
    status = value.get("status")
    return bool(value.get("error") or value.get("errors")) or value.get("success") is False or (
        value.get("ok") is False) or (isinstance(status, str) and status.lower() == "error")


def _same_json(text: str, value: Any) -> bool:
    """Whether a text block already says what the structured content says (SDKs mirror it, or wrap a scalar)."""
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = text
    if parsed == value:
        return True
    # Python SDK servers wrap a plain return value as {"result": value} beside its text.
    return isinstance(value, dict) and len(value) == 1 and next(iter(value.values())) in (parsed, text)



def tool_from_mcp(listed: types.Tool, fn: ToolFn, *, source: str, timeout: float) -> Tool:
    """A tool an MCP server listed, as a registry `Tool` that runs `fn`; its annotations become its hints."""
    annotations = listed.annotations
    return Tool(
        name=listed.name,
        description=listed.description or listed.title or "",
        input_schema=as_meant(listed.input_schema),
        fn=fn,
        source=source,
        read_only=bool(annotations and annotations.read_only_hint),
        destructive=bool(annotations and annotations.destructive_hint),
        timeout=timeout,
    )
