"""OAuth sign-in for the terminal chat: the URL printed, and a loopback listener for the callback.

A remote MCP server that needs OAuth sign-in prints its URL to open; the browser comes back to
`http://127.0.0.1:<port>/oauth/callback`, served here by a loopback listener of our own for the
session (the same redirect URI as the web app's, so one registered client serves both). When the
web app holds that port, the person signs in from its page instead. Tokens live in the data
directory either way, so a sign-in made by one is used by the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from rich.console import Console
from rich.text import Text

from sidespin.config import Settings
from sidespin.mcp.auth import (
    CALLBACK_PATH,
    PendingSignIn,
    SignInError,
    SignIns,
    redirect_uri,
)

__all__ = ["sign_in_listener"]


async def sign_in_listener(stack: contextlib.AsyncExitStack, settings: Settings, console: Console) -> SignIns:
    """Sign-ins that print their URL, and the loopback listener their callback comes back to (while the chat runs)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    listening = True

    async def announce(sign_ins: SignIns, pending: PendingSignIn) -> None:
        where = "" if listening else (f" (the web app on port {settings.port} takes the callback: "
                                      f"or sign in from its page, then start the chat again)")
        console.print(Text(f"MCP server {pending.server!r} needs sign-in: open {pending.url}{where}", style="yellow"))

    sign_ins = SignIns(redirect_uri(settings.port), opener=announce)

    async def callback(request: Request) -> PlainTextResponse:
        query = request.query_params
        try:
            server = sign_ins.finish(query.get("state", ""), query.get("code"), query.get("iss"), query.get("error"))
        except SignInError as error:
            return PlainTextResponse(f"Sign-in failed: {error}", status_code=400)
        if query.get("error"):
            return PlainTextResponse(f"Sign-in to {server} was refused: {query['error']}", status_code=400)
        console.print(Text(f"signed in to {server}", style="green"))
        return PlainTextResponse(f"Signed in to {server} - you can close this tab and go back to the terminal.")

    app = Starlette(routes=[Route(CALLBACK_PATH, callback)])
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    sockets = [socket.socket()]
    try:
        sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sockets[0].bind(("127.0.0.1", settings.port))
    except OSError:  # the port is taken: the web app is running there
        sockets[0].close()
        listening = False
        return sign_ins
    serving = asyncio.create_task(server.serve(sockets=sockets), name="oauth-callback-listener")

    async def stop() -> None:
        server.should_exit = True
        await asyncio.wait({serving}, timeout=5)
        sockets[0].close()

    stack.push_async_callback(stop)
    return sign_ins
