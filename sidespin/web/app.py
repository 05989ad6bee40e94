"""The web app: `create_app(settings, backend)` builds it; nothing is read or started before it is served.

The app's lifespan opens the engine (with `backend`, or the one the settings name) and closes it;
the guard (Host, Origin, token), the body limit and the security headers run before any route;
every refusal is JSON with a reason. Routes come from the web modules, each an `APIRouter`:
`chat` (the page, send, poke), `page` (a playing turn: approve, rerun, stop, stream), `sidebar`,
`versions`, `servers`, `composer`, `questions`, `models`, `oauth`, `api` (the JSON endpoints),
`server_log` and `apps` (MCP Apps). Besides them: `/mcp`, the built-in plugins as a real MCP server,
and `/static`. With an `mcp.json`, the lifespan also serves the MCP Apps sandbox on a second port (`sidespin.web.sandbox`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import secrets
import sys
from pathlib import Path
from typing import Any, AsyncIterator

from fasthtml.common import FastHTML, JSONResponse, Link, Meta, Script, fast_app
from loguru import logger
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sidespin.config import PROJECT_DIR, Settings
from sidespin.engine import Engine
from sidespin.errors import NotSaved
from sidespin.guard import BodyLimit, GuardPolicy, OriginGuard, SecurityHeaders
from sidespin.llm.base import Backend
from sidespin.logs import LogHub, setup_logging
from sidespin.mcp import build_mcp_server
from sidespin.tools import ToolRegistry
from sidespin.web import (
    api, apps, chat, composer, models, oauth, page, questions, server_log, servers, sidebar, versions,
)
from sidespin.web.live import TurnBoard
from sidespin.web.sandbox import serving_sandbox

__all__ = ["create_app"]

STATIC_DIR = PROJECT_DIR / "static"
ROUTERS = (chat, page, versions, sidebar, servers, oauth, composer, questions, models, api, server_log, apps)

HEADERS = (
    Meta(name="viewport", content="width=device-width, initial-scale=1"),
    # no inline styles or eval under our CSP: htmx must not inject its indicator <style> or run hx-on code
    Meta(name="htmx-config", content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'),
    Link(rel="stylesheet", href="/static/app.css"),
    Link(rel="stylesheet", href="/static/servers.css"),
    Link(rel="stylesheet", href="/static/questions.css"),
    Link(rel="icon", href="data:,"),  # no favicon request, no 404 in the console
    Script(src="/static/htmx.min.js"),
    Script(src="/static/htmx-ext-sse.min.js"),
    Script(src="/static/app.js", defer=True),
    Link(rel="stylesheet", href="/static/composer.css"),
    Link(rel="stylesheet", href="/static/composer-updates.css"),
    Script(src="/static/composer.js", defer=True),
    Link(rel="stylesheet", href="/static/apps.css"),
    Script(src="/static/apps.js", defer=True),
)


def create_app(settings: Settings, backend: Backend | None = None) -> FastHTML:
    """The app serving `settings` with `backend` as its model (None: the one the settings name)."""
    app, _ = fast_app(
        default_hdrs=False,
        pico=False,
        surreal=False,
        title="sidespin",
        canonical=False,  # FastHTML's canonical link says https, which a local server is not
        lifespan=functools.partial(lifespan, backend=backend),
        exception_handlers={HTTPException: http_error, RecursionError: too_deep, NotSaved: not_saved,
                            Exception: internal_error},
        middleware=[Middleware(SecurityHeaders), Middleware(OriginGuard), Middleware(BodyLimit)],
        hdrs=HEADERS,
    )
    app.state.settings = settings
    # FastHTML's catch-all static route joins any path onto a folder without keeping it inside; only static/ is
    # served, by Starlette's StaticFiles, which refuses every path that resolves outside it.
    app.routes[:] = [r for r in app.routes if getattr(r, "path", "") != "/{fname:path}.{ext:static}"]
    app.routes.insert(0, Route("/mcp", endpoint=MCPMount(), methods=["GET", "POST", "DELETE"]))
    app.routes.insert(1, Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"))
    for module in ROUTERS:
        module.ar.to_app(app)
    return app


async def lifespan(app: FastHTML, backend: Backend | None = None) -> AsyncIterator[None]:
    """FastHTML runs this async generator around the server's life: engine up before, closed after."""
    state = app.state
    hub: LogHub = setup_logging(state.settings.logs_dir)
    state.log_hub = hub
    # the OAuth callback is where another site (the authorization server) sends the browser back
    state.guard = GuardPolicy.for_settings(state.settings, access_token(state.settings),
                                           cross_site_gets=frozenset({oauth.oauth_callback.to()}))
    logger.info("GUARD hosts={} token={}", ",".join(sorted(state.guard.allowed_hosts)),
                "required" if state.guard.token else "not needed (loopback)")
    # MCP Apps come from MCP servers: without an mcp.json there is no second origin, and the page frames nothing
    sandbox = (serving_sandbox(state.settings, state.guard) if Path(state.settings.mcp_config).exists()
               else contextlib.nullcontext(None))
    async with sandbox as sandbox_port, Engine.open(state.settings, backend=backend, approval="ask") as engine:
        state.sandbox_port = sandbox_port  # MCP Apps are framed from there (sidespin.web.apps, sidespin.web.sandbox)
        state.guard = dataclasses.replace(state.guard, sandbox_port=sandbox_port)
        state.engine = engine
        state.board = TurnBoard(engine)
        # the plugins loaded, offered to this model or held back (`sidespin.offer`): /mcp serves them either way
        plugins = ToolRegistry(list(engine.plugins.tools), max_result_chars=state.settings.max_result_chars)
        state.mcp_endpoint = build_mcp_server(
            plugins, port=state.settings.port, allowed_hosts=sorted(state.guard.allowed_hosts),
            policy=engine.outside_policy, conversations=engine.store,
        )
        with plugins:
            async with state.mcp_endpoint.lifespan():
                yield
    hub.close()


