"""The tasks `/mcp` runs for its long tools: the `io.modelcontextprotocol/tasks` extension (SEP-2663), served.

A `tools/call` of a long plugin (`@tool(task=...)`) from a client whose request declares the
extension is answered at once with a `CreateTaskResult` (`resultType: "task"`, `taskId`,
`status`, `ttlMs`, `pollIntervalMs`); the plugin runs on in the background, and the client follows
it with three methods, each refused with -32021 unless the request declares the extension:

- `tasks/get {taskId}`: the task as it is now. `working` (its `statusMessage` is the plugin's
  last progress), `input_required` with the questions it waits on (`inputRequests`),
  `completed` with the tool's result inlined (`result`, a `CallToolResult`; a tool error is
  `completed` with `isError`), `failed` with the JSON-RPC error a plugin raised (`error`), or
  `cancelled`.
- `tasks/update {taskId, inputResponses}`: answers to some or all of its questions; answers to
  keys not asked (or answered already) are ignored. An empty acknowledgement.
- `tasks/cancel {taskId}`: the task is `cancelled` at once and its plugin is cancelled (a
  synchronous one is told to stop, as the registry does on a timeout); a task already over
  stays as it ended. An empty acknowledgement.

An unknown `taskId` is INVALID_PARAMS (-32602); over HTTP a request whose `Mcp-Name` header is not
its `taskId` is HEADER_MISMATCH (-32020). Task ids are unguessable (128 bits): in a stateless
endpoint the id is the only thing tying a task to its caller. A task is kept `ttlMs` (an hour)
from its creation, and at most `keep` tasks at once: a finished task past its time, or the oldest
finished ones beyond `keep`, are forgotten when a new one starts. At most `running` tasks work at
once; a call that would start one more is refused (INTERNAL_ERROR, saying so) and nothing starts.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

import mcp_types as types
from loguru import logger
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import decode_header_value

__all__ = ["TASKS", "ServedTask", "TaskStore", "TaskStatus", "missing_tasks_capability", "takes_tasks"]

TASKS = "io.modelcontextprotocol/tasks"
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

TTL_MS = 3_600_000
POLL_MS = 500
KEEP = 1000
RUNNING = 64
_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def takes_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension (in its per-request `_meta`, or at initialize)."""
    capabilities = ctx.session.client_capabilities
    if capabilities is not None and capabilities.extensions and TASKS in capabilities.extensions:
        return True
    declared = (ctx.meta or {}).get(_CLIENT_CAPABILITIES)
    extensions = declared.get("extensions") if isinstance(declared, dict) else None
    return isinstance(extensions, dict) and TASKS in extensions


def missing_tasks_capability(what: str) -> MCPError:
    """-32021 naming the tasks extension as the capability `what` needs (SEP-2575, SEP-2663)."""
    return MCPError(
        code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"{what} needs the client's {TASKS} extension",
        data={"requiredCapabilities": {"extensions": {TASKS: {}}}},
    )


