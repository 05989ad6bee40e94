"""What a turn does to a conversation's history: keep its recent turns, put a decided call's result in place.

The history is a conversation's messages, OpenAI-shaped, without the system prompt, as the transcript
stands for them (`Transcript.to_messages`) and a turn extends them (`sidespin.rally`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["recent", "put_result"]


def recent(messages: list[dict[str, Any]], keep_turns: int | None) -> list[dict[str, Any]]:
    """The messages from the last `keep_turns` user turns on; all of them when `keep_turns` is unset or 0."""
    if not keep_turns:
        return list(messages)
    starts = [i for i, message in enumerate(messages) if message["role"] == "user"]
    return list(messages[starts[-keep_turns]:]) if len(starts) > keep_turns else list(messages)


def put_result(messages: list[dict[str, Any]], reply: dict[str, Any]) -> None:
    """Put the result of a call a person decided (a tool message) into the history: where the last turn said
    the call was not run (its answer went on after the call while the call waited), else at the end."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user":
            break
        if message["role"] == "tool" and message.get("tool_call_id") == reply["tool_call_id"]:
            messages[index] = reply
            return
    messages.append(reply)
