"""Long calls as tasks, from the chat's side: real servers that run them, followed to the end or cancelled.

- sidespin's own `/mcp` (2026-07-28, the tasks extension) serving the suite's task fixtures, and a
  plugin folder written here for a task that never says anything;
- server-everything over stdio (2025-11-25): `simulate-research-query` is a task in the core
  protocol of that revision, `trigger-long-running-operation` a plain call with progress notifications.

A call runs in a chat call's scope (`CallScope`), as the rally runs it, so the news the card would
show is what the test reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp_harness import HAVE_NODE, NO_NODE, endpoint_app, everything_stdio, serve_in_thread, tasks_endpoint

from sidespin.errors import ToolFailed, ToolTimeout
from sidespin.events import Event, ToolProgress
from sidespin.mcp import MCPManager, ServerConfig, build_mcp_server
from sidespin.mcp.server import MCPEndpoint
from sidespin.questions import CallScope, current_call
from sidespin.tools import ToolRegistry, load_plugins

SILENT_PLUGIN = '''
import asyncio
from sidespin.tools import tool

@tool(task="optional", timeout=600)
async def silent_job() -> str:
    """Work a long time and say nothing."""
    await asyncio.sleep(600)
    return "done"
'''


@contextlib.contextmanager
def served(endpoint: MCPEndpoint, timeout: float = 30) -> Iterator[ServerConfig]:
    with serve_in_thread(endpoint_app(endpoint)) as port:
        yield ServerConfig(name="long", transport="http", url=f"http://127.0.0.1:{port}/mcp", timeout=timeout)


@pytest.fixture(scope="module")
def fixtures() -> Iterator[tuple[MCPEndpoint, ServerConfig]]:
    endpoint = tasks_endpoint()
    with served(endpoint) as config:
        yield endpoint, config


class Card:
    """What a chat's card is told of one call: the news, in order."""

    def __init__(self) -> None:
        self.news: list[ToolProgress] = []
        self.arrived = asyncio.Event()

    def emit(self, event: Event) -> None:
        if isinstance(event, ToolProgress):
            self.news.append(event)
            self.arrived.set()

    async def until(self, check: Callable[[ToolProgress], bool], timeout: float = 30) -> ToolProgress:
        """The first piece of news that passes `check`, waiting for it."""
        async with asyncio.timeout(timeout):
            while True:
                found = next((news for news in self.news if check(news)), None)
                if found is not None:
                    return found
                self.arrived.clear()
                await self.arrived.wait()


def as_chat_call(card: Card, call_id: str = "call_1") -> None:
    current_call.set(CallScope(call_id, card.emit))


async def test_a_long_call_to_sidespin_runs_as_a_task_whose_progress_reaches_the_card(fixtures) -> None:
    endpoint, config = fixtures
    card = Card()
    async with MCPManager([config], strict=True) as manager:
        as_chat_call(card)
        result = await manager.call_tool("long", "slow_compute", {"seconds": 2, "label": "sums"})
    assert result.content[0].text == "computed sums in 2 s"
    statuses = [news.status for news in card.news]
    assert statuses[0] == "working" and card.news[0].task and card.news[0].task.startswith("task-")
    assert any(news.message == "computing sums (1/2)" for news in card.news)
    assert endpoint.tasks.get(card.news[0].task).status == "completed"


async def test_a_task_that_fails_on_the_server_and_one_whose_tool_fails_say_so(fixtures) -> None:
    _, config = fixtures
    async with MCPManager([config], strict=True) as manager:
        as_chat_call(Card())
        with pytest.raises(ToolFailed, match="failed on the server: the job crashed"):
            await manager.call_tool("long", "protocol_error_job", {})
        failing = await manager.call("long", "failing_job", {})
    assert not failing.ok and "the job failed, as it always does" in failing.error


async def test_cancelling_a_call_cancels_its_task_on_the_server(fixtures) -> None:
    endpoint, config = fixtures
    card = Card()
    async with MCPManager([config], strict=True) as manager:
        as_chat_call(card)
        call = asyncio.create_task(manager.call_tool("long", "slow_compute", {"seconds": 60, "label": "forever"}))
        started = await card.until(lambda news: news.message == "computing forever (1/60)")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        task = endpoint.tasks.get(started.task)
        await asyncio.wait([task.runner], timeout=30)  # it ends a turn of the loop or more after the cancel
        assert task.status == "cancelled" and task.runner.done()


