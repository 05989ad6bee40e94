"""Tools of several kinds of server, for the tool-use tests: none is a tool the pipeline was tuned on."""

from __future__ import annotations

from typing import Any

from sidespin.tools import Tool


def tool(name: str, description: str, properties: dict[str, Any], required: list[str] | None = None, *,
         source: str = "mcp:test", read_only: bool = False, places: tuple[str, ...] = (),
         destructive: bool = False) -> Tool:
    """A listed tool that is never run."""
    schema = {"type": "object", "properties": properties, "required": list(required or [])}
    return Tool(name=name, description=description, input_schema=schema, fn=lambda **_: None, source=source,
                read_only=read_only, places=places, destructive=destructive)


TEXT = {"type": "string"}
EVALUATE = tool("evaluate", "Evaluate an arithmetic expression and return its value.", {"expression": TEXT},
                ["expression"], source="mcp:calc", read_only=True)
CONVERT = tool("convert_currency", "Convert an amount of money from one currency to another.",
               {"amount": {"type": "number"}, "from_currency": TEXT, "to_currency": TEXT},
               ["amount", "from_currency", "to_currency"], source="mcp:money", read_only=True)
RUN_SQL = tool("run_sql", "Run a read-only SQL query against the shop's database.", {"sql": TEXT}, ["sql"],
               source="mcp:shop", read_only=True)
ADD_NOTE = tool("add_note", "Store a note under a title.", {"title": TEXT, "body": TEXT}, ["title", "body"],
                source="mcp:notes")
FIND_NOTES = tool("find_notes", "Search the stored notes.", {"query": TEXT, "limit": {"type": "integer"}},
                  ["query"], source="mcp:notes", read_only=True)
OLD_FIND = tool("search", "DEPRECATED: use find_notes instead. Search notes.", {"query": TEXT}, ["query"],
                source="mcp:notes", read_only=True)
FORECAST = tool("forecast", "The weather forecast for a city.",
                {"city": TEXT, "days": {"type": "integer", "description": "how many days ahead"},
                 "units": {"type": "string", "enum": ["metric", "imperial"]}}, ["city"], source="mcp:weather",
                read_only=True)
STATUS = tool("server_status", "Report whether the build server is up.", {}, source="mcp:ops", read_only=True)


def called(call_id: str, name: str, arguments: str, answer: str) -> list[dict]:
    """An answer that called one tool, and what came back."""
    return [{"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": answer}]
