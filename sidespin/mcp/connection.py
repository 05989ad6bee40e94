"""One external MCP server's connection: its session over the SDK, started, restarted, stopped, called.

Every byte of the protocol goes through the official SDK (`mcp.Client` over its stdio,
Streamable HTTP and SSE transports); `mode="auto"` speaks the 2026-07-28 stateless revision
when the server offers it and falls back to the initialize handshake otherwise.

Each server's session lives in a task of its own (SDK transports must be entered and left by
the same task); calls run in the caller's task against that session.

A stdio server speaks through `sidespin.mcp.stdio`, the SDK's transport with a reader that cuts every line
to size as it arrives (a 60 MB answer, 20,000 tools). Whatever the transport, a server offers at most
`MAX_SERVER_TOOLS` tools, each named as MCP allows (`TOOL_NAME`); what was left out is in `notices`.

A remote (http, sse) server signs in with OAuth through the SDK's provider (`sidespin.mcp.auth`)
when it answers 401, whether or not `mcp.json` gives it an `oauth` object (unless its headers
carry an `Authorization` of their own). A sign-in never blocks start-up: the server is
"needs sign-in" with `sign_in_url` while its task waits (at most `SIGN_IN_WAIT`) for the callback,
then connects and becomes "ready" by itself.

A long call reports as it goes: `notifications/progress`, or the task the server runs it as
(`sidespin.mcp.task_watch`, both wires of MCP tasks). Each piece of news moves the call's deadline
to `timeout` seconds ahead and reaches the chat's card as a `ToolProgress`. A call cancelled (a
person's Cancel, Stop, its timeout) cancels its request (`notifications/cancelled`) or its task
(`tasks/cancel`) on the server, and so does stopping the connection (Ctrl-C, shutdown).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO, Any, Literal, TypeVar

import anyio
import httpx2
import mcp_types as types
from loguru import logger
from mcp import Client, InputRequiredRoundsExceededError, StdioServerParameters
from mcp.client import advertise
from mcp.client.session import ElicitationFnT
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from sidespin import __version__
from sidespin.errors import MCPServerError, ToolFailed, ToolTimeout
from sidespin.events import ToolProgress
from sidespin.mcp import auth
from sidespin.mcp.apps import APP_MIME_TYPE, EXTENSION as APPS_EXTENSION
from sidespin.mcp.catalog import Catalog, prompt_row, resource_row, template_row
from sidespin.mcp.config import OAuthConfig, ServerConfig
from sidespin.mcp.lines import Cut
from sidespin.mcp.stdio import Limits, bounded_stdio_client
from sidespin.mcp.task_watch import CallWatch, TasksExtension, call_as_legacy_task, current_watch, legacy_task_tool
from sidespin.questions import current_call, keep_call_alive
from sidespin.tools import DEFAULT_MAX_RESULT_CHARS, MAX_ATTACHMENT_CHARS

__all__ = ["Connection", "STARTUP_TIMEOUT", "ServerStatus", "MAX_SERVER_TOOLS", "TOOL_NAME"]

ServerStatus = Literal["starting", "ready", "failed", "restarting", "needs sign-in"]

STARTUP_TIMEOUT = 30.0
"""Seconds a server gets to connect, negotiate and list its tools (a crash is reported at once; room is left for
servers started beside a model that loads, on two cores)."""

_STOP_TIMEOUT = 10.0  # the SDK's stdio shutdown: close stdin, 2 s, SIGTERM the group, 2 s, SIGKILL
_STDERR_TAIL = 1500
_LIVENESS_INTERVAL = 3.0  # seconds between two liveness checks of a stdio server (a dead child is seen within this)
_PING_TIMEOUT = 10.0
_HTTP_TIMEOUT = 30.0  # connect, write, pool (the SDK's defaults)
_SSE_READ_TIMEOUT = 300.0
_LIST_PAGE_CAP = 100
MAX_SERVER_TOOLS = 500
"""Tools one server may offer; those it lists past them are left out, with a notice."""
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""A tool name as MCP allows it; a server's tool named otherwise is left out, with a notice."""
_SHOWN_NAMES = 5  # refused names a notice quotes
_CLIENT_INFO = types.Implementation(name="sidespin", version=__version__)
_NEWS_EVERY = 0.25  # seconds between two progress events of one call told to the chat (a change of status goes at once)
_NEEDS_SIGN_IN = "needs sign-in"  # what the holding task tells start() when the SDK hands out an authorization URL
_TRANSPORT_ERRORS = (MCPError, OSError, httpx2.TransportError, anyio.ClosedResourceError, anyio.BrokenResourceError)


