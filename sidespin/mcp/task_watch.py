"""Following a server's task to its end, for one tool call: the two wires MCP has had for tasks.

- 2026-07-28, the `io.modelcontextprotocol/tasks` extension (SEP-2663): every `Client` carries a
  `TasksExtension`, so each request declares the extension; a `tools/call` the server answers
  with a task (`resultType: "task"`) is followed by `follow` through the SDK's result claim.
- 2025-11-25, tasks in the core protocol: a tool listed with `execution.taskSupport` optional or
  required, on a server whose capabilities take `tasks.requests.tools.call`, is called with a
  `task` (`call_as_legacy_task`) and followed the same way; its result comes from `tasks/result`.

Either way the task is asked `tasks/get` every `pollIntervalMs` (kept between 0.2 and 5 s). Each
change of it (status, message, last update) is told to the call's `CallWatch`: the card shows it,
and the call's timeout starts again. A task that waits for input (`input_required`) has its
questions put to the person through the client's elicitation callback, and the answers go back
with `tasks/update` (2025-11-25: on `tasks/result`, which carries the server's questions itself).
A call cancelled while its task runs (a person's Cancel, Stop, Ctrl-C, the timeout) sends
`tasks/cancel`, shielded, within `CANCEL_WAIT` seconds, before the cancellation goes on. A task that
fails or is cancelled on the server is a `ToolFailed` that says so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from loguru import logger
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from sidespin.errors import ToolFailed
from sidespin.mcp.task_store import TASKS, TERMINAL

__all__ = ["CANCEL_WAIT", "CallWatch", "TasksExtension", "call_as_legacy_task", "current_watch", "legacy_task_tool"]

CANCEL_WAIT = 5.0
_POLL_MIN, _POLL_MAX, _POLL_DEFAULT = 0.2, 5.0, 1.0
_LEGACY_TTL_MS = 3_600_000


class CallWatch:
    """One tool call in flight, as its connection follows it.

    `tell(**news)` takes what the call's server says of it (`progress`, `total`, `message`,
    `status`, `task`): `extend()` moves the call's deadline at once, and `emit(news)` gets it, at
    most once every `every` seconds (a change of status at once; the latest news held back is
    sent when the time comes). `running` holds how to cancel each task the call runs, by id, for
    as long as it runs (a connection that stops cancels those left). `close()` when the call ends.
    """

    def __init__(self, extend: Callable[[], None], emit: Callable[[dict[str, Any]], None] | None,
                 running: dict[str, Callable[[], Awaitable[None]]], every: float = 0.25) -> None:
        self.extend, self.emit, self.running, self.every = extend, emit, running, every
        self._latest: dict[str, Any] | None = None
        self._sent_status: Any = object()
        self._sent_at = float("-inf")
        self._later: asyncio.TimerHandle | None = None

    def tell(self, **news: Any) -> None:
        self.extend()
        if self.emit is None:
            return
        self._latest = news
        waited = time.monotonic() - self._sent_at
        if news.get("status") != self._sent_status or waited >= self.every:
            self._send()
        elif self._later is None:
            self._later = asyncio.get_running_loop().call_later(self.every - waited, self._send)

    def _send(self) -> None:
        if self._later is not None:
            self._later.cancel()
            self._later = None
        if self._latest is None or self.emit is None:
            return
        self.emit(self._latest)
        self._sent_status, self._sent_at, self._latest = self._latest.get("status"), time.monotonic(), None

    def close(self) -> None:
        """The call is over: news held back is dropped."""
        if self._later is not None:
            self._later.cancel()
            self._later = None
        self._latest = None


current_watch: ContextVar[CallWatch | None] = ContextVar("sidespin_call_watch", default=None)
"""Set by the connection in the task of each tool call it sends."""


class CreateTaskResult(types.Result):
    """A `tools/call` answered with a task (SEP-2663): flat, `resultType: "task"`."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    last_updated_at: str | None = None
    poll_interval_ms: int | None = None


