"""OpenAIBackend against the real llama.cpp server (text, grammars) and against a fake for tool-call deltas and errors."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aiohttp import web

from sidespin.errors import BackendError
from sidespin.formats import MALFORMED
from sidespin.llm import Delta, Grammar
from sidespin.llm.embedded import EmbeddedBackend
from sidespin.llm.openai import OpenAIBackend
from sidespin.tools import tool

from .conftest import DETERMINISTIC

BLOCK = 'root ::= "<mcp-request>" [a-z]+ "</mcp-request>"'
HI = [{"role": "user", "content": "Say hi"}]


async def collect(backend: OpenAIBackend, messages: list[dict[str, Any]], **kwargs: Any) -> list[Delta]:
    return [delta async for delta in backend.stream(messages, **kwargs)]


def text_of(deltas: list[Delta]) -> str:
    return "".join(d.text for d in deltas)


def client_for(embedded: EmbeddedBackend) -> OpenAIBackend:
    return OpenAIBackend(embedded.base_url, api_key=embedded.api_key, supports_grammar=True, options=DETERMINISTIC)


# ---------------------------------------------------------------- the real llama.cpp server


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_plain_answer_streams_in_many_pieces(embedded: EmbeddedBackend) -> None:
    async with client_for(embedded) as backend:
        deltas = await collect(backend, HI)
    pieces = [d.text for d in deltas if d.text]
    assert len(pieces) > 3
    assert text_of(deltas).strip()
    assert deltas[-1].finish_reason in ("stop", "length")


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_second_request_on_a_kept_alive_session_works(embedded: EmbeddedBackend) -> None:
    # llama.cpp closes the connection after a streamed answer; the pooled one must not break the next request.
    async with client_for(embedded) as backend:
        first = text_of(await collect(backend, HI))
        second = text_of(await collect(backend, HI))
    assert first == second != ""


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_grammar_without_trigger_forces_a_block(embedded: EmbeddedBackend) -> None:
    async with client_for(embedded) as backend:
        answer = text_of(await collect(backend, HI, grammar=Grammar(BLOCK)))
    assert re.fullmatch(r"<mcp-request>[a-z]+</mcp-request>", answer), answer


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_lazy_grammar_leaves_a_plain_answer_alone(embedded: EmbeddedBackend) -> None:
    async with client_for(embedded) as backend:
        plain = text_of(await collect(backend, HI))
        lazy = text_of(await collect(backend, HI, grammar=Grammar(BLOCK, trigger="<mcp-request")))
    assert not lazy.startswith("<mcp-request")
    assert lazy == plain


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_lazy_grammar_constrains_from_the_trigger_on(embedded: EmbeddedBackend) -> None:
    async with client_for(embedded) as backend:
        plain = text_of(await collect(backend, HI))
        words = re.findall(r"(?<!\S)[a-z]+ [a-z]+(?!\S)", plain)
        assert words, plain
        trigger = words[0]  # two words the model writes anyway: several tokens, so a word trigger
        grammar = Grammar(f'root ::= "{trigger}" " ZEBRA ZEBRA"', trigger=trigger)
        lazy = text_of(await collect(backend, HI, grammar=grammar))
    assert lazy == plain[: plain.index(trigger)] + trigger + " ZEBRA ZEBRA"


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_block_started_by_the_model_keeps_to_the_grammar(embedded: EmbeddedBackend) -> None:
    # Unconstrained, SmolLM2 answers this with a tool nobody registered (roll_die).
    grammar = Grammar(r'root ::= "<mcp-request>" "<tool name=\"" ("get_cat_fact" | "get_time") "\"/>" "</mcp-request>"', trigger="<mcp-request")
    teaching = 'To use a tool, answer only with a block like <mcp-request><tool name="get_cat_fact"/></mcp-request>. Tools: get_cat_fact, get_time.'
    messages = [
        {"role": "system", "content": teaching},
        {"role": "user", "content": "Tell me a cat fact"},
        {"role": "assistant", "content": '<mcp-request><tool name="get_cat_fact"/></mcp-request>'},
        {"role": "user", "content": "Roll a die for me"},
    ]
    async with client_for(embedded) as backend:
        answer = text_of(await collect(backend, messages, grammar=grammar))
    assert re.fullmatch(r'<mcp-request><tool name="(get_cat_fact|get_time)"/></mcp-request>', answer), answer


# ---------------------------------------------------------------- a fake OpenAI server


def sse(*chunks: dict[str, Any] | str | bytes) -> bytes:
    """Events as `data:` lines; bytes are written as they are."""
    return b"".join(c if isinstance(c, bytes) else f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode() for c in chunks)


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def call_fragment(index: int, *, id: str | None = None, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id:
        fragment.update(id=id, type="function")
        fragment["function"]["name"] = name
    return {"tool_calls": [fragment]}


def pieces(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


REQUESTS = web.AppKey("requests", list)


def fake_openai(body_chunks: list[dict[str, Any] | str | bytes], *, status: int = 200, error_body: str = "") -> web.Application:
    app = web.Application()
    app[REQUESTS] = []

    async def completions(request: web.Request) -> web.StreamResponse:
        app[REQUESTS].append({"body": await request.json(), "headers": dict(request.headers)})
        if status != 200:
            return web.Response(status=status, text=error_body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for item in body_chunks:
            await response.write(sse(item))
        await response.write_eof()
        return response

    app.router.add_post("/v1/chat/completions", completions)
    return app


PARIS = json.dumps({"location": "Paris, France"})
TOKYO = json.dumps({"location": "Tokyo", "unit": "celsius"})


def two_parallel_calls() -> list[dict[str, Any] | str]:
    script: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": None})]
    script.append(chunk(call_fragment(0, id="call_paris", name="get_weather")))
    script += [chunk(call_fragment(0, arguments=p)) for p in pieces(PARIS)]
    script.append(chunk(call_fragment(1, id="call_tokyo", name="get_weather")))
    script += [chunk(call_fragment(1, arguments=p)) for p in pieces(TOKYO, 2)]
    script += [chunk({}, "tool_calls"), "[DONE]"]
    return script


@tool
def get_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a location."""
    return "sunny"


