"""Tools: three small dataclasses, a registry, and a decorator.

A tool is built from a plain function's signature and docstring; Python
plugins in `plugins/` and tools of external MCP servers share one registry.

What the registry promises, whatever a tool does:
- A synchronous tool runs on the registry's own few threads (`DEFAULT_TOOL_WORKERS`), never
  on the event loop's default executor, so stuck tools cannot starve the rest of the server.
  Waiting for a free thread counts against the call's timeout.
- Python cannot kill a thread. When a call times out or its task is cancelled (the user stops
  the turn), its `Cancellation` is cancelled; a tool that reads `current_cancellation()` stops
  then and frees its thread. One that ignores it keeps its thread until it returns.
- Every result the model reads is at most `max_result_chars` characters (errors too), and an
  attachment over `MAX_ATTACHMENT_CHARS` of base64 is dropped; a note says what was left out.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import importlib.util
import inspect
import json
import secrets
import sys
import threading
import time
import types
import typing
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from loguru import logger

from sidespin.errors import BadArguments, ToolError, ToolNotFound, ToolTimeout

__all__ = [
    "Tool",
    "ToolCall",
    "ToolResult",
    "ToolRegistry",
    "Cancellation",
    "current_cancellation",
    "tool",
    "coerce_arguments",
    "new_call_id",
    "load_plugins",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_WORKERS",
    "DEFAULT_MAX_RESULT_CHARS",
    "MAX_ATTACHMENT_CHARS",
]

DEFAULT_TIMEOUT = 90.0
DEFAULT_TOOL_WORKERS = 8
DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_ATTACHMENT_CHARS = 8 * 1024 * 1024  # base64 text of one image or sound


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


def new_call_id() -> str:
    return "call_" + secrets.token_hex(6)


@dataclass(frozen=True)
class ToolCall:
    """One request by the model to run one tool."""

    name: str
    arguments: dict[str, Any]
    id: str = field(default_factory=new_call_id)

    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class ToolResult:
    """What came back from running a `ToolCall`: an output or an error, and how long it took."""

    call: ToolCall
    output: Any = None
    error: str | None = None
    seconds: float = 0.0
    attachments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        """The result as the model reads it in a tool message."""
        if self.error is not None:
            return f"Error: {self.error}"
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self.output, ensure_ascii=False, default=str)


ToolFn = Callable[..., Any]


@dataclass
class Tool:
    """A callable the model may use, described by a JSON schema."""

    name: str
    description: str
    input_schema: dict[str, Any]
    fn: ToolFn
    source: str = "plugin"
    formatter: Callable[[Any], str] | None = None
    read_only: bool = False
    destructive: bool = False
    timeout: float | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        return self.input_schema.get("properties", {})

    @property
    def required(self) -> list[str]:
        return list(self.input_schema.get("required", []))

    async def invoke(self, arguments: dict[str, Any], *, executor: Executor | None = None) -> Any:
        """Run the function; a synchronous one runs on `executor` (the loop's default if None) so the
        loop keeps serving, in a copy of this context so that it sees `current_cancellation()`."""
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**arguments)
        run = functools.partial(contextvars.copy_context().run, self.fn, **arguments)
        result = await asyncio.get_running_loop().run_in_executor(executor, run)
        if inspect.isawaitable(result):
            result = await result
        return result


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def _schema_for(annotation: Any) -> dict[str, Any]:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _schema_for(members[0]) if len(members) == 1 else {}
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        return {"type": _JSON_TYPES.get(type(values[0]), "string"), "enum": values}
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        schema: dict[str, Any] = {"type": "array"}
        if args:
            schema["items"] = _schema_for(args[0])
        return schema
    if origin is dict:
        return {"type": "object"}
    return {"type": _JSON_TYPES[annotation]} if annotation in _JSON_TYPES else {}


def _docstring_parts(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and the `Args:` lines (Google style)."""
    description: list[str] = []
    params: dict[str, str] = {}
    in_args = False
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args:
            if not stripped:
                continue
            if ":" in stripped and not line.startswith(" " * 8):
                name, _, text = stripped.partition(":")
                params[name.split("(")[0].strip()] = text.strip()
                continue
            if stripped.endswith(":"):
                in_args = False
                continue
        if not in_args:
            description.append(line)
    return "\n".join(description).strip(), params


def _tool_from_function(fn: ToolFn, **options: Any) -> Tool:
    description, param_docs = _docstring_parts(fn.__doc__ or "")
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = _schema_for(hints.get(name, param.annotation))
        if name in param_docs:
            schema["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None:
            schema["default"] = param.default
        properties[name] = schema
    # a plugin's signature is its whole interface: any other argument is a mistake to report
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        input_schema["required"] = required
    return Tool(
        name=options.pop("name", None) or fn.__name__,
        description=options.pop("description", None) or description,
        input_schema=input_schema,
        fn=fn,
        **options,
    )


def tool(
    fn: ToolFn | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    formatter: Callable[[Any], str] | None = None,
    read_only: bool = False,
    destructive: bool = False,
    timeout: float | None = None,
) -> Any:
    """Turn a plain (sync or async) function into a `Tool`, with or without arguments.

        @tool(read_only=True)
        def say_hello(name: str) -> str:
            \"\"\"Greet someone by name.\"\"\"
    """
    options = dict(
        name=name,
        description=description,
        formatter=formatter,
        read_only=read_only,
        destructive=destructive,
        timeout=timeout,
    )
    if fn is not None:
        return _tool_from_function(fn, **options)
    return lambda f: _tool_from_function(f, **options)


def _coerce_value(name: str, value: Any, schema: dict[str, Any]) -> Any:
    expected = schema.get("type")
    if isinstance(expected, list):
        expected = next((t for t in expected if t != "null"), None)
    if value is None or expected is None:
        return value
    if expected == "string":
        return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    if expected == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
            return value.strip().lower() in ("true", "yes", "1")
        if isinstance(value, int):
            return bool(value)
        raise BadArguments(f"argument {name!r} should be true or false, got {value!r}")
    if expected == "integer":
        if isinstance(value, bool):
            raise BadArguments(f"argument {name!r} should be a whole number, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise BadArguments(f"argument {name!r} should be a whole number, got {value!r}")
    if expected == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                number = float(value.strip())
                return int(number) if number.is_integer() and "." not in value else number
            except ValueError:
                pass
        raise BadArguments(f"argument {name!r} should be a number, got {value!r}")
    if expected in ("array", "object"):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise BadArguments(f"argument {name!r} should be JSON {expected}: {error.msg}") from None
        wanted = list if expected == "array" else dict
        if not isinstance(value, wanted):
            raise BadArguments(f"argument {name!r} should be an {expected}, got {type(value).__name__}")
        return value
    return value


def coerce_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Coerce argument values to the types the schema names and check required ones are there.

    A string stays a string ("02139" is not turned into 2139); "3" becomes 3 only where an
    integer is expected. Unknown arguments are refused when the schema says
    `additionalProperties: false` (every plugin's does) and passed on otherwise, as JSON Schema allows.
    """
    if not isinstance(arguments, dict):
        raise BadArguments(f"arguments should be an object, got {type(arguments).__name__}")
    properties = schema.get("properties", {}) or {}
    coerced: dict[str, Any] = {}
    for name, value in arguments.items():
        if name in properties:
            coerced[name] = _coerce_value(name, value, properties[name] or {})
        elif schema.get("additionalProperties") is False:
            raise BadArguments(f"unknown argument {name!r} (expected: {', '.join(properties) or 'none'})")
        else:
            coerced[name] = value
    missing = [name for name in schema.get("required", []) if name not in coerced]
    if missing:
        raise BadArguments(f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    return coerced


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
        self.max_result_chars = max_result_chars
        self.max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        for item in tools or []:
            self.add(item)

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
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="sidespin-tool")
        return self._pool

    def add(self, item: Tool, *, server: str | None = None) -> Tool:
        """Register a tool; a name already taken is qualified with its server, never shadowed."""
        if item.name in self._tools:
            if server is None:
                raise ToolError(f"two tools are named {item.name!r}: {self._tools[item.name].source} and {item.source}")
            qualified = f"{server}__{item.name}"
            logger.warning("TOOL_NAME_CLASH {} from {} registered as {}", item.name, item.source, qualified)
            item = Tool(**{**item.__dict__, "name": qualified})
        self._tools[item.name] = item
        return item

    def remove_source(self, source: str) -> None:
        for name in [n for n, t in self._tools.items() if t.source == source]:
            del self._tools[name]

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise ToolNotFound(name, list(self._tools)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    async def execute(self, call: ToolCall, *, timeout: float = DEFAULT_TIMEOUT) -> ToolResult:
        """Run one call; every failure becomes a `ToolResult` with an error the model can read."""
        started = time.perf_counter()
        result = ToolResult(call=call)
        try:
            target = self.get(call.name)
            arguments = coerce_arguments(target.input_schema, call.arguments)
            logger.info("TOOL_CALL_START {} id={} source={}", call.name, call.id, target.source)
            logger.debug("TOOL_CALL_ARGS {} id={} {}", call.name, call.id, call.arguments_json())
            result.output = await self._run(call, target, arguments, target.timeout or timeout)
            if isinstance(result.output, ToolResult):  # an MCP tool hands back a whole result
                result.output, result.error, result.attachments = (
                    result.output.output,
                    result.output.error,
                    result.output.attachments,
                )
        except ToolError as error:
            result.error = str(error)
        except Exception as error:  # the top edge of a tool: any failure becomes a readable result
            result.error = f"{type(error).__name__}: {error}"
        self._cut_long_text(result)
        _drop_large_attachments(result)
        result.seconds = time.perf_counter() - started
        if result.ok:
            logger.info("TOOL_CALL_DONE {} id={} {:.3f}s", call.name, call.id, result.seconds)
        else:
            logger.warning("TOOL_CALL_ERROR {} id={} {:.3f}s {}", call.name, call.id, result.seconds, result.error)
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


def _drop_large_attachments(result: ToolResult) -> None:
    """Leave out attachments over MAX_ATTACHMENT_CHARS of base64; the text says which."""
    kept: list[dict[str, Any]] = []
    for attachment in result.attachments:
        size = len(attachment.get("data") or "")
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


def load_plugins(directory: Path) -> list[Tool]:
    """Import every `*.py` file of a plugins folder and collect the `Tool`s it defines."""
    found: list[Tool] = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module_name = f"sidespin_plugins.{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if isinstance(value, Tool):
                value.source = f"plugin:{path.stem}"
                found.append(value)
    return found


def plugins_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "plugins"