class _TaskState(types.Result):
    """A task as `tasks/get` tells it, on either wire (`result`, `error`, `inputRequests` as the status has them)."""

    task_id: str
    status: str
    status_message: str | None = None
    last_updated_at: str | None = None
    poll_interval_ms: int | None = None
    poll_interval: int | None = None  # 2025-11-25's name
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class _GetTask(types.GetTaskRequest):
    name_param = "taskId"  # SEP-2663: `Mcp-Name` carries the task's id, for routing


class _CancelTask(types.CancelTaskRequest):
    name_param = "taskId"


class _UpdateParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param = "taskId"


_UNANSWERED = (MCPError, ValidationError, OSError, httpx2.TransportError, anyio.ClosedResourceError,
               anyio.BrokenResourceError)
_ANY: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_STATE: TypeAdapter[_TaskState] = TypeAdapter(_TaskState)
_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


def _interval(state: _TaskState) -> float:
    milliseconds = state.poll_interval_ms or state.poll_interval
    return min(_POLL_MAX, max(_POLL_MIN, milliseconds / 1000)) if milliseconds else _POLL_DEFAULT


class _Follow:
    """One task followed: its news told once per change, its questions asked once, cancelled if abandoned."""

    def __init__(self, session: ClientSession, tool: str, task_id: str, legacy: bool) -> None:
        self.session, self.tool, self.task_id, self.legacy = session, tool, task_id, legacy
        self.watch = current_watch.get()
        self.seen: tuple[Any, ...] | None = None
        self.asked: set[str] = set()

    def tell(self, state: _TaskState) -> None:
        news = (state.status, state.status_message, state.last_updated_at)
        if news == self.seen:
            return
        self.seen = news
        logger.info("MCP_TASK_STATUS {} id={} {}", self.tool, self.task_id, state.status)
        if self.watch is not None:
            self.watch.tell(status=state.status, message=state.status_message, task=self.task_id)

    async def get(self) -> _TaskState:
        request = _GetTask(params=types.GetTaskRequestParams(task_id=self.task_id))
        return await self.session.send_request(request, _STATE)

    async def cancel(self) -> None:
        """`tasks/cancel`, whatever cancels the caller meanwhile, for at most `CANCEL_WAIT` seconds."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT) as waited:
            try:
                await self.session.send_request(_CancelTask(params=types.CancelTaskRequestParams(task_id=self.task_id)),
                                                _ANY)
            except _UNANSWERED as error:  # the server may be gone already: the call ends anyway, the log says why
                logger.warning("MCP_TASK_CANCEL_FAILED {} id={} {}", self.tool, self.task_id, error)
                return
        if waited.cancelled_caught:
            logger.warning("MCP_TASK_CANCEL_FAILED {} id={} no answer within {:g}s", self.tool, self.task_id,
                           CANCEL_WAIT)
        else:
            logger.info("MCP_TASK_CANCEL_SENT {} id={}", self.tool, self.task_id)

    async def answer(self, state: _TaskState) -> None:
        """Put the task's new questions to the person, and send the answers back (`tasks/update`)."""
        answers: dict[str, Any] = {}
        for key, raw in (state.input_requests or {}).items():
            if key in self.asked:
                continue
            self.asked.add(key)
            try:
                request = _INPUT_REQUEST.validate_python(raw, by_name=False)
            except ValidationError:
                logger.warning("MCP_TASK_BAD_QUESTION {} id={} key={}", self.tool, self.task_id, key)
                continue
            context = ClientRequestContext(session=self.session, request_id=key, meta=None)
            response = await self.session.dispatch_input_request(context, request)
            if isinstance(response, types.ErrorData):
                answers[key] = {"action": "decline"}
            else:
                answers[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
        if answers:
            params = _UpdateParams(task_id=self.task_id, input_responses=answers)
            await self.session.send_request(_UpdateTask(params=params), _ANY)

    async def result(self, state: _TaskState) -> types.CallToolResult:
        """The call's result once the task ended: completed (2025-11-25: `tasks/result`), or a `ToolFailed`."""
        if state.status == "failed":
            error = state.error or {}
            reason = error.get("message") or state.status_message or "no reason given"
            raise ToolFailed(f"the task of {self.tool} failed on the server: {reason}")
        if state.status == "cancelled":
            raise ToolFailed(f"the task of {self.tool} was cancelled on the server"
                             + (f": {state.status_message}" if state.status_message else ""))
        if self.legacy:
            request = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=self.task_id))
            return await self.session.send_request(request, types.CallToolResult)
        return types.CallToolResult.model_validate(state.result or {}, by_name=False)

    async def run(self, state: _TaskState) -> types.CallToolResult:
        """Poll until the task ends; the caller's cancellation cancels the task on the server too."""
        if self.watch is not None:
            self.watch.running[self.task_id] = self.cancel
        try:
            while True:
                self.tell(state)
                if state.status in TERMINAL:
                    return await self.result(state)
                if state.status == "input_required":
                    if self.legacy:  # 2025-11-25: the questions come on tasks/result, which waits for the end
                        return await self.result(state)
                    await self.answer(state)
                await anyio.sleep(_interval(state))
                state = await self.get()
        except anyio.get_cancelled_exc_class():
            logger.info("MCP_TASK_ABANDONED {} id={}", self.tool, self.task_id)
            await self.cancel()
            raise
        finally:
            if self.watch is not None:
                self.watch.running.pop(self.task_id, None)


