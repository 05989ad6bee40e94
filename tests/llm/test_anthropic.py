"""AnthropicBackend against a fake server emitting the Messages API's documented SSE events (no key or network here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from sidespin.errors import BackendError
from sidespin.llm import Delta
from sidespin.llm.anthropic import AnthropicBackend
from sidespin.tools import tool

KEY = "sk-ant-test"
REQUESTS = web.AppKey("requests", list)


def event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def message_start() -> bytes:
    return event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_014p7gG3wDgGV9EUtLvnow3U",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "stop_sequence": None,
                "usage": {"input_tokens": 472, "output_tokens": 2},
                "content": [],
                "stop_reason": None,
            },
        },
    )


def tool_use_stream() -> list[bytes]:
    """The documented "streaming request with tool use" sequence: text, then a tool_use block in JSON pieces."""
    partial = ["", '{"location":', ' "San Fra', 'ncisco, CA"', ', "unit": "fah', 'renheit"}']
    return [
        message_start(),
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        event("ping", {"type": "ping"}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Okay"}}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ", let's check the weather."}}),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "get_weather", "input": {}},
            },
        ),
        *[
            event("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}})
            for p in partial
        ],
        event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 89}}),
        event("message_stop", {"type": "message_stop"}),
    ]


def thinking_stream() -> list[bytes]:
    return [
        message_start(),
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me solve this step by step."}}),
        event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}),
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        event("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "27 * 453 = 12,231"}}),
        event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}}),
        event("message_stop", {"type": "message_stop"}),
    ]


def overloaded_stream() -> list[bytes]:
    return [
        message_start(),
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        event("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]


def fake_anthropic(events: list[bytes]) -> web.Application:
    app = web.Application()
    app[REQUESTS] = []

    async def messages(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        app[REQUESTS].append({"body": body, "headers": dict(request.headers)})
        if request.headers.get("x-api-key") != KEY:
            error = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
            return web.json_response(error, status=401)
        if request.headers.get("anthropic-version") != "2023-06-01":
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error", "message": "bad version"}}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for item in events:
            await response.write(item)
        await response.write_eof()
        return response

    app.router.add_post("/v1/messages", messages)
    return app


@tool
def get_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location.

    Args:
        location: The city and state, e.g. San Francisco, CA
        unit: celsius or fahrenheit
    """
    return "15 degrees"


async def collect(backend: AnthropicBackend, messages: list[dict[str, Any]], **kwargs: Any) -> list[Delta]:
    return [delta async for delta in backend.stream(messages, **kwargs)]


QUESTION = [
    {"role": "system", "content": "You are a weather bot."},
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]


async def test_text_then_tool_use_from_json_pieces(serve) -> None:
    app = fake_anthropic(tool_use_stream())
    async with serve(app) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        deltas = await collect(backend, QUESTION, tools=[get_weather])
    assert "".join(d.text for d in deltas) == "Okay, let's check the weather."
    (call,) = [c for d in deltas for c in d.tool_calls]
    assert call.id == "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert call.name == "get_weather"
    assert call.arguments == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert deltas[-1].finish_reason == "tool_calls"


async def test_request_has_top_level_system_tools_and_headers(serve) -> None:
    app = fake_anthropic(tool_use_stream())
    async with serve(app) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY, max_tokens=1024) as backend:
        await collect(backend, QUESTION, tools=[get_weather])
    sent = app[REQUESTS][0]
    assert sent["headers"]["x-api-key"] == KEY and sent["headers"]["anthropic-version"] == "2023-06-01"
    body = sent["body"]
    assert body["system"] == "You are a weather bot."
    assert body["messages"] == [{"role": "user", "content": "What's the weather like in San Francisco?"}]
    assert body["stream"] is True and body["max_tokens"] == 1024 and body["model"] == "claude-sonnet-4-5"
    assert body["tools"][0]["name"] == "get_weather"
    assert body["tools"][0]["input_schema"]["required"] == ["location"]


async def test_tool_results_go_back_as_tool_result_blocks(serve) -> None:
    history = QUESTION + [
        {
            "role": "assistant",
            "content": "Okay, let's check the weather.",
            "tool_calls": [
                {"id": "toolu_01", "type": "function", "function": {"name": "get_weather", "arguments": '{"location": "San Francisco, CA"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_01", "content": "15 degrees"},
    ]
    app = fake_anthropic(thinking_stream())
    async with serve(app) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        await collect(backend, history, tools=[get_weather])
    assert app[REQUESTS][0]["body"]["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Okay, let's check the weather."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"location": "San Francisco, CA"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "15 degrees"}]},
    ]


async def test_thinking_streams_apart_from_the_answer(serve) -> None:
    async with serve(fake_anthropic(thinking_stream())) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        deltas = await collect(backend, QUESTION)
    assert "".join(d.thinking for d in deltas) == "Let me solve this step by step."
    assert "".join(d.text for d in deltas) == "27 * 453 = 12,231"
    assert deltas[-1].finish_reason == "stop"


async def test_error_event_ends_the_stream_with_its_reason(serve) -> None:
    async with serve(fake_anthropic(overloaded_stream())) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        with pytest.raises(BackendError, match="overloaded_error: Overloaded"):
            await collect(backend, QUESTION)


async def test_wrong_key_is_reported_with_status_and_reason(serve) -> None:
    async with serve(fake_anthropic(tool_use_stream())) as url, AnthropicBackend(url, "claude-sonnet-4-5", "sk-wrong") as backend:
        with pytest.raises(BackendError) as caught:
            await collect(backend, QUESTION)
    assert "HTTP 401" in str(caught.value) and "invalid x-api-key" in str(caught.value)


async def test_missing_key_is_refused_before_any_request() -> None:
    with pytest.raises(BackendError, match="ANTHROPIC_API_KEY"):
        await AnthropicBackend("http://127.0.0.1:1", "claude-sonnet-4-5", "").start()


async def test_unreachable_api_names_the_url(closed_port: int) -> None:
    async with AnthropicBackend(f"http://127.0.0.1:{closed_port}", "claude-sonnet-4-5", KEY) as backend:
        with pytest.raises(BackendError, match=f"cannot reach Anthropic at http://127.0.0.1:{closed_port}: connection refused"):
            await collect(backend, QUESTION)
