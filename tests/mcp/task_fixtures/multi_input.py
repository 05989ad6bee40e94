"""Conformance fixture (tasks-mrtr-input): a task that asks two questions at once; it waits for both."""

import asyncio

from sidespin.mcp.served import ask
from sidespin.tools import tool

NAME = {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}}
CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Go on?"}}}


@tool(task="optional")
async def multi_input() -> str:
    """Ask for a name and a confirmation at the same time."""
    name, confirm = await asyncio.gather(ask("Your name?", NAME), ask("Go on?", CONFIRM))
    return f"name: {name.action}, confirm: {confirm.action}"
