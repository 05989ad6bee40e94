"""Tasks are bounded and their words are only words.

- A client cannot make `/mcp` hold work or memory without bound through tasks: at most `running` tasks
  work at once (one more is refused and nothing starts), and finished tasks beyond `keep` are forgotten.
- A task's id is the only thing that ties it to its caller on a stateless endpoint: it cannot be guessed.
- What a server says of a running call (a task's status message, a progress message) is drawn on the card as
  text, never as markup.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fasthtml.common import to_xml
from mcp import Client
from mcp.shared.exceptions import MCPError

from sidespin.events import ToolProgress
from sidespin.mcp.server import build_lowlevel_server
from sidespin.mcp.task_store import TaskStore
from sidespin.mcp.task_watch import TasksExtension
from sidespin.record import CallRecord
from sidespin.tools import ToolCall, ToolRegistry, load_plugins
from sidespin.web.page import ToolCard

FIXTURES = Path(__file__).resolve().parents[1] / "mcp" / "task_fixtures"


async def start(client: Client, seconds: float) -> str:
    """Start slow_compute as a task; its id."""
    created = await client.session.call_tool("slow_compute", {"seconds": seconds}, allow_claimed=True)
    return created.task_id


async def test_a_client_cannot_start_more_tasks_at_once_than_the_server_runs():
    store = TaskStore(running=2, keep=3)
    server = build_lowlevel_server(ToolRegistry(load_plugins(FIXTURES)), tasks=store)
    async with Client(server, extensions=[TasksExtension()]) as client:
        working = [await start(client, 60), await start(client, 60)]
        with pytest.raises(MCPError, match="2 tasks run here already"):
            await start(client, 60)
        assert len(store) == 2  # the refused call started nothing
        store.get(working[0]).cancel()
        await start(client, 0)  # a place is free again
    await store.close()


async def test_finished_tasks_beyond_the_limit_are_forgotten_oldest_first():
    store = TaskStore(running=2, keep=3)
    server = build_lowlevel_server(ToolRegistry(load_plugins(FIXTURES)), tasks=store)
    async with Client(server, extensions=[TasksExtension()]) as client:
        ids = []
        for _ in range(5):
            ids.append(await start(client, 0))
            await asyncio.wait_for(store.get(ids[-1]).runner, 10)
        assert len(store) <= 3 and store.get(ids[0]) is None and store.get(ids[-1]).status == "completed"
        with pytest.raises(MCPError, match="no task"):
            await client.session.send_request(_get(ids[0]), dict)
    await store.close()


def _get(task_id: str):
    import mcp_types as types

    class GetTask(types.GetTaskRequest):
        name_param = "taskId"

    return GetTask(params=types.GetTaskRequestParams(task_id=task_id))


def test_task_ids_are_not_guessable():
    store = TaskStore(running=200)
    ids = {store.start("t").task_id for _ in range(200)}
    assert len(ids) == 200 and all(len(task_id) >= len("task-") + 22 for task_id in ids)  # 128 random bits


def test_what_a_server_says_of_a_running_call_is_drawn_as_text():
    card = CallRecord(ToolCall("slow", {}), status="running")
    card.progress = ToolProgress(card.call.id, 1, 2, "<img src=x onerror=alert(1)>", "working",
                                 'task-"><script>alert(2)</script>')
    drawn = to_xml(ToolCard(card))
    assert "<img" not in drawn and "<script>" not in drawn
    assert "&lt;img src=x onerror=alert(1)&gt;" in drawn
