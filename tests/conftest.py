"""Shared fixtures: a real uvicorn server running the real app on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve_app(backend, data_dir: Path, **settings_overrides) -> Iterator[str]:
    """Run server.app with `backend` (None: the configured one) in a thread; yield its base URL."""
    import uvicorn

    import server
    from sidespin.config import load_settings

    port = free_port()
    server.app.state.settings = load_settings(data_dir=data_dir, port=port, mcp_config=data_dir / "mcp.json", **settings_overrides)
    server.app.state.backend = backend
    config = uvicorn.Config(server.app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, name="uvicorn", daemon=True)
    thread.start()
    ready = threading.Event()

    def wait_started() -> None:
        while thread.is_alive() and not instance.started:
            ready.wait(0.02)

    waiter = threading.Thread(target=wait_started)
    waiter.start()
    waiter.join(timeout=120)
    if not instance.started:
        instance.should_exit = True
        raise RuntimeError("the server did not start (see the log above)")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        instance.should_exit = True
        thread.join(timeout=30)
        server.app.state.backend = None


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"
