"""Conformance fixture (tasks-mrtr-*): a task that asks the person to confirm (`input_required`), then answers."""

from sidespin.mcp.served import ask
from sidespin.tools import tool

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}},
           "required": ["confirm"]}


@tool(task="optional", destructive=True)
async def confirm_delete(filename: str) -> str:
    """Delete a file once the person confirms (nothing is deleted: a fixture)."""
    answer = await ask(f"Delete {filename}?", CONFIRM)
    if answer.action == "accept" and (answer.content or {}).get("confirm"):
        return f"deleted {filename}"
    return f"kept {filename}"
