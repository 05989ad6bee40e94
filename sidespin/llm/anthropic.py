"""Anthropic's Messages API over aiohttp, streamed as server-sent events.

`POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`.
The system prompt goes to the top-level `system`; tool calls and results travel as
`tool_use` / `tool_result` content blocks (see `sidespin.formats`). The stream is
the documented event sequence: `message_start`, then per content block
`content_block_start` (text, tool_use or thinking), `content_block_delta`
(`text_delta`, `input_json_delta`, `thinking_delta`) and `content_block_stop`,
then `message_delta` with the `stop_reason` and `message_stop`; `ping` may come
at any time and `error` ends the stream. The usage: `message_start` holds the input
tokens (the cache's reads and writes counted in), `message_delta` the output so far.

Thinking blocks stream out as `Delta.thinking` but are not sent back in later
turns (sidespin's messages do not keep their signatures), so extended thinking
combined with tool use over several turns is not supported.

No key or network was available where this was written: the backend is tested
against an aiohttp server in `tests/llm/` that emits those documented events.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import aiohttp
from loguru import logger

from sidespin.errors import BackendError
from sidespin.formats import call_from_anthropic, to_anthropic_messages, to_anthropic_tool
from sidespin.llm._http import (
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    HTTPBackend,
    error_excerpt,
    http_error,
    iter_sse,
    post,
    transport_error,
)
from sidespin.llm.base import Delta, Grammar, TokenUsage
from sidespin.tools import Tool, ToolCall

__all__ = ["AnthropicBackend", "API_VERSION", "DEFAULT_MODEL"]

API_VERSION = "2023-06-01"
DEFAULT_MODEL = "claude-sonnet-4-5"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


class _Block:
    """One content block being streamed: its type, and for tool_use its id, name and JSON so far."""

    def __init__(self, start: dict[str, Any]) -> None:
        self.type = start.get("type", "")
        self.id = start.get("id") or ""
        self.name = start.get("name") or ""
        self.initial_input = start.get("input") or {}
        self.json = ""

    def tool_call(self) -> ToolCall:
        streamed = self.json if self.json.strip() else self.initial_input
        return call_from_anthropic({"id": self.id, "name": self.name, "input": streamed})


class AnthropicBackend(HTTPBackend):
    """Claude through the Messages API; `options` (temperature, top_p, …) go into every request body."""

    name = "anthropic"
    supports_tools = True
    supports_grammar = False

    def __init__(
        self,
        base_url: str = "https://api.anthropic.com",
        model: str = DEFAULT_MODEL,
        api_key: str = "",
        *,
        max_tokens: int = 4096,
        options: dict[str, Any] | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model or DEFAULT_MODEL
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.options = dict(options or {})
        super().__init__(connect_timeout=connect_timeout, read_timeout=read_timeout)

    async def start(self) -> None:
        if not self.api_key:
            raise BackendError("no Anthropic API key: set ANTHROPIC_API_KEY (or anthropic_api_key in config.json)")
        await super().start()

    def session_headers(self) -> dict[str, str]:
        return {"x-api-key": self.api_key, "anthropic-version": API_VERSION}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "base_url": self.base_url}

    def _body(self, messages: list[dict[str, Any]], tools: list[Tool] | None) -> dict[str, Any]:
        system, converted = to_anthropic_messages(messages, images=self.supports_images)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": converted, "stream": True}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [to_anthropic_tool(t) for t in tools]
        return {**body, **self.options}

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        if self._session is None:
            raise self.not_started()
        if grammar is not None:
            logger.debug("LLM_GRAMMAR_DROPPED anthropic has no grammars")
        url = f"{self.base_url}/v1/messages"
        try:
            async with await post(self._session, url, self._body(messages, tools)) as response:
                if response.status >= 400:
                    raise await http_error(response, "Anthropic")
                async for delta in self._read(response):
                    yield delta
        except (aiohttp.ClientError, TimeoutError) as error:
            raise transport_error(error, "Anthropic", self.base_url, "check ANTHROPIC_BASE_URL and the network") from None

    async def _read(self, response: aiohttp.ClientResponse) -> AsyncIterator[Delta]:
        blocks: dict[int, _Block] = {}
        finish: str | None = None
        usage: TokenUsage | None = None
        async for event_name, data in iter_sse(response):
            try:
                event = json.loads(data)
            except json.JSONDecodeError:
                raise BackendError(f"Anthropic sent an event that is not JSON: {data[:200]!r}") from None
            kind = event.get("type", event_name)
            if kind == "error":
                raise BackendError(f"Anthropic failed mid-answer: {error_excerpt(data)}")
            if kind == "message_start":
                usage = _usage((event.get("message") or {}).get("usage"), usage)
            elif kind == "content_block_start":
                block = blocks[event.get("index", 0)] = _Block(event.get("content_block") or {})
                start = event.get("content_block") or {}
                if block.type == "text" and start.get("text"):
                    yield Delta(text=start["text"])
                elif block.type == "thinking" and start.get("thinking"):
                    yield Delta(thinking=start["thinking"])
            elif kind == "content_block_delta":
                delta = event.get("delta") or {}
                kind_of_delta = delta.get("type")
                if kind_of_delta == "text_delta":
                    yield Delta(text=delta.get("text", ""))
                elif kind_of_delta == "thinking_delta":
                    yield Delta(thinking=delta.get("thinking", ""))
                elif kind_of_delta == "input_json_delta" and event.get("index", 0) in blocks:
                    blocks[event.get("index", 0)].json += delta.get("partial_json", "")
            elif kind == "content_block_stop":
                block = blocks.pop(event.get("index", 0), None)
                if block is not None and block.type == "tool_use":
                    yield Delta(tool_calls=[block.tool_call()])
            elif kind == "message_delta":
                reason = (event.get("delta") or {}).get("stop_reason")
                finish = _FINISH.get(reason, reason) if reason else finish
                usage = _usage(event.get("usage"), usage)
            elif kind == "message_stop":
                break
        yield Delta(finish_reason=finish or "stop", usage=usage)


def _usage(reported: Any, known: TokenUsage | None) -> TokenUsage | None:
    """`known` updated from a `usage` object of `message_start` or `message_delta` (its output is a running total)."""
    if not isinstance(reported, dict):
        return known
    usage = known or TokenUsage()
    cached = [reported.get(key) for key in ("cache_creation_input_tokens", "cache_read_input_tokens")]
    if isinstance(reported.get("input_tokens"), int):
        usage.input = reported["input_tokens"] + sum(n for n in cached if isinstance(n, int))
    if isinstance(reported.get("output_tokens"), int):
        usage.output = reported["output_tokens"]
    return usage
