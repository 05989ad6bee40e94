"""The client of llama.cpp's own endpoints, against an in-memory server that answers as llama.cpp does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from typing import Any, AsyncIterator

import pytest
from aiohttp import web

from sidespin.errors import BackendError
from sidespin.llm.llama import LlamaServer, counting
from tests.conftest import serving
from tests.route_fake import llama_app


@contextlib.asynccontextmanager
async def fake_llama(answers: list[str]) -> AsyncIterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """A loopback server with llama.cpp's /apply-template and /completion; yields its URL and the requests."""
    received: list[tuple[str, dict[str, Any]]] = []

    async def apply_template(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/apply-template", {**body, "auth": request.headers.get("Authorization")}))
        return web.json_response({"prompt": "|".join(m["content"] for m in body["messages"]) + "|"})

    async def completion(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/completion", body))
        if not answers:
            return web.json_response({"error": {"code": 500, "message": "no answer scripted"}}, status=500)
        content = answers.pop(0)
        probabilities = [{"top_logprobs": [{"token": "Hi", "logprob": math.log(0.75)},
                                           {"token": "<tool_call>", "logprob": math.log(0.25)}]}]
        return web.json_response({"content": content, "timings": {"cache_n": 7, "prompt_n": 2},
                                  "completion_probabilities": probabilities if body.get("n_probs") else [],
                                  "tokens_evaluated": len(body["prompt"]), "tokens_predicted": len(content)})

    async with serving(llama_app(apply_template, completion)) as url:
        yield url, received


async def test_the_client_renders_with_the_template_and_its_tools_and_completes_greedily_with_the_cache() -> None:
    tool = {"type": "function", "function": {"name": "roll_dice", "parameters": {"type": "object"}}}
    async with fake_llama(["roll_dice", '{"sides": 8}']) as (url, received):
        async with LlamaServer(url + "/v1", api_key="k3y") as server:
            prompt = await server.render([{"role": "user", "content": "roll 2d8"}], [tool])
            name = await server.complete(prompt, 'root ::= "roll_dice"', None, 8)
            arguments = await server.complete(prompt + name, None, {"type": "object"}, 64)
            assert server.last_timings == {"cache_n": 7, "prompt_n": 2}
    assert (prompt, name, arguments) == ("roll 2d8|", "roll_dice", '{"sides": 8}')
    template, decision, schema = (body for _, body in received)
    assert template["auth"] == "Bearer k3y" and template["tools"] == [tool]
    assert decision["grammar"] == 'root ::= "roll_dice"' and "json_schema" not in decision
    assert decision["temperature"] == 0 and decision["cache_prompt"] is True and decision["n_predict"] == 8
    assert schema["json_schema"] == {"type": "object"} and "grammar" not in schema


async def test_next_tokens_are_the_likeliest_first_tokens_with_their_probabilities() -> None:
    async with fake_llama(["Hi"]) as (url, received):
        async with LlamaServer(url) as server:
            likely = await server.next_tokens("prompt", 2)
    assert [token for token, _ in likely] == ["Hi", "<tool_call>"]
    assert [round(p, 3) for _, p in likely] == [0.75, 0.25]
    assert received[0][1]["n_probs"] == 2 and received[0][1]["n_predict"] == 1


async def test_what_completions_cost_is_counted_per_turn_even_when_turns_run_at_once() -> None:
    async with fake_llama(["a", "bb", "ccc"]) as (url, _):
        async with LlamaServer(url) as server:

            async def turn(prompt: str) -> list[tuple[int, int]]:
                with counting() as spent:
                    await server.complete(prompt, None, None, 4)
                return spent

            short, long = await asyncio.gather(turn("hi"), turn("a much longer prompt"))
            alone = await turn("xyz")
    assert sorted([short[0][0], long[0][0]]) == [len("hi"), len("a much longer prompt")]  # each turn its own
    assert len(short) == len(long) == 1 and alone == [(3, 3)]


async def test_an_error_answer_from_llama_cpp_becomes_a_backend_error_that_names_its_status() -> None:
    async with fake_llama([]) as (url, _):
        async with LlamaServer(url) as server:
            with pytest.raises(BackendError, match="HTTP 500.*no answer scripted"):
                await server.complete("prompt", None, None, 4)


async def test_the_client_must_be_opened_before_use() -> None:
    with pytest.raises(BackendError, match="not open"):
        await LlamaServer("http://127.0.0.1:9").render([])


async def test_a_connection_llama_cpp_closed_after_an_answer_is_never_reused() -> None:
    """llama.cpp closes a connection after its answer, unannounced; the next request must not be sent on it
    (it failed as "Server disconnected" and ended a person's turn in an error)."""
    answer = b'{"prompt": "p"}'

    async def respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(answer), answer))  # no "Connection: close": the client thinks it may keep the socket
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(respond, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, LlamaServer(f"http://127.0.0.1:{port}") as llama:
        for _ in range(20):
            assert await llama.render([{"role": "user", "content": "hi"}]) == "p"


@contextlib.asynccontextmanager
async def streaming_llama(pieces: list[str]) -> AsyncIterator[tuple[str, list[str]]]:
    """A loopback llama.cpp whose /completion streams `pieces` as server-sent events, as llama.cpp does with
    `"stream": true`, a little apart; yields its URL and the pieces it managed to send."""
    sent: list[str] = []

    async def completion(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        assert body["stream"] is True and body["json_schema"]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            for piece in pieces:
                await response.write(b"data: " + json.dumps({"content": piece, "stop": False}).encode() + b"\n\n")
                sent.append(piece)
                await asyncio.sleep(0.01)
            await response.write(b"data: " + json.dumps({"content": "", "stop": True, "tokens_evaluated": 9,
                                                           "tokens_predicted": len(pieces)}).encode() + b"\n\n")
        return response

    async def apply_template(request: web.Request) -> web.Response:
        return web.json_response({"prompt": "p"})

    async with serving(llama_app(apply_template, completion)) as url:
        yield url, sent


async def test_a_constrained_completion_that_repeats_itself_is_stopped_where_the_loop_shows() -> None:
    """A 0.5B writing a query's condition again and again until its token budget (30 s on two cores) is stopped once
    its last characters have come four times: the caller gets what it wrote so far, unfinished, and asks again."""
    loop = ['{"sql": "SELECT * FROM students WHERE name = ', "'Leo'", *([" AND name = 'Leo'"] * 300)]
    async with streaming_llama(loop) as (url, sent):
        async with LlamaServer(url) as server:
            with counting() as spent:
                text = await server.complete("p", None, {"type": "object"}, 2000)
    assert text.startswith('{"sql": "SELECT * FROM students WHERE name = \'Leo\' AND name')
    assert 128 <= len(text) < 400 and text == "".join(loop[:len(text.split("AND")) + 1])
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert len(sent) < 100  # the stream was closed: the rest was never written
    assert spent and spent[0][1] == len(text.split("AND")) + 1  # the pieces read count as written


async def test_a_constrained_completion_that_does_not_loop_comes_whole_with_its_counts() -> None:
    lines = ['{"content": "', *(f"line {n}: {'x' * n}\\n" for n in range(40)), '"}']
    async with streaming_llama(lines) as (url, sent):
        async with LlamaServer(url) as server:
            with counting() as spent:
                text = await server.complete("p", None, {"type": "object"}, 2000)
    assert text == "".join(lines) and len(sent) == len(lines) and spent == [(9, len(lines))]
