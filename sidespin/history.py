"""What a conversation's history says: the calls that wait for a person, and its recent turns.

The history is a conversation's messages, OpenAI-shaped, without the system prompt:
the rally's only state (`sidespin.rally`).
"""

from __future__ import annotations

from typing import Any

from sidespin.formats import call_from_openai
from sidespin.record import CallRecord, waiting
from sidespin.tools import ToolCall

__all__ = ["pending_calls", "recent"]


def pending_calls(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet: they wait for a person (`record.waiting`)."""
    answered: set[str] = set()
    for message in reversed(messages):
        if message["role"] == "tool":
            answered.add(message.get("tool_call_id"))
        elif message["role"] == "assistant" and message.get("tool_calls"):
            calls = [call_from_openai(item) for item in message["tool_calls"]]
            return waiting(CallRecord(call, "done" if call.id in answered else "waiting") for call in calls)
        elif message["role"] in ("assistant", "user"):
            return []
    return []


def recent(messages: list[dict[str, Any]], keep_turns: int | None) -> list[dict[str, Any]]:
    """The messages from the last `keep_turns` user turns on; all of them when `keep_turns` is unset or 0."""
    if not keep_turns:
        return list(messages)
    starts = [i for i, message in enumerate(messages) if message["role"] == "user"]
    return list(messages[starts[-keep_turns]:]) if len(starts) > keep_turns else list(messages)
