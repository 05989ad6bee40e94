"""Read-only SQL over the demo database, as in the seed's `execute_query` data flow.

`data/demo.sqlite` (or `$SIDESPIN_DATA_DIR/demo.sqlite`) is created on first use with two small
tables, `users(id, name, email, city)` and `orders(id, user_id, item, amount, ordered_at)`.
Queries run on a read-only connection (`mode=ro`), and anything but one SELECT (or WITH … SELECT)
is refused with a reason before it reaches SQLite.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from loguru import logger

from sidespin.errors import ToolFailed
from sidespin.tools import tool

MAX_ROWS = 200

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
_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_STRING = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")


def database_path() -> Path:
    """`demo.sqlite` in SIDESPIN_DATA_DIR, or in the repository's data/ folder."""
    data_dir = os.environ.get("SIDESPIN_DATA_DIR")
    base = Path(data_dir) if data_dir else Path(__file__).resolve().parent.parent / "data"
    return (base / "demo.sqlite").resolve()


def _create(path: Path) -> None:
    """Build the demo database in a temporary file, then move it into place in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
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


def _refusal(sql: str) -> str | None:
    """Why a statement may not run here, or None for a single SELECT / WITH … SELECT."""
    bare = _COMMENT.sub(" ", _STRING.sub("''", sql)).strip().rstrip(";").strip()
    if not bare:
        return "the query is empty"
    if ";" in bare:
        return "only one statement at a time"
    first = bare.split(None, 1)[0].upper()
    if first not in ("SELECT", "WITH"):
        return f"{first} is not a SELECT"
    if first == "WITH" and not re.search(r"\)\s*SELECT\b", bare, re.IGNORECASE):
        return "a WITH clause must end in a SELECT"
    return None


@tool(read_only=True)
def query_database(sql: str) -> list[dict[str, Any]]:
    """Run a read-only SQL SELECT on the demo SQLite database and return the rows.

    Tables: users(id, name, email, city) and orders(id, user_id, item, amount, ordered_at).
    At most 200 rows come back; a last item says so when there were more.

    Args:
        sql: one SELECT statement (or WITH ... SELECT), e.g. "SELECT name, city FROM users"
    """
    reason = _refusal(sql)
    if reason is not None:
        raise ToolFailed(f"only SELECT statements are allowed: {reason}")
    path = database_path()
    if not path.exists():
        _create(path)
    db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        db.row_factory = sqlite3.Row
        cursor = db.execute(sql)
        rows = cursor.fetchmany(MAX_ROWS + 1)
    except sqlite3.Error as error:
        raise ToolFailed(f"SQLite refused the query: {error}") from None
    finally:
        db.close()
    result: list[dict[str, Any]] = [dict(row) for row in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        result.append(
            {"truncated": f"more than {MAX_ROWS} rows; only the first {MAX_ROWS} are shown, narrow the query"}
        )
    return result
