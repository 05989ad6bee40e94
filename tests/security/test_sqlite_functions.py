"""7 (round three). `query_database` hands out no native pointer and reads no memory: only SQL's own functions of
text, numbers, dates and JSON may be called. `fts3_tokenizer('simple')` answered the tokenizer's address (an ASLR
leak), and its two-argument form, which sets a pointer, was accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidespin.tools import ToolCall, ToolRegistry, load_plugins, plugins_dir


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    monkeypatch.setenv("SIDESPIN_DATA_DIR", str(tmp_path))
    return ToolRegistry(load_plugins(plugins_dir()))


async def query(registry: ToolRegistry, sql: str) -> tuple[object, str | None]:
    result = await registry.execute(ToolCall(name="query_database", arguments={"sql": sql}))
    return result.output, result.error


@pytest.mark.parametrize("sql, function", [
    ("SELECT fts3_tokenizer('simple')", "fts3_tokenizer"),
    ("SELECT hex(fts3_tokenizer('porter')) AS address", "fts3_tokenizer"),
    ("SELECT FTS3_TOKENIZER('simple')", "fts3_tokenizer"),
    ("SELECT fts3_tokenizer('simple', X'4141414141414141')", "fts3_tokenizer"),  # sets a pointer
    ("WITH t AS (SELECT fts3_tokenizer('unicode61') AS p) SELECT p FROM t", "fts3_tokenizer"),
    ("SELECT name FROM users WHERE fts3_tokenizer('simple') IS NOT NULL", "fts3_tokenizer"),
    ("SELECT fts5(NULL)", "fts5"),  # hands out the FTS5 API's pointer to a caller that binds one
    ("SELECT rtreenode(2, X'000100000000000000000000')", "rtreenode"),  # reads a node blob as memory
    ("SELECT load_extension('/tmp/evil.so')", "load_extension"),  # loads native code
    ("SELECT sqlite_compileoption_get(0)", "sqlite_compileoption_get"),
    ("SELECT length(printf('%.*c', 2000000000, 'x'))", "printf"),  # one instruction of 12 s, past the handler
    ("SELECT format('%.*c', 2000000000, 'x')", "format"),
])
async def test_a_function_that_hands_out_or_reads_memory_is_refused_by_name(registry, sql, function) -> None:
    rows, error = await query(registry, sql)
    assert rows is None
    assert error is not None and f"the function {function}() is refused" in error


async def test_no_answer_carries_a_native_pointer(registry) -> None:
    for sql in ("SELECT fts3_tokenizer('simple') AS p", "SELECT quote(fts3_tokenizer('simple')) AS p"):
        rows, error = await query(registry, sql)
        assert rows is None and error is not None


@pytest.mark.parametrize("sql", ["SELECT zeroblob(2000000000)", "SELECT randomblob(2000000000)",
                                 "SELECT replace(hex(zeroblob(400000)), '0', '00')"])
async def test_a_value_that_would_fill_memory_is_refused(registry, sql) -> None:
    rows, error = await query(registry, sql)
    assert rows is None and error is not None and "over 1,000,000 bytes" in error


async def test_sql_s_own_functions_still_work(registry) -> None:
    rows, error = await query(registry, """
        SELECT lower(name) AS name, count(*) OVER () AS people, strftime('%Y', '2024-03-02') AS year,
               json_extract('{"a": 2}', '$.a') + ('{"b": 3}' ->> 'b') AS five, round(abs(-2.5)) AS three,
               coalesce(NULL, upper(substr(city, 1, 3))) AS city
        FROM users ORDER BY id LIMIT 1""")
    assert error is None
    assert rows == [{"name": "alice martin", "people": 6, "year": "2024", "five": 5, "three": 3.0, "city": "PAR"}]
    rows, error = await query(registry, "SELECT city, group_concat(name, ', ') AS names, sum(1) AS n FROM users "
                                        "GROUP BY city HAVING n > 1")
    assert error is None and rows == [{"city": "Boston", "names": "Bob Chen, Farid Haddad", "n": 2}]
