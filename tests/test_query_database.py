"""The demo database tool: created on first use, read-only, SELECT only, capped at 200 rows and 50,000 characters."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from sidespin.tools import Tool, ToolCall, ToolRegistry, load_plugins, plugins_dir


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    monkeypatch.setenv("SIDESPIN_DATA_DIR", str(tmp_path))
    return ToolRegistry(load_plugins(plugins_dir()))


async def query(registry: ToolRegistry, sql: str) -> tuple[object, str | None]:
    result = await registry.execute(ToolCall(name="query_database", arguments={"sql": sql}))
    return result.output, result.error


def test_it_is_a_read_only_plugin_with_one_sql_argument(registry: ToolRegistry) -> None:
    item: Tool = registry.get("query_database")
    assert item.read_only and not item.destructive
    assert item.source == "plugin:query_database"
    assert item.input_schema["required"] == ["sql"]
    assert "users" in item.description and "orders" in item.description


async def test_the_database_is_created_on_first_use(registry: ToolRegistry, tmp_path: Path) -> None:
    assert not (tmp_path / "demo.sqlite").exists()
    rows, error = await query(registry, "SELECT id, name, email, city FROM users ORDER BY id")
    assert error is None
    assert (tmp_path / "demo.sqlite").exists()
    assert 5 <= len(rows) <= 10
    assert rows[0] == {"id": 1, "name": "Alice Martin", "email": "alice@example.com", "city": "Paris"}


async def test_the_seed_question_show_me_all_users(registry: ToolRegistry) -> None:
    rows, _ = await query(registry, "SELECT * FROM users")
    assert {"id", "name", "email", "city"} == set(rows[0])


async def test_joins_and_with_queries_work(registry: ToolRegistry) -> None:
    rows, error = await query(
        registry,
        """WITH spent AS (SELECT user_id, SUM(amount) AS total FROM orders GROUP BY user_id)
           SELECT u.name, s.total FROM users u JOIN spent s ON s.user_id = u.id ORDER BY s.total DESC LIMIT 1""",
    )
    assert error is None
    assert rows == [{"name": "Bob Chen", "total": 574.0}]


ONLY_SELECT = "only SELECT statements are allowed"


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("DELETE FROM users", f"DELETE is refused: {ONLY_SELECT}"),
        ("drop table orders", f"changing the schema (CREATE, DROP …) is refused: {ONLY_SELECT}"),
        ("SELECT 1; DELETE FROM users", "only one statement at a time is allowed: send each SELECT in its own call"),
        ("INSERT INTO users VALUES (9, 'x', 'y', 'z')", f"INSERT is refused: {ONLY_SELECT}"),
        ("PRAGMA writable_schema = 1", f"PRAGMA is refused: {ONLY_SELECT}"),
        ("ATTACH DATABASE '/tmp/x.db' AS x", f"ATTACH is refused: {ONLY_SELECT}"),
        ("WITH t AS (SELECT 1) DELETE FROM users", f"DELETE is refused: {ONLY_SELECT}"),
        ("CREATE TEMP TABLE t (x)", f"changing the schema (CREATE, DROP …) is refused: {ONLY_SELECT}"),
        ("UPDATE users SET city = 'Rome'", f"UPDATE is refused: {ONLY_SELECT}"),
        ("   -- nothing\n", "the query has no SELECT in it: send one SELECT statement"),
    ],
)
async def test_anything_but_select_is_refused_with_a_reason(
    registry: ToolRegistry, tmp_path: Path, sql: str, reason: str
) -> None:
    await query(registry, "SELECT 1")  # create the database
    output, error = await query(registry, sql)
    assert output is None
    assert error == reason
    with sqlite3.connect(tmp_path / "demo.sqlite") as db:
        assert db.execute("SELECT count(*) FROM users").fetchone() == (6,)


async def test_a_semicolon_inside_a_string_is_not_a_second_statement(registry: ToolRegistry) -> None:
    rows, error = await query(registry, "SELECT 'a;b' AS text;")
    assert error is None and rows == [{"text": "a;b"}]


async def test_a_statement_inside_a_comment_is_not_a_second_statement(registry: ToolRegistry) -> None:
    rows, error = await query(registry, "SELECT 1 AS one /* ; DELETE FROM users */; -- DROP TABLE orders")
    assert error is None and rows == [{"one": 1}]


async def test_reading_the_schema_is_allowed(registry: ToolRegistry) -> None:
    rows, error = await query(registry, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    assert error is None and rows == [{"name": "orders"}, {"name": "users"}]


async def test_the_connection_itself_is_read_only(registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    # Even if a write slipped past the authorizer, the mode=ro connection would refuse it.
    module = sys.modules["sidespin_plugins.query_database"]
    monkeypatch.setattr(module, "_ALLOWED", module._ALLOWED | set(module._REFUSED_NAMES))
    await query(registry, "SELECT 1")
    _, error = await query(registry, "DELETE FROM users")
    assert error == "SQLite refused the query: attempt to write a readonly database"


async def test_sqlite_errors_are_readable(registry: ToolRegistry) -> None:
    _, error = await query(registry, "SELECT * FROM customers")
    assert error == "SQLite refused the query: no such table: customers"


async def test_results_are_capped_at_200_rows_and_say_so(registry: ToolRegistry) -> None:
    rows, error = await query(
        registry, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 500) SELECT i FROM n"
    )
    assert error is None
    assert len(rows) == 201
    assert rows[199] == {"i": 200}
    assert "more than 200 rows" in rows[200]["truncated"]
    exactly, _ = await query(
        registry, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 200) SELECT i FROM n"
    )
    assert len(exactly) == 200 and "truncated" not in exactly[-1]


async def test_long_values_stop_the_rows_before_200_and_say_so(registry: ToolRegistry) -> None:
    rows, error = await query(
        registry,
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 200)"
        " SELECT hex(zeroblob(20000)) AS x FROM n",
    )
    assert error is None
    assert len(rows) == 3  # two rows of 40,000 characters pass 50,000, then the note
    assert rows[0] == {"x": "0" * 40_000}
    assert "over 50,000 characters; only the first 2 rows are shown, narrow the query" in rows[-1]["truncated"]
