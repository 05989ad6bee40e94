"""The registry: every tool by name, and the one place a call is run.

What the registry promises, whatever a tool does:
- A synchronous tool runs on the registry's own few threads (`DEFAULT_TOOL_WORKERS`), never
  on the event loop's default executor, so stuck tools cannot starve the rest of the server.
  Waiting for a free thread counts against the call's timeout.
- Python cannot kill a thread. When a call times out or its task is cancelled (the user stops
  the turn), its `Cancellation` is cancelled; a tool that reads `current_cancellation()` stops
  then and frees its thread. One that ignores it keeps its thread until it returns.
- Every failure becomes a `ToolResult` with an error the model can read and a `kind` saying what
  went wrong (`not_found`, `bad_arguments`, `timeout`, or `failed` for anything else).
- Every result the model reads is at most `max_result_chars` characters (errors too), and an
  attachment over `MAX_ATTACHMENT_CHARS` of base64 is dropped; a note says what was left out.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator

from loguru import logger

from sidespin.errors import BadArguments, MalformedToolCall, ToolError, ToolNotFound, ToolSwitchedOff, ToolTimeout
from sidespin.tools.schema import coerce_arguments
from sidespin.tools.types import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_TIMEOUT,
    DEFAULT_TOOL_WORKERS,
    MAX_ATTACHMENT_CHARS,
    ErrorKind,
    Tool,
    ToolCall,
    ToolResult,
)

__all__ = ["ToolRegistry", "Cancellation", "current_cancellation"]


class Cancellation:
    """The stop signal of one tool call, which a synchronous tool reads to stop itself.

    A tool polls `cancelled`, blocks with `wait()`, or registers `on_cancel(callback)`.
    Callbacks run once, on the thread that cancels (the event loop), so they must be quick.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the call is cancelled or `timeout` seconds pass; True if it was cancelled."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run `callback` when the call is cancelled, or now if it already is."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def cancel(self) -> None:
        """Tell the tool to stop and run its callbacks; a second call does nothing."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a tool's own code, run on the loop: one failure must not stop the others
                logger.exception("TOOL_CANCEL_CALLBACK_FAILED {!r}", callback)


_CANCELLATION: contextvars.ContextVar[Cancellation] = contextvars.ContextVar("sidespin_tool_cancellation")


def current_cancellation() -> Cancellation:
    """The stop signal of the tool call running here; outside a call, a fresh one never cancelled."""
    return _CANCELLATION.get(None) or Cancellation()


_ERROR_KINDS: tuple[tuple[type[ToolError], ErrorKind], ...] = (
    (MalformedToolCall, "malformed"),
    (ToolNotFound, "not_found"),
    (ToolSwitchedOff, "denied"),
    (BadArguments, "bad_arguments"),
    (ToolTimeout, "timeout"),
)


def _error_kind(error: Exception) -> ErrorKind:
    """The kind of a failure raised while running a call; any error not named here is "failed"."""
    return next((kind for cls, kind in _ERROR_KINDS if isinstance(error, cls)), "failed")


class ToolRegistry:
    """Every tool the model may use, by name. Clashing names are qualified as `server__tool`.

    It owns the threads its synchronous tools run on; `close()` (or leaving `with`) lets them go.
    """

    def __init__(
        self,
        tools: list[Tool] | None = None,
        *,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        max_workers: int = DEFAULT_TOOL_WORKERS,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self._looks: dict[str, set[str]] = {}  # the names of the tools by what they look like (`_skeleton`)
        self.max_result_chars = max_result_chars
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self.base = self
        """The registry this one views (`without`); itself for a registry that owns its tools."""
        self._off: frozenset[str] = frozenset()
        for item in tools or []:
            self.add(item)

    def without(self, names: Iterable[str]) -> ToolRegistry:
        """A view for one conversation in which the tools named are switched off: not listed, not
        `in` it, and a call to one is refused as switched off. It shares this registry's tools (a
        server restarted meanwhile shows through) and its threads; closing it closes nothing."""
        base = self.base
        off = frozenset(names)
        if not off:
            return base
        view = ToolRegistry(max_result_chars=base.max_result_chars, max_workers=base.max_workers)
        view._tools, view._looks, view._off, view.base = base._tools, base._looks, off, base
        return view

    @property
    def switched_off(self) -> frozenset[str]:
        return self._off

    def __enter__(self) -> ToolRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Let the worker threads go once their tools return; calls still waiting for one are dropped."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _workers(self) -> ThreadPoolExecutor:
        # made on first use: a registry that only holds async (MCP) tools never starts a thread
        if self.base is not self:
            return self.base._workers()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="sidespin-tool")
        return self._pool

    def add(self, item: Tool, *, server: str | None = None) -> Tool:
        """Register a tool; a name already taken is qualified with its server, never shadowed. `ToolError` when
        there is no server to qualify it with, or its qualified name is taken too."""
        if item.name in self._tools:
            taken = self._tools[item.name].source
            if server is None:
                raise ToolError(f"two tools are named {item.name!r}: {taken} and {item.source}")
            qualified = f"{server}__{item.name}"
            if qualified in self._tools:
                raise ToolError(f"{item.name!r} is taken by {taken}, and {qualified!r} by "
                                f"{self._tools[qualified].source}")
            logger.warning("TOOL_NAME_CLASH {} from {} registered as {}", item.name, item.source, qualified)
            item = Tool(**{**item.__dict__, "name": qualified})
        self._tools[item.name] = item
        self._looks.setdefault(_skeleton(item.name), set()).add(item.name)
        return item

    def look_alike(self, item: Tool) -> Tool | None:
        """A tool of another source whose name `item`'s could be mistaken for: the same, or the same but for case,
        `_ . -` and look-alike letters and digits (`Web_Search`, `web-search`, `web_5earch`, `vveb_search`)."""
        alike = (self._tools[name] for name in sorted(self._looks.get(_skeleton(item.name), ())))
        return next((tool for tool in alike if tool.source != item.source), None)

    def remove_source(self, source: str) -> None:
        for name in [n for n, t in self._tools.items() if t.source == source]:
            del self._tools[name]
            self._looks[_skeleton(name)].discard(name)

    def get(self, name: str) -> Tool:
        if name in self._off and name in self._tools:
            raise ToolSwitchedOff(name)
        try:
            return self._tools[name]
        except KeyError:
            raise ToolNotFound(name, self.names()) from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools and name not in self._off

    def __iter__(self) -> Iterator[Tool]:
        return iter([t for t in list(self._tools.values()) if t.name not in self._off])

    def __len__(self) -> int:
        return len(self.names())

    def names(self) -> list[str]:
        return [name for name in list(self._tools) if name not in self._off]

    async def execute(
        self, call: ToolCall, *, timeout: float = DEFAULT_TIMEOUT, reraise: tuple[type[Exception], ...] = ()
    ) -> ToolResult:
        """Run one call; every failure becomes a `ToolResult` with an error the model can read and its `kind`,
        except an exception of a kind `reraise` names, which the caller takes (the MCP endpoint answers a
        plugin's `MCPError` as a protocol error)."""
        started = time.perf_counter()
        result = ToolResult(call=call)
        try:
            target = self.get(call.name)
            arguments = coerce_arguments(target.input_schema, call.arguments)
            logger.info("TOOL_CALL_START {} id={} source={}", call.name, call.id, target.source)
            logger.debug("TOOL_CALL_ARGS {} id={} {}", call.name, call.id, call.arguments_json())
            result.output = await self._run(call, target, arguments, target.timeout or timeout)
            if isinstance(result.output, ToolResult):  # an MCP tool hands back a whole result
                whole = result.output
                result.output, result.error, result.attachments = whole.output, whole.error, whole.attachments
                result.structured = whole.structured
                if whole.error is not None:
                    result.kind = whole.kind or "failed"
        except reraise:
            raise
        except ToolError as error:
            result.error = str(error)
            result.kind = _error_kind(error)
        except Exception as error:  # the top edge of a tool: any failure becomes a readable result
            result.error = f"{type(error).__name__}: {error}"
            result.kind = "failed"
        self._cut_long_text(result)
        _drop_large_attachments(result)
        result.seconds = time.perf_counter() - started
        if result.ok:
            logger.info("TOOL_CALL_DONE {} id={} {:.3f}s", call.name, call.id, result.seconds)
        else:
            logger.warning(
                "TOOL_CALL_ERROR {} id={} {:.3f}s {} {}", call.name, call.id, result.seconds, result.kind, result.error
            )
        return result

    async def _run(self, call: ToolCall, target: Tool, arguments: dict[str, Any], limit: float) -> Any:
        """Run the tool within `limit` seconds, waiting for a thread included; if that ends first, tell it to stop."""
        cancellation = Cancellation()
        token = _CANCELLATION.set(cancellation)
        deadline = asyncio.timeout(limit)
        try:
            async with deadline:
                return await target.invoke(arguments, executor=self._workers())
        except TimeoutError:
            if not deadline.expired():
                raise  # the tool itself raised it
            _cancel(call, cancellation, f"no answer within {limit:g} s")
            raise ToolTimeout(call.name, limit) from None
        except asyncio.CancelledError:
            _cancel(call, cancellation, "its task was cancelled")
            raise
        finally:
            _CANCELLATION.reset(token)

    def _cut_long_text(self, result: ToolResult) -> None:
        """Cut what the model reads (the error, or the output as text) to `max_result_chars`, with a note."""
        text = result.error if result.error is not None else result.text()
        limit = self.max_result_chars
        if len(text) <= limit:
            return
        logger.warning("TOOL_RESULT_CUT {} id={} {} chars to {}", result.call.name, result.call.id, len(text), limit)
        cut = text[:limit] + (
            f"\n… [cut: {len(text) - limit:,} more characters not shown; the result was {len(text):,} characters]"
        )
        if result.error is not None:
            result.error = cut
        else:
            result.output = cut


_CONFUSABLE = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "5": "s", "_": None, "-": None, ".": None})


