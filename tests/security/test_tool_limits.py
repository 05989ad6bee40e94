"""Tool limits: sync tools on their own threads, stopped when their call ends; SQL checked by SQLite; results capped."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Iterator

import pytest
from loguru import logger

from sidespin.tools import (
    DEFAULT_TOOL_WORKERS,
    ToolCall,
    ToolRegistry,
    ToolResult,
    current_cancellation,
    load_plugins,
    plugins_dir,
    tool,
)

RUNAWAY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolRegistry]:
    monkeypatch.setenv("SIDESPIN_DATA_DIR", str(tmp_path))
    with ToolRegistry(load_plugins(plugins_dir())) as registry:
        yield registry


async def run(registry: ToolRegistry, tool_name: str, timeout: float, /, **arguments: object) -> ToolResult:
    return await registry.execute(ToolCall(tool_name, dict(arguments)), timeout=timeout)


class AllBusy:
    """Counts the calls that hold a worker thread; an asyncio.Event is set once `expected` do at the same time."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.loop = asyncio.get_running_loop()
        self.reached = asyncio.Event()
        self._count = 0
        self._lock = threading.Lock()

    def arrive(self) -> None:
        with self._lock:
            self._count += 1
            if self._count == self.expected:
                self.loop.call_soon_threadsafe(self.reached.set)


async def test_six_runaway_queries_do_not_starve_the_next_sync_tool(plugins: ToolRegistry) -> None:
    await run(plugins, "query_database", 5, sql="SELECT 1")  # the database exists before six calls race to build it
    runaways = await asyncio.gather(*(run(plugins, "query_database", 0.5, sql=RUNAWAY) for _ in range(6)))
    assert [r.error for r in runaways] == ["tool 'query_database' did not answer within 0.5 s"] * 6

    hello = await run(plugins, "say_hello", 2, name="Ann")
    assert hello.output == "Hello, Ann!"

    # Every worker thread at once: if a runaway query still held one, the barrier would break.
    everyone = threading.Barrier(DEFAULT_TOOL_WORKERS, timeout=5)

    @tool
    def meet() -> str:
        """Wait until every worker thread is here."""
        everyone.wait()
        return "met"

    plugins.add(meet)
    met = await asyncio.gather(*(run(plugins, "meet", 10) for _ in range(DEFAULT_TOOL_WORKERS)))
    assert [r.output for r in met] == ["met"] * DEFAULT_TOOL_WORKERS


async def test_stopping_the_turn_stops_a_running_sync_tool_and_frees_its_thread() -> None:
    started = threading.Event()

    @tool
    def work_until_stopped() -> str:
        """Work until the call is cancelled."""
        started.set()
        current_cancellation().wait(30)
        return "stopped"

    @tool
    def hello() -> str:
        """Answer at once."""
        return "hi"

    with ToolRegistry([work_until_stopped, hello], max_workers=1) as registry:
        task = asyncio.create_task(run(registry, "work_until_stopped", 60))
        assert await asyncio.to_thread(started.wait, 5)
        task.cancel()  # what the Stop button does to a running call
        with pytest.raises(asyncio.CancelledError):
            await task
        # the only thread is free again long before the tool's own 30 s
        assert (await run(registry, "hello", 5)).output == "hi"


async def test_a_call_waiting_for_a_free_thread_times_out_on_time_and_never_runs_late() -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    @tool
    def hold() -> str:
        """Keep the only thread, deaf to the stop signal."""
        started.set()
        release.wait(30)
        return "held"

    @tool
    def note() -> str:
        """Write down that it ran."""
        ran.append("note")
        return "noted"

    with ToolRegistry([hold, note], max_workers=1) as registry:
        holding = asyncio.create_task(run(registry, "hold", 30))
        assert await asyncio.to_thread(started.wait, 5)
        waited = await run(registry, "note", 0.3)
        assert waited.error == "tool 'note' did not answer within 0.3 s"
        release.set()
        assert (await holding).output == "held"
        assert (await run(registry, "note", 5)).output == "noted"
        assert ran == ["note"]  # the call that timed out in the queue never ran afterwards


