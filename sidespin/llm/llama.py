"""llama.cpp's own endpoints (not the OpenAI ones): a chat rendered to a prompt, constrained completions, token
probabilities and slots. The tool-use pipeline (`sidespin.tooluse`) decides through them.

    async with LlamaServer(root_url, api_key) as server:
        prompt = await server.render(messages, tools)
        text = await server.complete(prompt, grammar, None, 16)

`POST /apply-template {"messages", "tools"}` answers `{"prompt"}` in the model's chat template (with
`tools`, the template's own way of offering them); `POST /completion` takes `prompt`, `n_predict`,
`temperature`, `cache_prompt`, `n_probs`, and `grammar` (GBNF) or `json_schema`, and answers `{"content",
"tokens_evaluated", "completion_probabilities", "timings": {"cache_n", "prompt_n", …}}`. What its
completions cost is added up inside `counting()` (a turn's usage line includes its route).
"""

from __future__ import annotations

import contextlib
import math
from contextvars import ContextVar
from typing import Any, Iterator

import aiohttp

from sidespin.errors import BackendError

__all__ = ["LlamaServer", "counting"]

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
                if response.status >= 400:
                    excerpt = (await response.text())[:300]
                    raise BackendError(f"llama.cpp at {url} answered HTTP {response.status}: {excerpt}")
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
        """The greedy continuation of `prompt`, under a GBNF `grammar` or a `json_schema` when given."""
        body: dict[str, Any] = {"prompt": prompt, "n_predict": max_tokens}
        if grammar is not None:
            body["grammar"] = grammar
        if json_schema is not None:
            body["json_schema"] = json_schema
        return str((await self._completion(body)).get("content") or "")

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        """The `n` likeliest next tokens after `prompt`, with their probabilities, likeliest first."""
        answer = await self._completion({"prompt": prompt, "n_predict": 1, "n_probs": n})
        steps = answer.get("completion_probabilities") or []
        if not steps:
            return []
        listed = steps[0].get("top_logprobs") or steps[0].get("probs") or []
        return [(str(item.get("token", "")), _probability(item)) for item in listed]


def _probability(item: dict[str, Any]) -> float:
    if "logprob" in item:
        return math.exp(float(item["logprob"]))
    return float(item.get("prob", 0.0))
