"""Resources attached to a conversation, followed on their servers: which of them changed since they were sent.

    subs = manager.subscriptions
    subs.attached(cid, note["attached"])      # a sent message carried these: subscribe (once per URI per server)
    subs.updated("everything", uri)           # the server said `notifications/resources/updated`
    subs.changed(cid)                         # [ResourceRef] to send again with the conversation's next message

A resource is followed only on a server whose capabilities say `resources.subscribe`: on a
session of the initialize handshake with `resources/subscribe` (its updates come as
`notifications/resources/updated`), on a 2026-07-28 session with one `subscriptions/listen`
stream per server for every URI followed there (`Client.listen`; opened again, with the new list,
when a URI joins or leaves it). At most `MAX_PER_SERVER` URIs are followed per server: attaching
one more drops the one attached longest ago. A server that becomes ready again (restarted,
reconnected) is subscribed again to everything followed on it. The state lives here, in memory;
the transcript keeps only what was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from loguru import logger
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sidespin.errors import MCPServerError
from sidespin.mcp.attach import ResourceRef

__all__ = ["MAX_PER_SERVER", "Subscriptions", "can_subscribe", "can_listen"]

MAX_PER_SERVER = 32


def can_subscribe(client: Client | None) -> bool:
    """Whether this session takes `resources/subscribe`: the server declares it, and the revision still has it."""
    if client is None or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    resources = client.server_capabilities.resources
    return resources is not None and bool(resources.subscribe)


def can_listen(client: Client | None) -> bool:
    """Whether this session follows resources on a `subscriptions/listen` stream (2026-07-28, declared)."""
    if client is None or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    resources = client.server_capabilities.resources
    return resources is not None and bool(resources.subscribe)


class Subscriptions:
    """The URIs followed on each server, the conversations that attached them, and which changed for whom.

    `connection(server)` gives a server's `Connection` (`MCPServerError` if none); `wake()` is called
    whenever a conversation's set of changed resources moves, so the page can redraw its notice.
    """

    def __init__(self, connection: Callable[[str], Any], wake: Callable[[], None]) -> None:
        self._connection = connection
        self._wake = wake
        self._followed: dict[str, OrderedDict[str, set[str]]] = {}  # server -> uri -> conversation ids
        self._names: dict[tuple[str, str], str] = {}
        self._changed: dict[str, dict[tuple[str, str], ResourceRef]] = {}  # conversation id -> changed resources
        self._tasks: set[asyncio.Task[None]] = set()
        self._listening: dict[str, asyncio.Task[None]] = {}  # server -> its subscriptions/listen stream

    def changed(self, conversation: str) -> list[ResourceRef]:
        """The resources attached in this conversation that changed on their server since they were last sent."""
        return list(self._changed.get(conversation, {}).values())

    def attached(self, conversation: str, rows: Iterable[dict[str, Any]]) -> None:
        """A message of `conversation` carried these resources (the user turn's `attached` rows): they are sent
        fresh, so no longer changed; each one on a server that takes subscriptions is followed from now on."""
        cleared = False
        for row in rows:
            server, uri = str(row.get("server") or ""), str(row.get("uri") or "")
            if not server or not uri:
                continue
            cleared |= self._changed.get(conversation, {}).pop((server, uri), None) is not None
            self._names[(server, uri)] = str(row.get("name") or uri)
            self._follow(server, uri, conversation)
        if cleared:
            self._wake()

    def _follow(self, server: str, uri: str, conversation: str) -> None:
        try:
            client = self._connection(server).client
        except MCPServerError:
            return  # a server mcp.json no longer lists
        listen = can_listen(client)
        if not listen and not can_subscribe(client):
            return
        followed = self._followed.setdefault(server, OrderedDict())
        if uri in followed:
            followed[uri].add(conversation)
            followed.move_to_end(uri)
            return
        followed[uri] = {conversation}
        if not listen:
            self._spawn(self._subscribe(server, uri))
        while len(followed) > MAX_PER_SERVER:
            oldest, _ = followed.popitem(last=False)
            self._names.pop((server, oldest), None)
            if not listen:
                self._spawn(self._unsubscribe(server, oldest))
        if listen:
            self._listen_again(server)

    def updated(self, server: str, uri: str) -> None:
        """The server says `uri` changed: every conversation that attached it gets it marked changed."""
        logger.debug("MCP_RESOURCE_UPDATED {} {}", server, uri)
        marked = False
        for conversation in self._followed.get(server, {}).get(uri, ()):
            changed = self._changed.setdefault(conversation, {})
            if (server, uri) not in changed:
                changed[(server, uri)] = ResourceRef(server, uri, self._names.get((server, uri), uri))
                marked = True
        if marked:
            self._wake()

    def server_ready(self, server: str) -> None:
        """A server (re)connected: its new session has no subscriptions yet, so every followed URI is asked again."""
        if not self._followed.get(server):
            return
        try:
            listen = can_listen(self._connection(server).client)
        except MCPServerError:
            return
        if listen:
            self._listen_again(server)
            return
        for uri in list(self._followed.get(server, {})):
            self._spawn(self._subscribe(server, uri))

    def _listen_again(self, server: str) -> None:
        """(Re)open the server's listen stream for the URIs followed there now (a stream's filter is fixed)."""
        running = self._listening.pop(server, None)
        if running is not None:
            running.cancel()
        self._listening[server] = self._spawn(self._listen(server, list(self._followed.get(server, {})), running))

    async def _listen(self, server: str, uris: list[str], before: asyncio.Task[None] | None) -> None:
        if before is not None:  # the stream it replaces is closed first: one stream per server
            with contextlib.suppress(asyncio.CancelledError):
                await before
        try:
            client = self._connection(server).client
            if client is None or not uris:
                return
            async with client.listen(resource_subscriptions=uris) as stream:
                honored = stream.honored.resource_subscriptions or []
                logger.info("MCP_LISTENING {} {} resource(s): {}", server, len(honored), " ".join(honored))
                async for event in stream:
                    if isinstance(event, ResourceUpdated):
                        self.updated(server, event.uri)
            logger.info("MCP_LISTEN_ENDED {}: the server closed the stream", server)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the stream lost, refused, or the server gone: it is opened again when ready
            logger.warning("MCP_LISTEN_ENDED {}: {}: {}", server, type(error).__name__, error)

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _subscribe(self, server: str, uri: str) -> None:
        connection = self._connection(server)
        if not can_subscribe(connection.client):
            return
        try:
            await connection.request(f"resources/subscribe {uri}", lambda client: _subscribe(client, uri))
        except MCPServerError as error:
            logger.warning("MCP_SUBSCRIBE_FAILED {} {}: {}", server, uri, error)
            self._followed.get(server, {}).pop(uri, None)
            return
        logger.info("MCP_SUBSCRIBED {} {}", server, uri)

    async def _unsubscribe(self, server: str, uri: str) -> None:
        connection = self._connection(server)
        if not can_subscribe(connection.client):
            return
        try:
            await connection.request(f"resources/unsubscribe {uri}", lambda client: _unsubscribe(client, uri))
        except MCPServerError as error:
            logger.info("MCP_UNSUBSCRIBE_FAILED {} {}: {}", server, uri, error)
            return
        logger.info("MCP_UNSUBSCRIBED {} {}", server, uri)

    async def aclose(self) -> None:
        """Stop asking: pending subscribe and unsubscribe requests end with the servers."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))


# The SDK marks these deprecated because 2026-07-28 removed them; `can_subscribe` keeps them to older sessions.
# The warning is raised by the call, before any await, so the filter is restored before other tasks run.
async def _subscribe(client: Client, uri: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        request = client.session.subscribe_resource(uri)
    return await request


async def _unsubscribe(client: Client, uri: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        request = client.session.unsubscribe_resource(uri)
    return await request
