"""Fixtures for the backend tests: a local aiohttp server for fakes, a closed port, the embedded model."""

from __future__ import annotations

import contextlib
import socket
from typing import AsyncIterator, Callable

import pytest
import pytest_asyncio
from aiohttp import web

from sidespin.llm.embedded import EmbeddedBackend
from tests.conftest import serving

# Same answer every time: the real-model tests compare answers with and without a grammar.
DETERMINISTIC = {"seed": 42, "temperature": 0, "max_tokens": 48}


@pytest.fixture
def serve() -> Callable[[web.Application], contextlib.AbstractAsyncContextManager[str]]:
    """`async with serve(app) as url:` runs an aiohttp app on a free loopback port."""
    return serving


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def embedded() -> AsyncIterator[EmbeddedBackend]:
    """The real embedded llama.cpp server with the default model, loaded once for the session.

    Tests using it run in the session's event loop: mark them
    `@pytest.mark.asyncio(loop_scope="session")` and `@pytest.mark.model`.
    """
    backend = EmbeddedBackend(n_ctx=4096, options=DETERMINISTIC)
    async with backend:
        yield backend
