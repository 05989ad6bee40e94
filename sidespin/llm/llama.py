"""llama.cpp's own endpoints (not the OpenAI ones): a chat rendered to a prompt, constrained completions, token
probabilities and slots. The tool-use pipeline (`sidespin.tooluse`) decides through them.

    async with LlamaServer(root_url, api_key) as server:
        prompt = await server.render(messages, tools)
        text = await server.complete(prompt, grammar, None, 16)

`POST /apply-template {"messages", "tools"}` answers `{"prompt"}` in the model's chat template (with
`tools`, the template's own way of offering them); `POST /completion` takes `prompt`, `n_predict`,
`temperature`, `cache_prompt`, `n_probs`, and `grammar` (GBNF) or `json_schema`, and answers `{"content",
"tokens_evaluated", "completion_probabilities", "timings": {"cache_n", "prompt_n", …}}` (with `"stream": true`, the
same as server-sent events, the last one with `"stop": true`). What its completions cost is added up inside
`counting()` (a turn's usage line includes its route).
"""

from __future__ import annotations

import contextlib
import json
import math
from contextvars import ContextVar
from typing import Any, Iterator

import aiohttp

from loguru import logger

from sidespin.errors import BackendError

__all__ = ["LlamaServer", "counting", "looping"]

LOOP_TAIL, LOOP_SEEN, LOOP_FROM = 32, 4, 128  # a text repeats itself: its last LOOP_TAIL characters, LOOP_SEEN times
_SPENT: ContextVar[list[tuple[int, int]] | None] = ContextVar("route_spent", default=None)


@contextlib.contextmanager
def counting() -> Iterator[list[tuple[int, int]]]:
    """The (prompt, written) tokens of each `LlamaServer` completion awaited inside the block (in this task,
    and tasks it starts there). Each turn is a task of its own, so turns routed at once on one shared
    server never mix their counts."""
    spent: list[tuple[int, int]] = []
    token = _SPENT.set(spent)
    try:
        yield spent
    finally:
        _SPENT.reset(token)


