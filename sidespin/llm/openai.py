"""OpenAI-compatible chat completions over aiohttp, streamed as server-sent events.

Works with OpenAI itself and with local servers that speak the same API
(llama.cpp's llama-server, vLLM, LM Studio). Native tools go out in OpenAI's
function format; tool-call arguments come back as string fragments keyed by
`index`, assembled here and handed out as whole `ToolCall`s.

Grammars are a llama.cpp extension. A `Grammar` without trigger is sent as
`"grammar"` on `/chat/completions`. A lazy one (with a trigger) cannot go there:
llama.cpp's chat endpoint replaces `grammar_lazy` and `grammar_triggers` with its
chat template's own (false and none), so the grammar would constrain every answer
from the first token. Verified against the xllamacpp build: "Say hi" with the lazy
grammar came back as a forced block through `/v1/chat/completions` and as free text
through `/v1/completions`. So a lazy grammar renders the prompt with llama.cpp's
`POST /apply-template` and streams from `/v1/completions` with
`"grammar_triggers": [{"type": 1, "value": trigger}]`: type 1 is
`COMMON_GRAMMAR_TRIGGER_TYPE_WORD` (the server rejects the string "word" with
HTTP 400), and the trigger is also listed in `preserved_tokens` because llama.cpp
refuses a trigger word that is one token unless it is preserved.

Usage: every request asks for it (`"stream_options": {"include_usage": true}`); the
server sends it in a last chunk (OpenAI: with no choices). A server that sends none
(`count_usage`, for llama.cpp's own) has the prompt and the answer counted by its
tokenizer (`POST /tokenize`), and the usage says it was counted.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncIterator, Callable

import aiohttp
from loguru import logger

from sidespin.errors import BackendError
from sidespin.formats import parse_arguments, to_openai_messages, to_openai_tool
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
from sidespin.tools import Tool, ToolCall, new_call_id

__all__ = ["OpenAIBackend", "WORD_TRIGGER"]

WORD_TRIGGER = 1  # llama.cpp's COMMON_GRAMMAR_TRIGGER_TYPE_WORD


class _ToolCallParts:
    """Assembles tool-call fragments keyed by `index`; a call is complete when a later index starts or the stream ends."""

    def __init__(self) -> None:
        self._parts: dict[int, dict[str, str]] = {}

    def add(self, fragment: dict[str, Any]) -> list[ToolCall]:
        """Take one fragment; return the calls it proves complete."""
        index = int(fragment.get("index") or 0)
        complete: list[ToolCall] = []
        known = self._parts.get(index)
        if known and known["id"] and fragment.get("id") and fragment["id"] != known["id"]:
            complete = self._take(lambda i: i <= index)  # a server that numbers every call 0: a new id is a new call
        if index not in self._parts:
            complete += self._take(lambda i: i < index)
            self._parts[index] = {"id": "", "name": "", "arguments": ""}
        part = self._parts[index]
        function = fragment.get("function") or {}
        part["id"] = part["id"] or fragment.get("id") or ""
        part["name"] = part["name"] or function.get("name") or ""
        part["arguments"] += function.get("arguments") or ""
        return complete

    def finish(self) -> list[ToolCall]:
        """Every call still being assembled, now that the stream is over."""
        return self._take(lambda i: True)

    def _take(self, which: Callable[[int], bool]) -> list[ToolCall]:
        calls = []
        for index in sorted(i for i in self._parts if which(i)):
            part = self._parts.pop(index)
            arguments = parse_arguments(part["arguments"])
            calls.append(ToolCall(name=part["name"], arguments=arguments, id=part["id"] or new_call_id()))
        return calls


class OpenAIBackend(HTTPBackend):
    """A server speaking OpenAI's `/chat/completions`, streamed; `options` go into every request body."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str = "",
        api_key: str | None = None,
        *,
        supports_tools: bool = True,
        supports_grammar: bool = False,
        options: dict[str, Any] | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        label: str = "the OpenAI-compatible server",
        keep_alive: bool = True,
        count_usage: bool = False,
    ) -> None:
        super().__init__(connect_timeout=connect_timeout, read_timeout=read_timeout)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key or None
        self.supports_tools = supports_tools
        self.supports_grammar = supports_grammar
        self.options = dict(options or {})
        self.label = label
        self.keep_alive = keep_alive
        self.count_usage = count_usage  # a llama.cpp server: count what it did not report with its tokenizer

    @property
    def root_url(self) -> str:
        """The server's root, where llama.cpp keeps its own endpoints (`/apply-template`, `/health`)."""
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def session_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def session_connector(self) -> aiohttp.BaseConnector:
        return aiohttp.TCPConnector(force_close=not self.keep_alive)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "base_url": self.base_url, "grammar": self.supports_grammar}

    async def wait_healthy(self, timeout: float) -> None:
        """Wait until llama.cpp's `GET /health` answers 200 (it answers 503 while the model loads)."""
        session = self._require_session()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        url = f"{self.root_url}/health"
        last = "no answer yet"
        while loop.time() < deadline:
            try:
                async with session.get(url, timeout=aiohttp.ClientTimeout(total=max(0.1, deadline - loop.time()))) as response:
                    if response.status == 200:
                        return
                    last = f"HTTP {response.status}"
            except (aiohttp.ClientError, TimeoutError) as error:
                last = str(transport_error(error, self.label, url))
            await asyncio.sleep(0.05)  # polling a local server that is still loading
        raise BackendError(f"{self.label} at {url} was not healthy within {timeout:g} s ({last})")

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        """Stream one answer; a lazy grammar goes through llama.cpp's raw completion endpoint (see the module doc)."""
        session = self._require_session()
        if tools and not self.supports_tools:
            logger.debug("LLM_TOOLS_DROPPED {} does not take native tools", self.name)
            tools = None
        url = f"{self.base_url}/chat/completions"
        try:
            if grammar is not None and grammar.trigger:
                if tools:
                    raise BackendError("a lazy grammar and native tools cannot be used in the same request")
                url = f"{self.base_url}/completions"
                body = await self._completion_body(session, messages, grammar)
            else:
                body = self._chat_body(messages, tools, grammar)
            logger.debug("LLM_REQUEST {} {} messages={} tools={}", self.name, url, len(messages), len(tools or []))
            async with await post(session, url, body) as response:
                if response.status >= 400:
                    raise await http_error(response, self.label)
                written: list[str] = []
                async for delta in self._read(response, completion="prompt" in body):
                    written.append(delta.text + delta.thinking)
                    if delta.finish_reason is not None and delta.usage is None and self.count_usage:
                        delta.usage = await self._counted_usage(session, body, "".join(written))
                    yield delta
        except (aiohttp.ClientError, TimeoutError) as error:
            raise transport_error(error, self.label, url, "is the server running?") from None

    def _chat_body(self, messages: list[dict[str, Any]], tools: list[Tool] | None, grammar: Grammar | None) -> dict[str, Any]:
        body: dict[str, Any] = {"messages": to_openai_messages(messages, images=self.supports_images), "stream": True,
                                "stream_options": {"include_usage": True}, **self.options}
        if self.model:
            body["model"] = self.model
        if tools:
            body["tools"] = [to_openai_tool(t) for t in tools]
        if grammar is not None:
            body["grammar"] = grammar.text
        return body

    async def _completion_body(
        self, session: aiohttp.ClientSession, messages: list[dict[str, Any]], grammar: Grammar
    ) -> dict[str, Any]:
        assert grammar.trigger
        body: dict[str, Any] = {
            "prompt": await self._render_prompt(session, messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "grammar": grammar.text,
            "grammar_lazy": True,
            "grammar_triggers": [{"type": WORD_TRIGGER, "value": grammar.trigger}],
            "preserved_tokens": [grammar.trigger],
            **self.options,
        }
        if self.model:
            body["model"] = self.model
        return body

    async def _render_prompt(self, session: aiohttp.ClientSession, messages: list[dict[str, Any]]) -> str:
        """The chat prompt as the server's own template writes it (llama.cpp's `/apply-template`)."""
        url = f"{self.root_url}/apply-template"
        async with await post(session, url, {"messages": to_openai_messages(messages)}) as response:
            if response.status == 404:
                raise BackendError(
                    f"{self.label} at {self.base_url} cannot apply a lazy grammar: it has no /apply-template "
                    "endpoint (a llama.cpp server is needed)"
                )
            if response.status >= 400:
                raise await http_error(response, self.label)
            rendered = await response.json(content_type=None)
        if not isinstance(rendered, dict) or not isinstance(rendered.get("prompt"), str):
            raise BackendError(f"{self.label} at {url} answered without a prompt: {str(rendered)[:200]}")
        return rendered["prompt"]

    async def _tokens(self, session: aiohttp.ClientSession, text: str) -> int:
        """How many tokens `text` is for the server's model (llama.cpp's `POST /tokenize`)."""
        async with await post(session, f"{self.root_url}/tokenize", {"content": text}) as response:
            if response.status >= 400:
                raise await http_error(response, self.label)
            answer = await response.json(content_type=None)
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list):
            raise BackendError(f"{self.label} answered /tokenize without tokens: {str(answer)[:200]}")
        return len(tokens)

    async def count_tokens(self, text: str) -> int | None:
        """A llama.cpp server counts with its own tokenizer; any other server has none to ask."""
        if not self.count_usage:
            return None
        try:
            return await self._tokens(self._require_session(), text)
        except (BackendError, aiohttp.ClientError, TimeoutError) as error:
            logger.warning("LLM_TOKENS_UNCOUNTED {} {}", self.name, error)
            return None

    async def _counted_usage(self, session: aiohttp.ClientSession, body: dict[str, Any], written: str) -> TokenUsage | None:
        """The usage the server did not report, counted by its own tokenizer; None if it cannot count."""
        try:
            prompt = body["prompt"] if "prompt" in body else await self._render_prompt(session, body["messages"])
            return TokenUsage(await self._tokens(session, prompt), await self._tokens(session, written), counted=True)
        except (BackendError, aiohttp.ClientError, TimeoutError) as error:
            logger.warning("LLM_USAGE_UNCOUNTED {} {}", self.name, error)
            return None

    async def _read(self, response: aiohttp.ClientResponse, *, completion: bool) -> AsyncIterator[Delta]:
        """Deltas from an SSE stream of chat chunks (or, for `completion`, raw text chunks)."""
        calls = _ToolCallParts()
        finish: str | None = None
        usage: TokenUsage | None = None
        finished_cleanly = False
        async for event, data in iter_sse(response):
            if data.strip() == "[DONE]":
                finished_cleanly = True
                break
            try:
                chunk = json.loads(data)
            except json.JSONDecodeError:
                raise BackendError(f"{self.label} at {response.url} sent an event that is not JSON: {data[:200]!r}") from None
            if not isinstance(chunk, dict):
                continue
            if event == "error" or "error" in chunk:
                raise BackendError(f"{self.label} at {response.url} failed mid-answer: {error_excerpt(data)}")
            usage = _usage(chunk.get("usage")) or usage
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                if completion:
                    text, thinking, fragments = choice.get("text") or "", "", []
                else:
                    delta = choice.get("delta") or choice.get("message") or {}
                    text = delta.get("content") or ""
                    thinking = delta.get("reasoning_content") or delta.get("reasoning") or ""
                    fragments = delta.get("tool_calls") or []
                complete = [call for fragment in fragments for call in calls.add(fragment)]
                if text or thinking or complete:
                    yield Delta(text=text, thinking=thinking, tool_calls=complete)
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
                    finished_cleanly = True
        if not finished_cleanly:
            logger.warning("LLM_STREAM_TRUNCATED {} {} ended without a finish reason", self.name, response.url)
        yield Delta(tool_calls=calls.finish(), finish_reason=finish or "stop", usage=usage)


def _usage(reported: Any) -> TokenUsage | None:
    """OpenAI's `usage` object (`prompt_tokens`, `completion_tokens`) as a `TokenUsage`."""
    if not isinstance(reported, dict) or not isinstance(reported.get("prompt_tokens"), int):
        return None
    return TokenUsage(reported["prompt_tokens"], int(reported.get("completion_tokens") or 0))
