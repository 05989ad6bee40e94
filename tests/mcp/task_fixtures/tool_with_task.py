"""Conformance fixture (tasks-mrtr-composition): asks the person's name on the request itself (SEP-2322), then
goes on as a task whose result says the name."""

import asyncio

from sidespin.mcp.served import as_task, ask
from sidespin.tools import tool

NAME = {"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}, "required": ["name"]}


@tool(task="required", asks_first=True)
async def test_tool_with_task() -> str:
    """Ask the person's name, then greet them after a while."""
    answer = await ask("What is your name?", NAME)
    name = (answer.content or {}).get("name", "stranger") if answer.action == "accept" else "stranger"
    await as_task()
    await asyncio.sleep(0.5)
    return f"Hello, {name}!"