class LlamaServer:
    """`render`, `complete` and `next_tokens` for a running llama.cpp server."""

    def __init__(self, root_url: str, api_key: str | None = None, *, timeout: float = 60.0) -> None:
        self.root_url = root_url.rstrip("/").removesuffix("/v1")
        self.api_key = api_key
        self.timeout = timeout
        self.last_timings: dict[str, Any] = {}
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> "LlamaServer":
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        # llama.cpp closes a connection after its answer without saying so: a kept one fails the next request
        # ("Server disconnected"), and a new loopback connection costs nothing
        self._session = aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout),
                                              connector=aiohttp.TCPConnector(force_close=True))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            raise BackendError("the llama.cpp client is not open: use `async with LlamaServer(...)`")
        url = self.root_url + path
        try:
            async with self._session.post(url, json=body) as response:
                await _refused(response, url)
                answer = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise BackendError(f"llama.cpp at {url} could not be reached: {error or type(error).__name__}") from None
        if not isinstance(answer, dict):
            raise BackendError(f"llama.cpp at {url} answered {str(answer)[:200]}")
        return answer

    async def slot(self, action: str, filename: str, slot: int = 0) -> dict[str, Any]:
        """Save (or restore) what slot `slot` has evaluated to (from) `filename` in the server's slot folder."""
        return await self._post(f"/slots/{slot}?action={action}", {"filename": filename})

    async def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        """The chat as the model's own template writes it, ending where the assistant's answer begins."""
        body: dict[str, Any] = {"messages": messages}
        if tools:
            body["tools"] = tools
        answer = await self._post("/apply-template", body)
        if not isinstance(answer.get("prompt"), str):
            raise BackendError(f"llama.cpp's /apply-template answered without a prompt: {str(answer)[:200]}")
        return answer["prompt"]

    async def _streamed(self, body: dict[str, Any]) -> str:
        """A completion read as it is written, stopped where it loops (`looping`); its text so far."""
        if self._session is None:
            raise BackendError("the llama.cpp client is not open: use `async with LlamaServer(...)`")
        url, text, pieces, last = self.root_url + "/completion", "", 0, {}  # `last`: the last event read
        try:
            async with self._session.post(url, json={"temperature": 0, "cache_prompt": True, **body,
                                                     "stream": True}) as response:
                await _refused(response, url)
                if response.content_type == "application/json":  # a server that answers at once, unstreamed
                    last = await response.json()
                    text = str(last.get("content") or "") if isinstance(last, dict) else ""
                async for line in response.content:
                    event = json.loads(line[5:]) if line.startswith(b"data:") else None
                    if not isinstance(event, dict):
                        continue
                    last, text, pieces = event, text + str(event.get("content") or ""), pieces + 1
                    if not last.get("stop") and looping(text):
                        logger.info("LLAMA_LOOP_CUT a constrained completion repeats itself after {} characters",
                                    len(text))
                        last = {"tokens_predicted": pieces}  # (its prompt's count comes only with the last event)
                        break
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            raise BackendError(f"llama.cpp at {url} could not be read: {error or type(error).__name__}") from None
        last = last if isinstance(last, dict) else {}
        self.last_timings = dict(last.get("timings") or {})
        if (spent := _SPENT.get()) is not None:
            spent.append((int(last.get("tokens_evaluated") or 0), int(last.get("tokens_predicted") or pieces)))
        return text

    async def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = await self._post("/completion", {"temperature": 0, "cache_prompt": True, **body})
        self.last_timings = dict(answer.get("timings") or {})
        spent = _SPENT.get()
        if spent is not None:  # llama.cpp's counts: the whole prompt (cached or not) and the tokens written
            spent.append((int(answer.get("tokens_evaluated") or 0), int(answer.get("tokens_predicted") or 0)))
        return answer

    async def complete(
        self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None, max_tokens: int
    ) -> str:
        """The greedy continuation of `prompt`, under a GBNF `grammar` or a `json_schema` when given. Under a schema it
        is streamed, and one that begins repeating itself (`looping`) is stopped there: what it wrote so far comes back
        unfinished (llama.cpp stops writing when the stream is closed)."""
        body: dict[str, Any] = {"prompt": prompt, "n_predict": max_tokens}
        if grammar is not None:
            body["grammar"] = grammar
        if json_schema is None:
            return str((await self._completion(body)).get("content") or "")
        return await self._streamed({**body, "json_schema": json_schema})

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        """The `n` likeliest next tokens after `prompt`, with their probabilities, likeliest first."""
        answer = await self._completion({"prompt": prompt, "n_predict": 1, "n_probs": n})
        steps = answer.get("completion_probabilities") or []
        if not steps:
            return []
        listed = steps[0].get("top_logprobs") or steps[0].get("probs") or []
        return [(str(item.get("token", "")), _probability(item)) for item in listed]


async def _refused(response: aiohttp.ClientResponse, url: str) -> None:
    """Raises `BackendError` with the start of its body where llama.cpp answered with an HTTP error."""
    if response.status >= 400:
        excerpt = (await response.text())[:300]
        raise BackendError(f"llama.cpp at {url} answered HTTP {response.status}: {excerpt}")


def looping(text: str) -> bool:
    """Whether a text the model writes has begun repeating itself: past `LOOP_FROM` characters, its last `LOOP_TAIL`,
    of four different characters at least, occur `LOOP_SEEN` times in it, apart (a query's condition written again and
    again); a run of one or two characters (a rule of dashes, an indentation) is no loop."""
    tail = text[-LOOP_TAIL:]
    return len(text) >= LOOP_FROM and len(set(tail)) >= 4 and text.count(tail) >= LOOP_SEEN


def _probability(item: dict[str, Any]) -> float:
    if "logprob" in item:
        return math.exp(float(item["logprob"]))
    return float(item.get("prob", 0.0))
