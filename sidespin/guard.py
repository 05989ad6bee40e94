"""The edge of the web app: who may talk to it, how much, and what a browser may do with its pages.

Three pure ASGI middlewares, outermost first, each before any route runs (the
mounted MCP endpoint and the static files included):

- `OriginGuard` refuses other sites and strangers:
  - the Host header must name this server: a loopback name, the bound host, or
    a name in `allowed_hosts` (a DNS-rebinding page has its own name in Host);
  - an Origin header, when present, must be this very app (same scheme, host and port);
  - a request another site's page made is refused whatever its method: `Sec-Fetch-Site`
    "cross-site" or "same-site" (on localhost every port is one site: another app), or, from a
    browser that sends neither Origin nor Sec-Fetch-Site, a Referer of another origin. Only the
    paths in `cross_site_gets` take a GET from elsewhere (the OAuth callback, which the
    authorization server sends the browser to; its single-use state protects it);
  - on a non-loopback bind every request needs the access token: the
    `Authorization: Bearer` header, `?token=` in the URL, or the cookie set by the
    first visit, in that order (a token in the URL wins over an old cookie; a page
    visit with it is redirected to the same local path without it, the cookie set
    anew). On loopback no token is needed. The token is never logged:
    `TokenRedaction` hides it in uvicorn's access log lines.
- `BodyLimit` refuses a request body over `max_body_bytes` with 413, before the
  route reads it all.
- `SecurityHeaders` adds a strict Content-Security-Policy (no inline script, no
  remote images, no framing), `nosniff` and a no-referrer policy to every response.

The policy is read from `app.state.guard` (a `GuardPolicy`, set when the app
starts), so the settings of a running app decide, not those of import time.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import socket
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl, quote, unquote_plus, urlencode, urlsplit

from loguru import logger

from sidespin.config import LOOPBACK_HOSTS, Settings

__all__ = ["GuardPolicy", "OriginGuard", "BodyLimit", "SecurityHeaders", "CSP", "TokenRedaction", "hide_token",
           "json_refusal"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

WILDCARD_HOSTS = ("0.0.0.0", "::", "")
# Sec-Fetch-Site values of a request another page made: a site is not an origin (every port of
# localhost is one site), so "same-site" is as foreign as "cross-site". Ours are "same-origin" and "none".
FOREIGN_FETCH_SITES = ("cross-site", "same-site")

CSP = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src data:",  # only the sound a tool returned, drawn on its card as a data: URL
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
))
_SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" would make a browser send Origin: null on our own forms
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def _hostname(host_header: str) -> str:
    try:
        return (urlsplit("//" + host_header).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced "[" in a hostile Host header
        return ""


def _same_origin(url: str, host: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc == host


def _origin_of(url: str) -> str:
    """The scheme and host of a URL, for a log line: never its path or query (another site's secrets)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "an unreadable address"
    return f"{parts.scheme}://{parts.netloc}"


def _local_path(path: str) -> str:
    """`path` as a Location that stays on this server: one leading "/" ("//host" and "/\\host" name another
    server to a browser), percent-encoded (a browser drops a raw tab or newline, which could make "//")."""
    return "/" + quote(path.lstrip("/\\"), safe="/!$&'()*+,;=:@~")


_QUERY_PAIR = re.compile(r"(?<=[?&;])([^=&;#\s\"']+)=([^&;#\s\"']*)")


def hide_token(text: str) -> str:
    """`text` with the value of every `token` query parameter replaced by [hidden] (a name spelled with
    percent-escapes, `%74oken`, is the same parameter to the guard, so to this too)."""
    return _QUERY_PAIR.sub(lambda m: f"{m[1]}=[hidden]" if unquote_plus(m[1]).lower() == "token" else m[0], text)


class TokenRedaction(logging.Filter):
    """A `logging` filter that hides the access token in a record's text: uvicorn's access log writes
    each request's path with its query (`GET /?token=… HTTP/1.1`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = hide_token(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(hide_token(arg) if isinstance(arg, str) else arg for arg in record.args)
        return True


def _machine_names() -> set[str]:
    """What other machines may call this one: its host name, full name and their addresses."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            names.update(info[4][0] for info in socket.getaddrinfo(name, None))
        except OSError:
            continue
    return {name.lower() for name in names if name}


@dataclass(frozen=True)
class GuardPolicy:
    """Which Host names are this server, and the token a request needs (None on loopback)."""

    allowed_hosts: frozenset[str]
    token: str | None = None
    cookie: str = "sidespin_token"
    cross_site_gets: frozenset[str] = frozenset()  # paths another site may send a browser to with a GET
    sandbox_port: int | None = None  # the port MCP Apps are framed from (sidespin.web.sandbox): the page may frame it

    @classmethod
    def for_settings(cls, settings: Settings, token: str | None = None,
                     cross_site_gets: frozenset[str] = frozenset()) -> GuardPolicy:
        names = set(LOOPBACK_HOSTS) | {name.lower() for name in settings.allowed_hosts}
        if settings.host in WILDCARD_HOSTS:
            if not settings.allowed_hosts:  # no explicit list: the names this machine answers to
                names |= _machine_names()
        else:
            names.add(settings.host.lower().strip("[]"))
        required = token if settings.public_bind else None
        return cls(frozenset(names), required, f"sidespin_token_{settings.port}", frozenset(cross_site_gets))


def json_refusal(status: int, reason: str, extra_headers: list[tuple[bytes, bytes]] | None = None) -> tuple[dict, dict]:
    """The two ASGI messages of a JSON refusal: {"status": "error", "error": reason}."""
    body = json.dumps({"status": "error", "error": reason}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    start = {"type": "http.response.start", "status": status, "headers": headers + (extra_headers or [])}
    return start, {"type": "http.response.body", "body": body}


async def _refuse(scope: Scope, send: Send, status: int, reason: str, headers: list | None = None) -> None:
    logger.warning("REQUEST_REFUSED {} {} {} {}", scope.get("method", "WS"), scope.get("path"), status, reason)
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    for message in json_refusal(status, reason, headers):
        await send(message)


class OriginGuard:
    """Host, Origin and cross-site checks on every request, and the access token on a non-loopback bind."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @staticmethod
    def policy(scope: Scope) -> GuardPolicy:
        app = scope.get("app")
        policy = getattr(getattr(app, "state", None), "guard", None)
        return policy if isinstance(policy, GuardPolicy) else GuardPolicy(frozenset(LOOPBACK_HOSTS))

    @staticmethod
    def refusal(scope: Scope, headers: dict[str, str], policy: GuardPolicy) -> str | None:
        """Why a request is not for this server (its Host) or comes from another site's page, or None."""
        host = headers.get("host", "")
        if _hostname(host) not in policy.allowed_hosts:
            return f"Host {host!r} is not this server (allowed: {', '.join(sorted(policy.allowed_hosts))})"
        origin = headers.get("origin")
        if origin == "null":
            return "Origin 'null' is refused"
        if origin is not None:
            parts = urlsplit(origin)
            if parts.netloc != host or parts.scheme not in ("http", "https"):
                return f"Origin {origin!r} is not this app ({'http://' + host}); cross-site requests are refused"
        if scope.get("method") in ("GET", "HEAD") and scope.get("path") in policy.cross_site_gets:
            return None
        site = headers.get("sec-fetch-site", "").lower()
        if site in FOREIGN_FETCH_SITES:
            return (f"a request made by another site's page (Sec-Fetch-Site: {site}) is refused; "
                    "open sidespin from its own address")
        referer = headers.get("referer")
        if origin is None and not site and referer and not _same_origin(referer, host):
            return f"a request from another site's page ({_origin_of(referer)}) is refused"
        return None

    @staticmethod
    def presented_token(scope: Scope, headers: dict[str, str], policy: GuardPolicy) -> tuple[str, str]:
        """The token a request carries and how: ("header" | "query" | "cookie" | "", token). What is sent
        on purpose comes first: a token in the URL wins over a cookie left from an older one."""
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and value:
            return "header", value.strip()
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if query.get("token"):
            return "query", query["token"]
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header carries no token
            cookie = SimpleCookie()
        if policy.cookie in cookie:
            return "cookie", cookie[policy.cookie].value
        return "", ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        policy = self.policy(scope)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        reason = self.refusal(scope, headers, policy)
        if reason is not None:
            await _refuse(scope, send, 403, reason)
            return
        if policy.token is not None:
            how, token = self.presented_token(scope, headers, policy)
            if not hmac.compare_digest(token.encode(), policy.token.encode()):
                reason = ("this server needs its access token: open the URL printed when it started "
                          "(…/?token=…) or send the header Authorization: Bearer <token>")
                await _refuse(scope, send, 401, reason, [(b"www-authenticate", b"Bearer")])
                return
            if how == "query" and scope["type"] == "http" and scope.get("method") == "GET":
                await self.welcome(scope, send, policy)
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def welcome(scope: Scope, send: Send, policy: GuardPolicy) -> None:
        """A visit with ?token=: set the cookie and go to the same local path without the token."""
        query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1")) if k != "token"]
        location = _local_path(scope.get("path", "/")) + ("?" + urlencode(query) if query else "")
        cookie = f"{policy.cookie}={policy.token}; Path=/; HttpOnly; SameSite=Strict"
        logger.info("AUTH_COOKIE_SET {}", scope.get("path"))
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode("latin-1")),
            (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


class BodyLimit:
    """413 for a request body over `max_bytes`: by Content-Length at once, or as it streams in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @staticmethod
    def limit(scope: Scope) -> int:
        settings = getattr(getattr(scope.get("app"), "state", None), "settings", None)
        return settings.max_body_bytes if isinstance(settings, Settings) else Settings.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope)
        reason = f"the request body is larger than {limit} bytes (max_body_bytes)"
        length = dict(scope.get("headers", [])).get(b"content-length", b"")
        if length.strip().isdigit() and int(length) > limit:
            await _refuse(scope, send, 413, reason)
            return
        received = 0
        refused = False
        started = False

        async def counted_receive() -> dict[str, Any]:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await _refuse(scope, send, 413, reason)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal started
            if refused:
                return  # the 413 went out; whatever the route answers now is dropped
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, guarded_send)


def _frame_src(scope: Scope) -> bytes:
    """The CSP directive that lets a page frame the MCP Apps sandbox on the same host name, another port
    (`GuardPolicy.sandbox_port`); nothing when there is none or the Host is not one of ours."""
    policy = OriginGuard.policy(scope)
    if policy.sandbox_port is None:
        return b""
    host = {k.lower(): v for k, v in scope.get("headers", [])}.get(b"host", b"").decode("latin-1")
    name = _hostname(host)
    if name not in policy.allowed_hosts:
        return b""
    shown = f"[{name}]" if ":" in name else name
    return f"; frame-src http://{shown}:{policy.sandbox_port}".encode()


class SecurityHeaders:
    """The same strict headers on every response, pages, JSON, streams and files alike."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        frames = _frame_src(scope)

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                present = {key.lower() for key, _ in message.get("headers", [])}
                extra = [(key, value) for key, value in _SECURITY_HEADERS if key not in present]
                if frames:
                    extra = [(key, value + frames if key == b"content-security-policy" else value)
                             for key, value in extra]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        await self.app(scope, receive, with_headers)
