"""One `tools/call` that `/mcp` (or `sidespin mcp-serve`) serves, and what a plugin running in it may do.

    from sidespin.mcp.served import as_task, ask, report_progress

    @tool(task="optional")                          # it can run long: served as a task where the client takes them
    async def copy_all(folder: str) -> str:
        answer = await ask("Copy everything?", {"type": "object", "properties": {"yes": {"type": "boolean"}}})
        if answer.action != "accept":
            return "not copied"
        for step in range(10):
            await report_progress(step, 10, "copying")
        ...

- `report_progress(progress, total, message)`: a `notifications/progress` to the client (on a
  plain call whose request asked for progress); in a task, the task's status message
  ("copying (3/10)"), which `tasks/get` tells. Outside an MCP call it does nothing.
- `ask(message, schema)`: a question for the person at the client, answered as an
  `ElicitResult` (`action`: accept, decline or cancel; `content`: the form's values). In a task
  the task waits `input_required` until `tasks/update` answers it. On a plain 2026-07-28 call the
  request is answered `input_required` (SEP-2322) and the tool runs again from the start when the
  client retries with the answer (the answers of earlier rounds ride in `requestState`), so a tool
  should ask before it changes anything. On an older session it is an `elicitation/create`.
- `as_task()`: for a tool declared `@tool(task=..., asks_first=True)`: its questions before this
  are answered on the request itself, and the call becomes a task here. Elsewhere it does nothing.

Plugins that raise `MCPError` fail the call with that JSON-RPC error (a task ends `failed`); any
other failure is a tool error the caller's model can read (`isError`; a task ends `completed`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from sidespin.mcp.task_store import ServedTask, TaskStore
from sidespin.tools import ToolResult

__all__ = ["InputNeeded", "ServedCall", "as_task", "ask", "report_progress", "request_context"]


class InputNeeded(Exception):
    """A question the request carries no answer for: the call is answered `input_required` (SEP-2322)."""

    def __init__(self, key: str, request: types.ElicitRequest) -> None:
        super().__init__(f"the call needs an answer to {key!r}")
        self.key, self.request = key, request


@dataclass
class ServedCall:
    """A `tools/call` being served: its request, the answers it carries, and its task once it has one."""

    context: ServerRequestContext[Any, Any]
    answers: dict[str, Any] = field(default_factory=dict)
    task: ServedTask | None = None
    detached: asyncio.Event | None = None  # for an `asks_first` tool that may become a task: set by `as_task()`
    became_task: asyncio.Event = field(default_factory=asyncio.Event)
    asked: int = 0

    @classmethod
    def of(cls, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> ServedCall:
        """The call as `params` asks it, with the answers of this round and of earlier ones (`requestState`)."""
        answers = _earlier_answers(params.request_state)
        for key, response in (params.input_responses or {}).items():
            answers[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
        return cls(ctx, answers)

    @property
    def modern(self) -> bool:
        return self.context.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def within(self, run: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
        """Run the tool with this call as the one `ask`, `as_task` and `report_progress` see."""
        token = _CALL.set(self)
        try:
            return await run()
        finally:
            _CALL.reset(token)

    def input_required(self, needed: InputNeeded) -> types.InputRequiredResult:
        """The answer to a request whose tool asked something: the question, and the answers so far."""
        state = base64.urlsafe_b64encode(json.dumps(self.answers).encode()).decode() if self.answers else None
        return types.InputRequiredResult(input_requests={needed.key: needed.request}, request_state=state)

    def become_task(self, task: ServedTask) -> None:
        self.task = task
        self.became_task.set()


_CALL: ContextVar[ServedCall | None] = ContextVar("sidespin_served_call", default=None)


def _earlier_answers(state: str | None) -> dict[str, Any]:
    """The answers an earlier round handed back in `requestState` (a client's own answers: nothing to trust)."""
    if not state:
        return {}
    try:
        answers = json.loads(base64.urlsafe_b64decode(state.encode()))
    except (ValueError, binascii.Error):
        raise MCPError(code=types.INVALID_PARAMS, message="requestState is not one this server wrote") from None
    if not isinstance(answers, dict):
        raise MCPError(code=types.INVALID_PARAMS, message="requestState is not one this server wrote")
    return answers


def request_context() -> ServerRequestContext[Any, Any] | None:
    """The MCP `tools/call` being served here, or None when the tool runs for the chat."""
    call = _CALL.get()
    return call.context if call is not None else None


def _progress_line(progress: float, total: float | None, message: str | None) -> str:
    count = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    return f"{message} ({count})" if message else count


async def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """Tell the MCP client how far the call is: a progress notification, or its task's status message."""
    call = _CALL.get()
    if call is None:
        return
    if call.task is not None:
        call.task.touch(_progress_line(progress, total, message))
        return
    await call.context.session.report_progress(progress, total, message)


async def ask(message: str, schema: dict[str, Any]) -> types.ElicitResult:
    """Ask the person at the MCP client; outside an MCP call (the chat runs the tool) the answer is `decline`."""
    call = _CALL.get()
    if call is None:
        return types.ElicitResult(action="decline")
    key = f"ask-{call.asked}"
    call.asked += 1
    request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))
    if call.task is not None:
        return _elicit_result(await call.task.ask(key, request.model_dump(by_alias=True, mode="json", exclude_none=True)))
    if key in call.answers:
        return _elicit_result(call.answers[key])
    if call.modern:
        raise InputNeeded(key, request)
    return await call.context.session.elicit_form(message, schema)