async def test_a_task_that_says_nothing_for_its_timeout_is_cancelled_on_the_server(tmp_path: Path) -> None:
    (tmp_path / "silent_job.py").write_text(SILENT_PLUGIN, encoding="utf-8")
    endpoint = build_mcp_server(ToolRegistry(load_plugins(tmp_path)))
    with served(endpoint, timeout=1.0) as config:
        card = Card()
        async with MCPManager([config], strict=True) as manager:
            as_chat_call(card)
            with pytest.raises(ToolTimeout):
                await manager.call_tool("long", "silent_job", {})
        (task,) = [endpoint.tasks.get(news.task) for news in card.news[:1]]
        assert task.status == "cancelled"


async def test_a_task_that_reports_as_it_goes_outlives_the_timeout_it_restarts() -> None:
    endpoint = tasks_endpoint()
    with served(endpoint, timeout=3.0) as config:
        async with MCPManager([config], strict=True) as manager:
            as_chat_call(Card())
            result = await manager.call_tool("long", "slow_compute", {"seconds": 6, "label": "steadily"})
    assert result.content[0].text == "computed steadily in 6 s"  # twice the timeout, news every second


async def test_a_task_asks_the_person_and_goes_on_with_the_answer(fixtures) -> None:
    from mcp_types import ElicitResult

    _, config = fixtures
    asked: list[str] = []

    async def person(context, params) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    async with MCPManager([config], strict=True, elicitation=person) as manager:
        as_chat_call(Card())
        result = await manager.call_tool("long", "confirm_delete", {"filename": "old.txt"})
    assert asked == ["Delete old.txt?"] and result.content[0].text == "deleted old.txt"


@pytest.fixture
def everything() -> ServerConfig:
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    return everything_stdio()


async def test_a_2025_11_25_task_runs_to_its_result_with_its_stages_on_the_card(everything: ServerConfig) -> None:
    card = Card()
    async with MCPManager([everything], strict=True) as manager:
        as_chat_call(card)
        result = await manager.call_tool("everything", "simulate-research-query", {"topic": "tides"})
    assert "Research Report: tides" in result.content[0].text
    messages = [news.message for news in card.news]
    assert "Gathering sources..." in messages and "Generating report..." in messages


async def test_cancelling_a_2025_11_25_task_cancels_it_on_the_server(everything: ServerConfig) -> None:
    import mcp_types as types

    card = Card()
    async with MCPManager([everything], strict=True) as manager:
        as_chat_call(card)
        call = asyncio.create_task(manager.call_tool("everything", "simulate-research-query", {"topic": "tides"}))
        started = await card.until(lambda news: news.message == "Gathering sources...")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        session = manager.connection("everything").client.session
        state = await session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=started.task)), types.GetTaskResult)
    assert state.status == "cancelled"


async def test_progress_notifications_reach_the_card_and_a_cancel_stops_the_call(everything: ServerConfig) -> None:
    card = Card()
    async with MCPManager([everything], strict=True) as manager:
        as_chat_call(card)
        call = asyncio.create_task(manager.call_tool(
            "everything", "trigger-long-running-operation", {"duration": 30, "steps": 30}))
        first = await card.until(lambda news: news.progress is not None)
        assert first.total == 30 and first.status is None
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        echo = await manager.call_tool("everything", "echo", {"message": "still here"})
    assert echo.content[0].text == "Echo: still here"


async def test_news_comes_to_the_card_a_few_times_a_second_and_the_latest_is_never_lost() -> None:
    from sidespin.mcp.task_watch import CallWatch

    sent: list[dict] = []
    arrived = asyncio.Event()
    extended: list[int] = []

    def emit(news: dict) -> None:
        sent.append(news)
        arrived.set()

    watch = CallWatch(lambda: extended.append(1), emit, {}, every=0.2)
    for step in range(1, 6):
        watch.tell(progress=step, total=5)
    assert sent == [{"progress": 1, "total": 5}] and len(extended) == 5  # every piece moves the deadline
    watch.tell(status="input_required", task="t1")  # a change of status goes at once
    assert sent[-1] == {"status": "input_required", "task": "t1"}
    watch.tell(status="input_required", task="t1", message="still waiting")
    arrived.clear()
    await asyncio.wait_for(arrived.wait(), 5)  # held back, then sent: the card ends on the latest news
    assert sent[-1]["message"] == "still waiting" and len(sent) == 3
    watch.close()
