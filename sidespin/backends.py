"""Which model plays a conversation: the models of `config.json`, each started the first time it is used.

`models` in config.json names the models a conversation may pick (the first is the
default); without it the configured backend is the only one. A conversation's choice
is its transcript's `model` note (`Transcript.set_meta("model", name)`); a name that
is no longer configured falls back to the default. The default starts with the
engine; any other starts when a turn first needs it, is then kept, and is closed
with the engine. Loading reports progress as elapsed seconds (`ModelLoading`): no
backend tells how far a load is, so there is no percentage to show.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from loguru import logger

from sidespin.config import Settings
from sidespin.events import ModelLoading
from sidespin.rungs import Choice, choose_rung
from sidespin.llm import Backend, backend_from_spec, make_backend
from sidespin.tools import ToolRegistry

__all__ = ["BackendPool", "default_backend", "display_name"]

TICK = 0.5  # seconds between two progress reports of a load


def default_backend(settings: Settings) -> Backend:
    """The backend a conversation plays with when it picked none: the first of `models`, else the configured one."""
    if settings.models:
        return _entry_backend(settings.models[0], settings)
    return make_backend(settings)


def _entry_backend(entry: dict[str, Any], settings: Settings) -> Backend:
    """The backend a `models` entry names; its own "vision" says whether it sees images."""
    return backend_from_spec(entry["backend"], replace(settings, vision=entry.get("vision") is True))


def display_name(backend: Backend) -> str:
    """A backend's model as the transcript's 🤖:[…] names it when config.json gives it no name."""
    return Path(backend.model).name if backend.model else backend.name


class BackendPool:
    """The models a conversation may pick, by name; each started once, on first use, and kept."""

    def __init__(self, settings: Settings, registry: ToolRegistry, default: Backend, default_rung: Choice,
                 default_name: str) -> None:
        self.settings = settings
        self.registry = registry
        self.default = default_name
        self.specs: dict[str, dict[str, Any] | None] = {default_name: None}  # None: built already (`backends`)
        self.specs.update((m["name"], m) for m in settings.models if m["name"] not in self.specs)
        self.backends: dict[str, Backend] = {self.default: default}
        self.rungs: dict[str, Choice] = {self.default: default_rung}
        self._loads: dict[str, asyncio.Task[Backend]] = {}
        self._started: list[Backend] = []  # what the pool started (the default is the engine's to close)

    def names(self) -> list[str]:
        return list(self.specs)

    def choose(self, name: object) -> str:
        """The model a conversation plays with: its choice if it is configured, else the default."""
        if isinstance(name, str) and name in self.specs:
            return name
        if name:
            logger.warning("MODEL_UNKNOWN {!r} is not in config.json's models; the default {} plays", name, self.default)
        return self.default

    def add(self, name: str, backend: Backend) -> None:
        """Offer a backend already built (not started) under `name`: started on first use like the others."""
        self.specs[name] = None
        self.backends[name] = backend

    def ready(self, name: str) -> bool:
        return name in self.rungs

    def backend(self, name: str) -> Backend:
        return self.backends[name]

    def rung(self, name: str) -> Choice:
        return self.rungs[name]

    async def load(self, name: str, stop: Callable[[], bool] = lambda: False) -> AsyncIterator[ModelLoading]:
        """Start `name` unless it is ready, reporting the time so far every `TICK` seconds.

        Ends when the model is ready (a last report with `done`), or early, with the load going on
        for the next turn, when `stop()` turns true. Raises `BackendError` when the model cannot start.
        """
        if self.ready(name):
            return
        task = self._loads.get(name)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = self._loads[name] = asyncio.create_task(self._start(name), name=f"load-{name}")
        started = asyncio.get_running_loop().time()
        while not task.done():
            yield ModelLoading(name, asyncio.get_running_loop().time() - started)
            if stop():
                return
            await asyncio.wait({task}, timeout=TICK)
        task.result()  # its BackendError, if it failed
        yield ModelLoading(name, asyncio.get_running_loop().time() - started, done=True)

    async def _start(self, name: str) -> Backend:
        spec = self.specs[name]
        assert spec is not None or name in self.backends
        backend = self.backends.get(name) or _entry_backend(spec or {"backend": ""}, self.settings)  # None: built
        self.backends[name] = backend
        logger.info("MODEL_LOAD_START {} backend={} model={}", name, backend.name, backend.model)
        started = asyncio.get_running_loop().time()
        await backend.start()
        self._started.append(backend)
        rung = choose_rung(backend, self.settings.tool_mode)
        self.rungs[name] = rung
        logger.info("MODEL_LOAD_DONE {} in {:.2f}s rung={} ({})", name, asyncio.get_running_loop().time() - started,
                    rung.name, rung.source)
        return backend

    async def aclose(self) -> None:
        """Stop the loads under way and close every backend the pool started."""
        for task in self._loads.values():
            task.cancel()
        for task in self._loads.values():
            with contextlib.suppress(BaseException):
                await task
        while self._started:
            await self._started.pop().aclose()