def _describe(error: BaseException) -> str:
    """A one-line reason, looking inside the exception groups anyio task groups raise."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in error.exceptions)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# What the SDK's HTTP transport says when an HTTP error carries no JSON-RPC body: a 404 for our
# session id ("Session terminated"), or any other status, e.g. a 400 from a server restarted without it.
_HTTP_TRANSPORT_ERRORS = {"Session terminated", "Server returned an error response"}


def _sign_in_error(error: BaseException) -> auth.SignInError | None:
    """The sign-in failure inside what the transport raised, if that is what ended it."""
    if isinstance(error, auth.SignInError):
        return error
    if isinstance(error, BaseExceptionGroup):
        return next(filter(None, (_sign_in_error(inner) for inner in error.exceptions)), None)
    return _sign_in_error(error.__cause__) if error.__cause__ is not None else None


def _connection_lost(error: BaseException) -> bool:
    """Whether a failed call means the session is gone (so a reconnect may help)."""
    if isinstance(error, MCPError):
        return error.code == types.CONNECTION_CLOSED or error.message in _HTTP_TRANSPORT_ERRORS
    return True


def _tail(file: IO[str] | None) -> str:
    if file is None:
        return ""
    file.flush()
    file.seek(0)
    text = file.read().strip()
    return text[-_STDERR_TAIL:]


_Page = TypeVar("_Page", bound=types.PaginatedResult)
_Item = TypeVar("_Item")
_Answer = TypeVar("_Answer")


async def _every_page(
    fetch: Callable[[str | None], Awaitable[_Page]], items: Callable[[_Page], list[_Item]]
) -> list[_Item]:
    """Follow a listing's cursors (at most `_LIST_PAGE_CAP` pages) and gather its items."""
    gathered: list[_Item] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGE_CAP):
        page = await fetch(cursor)
        gathered.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            break
    return gathered


async def _list_tools(client: Client, limit: int) -> tuple[list[types.Tool], int, bool]:
    """The first `limit` tools the server lists (following its cursors), how many more it listed in the pages
    read, and whether it has pages that were not read."""
    gathered: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_LIST_PAGE_CAP):
        page = await client.list_tools(cursor=cursor)
        gathered.extend(page.tools)
        cursor = page.next_cursor
        if not cursor or len(gathered) > limit:
            break
    return gathered[:limit], max(0, len(gathered) - limit), bool(cursor)


def _shown(name: str) -> str:
    """A refused name as a notice shows it: quoted, every character outside printable ASCII escaped (a zero-width
    or bidi character, a line break), at most 60 of them."""
    shown = "".join(c if " " <= c <= "~" else f"\\u{ord(c):04x}" for c in name[:60])
    return f"'{shown}{'…' if len(name) > 60 else ''}'"


def _named_as_allowed(server: str, tools: list[types.Tool]) -> tuple[list[types.Tool], str | None]:
    """The tools whose names MCP allows, and a notice naming the others (None when there are none)."""
    kept = [tool for tool in tools if TOOL_NAME.fullmatch(tool.name)]
    refused = [tool.name for tool in tools if not TOOL_NAME.fullmatch(tool.name)]
    for name in refused:
        logger.warning("MCP_TOOL_NAME_REFUSED {} {}", server, _shown(name))
    if not refused:
        return kept, None
    shown = ", ".join(_shown(name) for name in refused[:_SHOWN_NAMES])
    shown += ", …" if len(refused) > _SHOWN_NAMES else ""
    return kept, (f"{len(refused)} tool{'s' if len(refused) > 1 else ''} left out: MCP allows a tool name of 1 to 128 "
                  f"letters, digits, _ . - only, and {'these are' if len(refused) > 1 else 'this one is'} not: {shown}")


def _beyond_limit(server: str, extra: int, unread: bool) -> str | None:
    """The notice for tools listed past `MAX_SERVER_TOOLS` (None when none were)."""
    if not extra and not unread:
        return None
    logger.warning("MCP_TOOLS_LEFT_OUT {} {}{} past the first {}", server, extra, "+" if unread else "",
                   MAX_SERVER_TOOLS)
    listed = f"more than {MAX_SERVER_TOOLS + extra:,}" if unread else f"{MAX_SERVER_TOOLS + extra:,}"
    left = f"{extra:,} or more" if unread else f"{extra:,}"
    return (f"it lists {listed} tools: only the first {MAX_SERVER_TOOLS:,} are offered (the limit of one server), "
            f"{left} left out")


