"""The second origin MCP Apps run on: a tiny server on another port, serving one page and its script.

    async with serving_sandbox(settings, guard) as port:   # bound on settings.host, port settings.apps_port (0: any)
        ...                                                 # the chat page frames http://<its host>:<port>/sandbox

The chat page never frames an app's HTML itself. It frames `/sandbox` from this other origin (the
ext-apps "sandbox proxy"), which puts the app in a sandboxed frame of its own (no same-origin: an
opaque origin, no top navigation, no popups) and only relays JSON-RPC messages between the app and
the page (`static/sandbox.js`). So an app cannot reach the page's cookies, storage or DOM, and
what it may fetch is what its Content-Security-Policy allows: by default nothing from outside
(`sidespin.mcp.apps.sandbox_csp`, built from the domains its server declared, passed in `?csp=`).
The page may be framed only by the chat page itself (`frame-ancestors`).

Nothing here reads or writes data: the page brings the app's HTML over `postMessage`. A Host that
is not one of this server's names is refused, as on the main port.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import AsyncIterator
from urllib.parse import urlsplit

import uvicorn
from loguru import logger
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from sidespin.config import PROJECT_DIR, Settings
from sidespin.guard import GuardPolicy
from sidespin.mcp.apps import clean_csp, sandbox_csp

__all__ = ["serving_sandbox", "sandbox_app", "SANDBOX_PATH"]

SANDBOX_PATH = "/sandbox"
_SCRIPT = PROJECT_DIR / "static" / "sandbox.js"
_PAGE = """<!doctype html>
<html data-host-origin="{origin}"><head><meta charset="utf-8"><title>app sandbox</title>
<style>html,body{{margin:0;height:100%;overflow:hidden;background:transparent}}
iframe{{border:0;width:100%;height:100%;display:block}}</style></head>
<body><script src="/sandbox.js"></script></body></html>
"""
_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
            "Cross-Origin-Resource-Policy": "cross-origin"}


def _hostname(host_header: str) -> str:
    try:
        return (urlsplit("//" + host_header).hostname or "").lower()
    except ValueError:  # an unbalanced "[" in a hostile Host header
        return ""


def _page_origin(request: Request, main_port: int) -> str:
    """The chat page's origin, as the browser that asks here names it: same host name, the main port."""
    host = _hostname(request.headers.get("host", ""))
    return f"http://{'[' + host + ']' if ':' in host else host}:{main_port}"


def sandbox_app(guard: GuardPolicy, main_port: int) -> Starlette:
    """The sandbox origin's app: `GET /sandbox?csp=<json>` (the proxy page under the app's CSP) and
    `GET /sandbox.js` (the relay); anything else is a 404."""

    def refused(request: Request) -> Response | None:
        host = request.headers.get("host", "")
        if _hostname(host) not in guard.allowed_hosts:
            logger.warning("APP_SANDBOX_REFUSED Host {!r}", host)
            return JSONResponse({"status": "error", "error": f"Host {host!r} is not this server"}, status_code=403)
        return None

    async def page(request: Request) -> Response:
        if (refusal := refused(request)) is not None:
            return refusal
        try:
            declared = json.loads(request.query_params.get("csp") or "{}")
        except (ValueError, RecursionError):
            declared = {}
        origin = _page_origin(request, main_port)
        policy = sandbox_csp(clean_csp(declared, where="sandbox"), origin)
        return HTMLResponse(_PAGE.format(origin=origin), headers={**_HEADERS, "Content-Security-Policy": policy})

    async def script(request: Request) -> Response:
        if (refusal := refused(request)) is not None:
            return refusal
        return Response(_SCRIPT.read_bytes(), media_type="text/javascript", headers=_HEADERS)

    return Starlette(routes=[Route(SANDBOX_PATH, page), Route("/sandbox.js", script)])


@contextlib.asynccontextmanager
async def serving_sandbox(settings: Settings, guard: GuardPolicy) -> AsyncIterator[int]:
    """Serve the sandbox origin on `settings.host`, port `settings.apps_port` (0: one the system picks)
    while the block runs; yields the port. Stopped, its connections closed, when the block ends."""
    family = socket.AF_INET6 if ":" in settings.host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host.strip("[]"), settings.apps_port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(sandbox_app(guard, settings.port), lifespan="off", log_level="warning",
                            access_log=False)
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)  # what `Server.serve` sets before `startup`
    await server.startup(sockets=[sock])
    looping = asyncio.create_task(server.main_loop(), name="app-sandbox")
    logger.info("APP_SANDBOX http://{}:{}{}", settings.host, port, SANDBOX_PATH)
    try:
        yield port
    finally:
        server.should_exit = True
        await asyncio.gather(looping, return_exceptions=True)
        await server.shutdown(sockets=[sock])
        sock.close()
