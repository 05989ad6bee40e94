"""Read-only SQL over the demo database, as in the seed's `execute_query` data flow.

`data/demo.sqlite` (or `$SIDESPIN_DATA_DIR/demo.sqlite`) is created on first use with two small
tables, `users(id, name, email, city)` and `orders(id, user_id, item, amount, ordered_at)`.

SQLite itself enforces every rule; the SQL text is never read by hand:
- The connection is read-only (`mode=ro`).
- An authorizer lets a statement select, read, call functions and recurse, nothing else: a
  DELETE, PRAGMA, ATTACH, CREATE TEMP … is refused while it is prepared, with a reason naming it.
  Table-valued functions (`json_each`, `pragma_table_info`) are refused too (SQLite asks to write
  the schema for them); reading `sqlite_master` is allowed.
- Only the functions of `FUNCTIONS` may be called (SQL's own: text, numbers, dates, JSON, aggregates,
  windows). Any other is refused by name: `fts3_tokenizer` hands out a native pointer (an address that
  defeats ASLR) and its two-argument form sets one; `fts5`, `rtreenode`, `load_extension`,
  `sqlite_compileoption_get` … are no business of a SELECT over the demo tables. Nor is `printf` (`format`):
  `printf('%.*c', 2000000000, 'x')` is one instruction that held its thread 12 s, out of the progress
  handler's reach.
- One statement per call: sqlite3 refuses a second one.
- No string or blob over `MAX_VALUE_BYTES` (SQLITE_LIMIT_LENGTH); at most `MAX_ROWS` rows, and no
  more once the rows hold `MAX_RESULT_CHARS` characters; a last item says when rows were left out.
- A progress handler watches the call's `Cancellation`, so a runaway query stops within
  milliseconds of its timeout (or the user stopping the turn) and frees its thread.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from loguru import logger

from sidespin.errors import ToolFailed
from sidespin.tools import Cancellation, current_cancellation, tool

MAX_ROWS = 200
MAX_VALUE_BYTES = 1_000_000
# below the registry's cut of what the model reads (100,000 characters), so rows arrive whole, with a note
MAX_RESULT_CHARS = 50_000
_PROGRESS_STEPS = 1_000  # SQLite VM instructions between two looks at the Cancellation

_USERS = [
    (1, "Alice Martin", "alice@example.com", "Paris"),
    (2, "Bob Chen", "bob@example.com", "Boston"),
    (3, "Chloé Dubois", "chloe@example.com", "Lyon"),
    (4, "Dmitri Ivanov", "dmitri@example.com", "Berlin"),
    (5, "Emma Okafor", "emma@example.com", "Lagos"),
    (6, "Farid Haddad", "farid@example.com", "Boston"),
]
_ORDERS = [
    (1, 1, "espresso machine", 249.00, "2024-03-02"),
    (2, 1, "coffee beans", 18.50, "2024-03-09"),
    (3, 2, "standing desk", 499.00, "2024-04-11"),
    (4, 3, "bicycle helmet", 59.90, "2024-04-20"),
    (5, 4, "mechanical keyboard", 129.00, "2024-05-05"),
    (6, 5, "running shoes", 89.99, "2024-05-17"),
    (7, 2, "monitor arm", 75.00, "2024-06-01"),
    (8, 6, "headphones", 199.00, "2024-06-14"),
]
_SCHEMA = """
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    item TEXT NOT NULL,
    amount REAL NOT NULL,
    ordered_at TEXT NOT NULL
);
"""
_ALLOWED = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE})
_REFUSED_NAMES = {
    getattr(sqlite3, f"SQLITE_{action}"): action.replace("_", " ")
    for action in (
        "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER",
        "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "CREATE_VTABLE", "DELETE", "DROP_INDEX",
        "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW",
        "DROP_TRIGGER", "DROP_VIEW", "DROP_VTABLE", "INSERT", "PRAGMA", "TRANSACTION", "UPDATE",
        "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE", "SAVEPOINT",
    )
}
# the functions a query may call (SQLite's core, date, math, JSON, aggregate and window functions, and the JSON
# operators -> and ->>): nothing that reads or hands out memory, loads code, describes the build or runs unbounded
FUNCTIONS = frozenset("""
    abs char coalesce concat concat_ws glob hex ifnull iif instr length like likelihood likely lower ltrim
    max min nullif octet_length quote random randomblob replace round rtrim sign soundex substr substring
    trim typeof unhex unicode unlikely upper zeroblob
    date time datetime julianday unixepoch strftime timediff
    avg count group_concat string_agg sum total
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow
    power radians sin sinh sqrt tan tanh trunc
    json json_array json_array_length json_error_position json_extract json_insert json_object json_patch
    json_pretty json_quote json_remove json_replace json_set json_type json_valid json_group_array
    json_group_object -> ->>