async def test_parallel_calls_arrive_whole_with_their_ids_and_arguments(serve) -> None:
    app = fake_openai(two_parallel_calls())
    async with serve(app) as url, OpenAIBackend(url + "/v1", "gpt-4o", api_key="sk-test") as backend:
        deltas = await collect(backend, [{"role": "user", "content": "Weather in Paris and Tokyo?"}], tools=[get_weather])
    calls = [call for d in deltas for call in d.tool_calls]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_paris", "get_weather", {"location": "Paris, France"}),
        ("call_tokyo", "get_weather", {"location": "Tokyo", "unit": "celsius"}),
    ]
    assert deltas[-1].finish_reason == "tool_calls"
    sent = app[REQUESTS][0]
    assert sent["headers"]["Authorization"] == "Bearer sk-test"
    assert sent["body"]["stream"] is True and sent["body"]["model"] == "gpt-4o"
    assert sent["body"]["tools"][0]["type"] == "function"
    assert sent["body"]["tools"][0]["function"]["name"] == "get_weather"
    assert sent["body"]["tools"][0]["function"]["parameters"]["required"] == ["location"]


async def test_first_call_is_handed_out_as_soon_as_the_second_starts(serve) -> None:
    async with serve(fake_openai(two_parallel_calls())) as url, OpenAIBackend(url + "/v1") as backend:
        deltas = await collect(backend, HI)
    with_calls = [i for i, d in enumerate(deltas) if d.tool_calls]
    assert len(with_calls) == 2
    assert deltas[with_calls[0]].finish_reason is None  # not held until the end of the stream
    assert deltas[with_calls[0]].tool_calls[0].id == "call_paris"


async def test_calls_all_numbered_zero_are_told_apart_by_their_ids(serve) -> None:
    script = [
        chunk(call_fragment(0, id="call_a", name="get_weather", arguments='{"location": "Paris"}')),
        chunk(call_fragment(0, id="call_b", name="get_weather", arguments='{"location": "Tokyo"}')),
        chunk({}, "tool_calls"),
    ]
    async with serve(fake_openai(script)) as url, OpenAIBackend(url + "/v1") as backend:
        deltas = await collect(backend, HI)
    calls = [c for d in deltas for c in d.tool_calls]
    assert [(c.id, c.arguments["location"]) for c in calls] == [("call_a", "Paris"), ("call_b", "Tokyo")]


async def test_malformed_arguments_still_make_a_call(serve) -> None:
    script = [chunk(call_fragment(0, id="call_1", name="get_weather", arguments='{"location": "Par')), chunk({}, "tool_calls")]
    async with serve(fake_openai(script)) as url, OpenAIBackend(url + "/v1") as backend:
        deltas = await collect(backend, HI)
    (call,) = [c for d in deltas for c in d.tool_calls]
    assert call.name == "get_weather" and call.arguments == {MALFORMED: '{"location": "Par'}


async def test_text_and_reasoning_stream_separately(serve) -> None:
    script = [chunk({"reasoning_content": "The user greets me."}), chunk({"content": "Hel"}), chunk({"content": "lo!"}), chunk({}, "stop"), "[DONE]"]
    async with serve(fake_openai(script)) as url, OpenAIBackend(url + "/v1") as backend:
        deltas = await collect(backend, HI)
    assert "".join(d.thinking for d in deltas) == "The user greets me."
    assert text_of(deltas) == "Hello!"
    assert deltas[-1].finish_reason == "stop"


async def test_server_error_names_status_and_body(serve) -> None:
    app = fake_openai([], status=500, error_body='{"error": {"message": "model exploded", "type": "server_error"}}')
    async with serve(app) as url, OpenAIBackend(url + "/v1") as backend:
        with pytest.raises(BackendError) as caught:
            await collect(backend, HI)
    assert "HTTP 500" in str(caught.value) and "model exploded" in str(caught.value)


async def test_error_event_in_the_middle_of_a_stream_is_reported(serve) -> None:
    script = [chunk({"content": "Hel"}), {"error": {"message": "context full", "type": "exceed_context_size_error"}}]
    async with serve(fake_openai(script)) as url, OpenAIBackend(url + "/v1") as backend:
        with pytest.raises(BackendError, match="context full"):
            await collect(backend, HI)


async def test_llama_cpp_error_line_mid_stream_is_reported(serve) -> None:
    script = [chunk({"content": "Hel"}), b'error: {"code": 500, "message": "slot unavailable", "type": "server_error"}\n\n']
    async with serve(fake_openai(script)) as url, OpenAIBackend(url + "/v1") as backend:
        with pytest.raises(BackendError, match="server_error: slot unavailable"):
            await collect(backend, HI)


async def test_connection_refused_names_the_url(closed_port: int) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    async with OpenAIBackend(url) as backend:
        with pytest.raises(BackendError) as caught:
            await collect(backend, HI)
    assert f"127.0.0.1:{closed_port}" in str(caught.value)
    assert "connection refused" in str(caught.value)


async def test_streaming_before_start_says_what_to_do() -> None:
    with pytest.raises(BackendError, match="not started"):
        await collect(OpenAIBackend("http://127.0.0.1:1/v1"), HI)
