"""A result that reports a failure in its content without `isError` is a failure: the model reads it as one (so it
may mend the call), the tool card shows it failed, and an answer saying the change was made gets a notice."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import mcp_types as types

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.events import ErrorNotice, ToolFinished
from sidespin.honesty import ACTION_NOTICE
from sidespin.mcp import render_result
from sidespin.protocol import format_block
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.tools import FAILED, ToolCall
from tests.scripted import ScriptedBackend

LEDGER = Path(__file__).resolve().parent / "servers" / "ledger_server.py"


def rendered(text: str = "", structured: object = None) -> object:
    content = [types.TextContent(text=text)] if text else []
    return render_result(types.CallToolResult(content=content, structured_content=structured),
                         ToolCall(name="t", arguments={}))


def test_an_object_that_only_reports_a_failure_is_a_failure_in_each_way_servers_write_one() -> None:
    for text in ('{"error": "no such table: pupils"}', '{"success": false, "message": "Row 7 is locked."}',
                 '{"ok": false, "code": 409}', '{"status": "error", "message": "quota exceeded"}',
                 '{"errors": [{"message": "field id is required"}]}'):
        result = rendered(text)
        assert not result.ok and result.kind == "failed", text
        assert result.text() == FAILED + text  # the model reads it as every failure, whole
    assert not rendered(structured={"error": "disk full"}).ok  # structured content alone


def test_an_object_with_anything_beside_its_failure_fields_or_an_empty_error_is_a_result() -> None:
    for text in ('{"id": 3, "name": "Ada", "error": "late fee"}',  # a row with a column named error
                 '{"error": null, "rows": [[1]]}', '{"error": ""}', '{"success": true, "message": "Saved."}',
                 '{"status": "ok"}', '{"message": "3 rows"}', '[{"error": "x"}]',
                 '{"status": "failed", "message": "Build 42 failed at step 3."}',  # a job's status, not the call's
                 'Error: the log says the job failed'):  # a text (a file's content may begin so)
        assert rendered(text).ok, text


async def test_a_sql_server_that_answers_a_failed_insert_without_is_error_is_read_as_failed(tmp_path: Path) -> None:
    """A server that puts the database's error in a JSON object and says nothing else: the answer that claims the
    student was added is marked, and the model's next round reads the error as one."""
    database, record = tmp_path / "school.sqlite", tmp_path / "sql.txt"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE pupils (id INTEGER PRIMARY KEY, name TEXT NOT NULL, instrument TEXT)")
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"school": {
        "command": sys.executable, "args": [str(LEDGER), str(database), str(record), "quiet"]}}}))
    settings = load_settings(data_dir=tmp_path, mcp_config=tmp_path / "mcp.json", tool_mode="xml")
    insert = "INSERT INTO pupils (name, instrument, rate) VALUES ('Leo Martin', 'trumpet', 15)"
    backend = ScriptedBackend([[format_block(ToolCall("run_sql", {"sql": insert}))],
                               ["Leo Martin has been added to the pupils table."]])
    async with Engine.open(settings, backend=ScriptedBackend([]), approval="auto") as engine:
        events = [e async for e in chat_with_llm(Conversation(), "Add Leo Martin, trumpet, to the pupils.",
                                                 backend=backend, registry=engine.registry,
                                                 options=RallyOptions(mode="xml"))]
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == 1 and not finished[0].ok
    assert "table pupils has no column named rate" in finished[0].error
    read = json.dumps(backend.calls[1], ensure_ascii=False)
    assert FAILED + '{\\"error\\": \\"Database error: table pupils has no column named rate' in read
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert ACTION_NOTICE.format(claim="Leo Martin has been added to the pupils table.") in notices
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT count(*) FROM pupils").fetchone() == (0,)  # nothing was added, as the notice says