""".split())
# CREATE, DROP … ask first to write these, and stop at the first refusal
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"})


def database_path() -> Path:
    """`demo.sqlite` in SIDESPIN_DATA_DIR, or in the repository's data/ folder."""
    data_dir = os.environ.get("SIDESPIN_DATA_DIR")
    base = Path(data_dir) if data_dir else Path(__file__).resolve().parent.parent / "data"
    return (base / "demo.sqlite").resolve()


def _create(path: Path) -> None:
    """Build the demo database in a temporary file, then move it into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # one name per thread: calls running side by side may each build it, and the last move wins
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    partial.unlink(missing_ok=True)
    db = sqlite3.connect(partial)
    try:
        with db:  # one transaction, committed on success
            db.executescript(_SCHEMA)
            db.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", _USERS)
            db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", _ORDERS)
    finally:
        db.close()
    os.replace(partial, path)
    logger.info("DEMO_DATABASE_CREATED {}", path)


class _ReadOnly:
    """SQLite's authorizer for one query: it allows reading and remembers the first thing it refused."""

    def __init__(self) -> None:
        self.refused: str | None = None

    def __call__(self, action: int, arg1: str | None, arg2: str | None, database: str | None,
                 trigger: str | None) -> int:
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in FUNCTIONS:
            if self.refused is None:
                self.refused = f"the function {arg2}()"
            logger.warning("QUERY_FUNCTION_REFUSED {}", arg2)
            return sqlite3.SQLITE_DENY
        if action in _ALLOWED:
            return sqlite3.SQLITE_OK
        if self.refused is None and arg1 in _SCHEMA_TABLES:
            self.refused = "changing the schema (CREATE, DROP …)"
        elif self.refused is None:
            self.refused = _REFUSED_NAMES.get(action, f"SQLite action {action}")
        return sqlite3.SQLITE_DENY


def _connect(path: Path, guard: _ReadOnly, cancellation: Cancellation) -> sqlite3.Connection:
    """A read-only connection that refuses anything but reading, long values and cancelled calls."""
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    db.set_authorizer(guard)
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    # a true answer makes SQLite interrupt the running statement
    db.set_progress_handler(lambda: cancellation.cancelled, _PROGRESS_STEPS)
    db.row_factory = sqlite3.Row
    return db


def _reason(error: sqlite3.Error, guard: _ReadOnly, cancellation: Cancellation) -> str:
    """What the model reads when SQLite refused or stopped the query."""
    if guard.refused is not None and guard.refused.startswith("the function "):
        return f"{guard.refused} is refused: a query may call SQL's own functions of text, numbers, dates and JSON"
    if guard.refused is not None:
        return f"{guard.refused} is refused: only SELECT statements are allowed"
    # sqlite3 gives this case no error code of its own, only its message
    if isinstance(error, sqlite3.ProgrammingError) and "one statement at a time" in str(error):
        return "only one statement at a time is allowed: send each SELECT in its own call"
    if cancellation.cancelled:
        return "the query was stopped before it finished: the call timed out or was cancelled"
    if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_TOOBIG:
        return f"a value grew over {MAX_VALUE_BYTES:,} bytes (SQLite: {error}); select less"
    return f"SQLite refused the query: {error}"


def _rows(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    """The rows, cut at MAX_ROWS or once they hold MAX_RESULT_CHARS characters; a last item says so."""
    rows: list[dict[str, Any]] = []
    chars = 0
    for row in cursor:
        if len(rows) == MAX_ROWS:
            why = f"more than {MAX_ROWS} rows; only the first {MAX_ROWS} are shown, narrow the query"
            return rows + [{"truncated": why}]
        if chars >= MAX_RESULT_CHARS:
            why = f"over {MAX_RESULT_CHARS:,} characters; only the first {len(rows)} rows are shown, narrow the query"
            return rows + [{"truncated": why}]
        rows.append(dict(row))
        chars += sum(len(value) if isinstance(value, (str, bytes)) else 8 for value in row)
    return rows


@tool(read_only=True)
def query_database(sql: str) -> list[dict[str, Any]]:
    """Run a read-only SQL SELECT on the demo SQLite database and return the rows.

    Tables: users(id, name, email, city) and orders(id, user_id, item, amount, ordered_at).
    At most 200 rows come back, fewer when their values are long; a last item says so when rows were left out.

    Args:
        sql: one SELECT statement (or WITH ... SELECT), e.g. "SELECT name, city FROM users"
    """
    path = database_path()
    if not path.exists():
        _create(path)
    guard, cancellation = _ReadOnly(), current_cancellation()
    db = _connect(path, guard, cancellation)
    try:
        cursor = db.execute(sql)
        if cursor.description is None:  # nothing but comments or blanks, or a statement with no rows
            raise ToolFailed("the query has no SELECT in it: send one SELECT statement")
        return _rows(cursor)
    except sqlite3.Error as error:
        raise ToolFailed(_reason(error, guard, cancellation)) from None
    finally:
        db.close()