async def _list_catalog(client: Client, server: str) -> Catalog:
    """A server's resources, templates and prompts, asking only for what its capabilities declare."""
    catalog = Catalog()
    capabilities = client.server_capabilities
    if capabilities.resources is not None:
        resources = await _every_page(lambda c: client.list_resources(cursor=c), lambda page: page.resources)
        templates = await _every_page(
            lambda c: client.list_resource_templates(cursor=c), lambda page: page.resource_templates
        )
        catalog.resources = [resource_row(server, item) for item in resources]
        catalog.templates = [template_row(server, item) for item in templates]
    if capabilities.prompts is not None:
        prompts = await _every_page(lambda c: client.list_prompts(cursor=c), lambda page: page.prompts)
        catalog.prompts = [prompt_row(server, item) for item in prompts]
    return catalog


class Connection:
    """One configured server: the task that holds its session open, and how to restart it."""

    def __init__(
        self,
        config: ServerConfig,
        elicitation: ElicitationFnT | None,
        startup_timeout: float,
        on_change: Callable[[Connection], None] | None = None,
        *,
        sign_ins: auth.SignIns | None = None,
        token_dir: Path | None = None,
        on_notification: Callable[[Connection, types.ServerNotification], None] | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    ) -> None:
        """`on_notification`: told every notification the server sends (resource updates, list changes);
        `max_result_chars`: what a string of a stdio server's answer may hold before it is cut with a note."""
        self.config = config
        self.client: Client | None = None
        self.tools: list[types.Tool] = []
        self.notices: list[str] = []
        """What was left out of the tools it listed last (too many, names MCP does not allow)."""
        self._max_result_chars = max_result_chars
        self._cut_tools = 0  # tools the transport left out of the listing under way
        self._status: ServerStatus = "starting"
        self.error: str | None = None
        self._on_change = on_change
        self.generation = 0
        self._elicitation = elicitation
        self._startup_timeout = startup_timeout
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._scope = anyio.CancelScope()
        self._stderr: IO[str] | None = None
        self._restart_lock = asyncio.Lock()
        self._calls_running = 0  # the liveness check leaves a server alone while it works on a call
        self._sign_ins = sign_ins
        self._token_dir = token_dir
        self.sign_in_url: str | None = None
        """The authorization URL to open while the status is "needs sign-in"."""
        self._ready: asyncio.Future[str | None] | None = None
        self._on_notification = on_notification
        self._tasks: dict[str, Callable[[], Awaitable[None]]] = {}  # the server's tasks our calls run, to cancel

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def status(self) -> ServerStatus:
        return self._status

    @status.setter
    def status(self, status: ServerStatus) -> None:
        """Every change of status is told to the manager (which keeps the registry and the page in step)."""
        self._status = status
        if self._on_change is not None:
            self._on_change(self)

    def offers(self, capability: Literal["resources", "prompts"]) -> bool:
        """Whether the connected server declared this capability (a server without it is asked nothing)."""
        client = self.client
        if client is None:
            return False
        capabilities = client.server_capabilities
        return (capabilities.resources if capability == "resources" else capabilities.prompts) is not None

    async def _open(self, stack: AsyncExitStack) -> Client:
        """Enter this server's transport and SDK client on `stack` (the holding task's); return the client."""
        config = self.config
        if config.transport == "stdio":
            params = StdioServerParameters(
                command=config.command, args=config.args, env=config.env or None, cwd=config.cwd
            )
            assert self._stderr is not None
            limits = Limits(max_string=self._max_result_chars, max_data=MAX_ATTACHMENT_CHARS + 1,
                            max_tools=MAX_SERVER_TOOLS, max_line=2 * MAX_ATTACHMENT_CHARS + 4 * self._max_result_chars,
                            on_cut=self._line_cut)
            transport = bounded_stdio_client(params, limits, self._stderr)
        elif config.transport == "sse":
            transport = sse_client(config.url, headers=config.headers, timeout=_HTTP_TIMEOUT, auth=self._oauth())
        else:
            # A JSON answer to a long call arrives in one piece: read for as long as the call may take.
            timeout = httpx2.Timeout(_HTTP_TIMEOUT, read=max(_SSE_READ_TIMEOUT, config.timeout + _HTTP_TIMEOUT))
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=config.headers, timeout=timeout, auth=self._oauth())
            )
            transport = streamable_http_client(config.url, http_client=http)
        client = Client(
            transport,
            mode="auto",
            client_info=_CLIENT_INFO,
            elicitation_callback=self._elicitation,
            logging_callback=self._server_log,
            message_handler=self._notified,
            extensions=[TasksExtension(),  # long calls followed as tasks
                        advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})],  # we draw MCP Apps
        )
        return await stack.enter_async_context(client)

    def _line_cut(self, cut: Cut) -> None:
        """A line of the server's was cut to size (`sidespin.mcp.lines`): count the tools it left out, log the rest."""
        self._cut_tools += cut.tools_left_out
        if cut.strings or cut.left_out:
            logger.warning("MCP_ANSWER_CUT {} {:,} bytes: {} strings cut ({:,} bytes left out), {} elements left out",
                           self.name, cut.size, cut.strings, cut.dropped, cut.left_out)

    async def _listed_tools(self, client: Client) -> list[types.Tool]:
        """The tools it offers: at most `MAX_SERVER_TOOLS`, named as MCP allows; `notices` say what was left out."""
        self._cut_tools = 0
        tools, extra, unread = await _list_tools(client, MAX_SERVER_TOOLS)
        tools, refused = _named_as_allowed(self.name, tools)
        self.notices = [notice for notice in (_beyond_limit(self.name, extra + self._cut_tools, unread), refused)
                        if notice]
        return tools

    def _oauth(self) -> httpx2.Auth | None:
        """The SDK's OAuth provider for this remote server, or None when it has its own Authorization header."""
        config = self.config
        if self._sign_ins is None:
            return None
        if config.oauth is None and any(name.lower() == "authorization" for name in config.headers):
            return None
        oauth = config.oauth or OAuthConfig()
        path = auth.token_path(self._token_dir, self.name) if self._token_dir is not None else None
        store = auth.TokenFile(path, config.url, auth.preregistered(oauth, self._sign_ins.redirect))
        return auth.provider(self.name, config.url, oauth, store, self._sign_ins, self._sign_in_needed)

    def _sign_in_needed(self, pending: auth.PendingSignIn) -> None:
        """The SDK wants a person to sign in: say so (start() returns) while the session waits for the callback."""
        self.sign_in_url = pending.url
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(_NEEDS_SIGN_IN)
        self.error, self.status = None, "needs sign-in"

    async def _notified(self, message: types.ServerNotification | Exception) -> None:
        """The SDK's message handler: notifications go to the manager; transport faults are the session's own."""
        if self._on_notification is not None and not isinstance(message, Exception):
            self._on_notification(self, message)

    async def _server_log(self, params: types.LoggingMessageNotificationParams) -> None:
        logger.debug("MCP_SERVER_LOG {} {} {}", self.name, params.level, params.data)

    async def _hold(self, ready: asyncio.Future[str | None], stop: asyncio.Event, scope: anyio.CancelScope) -> None:
        """Open the session, list the tools, then keep the session until asked to stop."""
        # Stopping goes through this anyio scope, never task.cancel(): the SDK shields its stdio
        # shutdown (close stdin, SIGTERM, SIGKILL) from anyio cancellation only.
        with scope:
            try:
                async with AsyncExitStack() as stack:
                    client = await self._open(stack)
                    tools = await self._listed_tools(client)
                    self.client, self.tools, self.sign_in_url = client, tools, None
                    if not ready.done():
                        ready.set_result(None)
                    else:  # signed in after start() returned
                        self.status = "ready"
                        logger.info("MCP_SERVER_READY {} tools={} after sign-in", self.name, len(tools))
                    await self._watch(client, stop)
            except Exception as error:  # the top edge of a connection: any failure becomes the server's reported error
                reason = _describe(error)
                refused = _sign_in_error(error)
                if not ready.done():
                    ready.set_result(str(refused) if refused else reason)
                elif self.status == "needs sign-in":
                    self.sign_in_url = None
                    self.error, self.status = (str(refused) if refused else f"sign-in failed: {reason}"), "failed"
                    logger.warning("MCP_SERVER_FAILED {}: {}", self.name, self.error)
                else:
                    self.error, self.status = self._with_stderr(f"connection lost: {reason}"), "failed"
                    logger.warning("MCP_SERVER_FAILED {}: {}", self.name, self.error)
            finally:
                self.client = None

    async def _watch(self, client: Client, stop: asyncio.Event) -> None:
        """Hold the session until asked to stop. A stdio child that dies says nothing to the SDK's
        session until the next request, so it is asked for its tools every `_LIVENESS_INTERVAL` seconds
        (ping is gone from the 2026-07-28 revision): a dead one raises here and the server shows as
        failed at once, not at its next call. A server busy with a call is not asked: a single-threaded
        one may not answer until the call is done, and the call notices a death itself."""
        while not stop.is_set():
            with anyio.move_on_after(_LIVENESS_INTERVAL if self.config.transport == "stdio" else None):
                await stop.wait()
            if not stop.is_set() and not self._calls_running:
                with anyio.fail_after(_PING_TIMEOUT):
                    await client.list_tools()

    async def start(self) -> None:
        """Connect, negotiate and list tools within the startup timeout; a failure is recorded, not raised."""
        self.generation += 1
        self.sign_in_url = None
        self.error, self.status = None, ("restarting" if self.generation > 1 else "starting")
        logger.info(
            "MCP_SERVER_START {} transport={} timeout={:g}s", self.name, self.config.transport, self._startup_timeout
        )
        started = time.perf_counter()
        if self.config.transport == "stdio":
            self._close_stderr()
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._stop, self._scope = asyncio.Event(), anyio.CancelScope()
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._task = asyncio.create_task(self._hold(ready, self._stop, self._scope), name=f"mcp-server-{self.name}")
        try:
            reason = await asyncio.wait_for(asyncio.shield(ready), self._startup_timeout)
        except TimeoutError:
            reason = f"did not become ready within {self._startup_timeout:g} s"
        if reason == _NEEDS_SIGN_IN:
            return  # the holding task keeps waiting for the callback
        if reason is None:
            self.status = "ready"
            protocol = self.client.protocol_version if self.client else "?"
            logger.info(
                "MCP_SERVER_READY {} tools={} protocol={} {:.2f}s",
                self.name,
                len(self.tools),
                protocol,
                time.perf_counter() - started,
            )
            return
        await self.stop()
        self.error, self.status = self._with_stderr(reason), "failed"
        logger.error("MCP_SERVER_FAILED {}: {}", self.name, self.error)

    def _with_stderr(self, reason: str) -> str:
        tail = _tail(self._stderr)
        return reason + (f"\nstderr:\n{tail}" if tail else "")

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def close(self) -> None:
        """Stop for good: the session, the child process, the captured stderr."""
        await self.stop()
        self._close_stderr()

    async def stop(self) -> None:
        """Cancel the tasks our calls still run there, close the session and end the child process, waiting."""
        task, self._task = self._task, None
        if task is None:
            return
        if self.client is not None and self._tasks:
            cancels = list(self._tasks.values())
            logger.info("MCP_TASKS_CANCEL_AT_STOP {} tasks={}", self.name, len(cancels))
            await asyncio.gather(*(cancel() for cancel in cancels), return_exceptions=True)
        if self.client is None:
            self._scope.cancel()  # still connecting: nothing to close politely
        self._stop.set()
        done, _ = await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
        if not done:
            self._scope.cancel()
            await asyncio.wait({task}, timeout=_STOP_TIMEOUT)
        logger.info("MCP_SERVER_STOP {}", self.name)

    async def restart(self, seen_generation: int, reason: str) -> None:
        """Stop and start again, unless another call already did since `seen_generation`."""
        async with self._restart_lock:
            if self.generation != seen_generation and self.client is not None:
                return
            logger.warning("MCP_SERVER_RESTART {} after: {}", self.name, reason)
            self.status = "restarting"
            await self.stop()
            await self.start()

    def _watch_call(self, extend: Callable[[], None]) -> CallWatch:
        """How a call in flight is followed: news moves its deadline (`extend`) and reaches the chat's card."""
        scope = current_call.get()
        emit = (lambda news: scope.emit(ToolProgress(scope.call_id, **news))) if scope is not None else None
        return CallWatch(extend, emit, self._tasks, every=_NEWS_EVERY)

    def _runs_as_legacy_task(self, client: Client, tool: str) -> bool:
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return False  # a 2026-07-28 server answers with a task itself (the extension), if it wants to
        listed = next((item for item in self.tools if item.name == tool), None)
        return legacy_task_tool(client.server_capabilities, listed)

    async def _call_once(
        self, client: Client, tool: str, arguments: dict[str, Any], timeout: float
    ) -> types.CallToolResult:
        """One `tools/call` whose deadline every piece of news of it (progress, a task's change) moves
        `timeout` seconds ahead."""
        scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)

        def extend_deadline() -> None:
            scope.deadline = anyio.current_time() + timeout

        watch = self._watch_call(extend_deadline)

        async def progressed(progress: float, total: float | None, message: str | None) -> None:
            watch.tell(progress=progress, total=total, message=message)

        # a question to the person (elicitation) gives the call `timeout` again from when it is asked and answered
        keep_call_alive(extend_deadline)
        token = current_watch.set(watch)
        # Leaving the scope on its deadline cancels the request, so the SDK tells the server (notifications/cancelled),
        # or the task it runs as (tasks/cancel).
        self._calls_running += 1
        try:
            with scope:
                if self._runs_as_legacy_task(client, tool):
                    return await call_as_legacy_task(client.session, tool, arguments)
                return await client.call_tool(tool, arguments, progress_callback=progressed)
        finally:
            self._calls_running -= 1
            watch.close()
            current_watch.reset(token)
        logger.warning("MCP_CALL_TIMEOUT {} {} after {:g}s without an answer or progress", self.name, tool, timeout)
        raise ToolTimeout(tool, timeout)

    async def _session(self, restarted: bool) -> tuple[int, Client, bool]:
        """The session to send on and its generation; a missing one is started again, once per request
        (`restarted` says whether this request restarted it already, and is returned updated)."""
        generation, client = self.generation, self.client
        if client is not None:
            return generation, client, restarted
        if self.status == "needs sign-in":
            raise MCPServerError(f"MCP server {self.name!r} needs sign-in: open its Sign in link first")
        if restarted:
            raise MCPServerError(f"MCP server {self.name!r} is not available: {self.error}")
        await self.restart(generation, self.error or "not connected")
        return await self._session(True)

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> types.CallToolResult:
        """Call a tool; a lost session is restarted once and the call retried."""
        restarted = False
        while True:
            generation, client, restarted = await self._session(restarted)
            try:
                return await self._call_once(client, tool, arguments, timeout)
            except ValidationError as error:
                problem = error.errors()[0]["msg"] if error.errors() else str(error)
                raise ToolFailed(
                    f"{self.name}: {tool} answered with a result the protocol does not allow ({problem})"
                ) from None
            except _TRANSPORT_ERRORS as error:
                if not _connection_lost(error):
                    raise ToolFailed(f"{self.name}: {error}") from None
                if restarted:
                    raise MCPServerError(
                        f"MCP server {self.name!r} failed again after a restart: {_describe(error)}"
                    ) from None
                await self.restart(generation, _describe(error))
                restarted = True

    async def request(self, what: str, send: Callable[[Client], Awaitable[_Answer]]) -> _Answer:
        """One request other than a tool call (a listing, a read, a prompt) within the server's timeout.

        A lost session is restarted once and the request retried; every failure becomes an
        `MCPServerError` that names the server and what was asked.
        """
        restarted = False
        while True:
            generation, client, restarted = await self._session(restarted)
            try:
                with anyio.fail_after(self.config.timeout):
                    return await send(client)
            except TimeoutError:
                raise MCPServerError(
                    f"MCP server {self.name!r} did not answer {what} within {self.config.timeout:g} s"
                ) from None
            except ValidationError as error:
                problem = error.errors()[0]["msg"] if error.errors() else str(error)
                raise MCPServerError(
                    f"MCP server {self.name!r} answered {what} with a result the protocol does not allow ({problem})"
                ) from None
            except InputRequiredRoundsExceededError as error:
                raise MCPServerError(f"MCP server {self.name!r} kept asking for input on {what}: {error}") from None
            except _TRANSPORT_ERRORS as error:
                reason = error.message if isinstance(error, MCPError) else _describe(error)
                if not _connection_lost(error):
                    raise MCPServerError(f"MCP server {self.name!r} refused {what}: {reason}") from None
                if restarted:
                    raise MCPServerError(f"MCP server {self.name!r} failed {what} again after a restart: {reason}") from None
                await self.restart(generation, reason)
                restarted = True

    async def catalog(self) -> Catalog:
        """This server's resources, templates and prompts (none asked for unless its capabilities declare them)."""
        return await self.request("the resource and prompt listings", lambda client: _list_catalog(client, self.name))
