"""What a connected server holds, read from its listing tools (sidespin.mcp.holdings), on a real stdio server."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.mcp.holdings import listing_tools, names_in
from sidespin.tools import Tool
from sidespin.tooluse.offer import offered
from sidespin.tooluse.relevance import rank
from tests.scripted import ScriptedBackend

SHELF = Path(__file__).resolve().parent / "servers" / "shelf_server.py"


def _settings(tmp_path: Path, *flags: str):
    record = tmp_path / "ran.txt"
    (tmp_path / "mcp.json").write_text(json.dumps(
        {"servers": {"shelf": {"command": sys.executable, "args": [str(SHELF), str(record), *flags]}}}))
    return load_settings(data_dir=tmp_path, mcp_config=tmp_path / "mcp.json", tool_mode="xml"), record


def _tool(name: str, **kwargs) -> Tool:
    return Tool(name=name, description="", input_schema=kwargs.pop("schema", {"type": "object"}), fn=None, **kwargs)


def test_a_listing_takes_no_required_argument_is_not_destructive_and_says_list():
    tools = [_tool("list_tables"), _tool("listNotes"), _tool("playlist"), _tool("list_and_burn", destructive=True),
             _tool("list_directory", schema={"type": "object", "properties": {"path": {"type": "string"}},
                                             "required": ["path"]})]
    assert [t.name for t in listing_tools(tools)] == ["list_tables", "listNotes"]


def test_names_are_a_literals_strings_or_a_lists_lines_without_paths_headings_or_sentences():
    assert names_in("[{'name': 'customers'}, {'name': 'orders'}]") == ("customers", "orders")
    assert names_in('{"tables": ["a", "b", "a"]}') == ("a", "b")
    assert names_in("- Wifi [home]\n- Bike service [bike, todo]\n2. Gift ideas") == ("Wifi", "Bike service",
                                                                                    "Gift ideas")
    assert names_in("Allowed directories:\n/tmp/x/files\nNo notes.") == ()
    assert names_in("x" * 41) == () and len(names_in("\n".join(f"n{i}" for i in range(100)))) == 30


def test_a_records_name_is_its_name_or_title_field_and_ids_and_dates_are_not_names():
    records = ('{"server": "tasks", "items": [{"id": "9f1c2b3a4d5e6f708192a3b4c5d6e7f8", "title": "Renew passport", '
               '"status": "open", "due": "2025-04-01T09:00:00+00:00"}, {"id": 7, "list_name": "Groceries"}]}')
    assert names_in(records) == ("tasks", "Renew passport", "Groceries")
    assert names_in('["Q3 report", "2025-04-01", "2025-04-01T09:00:00+00:00", "0a1b2c3d-4e5f-6789-abcd-ef0123456789", '
                    '"42", "Route 66"]') == ("Q3 report", "Route 66")
    assert names_in('[{"id": 3, "text": "Buy stamps", "status": "open", "project": "_global"}]') == ("Buy stamps",)
    assert names_in("family (3) 2025-02-11\nwork (1) 2025-03-18T10:00:00Z") == ("family", "work")


async def test_a_server_listing_what_it_holds_gives_its_tools_those_names_and_reads_them_again_after_a_change(
        tmp_path: Path):
    settings, record = _settings(tmp_path)
    async with Engine.open(settings, backend=ScriptedBackend([]), approval="auto") as engine:
        assert engine.registry.get("add_shelf").holds == ("kitchen", "garage")  # the hostile sentence is no name
        described = offered(engine.registry.get("add_shelf"))["function"]["description"]
        assert described.endswith("It holds kitchen, garage")
        ranked = rank(list(engine.registry), "How many jars are in the garage?", None)
        assert ranked[0].tool.source == "mcp:shelf"  # no word of its tools' own, but what it holds
        await engine.registry.get("add_shelf").invoke({"name": "attic"})
        for _ in range(100):
            if "attic" in engine.registry.get("add_shelf").holds:
                break
            await asyncio.sleep(0.05)
        assert engine.registry.get("list_shelves").holds == ("kitchen", "garage", "attic")
    assert "list_and_burn" not in record.read_text().split()  # a destructive listing is never called


async def test_a_listing_that_would_need_approval_is_not_called_and_one_said_to_only_read_is(tmp_path: Path):
    settings, record = _settings(tmp_path)
    async with Engine.open(settings, backend=ScriptedBackend([]), approval="ask") as engine:
        assert engine.registry.get("add_shelf").holds == ()
    assert not record.exists()  # nothing ran that the page would have asked about
    settings, record = _settings(tmp_path, "read-only")
    async with Engine.open(settings, backend=ScriptedBackend([]), approval="ask") as engine:
        assert engine.registry.get("add_shelf").holds == ("kitchen", "garage")
    assert record.read_text().split() == ["list_shelves"]
