"""The values a tool call is made of: `Tool`, `ToolCall`, `ToolResult`, the kinds of error, and the limits."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import secrets
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

__all__ = [
    "FAILED",
    "failed",
    "Tool",
    "ToolCall",
    "ToolResult",
    "ToolFn",
    "TaskSupport",
    "ErrorKind",
    "new_call_id",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_WORKERS",
    "DEFAULT_MAX_RESULT_CHARS",
    "MAX_ATTACHMENT_CHARS",
]

DEFAULT_TIMEOUT = 90.0
DEFAULT_TOOL_WORKERS = 8
DEFAULT_MAX_RESULT_CHARS = 100_000
MAX_ATTACHMENT_CHARS = 8 * 1024 * 1024  # base64 text of one image or sound

ErrorKind = Literal[
    "malformed",  # the model wrote a call that cannot be read
    "not_found",  # the call names a tool nobody registered
    "bad_arguments",  # arguments that do not fit the tool's schema
    "failed",  # the tool ran and raised, or reported an error
    "timeout",  # the tool did not answer in time
    "refused",  # the user refused the call
    "denied",  # the approval policy does not allow the tool
    "repeat",  # the same call again in one turn, not run a second time
    "cut",  # the turn hit a limit before the call finished
    "interrupted",  # the turn was stopped before the call finished
    "cancelled",  # a person cancelled this call (its card's Cancel) before it finished
]


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


FAILED = "Error: "  # how the text of a failed call's result begins (`ToolResult.text`)


def failed(text: str) -> bool:
    """Whether a tool message's text is a failed call's (`ToolResult.text`)."""
    return text.startswith(FAILED)


@dataclass
class ToolResult:
    """What came back from running a `ToolCall`: an output or an error, and how long it took.

    `kind` says what sort of error it is (None when the call succeeded). `attachments` are
    `{"type": "image"|"audio", "mimeType", "data"}` (base64) for the page and a model with vision, or
    `{"type": "resource", "uri", "mimeType", "text"}` for the page; `structured` is an MCP server's
    `structuredContent`, the model's text when the result has none of its own.
    """

    call: ToolCall
    output: Any = None
    error: str | None = None
    seconds: float | None = 0.0  # None: not known (a result read back from an older transcript)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    kind: ErrorKind | None = None
    reused: bool = False  # a result recorded earlier, given again instead of running the call (an edited turn)
    structured: Any = None  # an MCP result's structuredContent, kept as the server gave it

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        """The result as the model reads it in a tool message (a failure begins with `FAILED`)."""
        if self.error is not None:
            return f"{FAILED}{self.error}"
        if self.output in (None, "") and self.structured is not None:
            return json.dumps(self.structured, ensure_ascii=False, default=str)
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self.output, ensure_ascii=False, default=str)


ToolFn = Callable[..., Any]
TaskSupport = Literal["optional", "required"]
"""How a long tool is served over MCP: as a task to a client that takes tasks (`optional`, else as a plain call),
or only to such a client (`required`)."""


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
    task: TaskSupport | None = None  # it can run long: an MCP client that takes tasks gets one (`sidespin.mcp.served`)
    asks_first: bool = False  # served as a task only once it calls `as_task()`; its questions come before
    places: tuple[str, ...] = ()  # the folders its MCP server works in, as mcp.json names them (`sidespin.mcp.places`)
    holds: tuple[str, ...] = ()  # the names its MCP server's listing gives (`sidespin.mcp.holdings`)

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
