"""Fixtures for the MCP tests: real third-party servers (server-everything over HTTP and SSE)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp_harness import HAVE_NODE, NO_NODE, everything_server


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """server-everything in its Streamable HTTP mode on a free port; yields the /mcp URL."""
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    with everything_server("streamableHttp") as url:
        yield url


@pytest.fixture(scope="module")
def everything_sse() -> Iterator[str]:
    """server-everything in its legacy SSE mode on a free port; yields the /sse URL."""
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    with everything_server("sse") as url:
        yield url