async def follow(created: CreateTaskResult, context: ClaimContext) -> types.CallToolResult:
    """The SDK's resolver for a `tools/call` answered with a task (SEP-2663): its result, once it ends."""
    logger.info("MCP_TASK_CREATED {} id={}", context.tool_name, created.task_id)
    state = _TaskState(task_id=created.task_id, status=created.status, status_message=created.status_message,
                       last_updated_at=created.last_updated_at, poll_interval_ms=created.poll_interval_ms)
    return await _Follow(context.session, context.tool_name, created.task_id, legacy=False).run(state)


class TasksExtension(ClientExtension):
    """`io.modelcontextprotocol/tasks` for a `Client`: declared on every 2026-07-28 request; a task answered to
    a `tools/call` is followed to its end, so `call_tool` returns the tool's own result."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=follow)]


def legacy_task_tool(capabilities: types.ServerCapabilities, tool: types.Tool | None) -> bool:
    """Whether a 2025-11-25 server runs calls of `tool` as tasks: it takes task-augmented calls and the tool
    says it supports them (`optional` or `required`)."""
    tasks = capabilities.tasks
    takes_calls = tasks is not None and tasks.requests is not None and tasks.requests.tools is not None \
        and tasks.requests.tools.call is not None
    support = tool.execution.task_support if tool is not None and tool.execution is not None else None
    return takes_calls and support in ("optional", "required")


async def _send_unchecked(session: ClientSession, request: types.Request[Any, Any]) -> dict[str, Any]:
    """Send a request and take its raw result. The SDK keeps 2025-11-25 tasks as types only: its `send_request`
    checks a `tools/call` result against `CallToolResult` and would refuse the task handle, so this one request
    goes through the session's own stamp and dispatcher (the test with server-everything guards the seam)."""
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    session._stamp(data, options)  # type: ignore[arg-type]  # noqa: SLF001 (see above)
    return await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)  # noqa: SLF001


async def call_as_legacy_task(session: ClientSession, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """Call a tool as a 2025-11-25 task (`tools/call` with `task`) and follow the task to its result (a server
    that answers at once instead gives its result)."""
    params = types.CallToolRequestParams(name=tool, arguments=arguments, task=types.TaskMetadata(ttl=_LEGACY_TTL_MS))
    answer = await _send_unchecked(session, types.CallToolRequest(params=params))
    if "task" not in answer:
        return types.CallToolResult.model_validate(answer, by_name=False)
    task = types.CreateTaskResult.model_validate(answer, by_name=False).task
    logger.info("MCP_TASK_CREATED {} id={} (2025-11-25)", tool, task.task_id)
    state = _TaskState(task_id=task.task_id, status=task.status, status_message=task.status_message,
                       last_updated_at=task.last_updated_at, poll_interval=task.poll_interval)
    return await _Follow(session, tool, task.task_id, legacy=True).run(state)
