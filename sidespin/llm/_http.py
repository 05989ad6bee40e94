"""What the HTTP backends share: one session set-up (`HTTPBackend`), one timeout policy,
line and SSE readers, readable errors.

Streams are long, so no backend sets a total timeout: `sock_connect` bounds the
connection and `sock_read` bounds every silence between two bytes.
"""

from __future__ import annotations

import codecs
import json
import os
from typing import Any, AsyncIterator

import aiohttp
from loguru import logger

from sidespin.errors import BackendError
from sidespin.llm.base import Backend

__all__ = [
    "HTTPBackend",
    "CONNECT_TIMEOUT",
    "READ_TIMEOUT",
    "client_timeout",
    "post",
    "iter_lines",
    "iter_sse",
    "error_excerpt",
    "http_error",
    "transport_error",
]

CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 300.0
_EXCERPT = 300


def client_timeout(connect: float = CONNECT_TIMEOUT, read: float = READ_TIMEOUT) -> aiohttp.ClientTimeout:
    """A timeout for streaming requests: bounded connect and read, no total."""
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)


class HTTPBackend(Backend):
    """A backend that talks HTTP through one aiohttp session: `start` opens it, `aclose` closes it.

    Subclasses call `super().__init__(connect_timeout=..., read_timeout=...)` and say what the
    session sends with `session_headers()` (and, if they must, `session_connector()`).
    """

    def __init__(self, *, connect_timeout: float = CONNECT_TIMEOUT, read_timeout: float = READ_TIMEOUT) -> None:
        self._timeout = client_timeout(connect_timeout, read_timeout)
        self._session: aiohttp.ClientSession | None = None

    def session_headers(self) -> dict[str, str]:
        """Headers sent with every request (authentication, API version)."""
        return {}

    def session_connector(self) -> aiohttp.BaseConnector | None:
        """The session's connector; None for aiohttp's default pool. Called inside the running loop."""
        return None

    async def start(self) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers=self.session_headers(), timeout=self._timeout, connector=self.session_connector()
            )

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def _require_session(self) -> aiohttp.ClientSession:
        """The open session, or the "not started" error."""
        if self._session is None:
            raise self.not_started()
        return self._session


async def post(session: aiohttp.ClientSession, url: str, body: dict[str, Any], **kwargs: Any) -> aiohttp.ClientResponse:
    """POST and return the response once its headers are in; use it with `async with`.

    A pooled keep-alive connection may have been closed by the server in the meantime
    (llama.cpp's server closes it after each streamed answer). Writing to it fails
    before the server has seen anything, so that one case is retried on a new connection.
    """
    try:
        return await session.post(url, json=body, **kwargs)
    except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as error:
        if isinstance(error, aiohttp.ClientConnectorError):
            raise
        logger.debug("LLM_RETRY_STALE_CONNECTION {} ({})", url, error)
        return await session.post(url, json=body, **kwargs)


async def iter_lines(response: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """Yield the body's lines as they arrive (without line endings), however long they are."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    async for chunk in response.content.iter_any():
        text = decoder.decode(chunk)
        if "\n" not in text:
            pending += text  # a long line in many chunks: never re-split what is pending
            continue
        *lines, rest = (pending + text).split("\n")
        pending = rest
        for line in lines:
            yield line.rstrip("\r")
    pending += decoder.decode(b"", final=True)
    if pending.strip():
        yield pending.rstrip("\r")


async def iter_sse(response: aiohttp.ClientResponse) -> AsyncIterator[tuple[str, str]]:
    """Yield `(event, data)` for each server-sent event; `event` is "message" when unnamed."""
    event, data = "", []
    async for line in iter_lines(response):
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
        elif line.startswith(":"):
            continue  # a comment, used as keep-alive
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "error":  # llama.cpp writes a failure mid-stream as an `error:` line
                event = "error"
                data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def error_excerpt(body: str) -> str:
    """The readable part of an error body: the `error` message when it is JSON, else the start of the text."""
    try:
        parsed: Any = json.loads(body)
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and ("error" in parsed or "message" in parsed):
        error = parsed.get("error", parsed)
        if isinstance(error, dict):
            kind = error.get("type")
            message = error.get("message") or json.dumps(error)
            return f"{kind}: {message}" if kind and kind not in str(message) else str(message)
        return str(error)
    text = " ".join(body.split())
    return text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "")


async def http_error(response: aiohttp.ClientResponse, what: str) -> BackendError:
    """Turn an HTTP error answer into a `BackendError` naming the URL, the status and the server's words."""
    try:
        body = await response.text(errors="replace")
    except (aiohttp.ClientError, TimeoutError):
        body = ""
    detail = error_excerpt(body) if body else response.reason or ""
    return BackendError(f"{what} at {response.url} answered HTTP {response.status}: {detail}")


def transport_error(error: BaseException, what: str, url: str, hint: str = "") -> BackendError:
    """Turn an aiohttp or timeout exception into a `BackendError` a person can act on."""
    suffix = f" — {hint}" if hint else ""
    if isinstance(error, aiohttp.ClientConnectorError):
        cause = error.os_error
        reason = os.strerror(cause.errno) if cause is not None and cause.errno else str(cause or error)
        return BackendError(f"cannot reach {what} at {url}: {reason.lower()}{suffix}")
    if isinstance(error, (TimeoutError, aiohttp.ServerTimeoutError)):
        return BackendError(f"{what} at {url} stopped answering (no data within the read timeout){suffix}")
    if isinstance(error, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)):
        return BackendError(f"{what} at {url} closed the connection in the middle of the answer")
    return BackendError(f"{what} at {url} failed: {type(error).__name__}: {error}")
