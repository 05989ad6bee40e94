"""Every backend reports what an answer cost: the usage its server sends, or, for llama.cpp's own server when it
sends none, the count of its tokenizer. Each against a stand-in server speaking the documented protocol."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from sidespin.llm import Delta, TokenUsage
from sidespin.llm.anthropic import AnthropicBackend
from sidespin.llm.ollama import OllamaBackend
from sidespin.llm.openai import OpenAIBackend
from tests.conftest import ollama_stub

from .test_ollama import fake_ollama
from .test_anthropic import KEY, event, fake_anthropic, message_start, tool_use_stream
from .test_openai import REQUESTS, chunk, fake_openai, sse

HI = [{"role": "user", "content": "Say hi"}]


async def last(backend: Any, messages: list[dict[str, Any]] = HI) -> Delta:
    deltas = [delta async for delta in backend.stream(messages)]
    assert all(d.usage is None for d in deltas[:-1])
    return deltas[-1]


async def test_openai_asks_for_usage_and_reads_it_from_the_last_chunk_without_choices(serve) -> None:
    usage_chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
                   "usage": {"prompt_tokens": 19, "completion_tokens": 3, "total_tokens": 22}}
    app = fake_openai([chunk({"content": "Hi"}), chunk({"content": "!"}, "stop"), usage_chunk, "[DONE]"])
    async with serve(app) as url, OpenAIBackend(url + "/v1", "gpt-4o", api_key="sk-test") as backend:
        final = await last(backend)
    assert final.usage == TokenUsage(19, 3)
    assert app[REQUESTS][0]["body"]["stream_options"] == {"include_usage": True}


async def test_openai_without_usage_reports_none_unless_told_to_count(serve) -> None:
    app = fake_openai([chunk({"content": "Hi"}, "stop"), "[DONE]"])
    async with serve(app) as url, OpenAIBackend(url + "/v1", "gpt-4o") as backend:
        final = await last(backend)
    assert final.finish_reason == "stop" and final.usage is None


def llama_cpp_without_usage() -> web.Application:
    """llama.cpp's own endpoints: a chat stream that reports no usage, its template and its tokenizer
    (one token per word here, so the counts are known)."""
    app = web.Application()
    app[REQUESTS] = []

    async def completions(request: web.Request) -> web.StreamResponse:
        app[REQUESTS].append({"path": request.path, "body": await request.json()})
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in ["Hello ", "there ", "friend"]:
            await response.write(sse(chunk({"content": piece})))
        await response.write(sse(chunk({}, "stop"), "[DONE]"))
        return response

    async def apply_template(request: web.Request) -> web.Response:
        body = await request.json()
        app[REQUESTS].append({"path": request.path, "body": body})
        prompt = "".join(f"<|{m['role']}|> {m['content']} <|end|> " for m in body["messages"]) + "<|assistant|>"
        return web.json_response({"prompt": prompt})

    async def tokenize(request: web.Request) -> web.Response:
        body = await request.json()
        app[REQUESTS].append({"path": request.path, "body": body})
        return web.json_response({"tokens": list(range(len(body["content"].split())))})

    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/apply-template", apply_template)
    app.router.add_post("/tokenize", tokenize)
    return app


async def test_llama_cpp_usage_it_did_not_send_is_counted_by_its_own_tokenizer(serve) -> None:
    app = llama_cpp_without_usage()
    async with serve(app) as url, OpenAIBackend(url + "/v1", count_usage=True) as backend:
        final = await last(backend, [{"role": "user", "content": "Say hi to me"}])
    # the prompt "<|user|> Say hi to me <|end|> <|assistant|>" is 7 words; the answer "Hello there friend" 3
    assert final.usage == TokenUsage(7, 3, counted=True)
    assert [r["path"] for r in app[REQUESTS]] == ["/v1/chat/completions", "/apply-template", "/tokenize", "/tokenize"]


async def test_ollama_usage_comes_from_the_last_ndjson_line(serve) -> None:
    async with serve(fake_ollama()) as url, OllamaBackend(url, "llama3.2") as backend:
        final = await last(backend, [{"role": "user", "content": "Why is the sky blue?"}])
    assert final.usage == TokenUsage(169, 15)  # its prompt_eval_count and eval_count


async def test_ollama_without_counts_reports_none(serve) -> None:
    async with serve(ollama_stub(lambda body: [{"content": "Blue."}])) as url, OllamaBackend(url) as backend:
        final = await last(backend)
    assert final.finish_reason == "stop" and final.usage is None


async def test_anthropic_usage_is_message_start_input_and_message_delta_output(serve) -> None:
    async with serve(fake_anthropic(tool_use_stream())) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        final = await last(backend)
    assert final.usage == TokenUsage(472, 89)  # message_start's 472 in; message_delta's running total of 89 out


async def test_anthropic_cached_input_counts_as_input(serve) -> None:
    start = json.loads(message_start().decode().split("data: ", 1)[1])
    start["message"]["usage"].update(cache_read_input_tokens=1000, cache_creation_input_tokens=24)
    stream = [event("message_start", start),
              event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                      "usage": {"output_tokens": 7}}),
              event("message_stop", {"type": "message_stop"})]
    async with serve(fake_anthropic(stream)) as url, AnthropicBackend(url, "claude-sonnet-4-5", KEY) as backend:
        final = await last(backend)
    assert final.usage == TokenUsage(472 + 1000 + 24, 7)
