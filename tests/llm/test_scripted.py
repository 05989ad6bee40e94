"""ScriptedBackend: the fake model the rally tests rely on."""

from __future__ import annotations

from typing import Any

import pytest

from sidespin.errors import BackendError
from sidespin.llm import Delta, Grammar
from sidespin.tools import ToolCall
from tests.scripted import ScriptedBackend


async def collect(backend: ScriptedBackend, messages: list[dict[str, Any]], **kwargs: Any) -> list[Delta]:
    return [delta async for delta in backend.stream(messages, **kwargs)]


async def test_turns_replay_text_and_tool_calls_in_order() -> None:
    call = ToolCall("get_time", {"timezone": "UTC"}, id="call_1")
    backend = ScriptedBackend([["Let me ", "look. ", call], ["It is noon."]], supports_tools=True)
    first = await collect(backend, [{"role": "user", "content": "time?"}])
    second = await collect(backend, [{"role": "user", "content": "time?"}])
    assert [d.text for d in first if d.text] == ["Let me ", "look. "]
    assert [c for d in first for c in d.tool_calls] == [call]
    assert first[-1].finish_reason == "tool_calls"
    assert "".join(d.text for d in second) == "It is noon." and second[-1].finish_reason == "stop"


async def test_messages_are_recorded_as_they_were_sent() -> None:
    backend = ScriptedBackend([["ok"]])
    messages = [{"role": "user", "content": "hello"}]
    await collect(backend, messages, grammar=Grammar("root ::= x", trigger="<mcp-request"))
    messages[0]["content"] = "changed afterwards"
    assert backend.calls == [[{"role": "user", "content": "hello"}]]
    assert backend.grammars[0] is not None and backend.grammars[0].trigger == "<mcp-request"


async def test_a_callable_turn_answers_from_the_messages() -> None:
    backend = ScriptedBackend([lambda messages: [f"You said {messages[-1]['content']!r}."]])
    deltas = await collect(backend, [{"role": "user", "content": "ping"}])
    assert "".join(d.text for d in deltas) == "You said 'ping'."


async def test_running_out_of_turns_is_a_backend_error() -> None:
    backend = ScriptedBackend([["only one"]])
    await collect(backend, [{"role": "user", "content": "1"}])
    with pytest.raises(BackendError, match="no turn 2"):
        await collect(backend, [{"role": "user", "content": "2"}])
    assert len(backend.calls) == 2


async def test_deltas_pass_through_with_their_own_ending() -> None:
    backend = ScriptedBackend([[Delta(thinking="hmm"), "partial", Delta(finish_reason="length")]], delay=0.001)
    deltas = await collect(backend, [{"role": "user", "content": "x"}])
    assert [d.thinking for d in deltas][0] == "hmm"
    assert [d.finish_reason for d in deltas] == [None, None, "length"]
