"""The history in block form: past calls as `<mcp-request>` blocks and results as `<mcp-response>` text, for a
model that reads no native tool calls (the `xml` rung)."""

from __future__ import annotations

from typing import Any

from sidespin.formats import ATTACHMENTS, call_from_openai
from sidespin.protocol.block import format_block

__all__ = ["xml_history", "alternating"]


def xml_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as a model without native tool support reads it: calls as blocks, results as text."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            blocks = "\n".join(format_block(call_from_openai(item)) for item in message["tool_calls"])
            content = ((message.get("content") or "") + "\n" + blocks).strip()
            converted.append({"role": "assistant", "content": content})
        elif message["role"] == "tool":
            content = (
                f'<mcp-response tool="{message.get("name", "")}" id="{message.get("tool_call_id", "")}">\n'
                f'{message["content"]}\n</mcp-response>'
            )
            converted.append({"role": "user", "content": content})
        else:
            kept = {ATTACHMENTS: message[ATTACHMENTS]} if message.get(ATTACHMENTS) else {}  # a user's images
            converted.append({"role": message["role"], "content": message.get("content") or "", **kept})
    return alternating(converted)


def alternating(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neighbours of the same role merged into one message: chat templates want roles to alternate."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"] and message["role"] != "system":
            images = (merged[-1].get(ATTACHMENTS) or []) + (message.get(ATTACHMENTS) or [])
            merged[-1] = {**merged[-1], "content": merged[-1]["content"] + "\n\n" + message["content"],
                          **({ATTACHMENTS: images} if images else {})}
        else:
            merged.append(message)
    return merged