def _skeleton(name: str) -> str:
    """What a name looks like, read quickly: lower case, `_ . -` gone, look-alike letters and digits as one."""
    return name.lower().translate(_CONFUSABLE).replace("rn", "m").replace("vv", "w")


def _drop_large_attachments(result: ToolResult) -> None:
    """Leave out attachments over MAX_ATTACHMENT_CHARS (of base64, or a resource's text); the text says which."""
    kept: list[dict[str, Any]] = []
    for attachment in result.attachments:
        size = len(attachment.get("data") or attachment.get("text") or "")
        if size <= MAX_ATTACHMENT_CHARS:
            kept.append(attachment)
            continue
        kind = attachment.get("mimeType") or attachment.get("type") or "attachment"
        logger.warning("TOOL_ATTACHMENT_DROPPED {} id={} {} {} chars", result.call.name, result.call.id, kind, size)
        note = f"\n[{kind} left out: {size:,} characters of base64, over the limit of {MAX_ATTACHMENT_CHARS:,}]"
        if result.error is not None:
            result.error += note
        else:
            result.output = result.text() + note
    result.attachments = kept


def _cancel(call: ToolCall, cancellation: Cancellation, why: str) -> None:
    logger.info("TOOL_CALL_CANCELLED {} id={} {}", call.name, call.id, why)
    cancellation.cancel()  # a thread cannot be killed: the tool is asked to stop and free it