def _elicit_result(answer: Any) -> types.ElicitResult:
    try:
        return types.ElicitResult.model_validate(answer, by_name=False)
    except ValidationError:
        raise MCPError(code=types.INVALID_PARAMS, message="an answer is not an elicitation result") from None


async def as_task() -> None:
    """From here an `asks_first` tool's call is a task (where the client takes tasks); elsewhere nothing."""
    call = _CALL.get()
    if call is None or call.detached is None or call.task is not None:
        return
    call.detached.set()
    await call.became_task.wait()


async def _settle(task: ServedTask, outcome: Awaitable[ToolResult], result: Callable[[ToolResult], Any]) -> None:
    """Wait for the tool and end the task as it ended: completed, failed (its MCPError) or cancelled."""
    try:
        done = await outcome
    except asyncio.CancelledError:
        task.settle("cancelled")
        return
    except MCPError as error:
        task.settle("failed", error=error.error.model_dump(by_alias=True, mode="json", exclude_none=True))
        return
    except InputNeeded:  # a task's questions go to the task: only a tool that asks outside of `ask` gets here
        task.settle("failed", error={"code": types.INTERNAL_ERROR, "message": "the tool asked outside its task"})
        return
    task.settle("completed", result=result(done).model_dump(by_alias=True, mode="json", exclude_none=True))


async def serve_as_task(
    store: TaskStore, call: ServedCall, tool: str, run: Callable[[], Awaitable[ToolResult]],
    result: Callable[[ToolResult], types.CallToolResult], *, asks_first: bool = False,
) -> dict[str, Any] | types.CallToolResult | types.InputRequiredResult:
    """Serve a long tool's call as a task: the `CreateTaskResult` at once, the tool running on.

    An `asks_first` tool runs in the request until it calls `as_task()` (then the task), asks a
    question not yet answered (the request answers `input_required`), or ends (a plain result).
    `result` makes the tool's `ToolResult` a `CallToolResult`.
    """
    if not asks_first:
        task = store.start(tool)
        call.become_task(task)
        task.runner = asyncio.create_task(_settle(task, call.within(run), result), name=f"mcp-task-{task.task_id}")
        return task.created_result()
    call.detached = asyncio.Event()
    running = asyncio.create_task(call.within(run), name=f"mcp-call-{tool}")
    detached = asyncio.create_task(call.detached.wait())
    try:
        await asyncio.wait({running, detached}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        running.cancel()
        raise
    finally:
        detached.cancel()
    if running.done():
        try:
            return result(running.result())
        except InputNeeded as needed:
            return call.input_required(needed)
    task = store.start(tool)
    task.runner = asyncio.create_task(_settle(task, running, result), name=f"mcp-task-{task.task_id}")
    call.become_task(task)
    return task.created_result()
