"""Helpers for the security tests: raw HTTP (no client tidies a hostile path) and a plain scripted model."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.scripted import ScriptedBackend


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


def json_of(body: bytes) -> Any:
    return json.loads(body.decode())


@pytest.fixture
def echo_model() -> ScriptedBackend:
    return ScriptedBackend([lambda messages: [f"You said: {messages[-1]['content'][-40:]}"]] * 500)
