"""A stdio MCP server that runs SQL on an SQLite file, for reading a database's schema (sidespin.mcp.holdings).

    python ledger_server.py DATABASE RECORD [standard] [by-path] [quiet]

`run_sql(sql)` runs one statement and gives its rows as JSON records (with `by-path`, `query_file(db_path,
sql_query)` on the database file it is given); `add_row(table, values)` inserts. With `standard`, it answers like
a server whose database has no `sqlite_master`: a query naming it fails, and one of `information_schema.columns`
gives the columns as a Markdown table. With `quiet`, a statement that fails is answered as some servers do, without
`isError`: `{"error": "Database error: ..."}`. Each SQL text run is appended to RECORD.
"""

from __future__ import annotations

import json
import sqlite3
import sys

from mcp.server.mcpserver import MCPServer

DATABASE, RECORD = sys.argv[1], sys.argv[2]
STANDARD, QUIET = "standard" in sys.argv[3:], "quiet" in sys.argv[3:]
server = MCPServer("ledger")


def run_sql(sql: str, database: str = DATABASE) -> str:
    """Run a SQL statement on the ledger and return its rows."""
    with open(RECORD, "a", encoding="utf-8") as record:
        record.write(sql.replace("\n", " ") + "\n")
    with sqlite3.connect(database) as db:
        if STANDARD and "sqlite_master" in sql:
            raise ValueError("relation sqlite_master does not exist")
        if STANDARD and "information_schema" in sql:
            rows = [(t, c[1]) for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    for c in db.execute(f'PRAGMA table_info("{t}")')]
            return "| table_name | column_name |\n|---|---|\n" + "\n".join(f"| {t} | {c} |" for t, c in rows)
        try:
            cursor = db.execute(sql)
        except sqlite3.Error as error:
            if QUIET:
                return json.dumps({"error": f"Database error: {error}"})
            raise
        names = [d[0] for d in cursor.description or []]
        return json.dumps([dict(zip(names, row)) for row in cursor.fetchall()])


def query_file(db_path: str, sql_query: str) -> str:
    """Execute a SQL query on the SQLite database file at db_path."""
    return run_sql(sql_query, db_path)


server.tool()(query_file if "by-path" in sys.argv[3:] else run_sql)


@server.tool()
def add_row(table: str, values: list[str]) -> str:
    """Add a row to a table of the ledger."""
    with sqlite3.connect(DATABASE) as db:
        db.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" for _ in values)})', values)
    return "added"


if __name__ == "__main__":
    server.run("stdio")