def access_token(settings: Settings) -> str | None:
    """The token a non-loopback bind requires: configured, or made now and printed once (as Jupyter does)."""
    if not settings.public_bind:
        return None
    if settings.auth_token:
        logger.warning("PUBLIC_BIND host={} port={}: every request needs the configured token", settings.host,
                       settings.port)
        return settings.auth_token
    token = secrets.token_urlsafe(24)
    logger.warning("PUBLIC_BIND host={} port={}: every request needs the access token printed below",
                   settings.host, settings.port)
    shown = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    print(f"\n  sidespin is reachable from other machines. Open it with its access token:\n"
          f"    http://{shown}:{settings.port}/?token={token}\n", file=sys.stderr, flush=True)
    return token


class MCPMount:
    """`/mcp`: the built-in plugins as a real MCP server (stateless Streamable HTTP), built in the lifespan."""

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        await scope["app"].state.mcp_endpoint(scope, receive, send)


async def http_error(request: Request, error: HTTPException):
    """Every refusal (bad JSON, a missing field, an unknown path) as JSON with a reason."""
    logger.info("HTTP_REFUSED {} {} {} {}", request.method, request.url.path, error.status_code, error.detail)
    return JSONResponse({"status": "error", "error": error.detail}, status_code=error.status_code,
                        headers=error.headers)  # a 405's Allow names the method to use


async def too_deep(request: Request, error: RecursionError):
    """FastHTML reads a JSON body before any route: a body nested thousands deep is the sender's mistake."""
    return await http_error(request, HTTPException(400, "the body is nested too deeply to read"))


async def not_saved(request: Request, error: NotSaved):
    """A file that could not be written (a full disk): 507 with the reason; nothing was half-written."""
    logger.error("HTTP_NOT_SAVED {} {} {}", request.method, request.url.path, error.reason)
    return JSONResponse({"status": "error", "error": str(error)}, status_code=507)


async def internal_error(request: Request, error: Exception):
    """The top edge: a bug becomes a JSON 500 with a reason in the log, and the server keeps serving."""
    logger.opt(exception=error).error("HTTP_INTERNAL_ERROR {} {}", request.method, request.url.path)
    return JSONResponse({"status": "error", "error": f"internal error ({type(error).__name__}); see the server log"},
                        status_code=500)
