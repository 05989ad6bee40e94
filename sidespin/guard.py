"""Refuse requests from other sites: DNS-rebinding and cross-origin protection for a local server.

A browser on the user's machine may visit a hostile page that posts to
http://127.0.0.1:5001 (cross-origin) or resolves its own name to 127.0.0.1
(DNS rebinding). Both are stopped here, before any route runs, including the
mounted MCP endpoint:
- the Host header must name this machine (loopback names or the bound host);
- an Origin header, when present, must be this very app (same scheme, host and port).
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from loguru import logger

__all__ = ["OriginGuard", "LOOPBACK_NAMES"]

LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}

ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]


def _hostname(host_header: str) -> str:
    return urlsplit("//" + host_header).hostname or ""


class OriginGuard:
    """Pure ASGI middleware; `extra_hosts` adds names besides loopback (e.g. the bound host)."""

    def __init__(self, app: ASGIApp, extra_hosts: tuple[str, ...] = ()) -> None:
        self.app = app
        self.allowed_hosts = LOOPBACK_NAMES | {h for h in extra_hosts if h and h not in ("0.0.0.0", "::")}
        # bound to every interface: any name may reach us, so only the Origin check applies
        self.any_host = any(h in ("0.0.0.0", "::") for h in extra_hosts)

    def refusal(self, headers: dict[str, str]) -> str | None:
        host = headers.get("host", "")
        if not self.any_host and _hostname(host) not in self.allowed_hosts:
            return f"Host {host!r} is not this server (allowed: {', '.join(sorted(self.allowed_hosts))})"
        origin = headers.get("origin")
        if origin is not None and origin != "null":
            parts = urlsplit(origin)
            if parts.netloc != host or parts.scheme not in ("http", "https"):
                return f"Origin {origin!r} is not this app ({'http://' + host}); cross-site requests are refused"
        elif origin == "null":
            return "Origin 'null' is refused"
        return None

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        reason = self.refusal(headers)
        if reason is None:
            await self.app(scope, receive, send)
            return
        logger.warning("REQUEST_REFUSED {} {} {}", scope.get("method", "WS"), scope.get("path"), reason)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"status": "error", "error": reason}).encode()
        await send({
            "type": "http.response.start",
            "status": 403,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        })
        await send({"type": "http.response.body", "body": body})
