"""Ollama's `/api/chat` over aiohttp, streamed as newline-delimited JSON.

Each line is `{"message": {"role", "content", "thinking"?, "tool_calls"?}, "done": bool, ...}`;
the last one has `"done": true`, a `done_reason` and the usage (`prompt_eval_count`, `eval_count`). Tool calls arrive whole inside a
chunk, their arguments already objects and without call ids (one is generated).
When a model has no tool template Ollama answers HTTP 400 "... does not support
tools": the request is sent again without tools and the backend reports
`supports_tools = False` from then on, so the rally switches to XML blocks.

Ollama cannot be installed where this was written: the backend was tested against
an aiohttp server in `tests/llm/` that speaks Ollama's documented protocol (the
streamed chunks, a tool-call chunk, the 400 for a model without tools and the 404
for a model that is not pulled), not against a real Ollama.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

import aiohttp
from loguru import logger

from sidespin.errors import BackendError
from sidespin.formats import call_from_ollama, to_ollama_messages, to_ollama_tool
from sidespin.llm._http import (
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    HTTPBackend,
    error_excerpt,
    iter_lines,
    post,
    transport_error,
)
from sidespin.llm.base import Delta, Grammar, TokenUsage
from sidespin.tools import Tool

__all__ = ["OllamaBackend", "normalize_host"]

DEFAULT_MODEL = "llama3.2"
_TOOLS_UNSUPPORTED = "does not support tools"


def normalize_host(host: str) -> str:
    """`OLLAMA_HOST` as a URL: a scheme is added when missing, and 0.0.0.0 (listen everywhere) means this machine."""
    host = host.strip().rstrip("/") or "http://127.0.0.1:11434"
    if "://" not in host:
        host = "http://" + host
    return host.replace("://0.0.0.0", "://127.0.0.1")


class OllamaBackend(HTTPBackend):
    """A model served by Ollama; `options` go into the request's `options` (temperature, seed, num_ctx…)."""

    name = "ollama"
    supports_tools = True
    supports_grammar = False

    def __init__(
        self,
        host: str = "http://127.0.0.1:11434",
        model: str = DEFAULT_MODEL,
        *,
        options: dict[str, Any] | None = None,
        think: bool | None = None,
        keep_alive: str | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.host = normalize_host(host)
        self.model = model or DEFAULT_MODEL
        self.options = dict(options or {})
        self.think = think
        self.keep_alive = keep_alive
        self.supports_tools = True
        super().__init__(connect_timeout=connect_timeout, read_timeout=read_timeout)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "host": self.host}

    def _body(self, messages: list[dict[str, Any]], tools: list[Tool] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": to_ollama_messages(messages, images=self.supports_images), "stream": True}
        if tools:
            body["tools"] = [to_ollama_tool(t) for t in tools]
        if self.options:
            body["options"] = self.options
        if self.think is not None:
            body["think"] = self.think
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        return body

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        """Stream one answer; a model without tool support is asked again without tools (see the module doc)."""
        if self._session is None:
            raise self.not_started()
        if grammar is not None:
            logger.debug("LLM_GRAMMAR_DROPPED ollama has no GBNF grammars")
        tools = tools if self.supports_tools else None
        url = f"{self.host}/api/chat"
        try:
            response = await post(self._session, url, self._body(messages, tools))
            if response.status == 400 and tools:
                async with response:
                    detail = error_excerpt(await response.text(errors="replace"))
                if _TOOLS_UNSUPPORTED not in detail:
                    raise BackendError(f"Ollama at {self.host} answered HTTP 400: {detail}")
                logger.warning("OLLAMA_TOOLS_UNSUPPORTED model={} ({}); retrying without tools", self.model, detail)
                self.supports_tools = False
                response = await post(self._session, url, self._body(messages, None))
            async with response:
                if response.status >= 400:
                    raise await self._error(response)
                async for delta in self._read(response):
                    yield delta
        except (aiohttp.ClientError, TimeoutError) as error:
            raise transport_error(error, "Ollama", self.host, "is `ollama serve` running?") from None

    async def _error(self, response: aiohttp.ClientResponse) -> BackendError:
        detail = error_excerpt(await response.text(errors="replace")) or response.reason or ""
        if response.status == 404 and "not found" in detail:
            return BackendError(f"Ollama at {self.host} has no model {self.model!r}: {detail} — run `ollama pull {self.model}`")
        return BackendError(f"Ollama at {self.host} answered HTTP {response.status}: {detail}")

    async def _read(self, response: aiohttp.ClientResponse) -> AsyncIterator[Delta]:
        saw_calls = False
        async for line in iter_lines(response):
            if not line.strip():
                continue
            try:
                chunk = json.loads(line)
            except json.JSONDecodeError:
                raise BackendError(f"Ollama at {self.host} sent a line that is not JSON: {line[:200]!r}") from None
            if "error" in chunk:
                raise BackendError(f"Ollama at {self.host} failed mid-answer: {chunk['error']}")
            message = chunk.get("message") or {}
            calls = [call_from_ollama(item) for item in message.get("tool_calls") or []]
            saw_calls = saw_calls or bool(calls)
            text, thinking = message.get("content") or "", message.get("thinking") or ""
            if text or thinking or calls:
                yield Delta(text=text, thinking=thinking, tool_calls=calls)
            if chunk.get("done"):
                reason = chunk.get("done_reason") or "stop"
                usage = TokenUsage(chunk["prompt_eval_count"], int(chunk.get("eval_count") or 0)) \
                    if isinstance(chunk.get("prompt_eval_count"), int) else None
                yield Delta(finish_reason="tool_calls" if saw_calls and reason == "stop" else reason, usage=usage)
                return
        logger.warning("LLM_STREAM_TRUNCATED ollama {} ended without done", self.model)
        yield Delta(finish_reason="tool_calls" if saw_calls else "stop")
