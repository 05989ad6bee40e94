"""The embedded backend's overhead: EmbeddedBackend.stream against a bare aiohttp SSE loop on the same server.

Same llama.cpp server, same prompts, same seed, temperature 0 and max_tokens, runs
interleaved (backend, direct, backend, direct…) so that load on the machine hits
both alike. Reports medians of time to first token and tokens per second.

    python bench/bench_embedded.py [--reps 9] [--max-tokens 96]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import aiohttp
from loguru import logger

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidespin.llm.embedded import EmbeddedBackend  # noqa: E402

PROMPTS = [
    "Say hi",
    "Write three sentences about cats.",
    "Explain in a short paragraph why the sky is blue.",
]


@dataclass
class Run:
    first_token: float  # seconds from request to first text
    tokens: int  # streamed text pieces (llama.cpp sends one token per event)
    decode_seconds: float  # first to last text piece
    total_seconds: float

    @property
    def tokens_per_second(self) -> float:
        return (self.tokens - 1) / self.decode_seconds if self.tokens > 1 and self.decode_seconds > 0 else 0.0


async def measure(pieces: AsyncIterator[str]) -> Run:
    started = time.perf_counter()
    first = last = 0.0
    count = 0
    async for piece in pieces:
        if not piece:
            continue
        last = time.perf_counter()
        first = first or last
        count += 1
    end = time.perf_counter()
    return Run(first - started, count, last - first, end - started)


async def through_backend(backend: EmbeddedBackend, prompt: str) -> AsyncIterator[str]:
    async for delta in backend.stream([{"role": "user", "content": prompt}]):
        yield delta.text


def direct(session: aiohttp.ClientSession, url: str, options: dict[str, Any]) -> Callable[[str], AsyncIterator[str]]:
    async def pieces(prompt: str) -> AsyncIterator[str]:
        body = {"messages": [{"role": "user", "content": prompt}], "stream": True, **options}
        async with session.post(url, json=body) as response:
            response.raise_for_status()
            async for raw in response.content:
                line = raw.decode().strip()
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                choices = json.loads(line[6:]).get("choices") or [{}]
                yield (choices[0].get("delta") or {}).get("content") or ""

    return pieces


def median(runs: list[Run], field: Callable[[Run], float]) -> float:
    return statistics.median(field(r) for r in runs)


async def main(reps: int, max_tokens: int) -> None:
    options = {"seed": 42, "temperature": 0, "max_tokens": max_tokens}
    async with EmbeddedBackend(n_ctx=4096, options=options) as backend:
        headers = {"Authorization": f"Bearer {backend.api_key}"}
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=120)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout, connector=aiohttp.TCPConnector(force_close=True)) as session:
            raw = direct(session, f"{backend.base_url}/chat/completions", options)
            paths: dict[str, Callable[[str], Awaitable[Run]]] = {
                "backend": lambda p: measure(through_backend(backend, p)),
                "direct": lambda p: measure(raw(p)),
            }
            for name, run in paths.items():  # warm-up: load caches, JIT nothing, fill the prompt cache
                await run(PROMPTS[0])
            results: dict[str, list[Run]] = {name: [] for name in paths}
            for rep in range(reps):
                order = list(paths) if rep % 2 == 0 else list(reversed(paths))  # neither always goes first
                for prompt in PROMPTS:
                    for name in order:
                        results[name].append(await paths[name](prompt))
    counts = {name: sorted({r.tokens for r in runs}) for name, runs in results.items()}
    rows = [
        ("time to first token (ms)", lambda r: r.first_token * 1000),
        ("decode tokens/s", lambda r: r.tokens_per_second),
        ("whole answer (ms)", lambda r: r.total_seconds * 1000),
    ]
    print(f"embedded backend vs direct SSE, same server: {len(PROMPTS)} prompts x {reps} reps each, medians")
    print(f"seed 42, temperature 0, max_tokens {max_tokens}; tokens per answer: backend {counts['backend']}, direct {counts['direct']}")
    print(f"{'metric':<26}{'backend':>12}{'direct':>12}{'backend/direct':>16}")
    for label, field in rows:
        ours, theirs = median(results["backend"], field), median(results["direct"], field)
        print(f"{label:<26}{ours:>12.1f}{theirs:>12.1f}{ours / theirs:>16.3f}")


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="INFO")  # as the app logs; DEBUG would print a line per request
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--max-tokens", type=int, default=96)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.reps, arguments.max_tokens))
