"""Conformance fixture (tasks-*): a quick tool that never becomes a task."""

from sidespin.tools import tool


@tool(read_only=True)
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