@dataclass
class ServedTask:
    """One task: its state as `tasks/get` tells it, the questions it waits on, and the plugin's run."""

    task_id: str
    tool: str
    ttl_ms: int = TTL_MS
    poll_ms: int = POLL_MS
    status: TaskStatus = "working"
    status_message: str | None = None
    created: datetime = field(default_factory=_now)
    updated: datetime = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)  # key: the wire input request, unanswered
    _answers: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    _asked: set[str] = field(default_factory=set)
    runner: asyncio.Task[Any] | None = None

    @property
    def over(self) -> bool:
        return self.status in TERMINAL

    def _base(self) -> dict[str, Any]:
        base: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _stamp(self.created),
            "lastUpdatedAt": _stamp(self.updated),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_ms,
        }
        if self.status_message is not None:
            base["statusMessage"] = self.status_message
        return base

    def created_result(self) -> dict[str, Any]:
        """The `CreateTaskResult` the `tools/call` is answered with: flat, no result or questions."""
        return {"resultType": "task", **self._base()}

    def detailed(self) -> dict[str, Any]:
        """The task as `tasks/get` answers: its status and what that status carries."""
        detailed = {"resultType": "complete", **self._base()}
        if self.status == "input_required":
            detailed["inputRequests"] = dict(self.questions)
        elif self.status == "completed" and self.result is not None:
            detailed["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            detailed["error"] = self.error
        return detailed

    def touch(self, message: str | None = None) -> None:
        """The plugin reported progress: its message becomes the status message."""
        if self.over:
            return
        if message is not None:
            self.status_message = message
        self.updated = _now()

    def settle(self, status: TaskStatus, *, result: dict[str, Any] | None = None,
               error: dict[str, Any] | None = None, message: str | None = None) -> bool:
        """End the task (the first end wins, so a cancelled task stays cancelled); True if this ended it."""
        if self.over:
            return False
        self.status, self.result, self.error = status, result, error
        if message is not None:
            self.status_message = message
        self.updated = _now()
        self.questions.clear()
        for waiting in self._answers.values():
            waiting.cancel()
        self._answers.clear()
        logger.info("MCP_TASK_{} {} id={}", status.upper(), self.tool, self.task_id)
        return True

    async def ask(self, key: str, request: dict[str, Any]) -> Any:
        """Wait for the client's answer to one question (`key` unique over the task's life): the task is
        `input_required` while any question waits, `working` again once none does."""
        if key in self._asked:
            raise ValueError(f"the question key {key!r} was used already in task {self.task_id}")
        self._asked.add(key)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._answers[key], self.questions[key] = answer, request
        self.status, self.updated = "input_required", _now()
        logger.info("MCP_TASK_ASKS {} id={} key={}", self.tool, self.task_id, key)
        try:
            return await answer
        finally:
            self._answers.pop(key, None)
            self.questions.pop(key, None)
            if not self.over and not self.questions:
                self.status, self.updated = "working", _now()

    def answer(self, responses: dict[str, Any]) -> list[str]:
        """Hand over the answers to questions that wait (others are ignored); the keys answered."""
        answered = [key for key in responses if key in self._answers and not self._answers[key].done()]
        for key in answered:
            self._answers[key].set_result(responses[key])
            self.questions.pop(key, None)
        if answered and not self.over and not self.questions:
            self.status = "working"
        self.updated = _now()
        return answered

    def cancel(self) -> None:
        """Cancelled now, and its plugin with it; a task already over is left as it ended."""
        if self.settle("cancelled", message="cancelled by the client") and self.runner is not None:
            self.runner.cancel()


Runner = Callable[[ServedTask], Awaitable[None]]


class TaskStore:
    """The tasks of one MCP server, by id: started, followed, answered, cancelled, forgotten in time."""

    def __init__(self, *, ttl_ms: int = TTL_MS, poll_ms: int = POLL_MS, keep: int = KEEP,
                 running: int = RUNNING) -> None:
        self.ttl_ms, self.poll_ms, self.keep, self.running = ttl_ms, poll_ms, keep, running
        self._tasks: OrderedDict[str, ServedTask] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tasks)

    def __iter__(self) -> Iterator[ServedTask]:
        return iter(list(self._tasks.values()))

    def get(self, task_id: str) -> ServedTask | None:
        return self._tasks.get(task_id)

    def start(self, tool: str, run: Runner | None = None) -> ServedTask:
        """A new task for a call of `tool`, kept before this returns (a `tasks/get` for it resolves at once);
        `run(task)` is started in the background (or the caller sets `task.runner` itself)."""
        self._forget_old()
        if sum(not task.over for task in self._tasks.values()) >= self.running:
            logger.warning("MCP_TASK_REFUSED {}: {} tasks run already", tool, self.running)
            raise MCPError(code=types.INTERNAL_ERROR,
                           message=f"{self.running} tasks run here already, the most at once: try again when one ends")
        task = ServedTask("task-" + secrets.token_urlsafe(16), tool, self.ttl_ms, self.poll_ms)
        self._tasks[task.task_id] = task
        if run is not None:
            task.runner = asyncio.create_task(run(task), name=f"mcp-task-{task.task_id}")
        logger.info("MCP_TASK_START {} id={}", tool, task.task_id)
        return task

    def _forget_old(self) -> None:
        now = _now()
        for task_id, task in list(self._tasks.items()):
            if task.over and (now - task.created).total_seconds() * 1000 > task.ttl_ms:
                del self._tasks[task_id]
        over = [task_id for task_id, task in self._tasks.items() if task.over]
        for task_id in over[: max(0, len(self._tasks) - self.keep + 1)]:
            del self._tasks[task_id]

    async def close(self) -> None:
        """Cancel every task still running and wait (briefly) for their plugins to stop."""
        running = [task for task in self._tasks.values() if not task.over]
        for task in running:
            task.cancel()
        runners = [task.runner for task in running if task.runner is not None]
        if runners:
            await asyncio.wait(runners, timeout=5.0)

    def _find(self, ctx: ServerRequestContext[Any, Any], method: str, task_id: str) -> ServedTask:
        if not takes_tasks(ctx):
            raise missing_tasks_capability(method)
        request = ctx.request
        headers = getattr(request, "headers", None)
        if headers is not None and decode_header_value(headers.get("mcp-name")) != task_id:
            raise MCPError(code=types.HEADER_MISMATCH, message=f"the Mcp-Name header of {method} is not its taskId")
        task = self._tasks.get(task_id)
        if task is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no task {task_id!r} here (unknown, or forgotten)")
        return task

    def handlers(self) -> list[tuple[str, type[types.RequestParams], Callable[..., Awaitable[dict[str, Any]]]]]:
        """`(method, params type, handler)` for `tasks/get`, `tasks/update` and `tasks/cancel`."""

        async def get(ctx: ServerRequestContext[Any, Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
            return self._find(ctx, "tasks/get", params.task_id).detailed()

        async def update(ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
            task = self._find(ctx, "tasks/update", params.task_id)
            answered = task.answer(params.input_responses)
            logger.info("MCP_TASK_ANSWERED {} id={} keys={}", task.tool, task.task_id, len(answered))
            return {"resultType": "complete"}

        async def cancel(ctx: ServerRequestContext[Any, Any], params: types.CancelTaskRequestParams) -> dict[str, Any]:
            task = self._find(ctx, "tasks/cancel", params.task_id)
            task.cancel()
            return {"resultType": "complete"}

        return [
            ("tasks/get", types.GetTaskRequestParams, get),
            ("tasks/update", UpdateTaskParams, update),
            ("tasks/cancel", types.CancelTaskRequestParams, cancel),
        ]


class UpdateTaskParams(types.RequestParams):
    """`tasks/update`'s params: the task, and answers keyed as its `inputRequests` were."""

    task_id: str
    input_responses: dict[str, Any] = {}