async def test_busy_sync_tools_leave_the_servers_own_threads_free() -> None:
    # More calls than the event loop's default executor has threads (at most 32).
    calls = 40
    busy = AllBusy(DEFAULT_TOOL_WORKERS)
    release = threading.Event()

    @tool
    def block() -> str:
        """Hold a thread until released."""
        busy.arrive()
        release.wait(30)
        return "done"

    with ToolRegistry([block]) as registry:
        blocked = [asyncio.create_task(run(registry, "block", 30)) for _ in range(calls)]
        try:
            await asyncio.wait_for(busy.reached.wait(), 5)
            # what the server needs the default executor for, e.g. resolving the model's host name
            loop = asyncio.get_running_loop()
            assert await asyncio.wait_for(loop.run_in_executor(None, lambda: "free"), 5) == "free"
        finally:
            release.set()
            results = await asyncio.gather(*blocked)
    assert [r.output for r in results] == ["done"] * calls


@pytest.mark.parametrize("size", [48_000, 1_000_000])
async def test_a_flood_of_sql_comments_is_answered_at_once(plugins: ToolRegistry, size: int) -> None:
    result = await run(plugins, "query_database", 5, sql="/*a" * (size // 3))
    assert result.output is None
    assert result.error == "the query has no SELECT in it: send one SELECT statement"


async def test_a_20_mb_value_is_refused_by_sqlite_with_a_reason(plugins: ToolRegistry) -> None:
    result = await run(plugins, "query_database", 5, sql="SELECT hex(randomblob(10000000))")
    assert result.output is None
    assert result.error == "a value grew over 1,000,000 bytes (SQLite: string or blob too big); select less"


async def test_a_long_result_is_cut_with_a_note_saying_how_much_was_left_out() -> None:
    @tool
    def shout() -> str:
        """A very long answer."""
        return "x" * 250_000

    lines: list[str] = []
    sink = logger.add(lines.append, format="{message}")
    try:
        with ToolRegistry([shout]) as registry:
            result = await run(registry, "shout", 5)
    finally:
        logger.remove(sink)
    assert result.text() == (
        "x" * 100_000 + "\n… [cut: 150,000 more characters not shown; the result was 250,000 characters]"
    )
    assert len([line for line in lines if line.startswith("TOOL_RESULT_CUT shout")]) == 1


async def test_rows_are_cut_as_the_text_the_model_reads_at_the_registrys_limit() -> None:
    @tool
    def rows() -> list[dict[str, int]]:
        """Many rows."""
        return [{"i": i} for i in range(1000)]

    whole = json.dumps([{"i": i} for i in range(1000)])
    with ToolRegistry([rows], max_result_chars=20) as registry:
        result = await run(registry, "rows", 5)
    assert result.output == (
        '[{"i": 0}, {"i": 1},'
        f"\n… [cut: {len(whole) - 20:,} more characters not shown; the result was {len(whole):,} characters]"
    )


async def test_a_long_error_is_cut_too() -> None:
    @tool
    def fail() -> str:
        """Fails with a very long message."""
        raise ValueError("y" * 300_000)

    with ToolRegistry([fail]) as registry:
        result = await run(registry, "fail", 5)
    assert result.output is None
    assert result.error is not None and result.error.startswith("ValueError: yyy")
    assert result.error.endswith("\n… [cut: 200,012 more characters not shown; the result was 300,012 characters]")


async def test_an_mcp_style_result_keeps_small_attachments_and_drops_one_over_8_mb_with_a_note() -> None:
    big, small = "A" * (9 * 1024 * 1024), "iVBORw0KGgo="

    @tool
    async def screenshots() -> ToolResult:
        """Two images, the way an MCP server's result arrives."""
        call = ToolCall("screenshots", {})
        return ToolResult(call, output="two screenshots", attachments=[
            {"type": "image", "mimeType": "image/png", "data": small},
            {"type": "image", "mimeType": "image/png", "data": big},
        ])

    with ToolRegistry([screenshots]) as registry:
        result = await run(registry, "screenshots", 5)
    assert result.attachments == [{"type": "image", "mimeType": "image/png", "data": small}]
    assert result.output == (
        "two screenshots\n[image/png left out: 9,437,184 characters of base64, over the limit of 8,388,608]"
    )
