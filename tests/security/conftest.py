"""Helpers for the security tests: requests to the app in process, raw HTTP over a socket (no client tidies a
hostile path), and a plain scripted model."""

from __future__ import annotations

import http.client
import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from tests.scripted import ScriptedBackend

if TYPE_CHECKING:
    from starlette.testclient import TestClient


def raw_request(base: str, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send `path` exactly as written (http.client does not normalise `..` or `%2f`)."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent = {"Host": parts.netloc, **(headers or {})}
        if body is not None and "Content-Length" not in sent and "Transfer-Encoding" not in sent:
            sent["Content-Length"] = str(len(body))
        for key, value in sent.items():
            connection.putheader(key, value)
        connection.endheaders()
        if body is not None:
            connection.send(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def app_request(client: "TestClient", method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """What `raw_request` answers, asked of the app in process: no redirect followed, no cookie kept. httpx tidies
    `..` and `//` in a path, so a test of hostile paths keeps `raw_request` and a socket."""
    response = client.request(method, path, content=body, headers=headers, follow_redirects=False)
    client.cookies.clear()
    return response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content


def json_of(body: bytes) -> Any:
    return json.loads(body.decode())


@pytest.fixture
def echo_model() -> ScriptedBackend:
    return ScriptedBackend([lambda messages: [f"You said: {messages[-1]['content'][-40:]}"]] * 500)
