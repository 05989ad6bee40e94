"""OllamaBackend against a fake server speaking Ollama's documented /api/chat protocol (Ollama is not installable here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web
from loguru import logger

from sidespin.errors import BackendError
from sidespin.llm import Delta
from sidespin.llm.ollama import OllamaBackend, normalize_host
from sidespin.tools import tool

REQUESTS = web.AppKey("requests", list)
# The models the fake has "pulled": whether each has a tool template.
MODELS = {"llama3.2": True, "qwen3": True, "gemma:2b": False}


def line(message: dict[str, Any], **extra: Any) -> bytes:
    chunk = {"model": "llama3.2", "created_at": "2025-07-07T20:22:19.184789Z", "message": message, **extra}
    return (json.dumps(chunk) + "\n").encode()


def final(reason: str = "stop") -> bytes:
    return line(
        {"role": "assistant", "content": ""},
        done=True,
        done_reason=reason,
        total_duration=182242375,
        load_duration=41295167,
        prompt_eval_count=169,
        prompt_eval_duration=24573166,
        eval_count=15,
        eval_duration=115959084,
    )


def fake_ollama(*, fail_mid_stream: bool = False) -> web.Application:
    """Answers like Ollama: NDJSON chunks, a whole tool call in one chunk, errors as `{"error": ...}`."""
    app = web.Application()
    app[REQUESTS] = []

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        app[REQUESTS].append(body)
        model = body["model"]
        if model not in MODELS:
            return web.json_response({"error": f'model "{model}" not found, try pulling it first'}, status=404)
        if body.get("tools") and not MODELS[model]:
            return web.json_response({"error": f"registry.ollama.ai/library/{model} does not support tools"}, status=400)
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        question = body["messages"][-1]["content"]
        if body.get("think"):
            for piece in ["The user asks ", "about the sky."]:
                await response.write(line({"role": "assistant", "content": "", "thinking": piece}))
        if body.get("tools") and "weather" in question:
            call = {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}
            await response.write(line({"role": "assistant", "content": "", "tool_calls": [call]}, done=False))
        else:
            for piece in ["The", " sky", " is", " blue", "."]:
                await response.write(line({"role": "assistant", "content": piece}, done=False))
        if fail_mid_stream:
            await response.write(b'{"error": "an error was encountered while running the model: unexpected EOF"}\n')
        else:
            await response.write(final())
        await response.write_eof()
        return response

    app.router.add_post("/api/chat", chat)
    return app


@tool
def get_weather(city: str) -> str:
    """Get the weather in a given city.

    Args:
        city: The city to get the weather for
    """
    return "sunny"


async def collect(backend: OllamaBackend, messages: list[dict[str, Any]], **kwargs: Any) -> list[Delta]:
    return [delta async for delta in backend.stream(messages, **kwargs)]


async def test_answer_streams_chunk_by_chunk(serve) -> None:
    async with serve(fake_ollama()) as url, OllamaBackend(url, "llama3.2", options={"temperature": 0}) as backend:
        deltas = await collect(backend, [{"role": "user", "content": "why is the sky blue?"}])
    assert [d.text for d in deltas if d.text] == ["The", " sky", " is", " blue", "."]
    assert deltas[-1].finish_reason == "stop"


async def test_thinking_is_kept_apart_from_the_answer(serve) -> None:
    async with serve(fake_ollama()) as url, OllamaBackend(url, "qwen3", think=True) as backend:
        deltas = await collect(backend, [{"role": "user", "content": "why is the sky blue?"}])
    assert "".join(d.thinking for d in deltas) == "The user asks about the sky."
    assert "".join(d.text for d in deltas) == "The sky is blue."


async def test_tool_call_arrives_whole_with_a_generated_id(serve) -> None:
    app = fake_ollama()
    async with serve(app) as url, OllamaBackend(url, "llama3.2") as backend:
        deltas = await collect(backend, [{"role": "user", "content": "what is the weather in tokyo?"}], tools=[get_weather])
    (call,) = [c for d in deltas for c in d.tool_calls]
    assert call.name == "get_weather" and call.arguments == {"city": "Tokyo"} and call.id
    assert deltas[-1].finish_reason == "tool_calls"
    sent = app[REQUESTS][0]
    assert sent["stream"] is True
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather in a given city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "The city to get the weather for"}},
                    "additionalProperties": False,  # a plugin takes no argument its signature lacks
                    "required": ["city"],
                },
            },
        }
    ]


async def test_history_goes_out_in_ollama_shape(serve) -> None:
    history = [
        {"role": "user", "content": "what is the weather in Toronto?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_temperature", "arguments": '{"city": "Toronto"}'}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "11 degrees celsius"},
    ]
    app = fake_ollama()
    async with serve(app) as url, OllamaBackend(url, "llama3.2") as backend:
        await collect(backend, history, tools=[get_weather])
    assert app[REQUESTS][0]["messages"] == [
        {"role": "user", "content": "what is the weather in Toronto?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_temperature", "arguments": {"city": "Toronto"}}}]},
        {"role": "tool", "content": "11 degrees celsius", "tool_name": "get_temperature"},
    ]


async def test_model_without_tools_is_asked_again_without_them(serve) -> None:
    warnings: list[str] = []
    sink = logger.add(lambda message: warnings.append(str(message)), level="WARNING")
    app = fake_ollama()
    try:
        async with serve(app) as url, OllamaBackend(url, "gemma:2b") as backend:
            first = await collect(backend, [{"role": "user", "content": "what is the weather in tokyo?"}], tools=[get_weather])
            second = await collect(backend, [{"role": "user", "content": "and in Paris?"}], tools=[get_weather])
    finally:
        logger.remove(sink)
    assert "".join(d.text for d in first) == "The sky is blue."
    assert "".join(d.text for d in second) == "The sky is blue."
    assert backend.supports_tools is False
    assert [("tools" in body) for body in app[REQUESTS]] == [True, False, False]  # one refusal, then never again
    assert any("OLLAMA_TOOLS_UNSUPPORTED" in w and "gemma:2b" in w for w in warnings)


async def test_model_not_pulled_says_how_to_get_it(serve) -> None:
    async with serve(fake_ollama()) as url, OllamaBackend(url, "mistral") as backend:
        with pytest.raises(BackendError) as caught:
            await collect(backend, [{"role": "user", "content": "hi"}])
    assert 'model "mistral" not found' in str(caught.value)
    assert "ollama pull mistral" in str(caught.value)


async def test_error_line_mid_stream_is_reported(serve) -> None:
    async with serve(fake_ollama(fail_mid_stream=True)) as url, OllamaBackend(url, "llama3.2") as backend:
        with pytest.raises(BackendError, match="unexpected EOF"):
            await collect(backend, [{"role": "user", "content": "hi"}])


async def test_ollama_not_running_is_explained(closed_port: int) -> None:
    async with OllamaBackend(f"http://127.0.0.1:{closed_port}", "llama3.2") as backend:
        with pytest.raises(BackendError) as caught:
            await collect(backend, [{"role": "user", "content": "hi"}])
    assert str(caught.value) == (
        f"cannot reach Ollama at http://127.0.0.1:{closed_port}: connection refused — is `ollama serve` running?"
    )


def test_ollama_host_forms_become_urls() -> None:
    assert normalize_host("127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert normalize_host("0.0.0.0:11434") == "http://127.0.0.1:11434"
    assert normalize_host("https://ollama.example.com/") == "https://ollama.example.com"
