"""The manager of every external MCP server: starts, calls, restarts and stops their connections.

    async with MCPManager(load_mcp_config("mcp.json")) as manager:
        manager.register_into(registry)     # tools join the registry as `mcp:<server>`
        ...                                 # registry.execute(...) reaches the servers
        catalog = await manager.catalog()   # resources, templates and prompts (sidespin.mcp.catalog), cached
        manager.subscriptions               # attached resources followed on their servers (sidespin.mcp.subscriptions)

One server's session, transport and restarts are a `Connection` (`sidespin.mcp.connection`);
its results are rendered for the model by `sidespin.mcp.content`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import mcp_types as types
from loguru import logger
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT

from sidespin.errors import MCPServerError, ToolError, ToolFailed
from sidespin.mcp import auth
from sidespin.mcp.apps import AppShelf, AppView, for_app, for_model, read_view, resource_uri
from sidespin.mcp.catalog import Catalog, PromptMessage, Reading, prompt_messages, reading
from sidespin.mcp.config import ServerConfig
from sidespin.mcp.connection import STARTUP_TIMEOUT, Connection, ServerStatus
from sidespin.mcp.content import render_result, tool_from_mcp
from sidespin.mcp.holdings import listing_tools, query_tool, read_holdings
from sidespin.mcp.places import folders
from sidespin.mcp.subscriptions import Subscriptions
from sidespin.questions import QuestionDesk
from sidespin.tools import DEFAULT_MAX_RESULT_CHARS, Tool, ToolCall, ToolRegistry, ToolResult

__all__ = ["MCPManager"]

_HARD_CAP = 3600.0  # the registry's own limit for MCP tools; progress may extend a call up to this
CATALOG_MAX_AGE = 30.0
"""Seconds the composer's catalog is kept; a status change or a server's list_changed drops it sooner."""
_LIST_CHANGED = (types.ResourceListChangedNotification, types.PromptListChangedNotification)


class MCPManager:
    """Every external MCP server of `mcp.json`: started in parallel, called, restarted, stopped.

    `async with MCPManager(configs) as manager:` starts each enabled server (10 s each to become
    ready); one that fails is listed in `manager.failures` with its stderr tail while the others
    work, unless `strict=True`, which raises `MCPServerError` instead. Leaving the block closes
    every session and ends every child process.

    Questions a server asks during a tool call (elicitation) go to `elicitation` when a caller
    gives one (the conformance client does); otherwise to `manager.questions`, which hands each
    to the chat call running on that server and declines the others (`sidespin.questions`).
    """

    def __init__(
        self,
        configs: Iterable[ServerConfig],
        *,
        strict: bool = False,
        elicitation: ElicitationFnT | None = None,
        startup_timeout: float = STARTUP_TIMEOUT,
        token_dir: Path | None = None,
        sign_ins: auth.SignIns | None = None,
        apps: AppShelf | None = None,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
        private: Sequence[Path] = (),
    ) -> None:
        """`token_dir` keeps each remote server's OAuth tokens (`<data_dir>/oauth`; None: in memory only);
        `private`: sidespin's own database files, never read for a server's holdings;
        `sign_ins` holds the sign-ins waiting for `/oauth/callback` (default: redirect to port 5001);
        `apps` keeps the MCP Apps results are drawn with (None: results carry no app);
        `max_result_chars`: what one string of a stdio server's answer may hold (`Connection`)."""
        configs = list(configs)
        self.sign_ins = sign_ins or auth.SignIns(auth.redirect_uri(5001))
        self.questions = QuestionDesk()
        self._connections = {
            config.name: Connection(
                config,
                elicitation or self._asker(config),
                startup_timeout,
                self._changed,
                sign_ins=self.sign_ins,
                token_dir=token_dir,
                on_notification=self._notified,
                max_result_chars=max_result_chars,
            )
            for config in configs
            if not config.disabled
        }
        self.apps = apps
        self._private = {os.path.realpath(path) for path in private}
        self.disabled = [config for config in configs if config.disabled]
        """Servers mcp.json lists with `"disabled": true`: never started, shown greyed on the page."""
        self._restarts: dict[str, asyncio.Task[None]] = {}
        self._strict = strict
        self._registry: ToolRegistry | None = None
        self.version = 0
        """Counts every change the page shows (a server's status, an attached resource that changed); the page's
        server panel redraws when it moves."""
        self._change = asyncio.Event()
        self.subscriptions = Subscriptions(self.connection, self._wake)
        """Resources attached to conversations, followed on servers that take subscriptions."""
        self._catalog: tuple[float, Catalog] | None = None  # (when fetched, what)
        self._catalog_fetch: asyncio.Task[Catalog] | None = None
        self._catalog_epoch = 0  # moves whenever the cached catalog goes stale; a fetch from before is not kept
        self._renamed: dict[str, list[str]] = {}  # by server: its tools offered under another name, or left out
        self._holds: dict[str, tuple[str, ...]] = {}  # by server: the names its listing tools give
        self.may_run: Callable[[Tool], bool] | None = None  # whether a listing may run unasked: none read while None
        self._reading: dict[str, asyncio.Task[None]] = {}

    def _asker(self, config: ServerConfig) -> ElicitationFnT:
        """The elicitation callback of one server: its questions go to the desk, bounded by its timeout."""
        async def ask(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
            return await self.questions.ask(config.name, params, config.timeout)

        return ask

    def _changed(self, connection: Connection) -> None:
        """A server's status moved: when it is ready its current tools replace what it had in the registry,
        its followed resources are subscribed again, the cached catalog is dropped and watchers are woken.
        A failed server keeps its tools: calling one tries a restart and says why it failed."""
        if self._registry is not None and connection.status == "ready":
            self._registry.remove_source(f"mcp:{connection.name}")
            self._register(self._registry, connection)
        if connection.status == "ready":
            self.subscriptions.server_ready(connection.name)
            self.reread_holdings(connection.name)
        self._forget_catalog()
        self._wake()

    def _notified(self, connection: Connection, notification: types.ServerNotification) -> None:
        """A server's notification: a followed resource changed, or its list of resources or prompts did."""
        if isinstance(notification, types.ResourceUpdatedNotification):
            self.subscriptions.updated(connection.name, notification.params.uri)
        elif isinstance(notification, _LIST_CHANGED):
            logger.debug("MCP_LIST_CHANGED {} {}", connection.name, notification.method)
            self._forget_catalog()

    def _wake(self) -> None:
        """Something the page shows moved (a server's status, a changed resource): watchers redraw."""
        self.version += 1
        self._change.set()
        self._change = asyncio.Event()

    async def wait_for_change(self, seen: int) -> int:
        """Wait until `version` differs from `seen` (returns at once if it already does); the new version."""
        while self.version == seen:
            await self._change.wait()
        return self.version

    async def __aenter__(self) -> MCPManager:
        try:
            await asyncio.gather(*(connection.start() for connection in self._connections.values()))
        except BaseException:
            await self.aclose()
            raise
        if self._strict and self.failures:
            await self.aclose()
            reasons = "; ".join(f"{name}: {reason}" for name, reason in self.failures.items())
            raise MCPServerError(f"MCP server failed to start: {reasons}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session and end every child process (shielded, so Ctrl-C cannot leave orphans)."""
        await self.subscriptions.aclose()
        restarts = [task for task in [*self._restarts.values(), *self._reading.values()] if not task.done()]
        for task in restarts:
            task.cancel()
        if restarts:
            await asyncio.wait(restarts)
        closing = asyncio.gather(*(connection.close() for connection in self._connections.values()))
        try:
            await asyncio.shield(closing)
        except asyncio.CancelledError:
            await closing
            raise

    @property
    def failures(self) -> dict[str, str]:
        """Servers that are not usable now, with the reason (and stderr tail) for each."""
        return {name: c.error or "failed" for name, c in self._connections.items() if c.status == "failed"}

    def state(self) -> dict[str, dict[str, Any]]:
        """For /health: each server's status (starting, ready, restarting, failed, needs sign-in), tool count,
        error, protocol, `sign_in` (the route that opens the sign-in) while it needs one, `notices` (tools left
        out or renamed) and `trust_read_only` (whether its readOnlyHint lets a tool run without asking)."""
        return {
            name: {
                "status": c.status,
                "sign_in": f"/oauth/{name}/sign-in" if c.status == "needs sign-in" else None,
                "tools": len(c.tools),
                "error": c.error,
                "transport": c.config.transport,
                "protocol": c.client.protocol_version if c.client is not None else None,
                "notices": [*c.notices, *self._renamed.get(name, [])],
                "trust_read_only": c.config.trust_read_only,
            }
            for name, c in self._connections.items()
        }

    def trust_read_only(self, server: str, trusted: bool) -> None:
        """Whether the server's `readOnlyHint` lets its tools run without asking (MCP calls hints untrusted); its
        tools are registered again at once. `MCPServerError` for a server mcp.json does not list."""
        connection = self.connection(server)
        connection.config = dataclasses.replace(connection.config, trust_read_only=trusted)
        logger.info("MCP_READ_ONLY_TRUST {} {}", server, "on" if trusted else "off")
        if self._registry is not None and connection.status == "ready":
            self._registry.remove_source(f"mcp:{server}")
            self._register(self._registry, connection)
        self._wake()

    async def restart_server(self, server: str) -> ServerStatus:
        """Restart a server by a person's choice (a failed one too) and return its status after.

        Presses while it restarts join that restart instead of starting another. Bounded by the
        server's own stop and start timeouts; the restart goes on if the caller stops waiting.
        Raises MCPServerError for a server mcp.json does not list.
        """
        connection = self.connection(server)
        task = self._restarts.get(server)
        if task is None or task.done():
            task = asyncio.create_task(
                connection.restart(connection.generation, "a person asked for a restart"), name=f"mcp-restart-{server}"
            )
            self._restarts[server] = task
        await asyncio.shield(task)
        return connection.status

    def connection(self, server: str) -> Connection:
        """One server's connection (its status, `sign_in_url`, `start()`); `MCPServerError` if none has that name."""
        try:
            return self._connections[server]
        except KeyError:
            raise MCPServerError(
                f"no MCP server named {server!r} (known: {', '.join(self._connections) or 'none'})"
            ) from None

    def tools(self, server: str) -> list[types.Tool]:
        """The tools a server listed when it became ready."""
        return list(self.connection(server).tools)

    def client(self, server: str) -> Client:
        """The live SDK client of a ready server, for what the manager does not wrap (resources, prompts)."""
        client = self.connection(server).client
        if client is None:
            raise MCPServerError(f"MCP server {server!r} is not connected")
        return client

    async def catalog(self, *, fresh: bool = False) -> Catalog:
        """Every server's resources, templates and prompts: as fetched less than `CATALOG_MAX_AGE` seconds ago,
        unless `fresh` or a server changed since (its status, or its list_changed). Callers that come while
        it is fetched share that one fetch; each gets a copy of its own.
        """
        if fresh:
            return await self._fetch_catalog()
        if self._catalog is not None and time.monotonic() - self._catalog[0] < CATALOG_MAX_AGE:
            return _copy(self._catalog[1])
        if self._catalog_fetch is None or self._catalog_fetch.done():
            self._catalog_fetch = asyncio.create_task(self._keep_catalog(self._catalog_epoch), name="mcp-catalog")
        return _copy(await asyncio.shield(self._catalog_fetch))

    def _forget_catalog(self) -> None:
        self._catalog, self._catalog_fetch = None, None
        self._catalog_epoch += 1

    async def _keep_catalog(self, epoch: int) -> Catalog:
        catalog = await self._fetch_catalog()
        if epoch == self._catalog_epoch:  # nothing changed while it was asked for
            self._catalog = (time.monotonic(), catalog)
        return catalog

    async def _fetch_catalog(self) -> Catalog:
        """Every server's resources, templates and prompts, asked in parallel.

        A server that declares none of them is skipped; one that failed to start, or fails to
        answer now, is a line in `problems` naming it while the others are listed.
        """
        catalog = Catalog(problems=[f"MCP server {name!r} failed to start: {why}" for name, why in self.failures.items()])
        ready = [c for c in self._connections.values() if c.offers("resources") or c.offers("prompts")]
        answers = await asyncio.gather(*(c.catalog() for c in ready), return_exceptions=True)
        for answer in answers:
            if isinstance(answer, MCPServerError):
                catalog.problems.append(str(answer))
            elif isinstance(answer, BaseException):
                raise answer
            else:
                catalog.extend(answer)
        logger.debug("MCP_CATALOG_FETCHED servers={} resources={} prompts={}", len(ready), len(catalog.resources),
                     len(catalog.prompts))
        return catalog

    def _offering(self, server: str, capability: Literal["resources", "prompts"]) -> Connection:
        connection = self.connection(server)
        if connection.client is not None and not connection.offers(capability):
            raise MCPServerError(f"MCP server {server!r} offers no {capability}")
        return connection

    async def read_resource(self, server: str, uri: str) -> Reading:
        """A resource's text (binary parts as placeholders), images and audio as attachments."""
        connection = self._offering(server, "resources")
        result = await connection.request(f"resources/read {uri}", lambda client: client.read_resource(uri))
        return reading(result)

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str] | None = None) -> list[PromptMessage]:
        """A prompt filled in with `arguments`: its messages, each with a role, a text and attachments."""
        connection = self._offering(server, "prompts")
        result = await connection.request(
            f"prompts/get {name}", lambda client: client.get_prompt(name, arguments or None)
        )
        return prompt_messages(result)

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> types.CallToolResult:
        """Call a tool on a server: `timeout` (default: the server's) is extended by progress notifications."""
        connection = self.connection(server)
        with self.questions.running(server):
            return await connection.call(tool, arguments, timeout or connection.config.timeout)

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> ToolResult:
        """Call a tool and render its result for the model; a server that is gone becomes a `ToolFailed`.
        A tool that declares an MCP App (`sidespin.mcp.apps`) gets it among its result's attachments."""
        try:
            result = await self.call_tool(server, tool, arguments, timeout=timeout)
        except MCPServerError as error:
            raise ToolFailed(str(error)) from None
        rendered = render_result(result, ToolCall(name=tool, arguments=arguments))
        listed = self.listed_tool(server, tool)
        if not (listed and listed.annotations and listed.annotations.read_only_hint) and not result.is_error:
            self.reread_holdings(server, after=tool)
        if self.apps is not None and not result.is_error:
            view = await self.read_app(server, tool)
            if view is not None:
                rendered.attachments.append(view.attachment())
        return rendered

    async def read_holdings(self, server: str) -> None:
        """Read what `server` holds from its listing tools (`sidespin.mcp.holdings`), where `may_run` lets them run
        unasked, and give the names to its tools in the registry."""
        if self.may_run is None or self.connection(server).status != "ready":
            return
        holds = await read_holdings(server, self._server_tools(server), self.may_run,
                                    lambda tool, arguments: tool.invoke(arguments), self._private)
        if holds is not None:
            self._holds[server] = holds
            for tool in self._server_tools(server):  # as they are now: the server may have come back meanwhile
                tool.holds = holds

    def reread_holdings(self, server: str, after: str | None = None) -> None:
        """Read `server`'s holdings again in the background (`read_holdings`), unless it has neither a listing tool
        nor a tool that runs SQL, a reading is under way, or `after`, the tool whose call changed things, is one of
        its listings."""
        running = self._reading.get(server)
        if self.may_run is None or (running is not None and not running.done()):
            return
        tools = self._server_tools(server)
        listings = listing_tools(tools)
        if not (listings or query_tool(tools)) or any(t.name in (after, f"{server}__{after}") for t in listings):
            return
        self._reading[server] = asyncio.get_running_loop().create_task(self.read_holdings(server))

    def _server_tools(self, server: str) -> list[Tool]:
        """The tools `server` has in the registry ([] before `register_into`)."""
        return [t for t in self._registry or [] if t.source == f"mcp:{server}"]

    async def read_all_holdings(self, may_run: Callable[[Tool], bool]) -> None:
        """Start reading holdings, with `may_run` as the approval check, and wait for every ready server's."""
        self.may_run = may_run
        await asyncio.gather(*(self.read_holdings(name) for name, c in self._connections.items()
                               if c.status == "ready"))

    def listed_tool(self, server: str, tool: str) -> types.Tool | None:
        """The tool `server` listed under the name `tool` (as it names it, not as the registry may), or None."""
        return next((listed for listed in self.connection(server).tools if listed.name == tool), None)

    async def read_app(self, server: str, tool: str) -> AppView | None:
        """The app a tool's results are drawn with, read from its server and kept on the shelf; None when it
        declares none or it cannot be read (the result is shown as text, and the log says why)."""
        listed = self.listed_tool(server, tool)
        uri = resource_uri(listed) if listed is not None else None
        if uri is None or self.apps is None:
            return None
        connection = self.connection(server)
        try:
            read = await connection.request(f"resources/read {uri}", lambda client: client.read_resource(uri))
            return self.apps.keep(read_view(server, tool, uri, read))
        except MCPServerError as error:
            logger.warning("APP_NOT_DRAWN {} {} {}: {}", server, tool, uri, error)
            return None

    async def call_for_app(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """A tool call an app of `server` makes: only a tool that server listed and lets apps call
        (`for_app`); `MCPServerError` for any other, and when the server fails."""
        listed = self.listed_tool(server, tool)
        if listed is None:
            raise MCPServerError(f"MCP server {server!r} has no tool {tool!r}; an app calls only its own server's tools")
        if not for_app(listed):
            raise MCPServerError(f"the tool {tool!r} of {server!r} is not for apps (its visibility is model only)")
        return await self.call_tool(server, tool, arguments)

    def _tool_fn(self, server: str, tool: str) -> Any:
        async def call_mcp_tool(**arguments: Any) -> ToolResult:
            return await self.call(server, tool, arguments)

        call_mcp_tool.__name__ = tool
        return call_mcp_tool

    def register_into(self, registry: ToolRegistry) -> list[Tool]:
        """Add every ready server's tools to `registry` as `mcp:<server>`; clashing names become `server__tool`.

        From then on the registry follows the servers: one that becomes ready (started late,
        restarted, signed in) puts its current tools in.
        """
        self._registry = registry
        added: list[Tool] = []
        for connection in self._connections.values():
            if connection.status == "ready":
                added.extend(self._register(registry, connection))
        return added

    def _register(self, registry: ToolRegistry, connection: Connection) -> list[Tool]:
        """Add a ready server's tools. A name that is, or looks like, another source's tool's
        (`ToolRegistry.look_alike`), or that begins with another server's `name__`, is offered as `server__name`,
        and the panel says so; a tool whose offered name is taken already is left out, with a notice."""
        name = connection.name
        config = connection.config
        places = tuple(folders(config))  # where the server works, as mcp.json says
        others = [f"{other}__" for other in self._connections if other != name]
        notes: list[str] = []
        added: list[Tool] = []
        for listed in connection.tools:
            if not for_model(listed):  # a tool only for the server's apps is not offered to the model
                continue
            tool = dataclasses.replace(
                tool_from_mcp(listed, self._tool_fn(name, listed.name), source=f"mcp:{name}",
                              timeout=max(_HARD_CAP, config.timeout)),
                places=places, holds=self._holds.get(name, ()),
            )
            if not config.trust_read_only:
                tool.read_only = False
            twin = registry.look_alike(tool)
            like = (f"{twin.name} of {twin.source}" if twin is not None else
                    next((f"a tool of {p[:-2]}" for p in others if tool.name.startswith(p)), None))
            if like is not None:
                tool.name = f"{name}__{tool.name}"
                notes.append(f"{listed.name} is offered as {tool.name}: its name could be taken for {like}")
                logger.warning("MCP_TOOL_RENAMED {} {} offered as {} (like {})", name, listed.name, tool.name, like)
            try:
                added.append(registry.add(tool))
            except ToolError as error:
                notes.append(f"{listed.name} left out: {error}")
                logger.warning("MCP_TOOL_LEFT_OUT {} {}: {}", name, listed.name, error)
        self._renamed[name] = notes
        return added


def _copy(catalog: Catalog) -> Catalog:
    """A catalog its caller may change (the composer filters, the terminal reads) without touching the cache."""
    return Catalog(list(catalog.resources), list(catalog.templates), list(catalog.prompts), list(catalog.problems))
