"""Signing in to a remote MCP server from the page: the Sign in link's route and the OAuth callback.

- `POST /oauth/{server}/sign-in` sends the browser to the server's waiting authorization URL
  (htmx: `HX-Redirect`, otherwise a 303); when none waits (the server failed, or the sign-in
  expired) it starts the server again, which asks for a new one. POST only, as it may restart a
  server: a link or an image on another site must not. The Servers panel's Sign in button posts
  here for a server that "needs sign-in"; /health gives the same path as `mcp_servers.<name>.sign_in`.
  A refusal (no such server, nothing to sign in to) is JSON with a reason, shown beside the button.
- `GET /oauth/callback?code=&state=` is where the authorization server sends the browser back (the
  redirect URI `http://127.0.0.1:<port>/oauth/callback`). A top-level navigation from another
  site, so it carries no Origin and passes the guard on loopback; what protects it is the
  `state`: single-use, unguessable, expiring (`sidespin.mcp.auth.SignIns`). An unknown or used
  state is a 400 page and changes nothing; an `error=` from the authorization server is shown as it is.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fasthtml.common import A, APIRouter, Body, H1, Head, Html, Link, Main, Meta, P, Title, to_xml
from loguru import logger
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from sidespin.errors import MCPServerError
from sidespin.mcp.auth import SignInError
from sidespin.web.forms import refusal

__all__ = ["SignInPage", "ar"]

_CONNECT_WAIT = 20.0  # seconds the callback page waits to say whether the server connected

ar = APIRouter(prefix="/oauth")


def SignInPage(title: str, *lines: Any, status: int = 200) -> HTMLResponse:
    """A small page of its own (the browser tab the sign-in opened), with a link back to the chat."""
    page = Html(
        Head(Meta(charset="utf-8"), Title(title), Link(rel="stylesheet", href="/static/app.css")),
        Body(Main(H1(title), *(P(line) for line in lines), P(A("Back to sidespin", href="/")), cls="sign-in-page")),
    )
    return HTMLResponse("<!doctype html>\n" + to_xml(page), status_code=status)


def _manager(request: Request) -> Any:
    engine = request.app.state.engine
    return engine.mcp


async def _settled(manager: Any, server: str) -> Any:
    """The connection once it is past waiting for this sign-in (ready or failed), or as it is after a while."""
    connection = manager.connection(server)
    try:
        async with asyncio.timeout(_CONNECT_WAIT):
            seen = manager.version
            while connection.status in ("needs sign-in", "starting", "restarting"):
                seen = await manager.wait_for_change(seen)
    except TimeoutError:
        pass
    return connection


def _go(request: Request, url: str) -> Response:
    """Send the browser to `url`: htmx follows HX-Redirect (an XHR must not follow a redirect to another
    site), any other client a 303."""
    if request.headers.get("hx-request"):
        return Response(status_code=200, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


@ar("/callback", methods=["get"])  # the redirect URI `sidespin.mcp.auth` gives: CALLBACK_PATH
async def oauth_callback(request: Request):
    manager = _manager(request)
    query = request.query_params
    if manager is None:
        return SignInPage("Sign-in failed", "No MCP servers are configured here.", status=400)
    try:
        server = manager.sign_ins.finish(
            query.get("state", ""), query.get("code"), query.get("iss"), query.get("error")
        )
    except SignInError as error:
        return SignInPage("Sign-in failed", str(error), status=400)
    if error := query.get("error"):
        described = query.get("error_description")
        return SignInPage(
            f"Sign-in to {server} was refused",
            f"The authorization server answered: {error}" + (f" ({described})" if described else ""),
            status=400,
        )
    connection = await _settled(manager, server)
    if connection.status == "ready":
        return SignInPage(f"Signed in to {server}", "You can close this tab.")
    if connection.status == "failed":
        return SignInPage(f"Sign-in to {server} failed", connection.error or "", status=502)
    return SignInPage(f"Signing in to {server}…", "The server is still connecting; its status shows on the page.")


@ar("/{server}/sign-in", methods=["post"])
async def oauth_sign_in(request: Request, server: str):
    manager = _manager(request)
    try:
        connection = manager.connection(server) if manager is not None else None
    except MCPServerError as error:
        return refusal(str(error), 404)
    if connection is None:
        return refusal("no MCP servers are configured here", 404)
    if connection.sign_in_url is None and connection.status != "ready":
        logger.info("OAUTH_SIGN_IN_RESTART {}", server)
        await connection.restart(connection.generation, "sign-in asked for")
    if connection.sign_in_url is not None:
        return _go(request, connection.sign_in_url)
    if connection.status == "ready":
        return refusal(f"{server} is connected: it needs no sign-in now", 409)
    return refusal(f"cannot sign in to {server}: {connection.error or 'its status is ' + connection.status}", 502)
