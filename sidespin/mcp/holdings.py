"""What a connected server holds, by name: read from its listing tools, for the tool-use decision.

A request for a server's things often shares no word with its tools: "How many customers live in Lyon?" with a
database server whose tools say "Execute a SELECT query". The server's own listing says it holds `customers`.

A listing tool (`listing_tools`) takes no required argument, is not marked destructive, and has "list" among its
name's words (`list_tables`, `list_notes`; at most `MAX_LISTINGS` a server). sidespin calls it with no arguments when
the server becomes ready, and again after a call of one of the server's tools that is not read-only, but only where
the approval policy would run that call without asking (`may_run`: the tool is marked read-only, or the policy is
`auto`; `"tools": {"list_tables": {"approval": "ask"}}` in config.json stops it). Each call is logged
(`MCP_HOLDINGS`); a failure or a timeout leaves the server's holdings as they were.

A server that runs SQL (`query_tool`: a tool with a required text parameter named `sql`, `query` or `statement`
whose own or whose tool's description says SQL or a `SELECT`, that only reads or whose name says no change) is asked
its own schema the same way, under the same approval check (where it also takes a database's path, for each database
file in its folders: `_databases`): SQLite's `sqlite_master`, else the standard `information_schema.columns`, each read
for table names and their columns (`tables_in`: identifiers only, at most `MAX_COLUMNS` a table in `MAX_HELD`
characters, the shortest tables first). Each table is held as
`orders(id, customer_id, total)`, so a request in the person's words ("how many orders came in April?") reaches
the tool that runs the query, and the query is written on the columns the database has. Of the first
`MAX_ROW_TABLES` tables with a column that names their rows (`name`, `title`, `label`), the names of `MAX_ROWS` rows
are read the same way (`SELECT DISTINCT name FROM products LIMIT 8`) and held after the tables, so "What does the
kettle cost?" reaches the database that holds `Kettle`.

`names_in` reads the names a listing gives: the strings of a JSON or Python literal (of its records, the fields
whose key says name, title, subject or text where they have one), else the lines, less their bullets and bracketed
tags; a file's path is its name (`/home/a/plan.xlsx`: `plan.xlsx`); names over `MAX_NAME` characters, other paths,
headings, sentences and identifiers (dates, times, hexadecimal ids, numbers) are left out, and `MAX_NAMES` are kept.
Each of the server's tools carries them (`Tool.holds`): relevance ranks them with the tool's words, and the
decision's prompt says "It holds …" after the description. Nothing else of the result reaches a prompt.
"""

from __future__ import annotations

import ast
import asyncio
import glob
import json
import os
import re
from typing import Any, Awaitable, Callable, Collection, Sequence

from loguru import logger

from sidespin.tools import Tool
from sidespin.tooluse.values import words_of

__all__ = ["listing_tools", "names_in", "query_tool", "tables_in", "read_holdings", "SCHEMA_QUERIES", "MAX_NAMES",
           "MAX_NAME", "MAX_LISTINGS", "MAX_COLUMNS", "MAX_HELD", "TIMEOUT", "MAX_ROW_TABLES", "MAX_ROWS"]

MAX_NAMES = 30  # names kept a server
MAX_NAME = 40  # characters of a name at most
MAX_LISTINGS = 3  # listing tools called a server
MAX_COLUMNS = 16  # columns held a table
MAX_HELD = 160  # characters of a table's columns held
TIMEOUT = 10.0  # seconds a listing may take
MAX_ROW_TABLES, MAX_ROWS = 4, 8  # tables whose rows' names are read, rows a table
SCHEMA_QUERIES = (  # a database's own account of its tables: SQLite's, then the SQL standard's
    "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY "
    "length(sql)",  # the shortest first: a result cut short loses the widest tables
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema NOT IN "
    "('information_schema', 'pg_catalog', 'mysql', 'performance_schema', 'sys') ORDER BY table_name, ordinal_position")
_DATABASE_PARAMETER = re.compile(r"(?i)path|file|db|database")
_DATABASE_FILES = (".db", ".sqlite", ".sqlite3")
MAX_DATABASES = 3  # database files a server's schema is read from
_QUERY_PARAMETER = frozenset({"sql", "query", "statement", "sql_query"})
_CHANGE_NAME = frozenset("write insert update delete create drop alter modify".split())
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,39}$")
_NAMED = r'(?:"([^"]*)"|`([^`]*)`|\[([^\]]*)\]|([^\s"`\[\]()]+))'  # an identifier, quoted or bare
_CREATE = re.compile(rf"(?is)\bCREATE\s+(?:TEMP(?:ORARY)?\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                     rf"(?:{_NAMED}\.)?{_NAMED}\s*(\(|AS\b)?")
_CONSTRAINT = frozenset({"primary", "foreign", "unique", "check", "constraint"})
_READ = 20_000  # characters of a listing read
_SCHEMA_READ = 200_000  # ... of a schema
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_TAGS = re.compile(r"(?:\s*(?:[\[(][^\])]*[\])]|(?<=\s)\d{4}-\d\d-\d\d[\dT:.Z+-]*))+\s*$")  # trailing tags, dates
_NAMING = re.compile(r"(?i)^(?:\w+[_ ])?(?:name|title|label|subject|text)$")  # a record's field that names it
_FILE_PATH = re.compile(r"^\S*[/\\][^/\\\s]+\.[A-Za-z][A-Za-z0-9]{0,4}$")  # "/home/a/plan.xlsx", no space
_IDENTIFIER = re.compile(r"(?i)^(?:[\W\d_]*|[\da-f]{8,}(?:-[\da-f]+)*|\d{4}-\d\d-\d\d(?:\b|T).*)$")


def listing_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The tools of one server that list what it holds: no required argument, not destructive, "list" in the name."""
    return [t for t in tools if not t.required and not t.destructive and "list" in words_of(t.name)][:MAX_LISTINGS]


def names_in(text: str) -> tuple[str, ...]:
    """The names a listing's text gives, in order, each once (see the module docstring)."""
    text = text[:_READ]
    value = _literal(text)
    found = _strings(value) if isinstance(value, (list, dict)) else [
        _TAGS.sub("", _BULLET.sub("", line)).strip() for line in text.splitlines()]
    found = [re.split(r"[/\\]", n)[-1] if _FILE_PATH.match(n) else n for n in found]  # a file's path: its name
    kept = [n for n in found if n and len(n) <= MAX_NAME and "/" not in n and "\\" not in n
            and not n.endswith((":", ".")) and not _IDENTIFIER.match(n)]
    return tuple(dict.fromkeys(kept))[:MAX_NAMES]


def _strings(value: Any, depth: int = 0, listed: bool = False) -> list[str]:
    """The string values in a literal, depth first, to a depth of 8 (keys are not names, but of a record of numbers
    alone); of a record in a list with a field whose key says name, title, subject or text, that field's."""
    if isinstance(value, str):
        return [value.strip()]
    if isinstance(value, dict) and value and not any(isinstance(v, (str, list, dict)) for v in value.values()):
        return [str(key).strip() for key in value]  # things named by their keys, a number each ({"a.xlsx": 5593})
    naming = [v for k, v in value.items() if _NAMING.match(str(k)) and isinstance(v, str)] if listed and isinstance(
        value, dict) else []
    items = naming or (value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
    return [s for item in items for s in _strings(item, depth + 1, isinstance(value, list))] if depth < 8 else []


def query_tool(tools: Sequence[Tool]) -> tuple[Tool, str] | None:
    """The tool of one server that runs SQL and its query parameter (see the module docstring): one that only reads
    first, else the first whose name says no change and that is not marked destructive; None where there is none."""
    found = []
    for tool in tools:
        for name in tool.required:
            schema = tool.parameters.get(name)
            said = f"{tool.description} {schema.get('description', '') if isinstance(schema, dict) else ''}"
            if (name.lower() in _QUERY_PARAMETER and isinstance(schema, dict) and schema.get("type") == "string"
                    and re.search(r"(?i:\bsql)|\bSELECT\b", said) and not tool.destructive
                    and not _CHANGE_NAME & set(words_of(tool.name))):
                found.append((tool, name))
                break
    return next((f for f in found if f[0].read_only or "read" in words_of(f[0].name)), found[0] if found else None)


def _databases(tool: Tool, parameter: str, private: Collection[str] = ()) -> list[dict[str, Any]]:
    """The other arguments a schema query is run with: none where the query is the one required parameter; where
    the others each take a database file (named for a path, a file or a database), each of the database files in
    the tool's folders (`*.db`, `*.sqlite`, `*.sqlite3`, one level down at most; `MAX_DATABASES`) but `private`
    ones (sidespin's own); else none run."""
    others = [name for name in tool.required if name != parameter]
    if not others:
        return [{}]
    if not all(_DATABASE_PARAMETER.search(name) for name in others):
        return []
    found = sorted({f for place in tool.places for pattern in ("*", "*/*") for suffix in _DATABASE_FILES
                    for f in glob.glob(os.path.join(glob.escape(place), pattern + suffix))
                    if os.path.realpath(f) not in private})
    return [{name: path for name in others} for path in found[:MAX_DATABASES]]


def tables_in(text: str) -> tuple[str, ...]:
    """A schema query's result as tables held, `name(column, …)`: from `CREATE TABLE` statements (SQLite's
    `sqlite_master`), else from rows or records of a table's and a column's name (`information_schema`). Names that
    are not plain identifiers are left out."""
    value = _literal(text[:_SCHEMA_READ])
    statements = "\n".join(_texts(value)) if isinstance(value, (list, dict)) else text[:_SCHEMA_READ]
    tables: dict[str, list[str]] = {}
    for found in _CREATE.finditer(statements):
        name = next((g for g in found.groups()[5:9] if g is not None), "")
        if _IDENT.match(name):
            table = found.group(1).upper() == "TABLE" and found.group(10) == "("
            tables[name] = _columns(statements, found.end()) if table else []
    if not tables:
        for row in _rows(value, text[:_SCHEMA_READ]):
            if len(row) >= 2 and _IDENT.match(row[0]) and _IDENT.match(row[1]) and row[0].lower() != "table_name":
                tables.setdefault(row[0], []).append(row[1])
    return tuple(f"{name}({_fitting(columns[:MAX_COLUMNS])})" if columns else name
                 for name, columns in list(tables.items())[:MAX_NAMES])


def _fitting(columns: list[str]) -> str:
    """The columns, comma-separated, as many as fit `MAX_HELD` characters."""
    kept = [c for i, c in enumerate(columns) if len(", ".join(columns[:i + 1])) <= MAX_HELD]
    return ", ".join(kept) + (", …" if len(kept) < len(columns) else "")


def _literal(text: str) -> Any:
    """A result's JSON or Python literal, or None."""
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(text.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _texts(value: Any, depth: int = 0) -> list[str]:
    """Every string in a JSON value, keys aside, to a depth of 8."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in _texts(item, depth + 1)] if depth < 8 else []


def _columns(text: str, start: int) -> list[str]:
    """The column names of a `CREATE TABLE`'s list that opens before `start`: each part's first word, at depth one,
    but constraints."""
    depth, part, parts = 1, "", []
    for char in text[start:start + _SCHEMA_READ]:
        depth += (char == "(") - (char == ")")
        if depth == 0 or (char == "," and depth == 1):
            parts.append(part)
            part = ""
            if depth == 0:
                break
        else:
            part += char
    named = (re.match(_NAMED, p.strip()) for p in parts)
    words = [next(g for g in m.groups() if g is not None) for m in named if m]
    return [w for w in words if _IDENT.match(w) and w.lower() not in _CONSTRAINT]


def _rows(value: Any, text: str) -> list[list[str]]:
    """A result's rows as lists of texts: a literal's records' or lists' values (of the first list a record holds),
    else its lines split at |, tab or a comma."""
    if value is None:
        return [[c.strip(" '\"") for c in re.split(r"[|\t,]", line.strip().strip("|"))] for line in text.splitlines()]
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, list)), [])
    return [[str(v) for v in (r.values() if isinstance(r, dict) else r)]
            for r in (value if isinstance(value, list) else []) if isinstance(r, (dict, list))]


def _row_queries(tables: Sequence[str]) -> list[str]:
    """A query of the names of `MAX_ROWS` rows of each held table with a column that names its rows (`name`,
    `title`, `label`; identifiers only, as `tables_in` keeps them)."""
    queries = []
    for held in tables:
        table, _, columns = held.partition("(")
        naming = next((c for c in ("name", "title", "label") if c in columns.rstrip(")").split(", ")), None)
        if naming and _IDENT.match(table):
            queries.append(f"SELECT DISTINCT {naming} FROM {table} LIMIT {MAX_ROWS}")
    return queries


async def _output(server: str, tool: Tool, arguments: dict[str, Any],
                  call: Callable[[Tool, dict[str, Any]], Awaitable[Any]]) -> str | None:
    """The text of one call made for the holdings, or None (logged) where it failed, hung or gave no text."""
    try:
        result = await asyncio.wait_for(call(tool, arguments), TIMEOUT)
    except Exception as error:  # a listing that fails or hangs leaves the holdings as they were
        logger.warning("MCP_HOLDINGS {} {} failed: {}", server, tool.name, error)
        return None
    if getattr(result, "error", None) is not None or not isinstance(getattr(result, "output", None), str):
        logger.warning("MCP_HOLDINGS {} {} gave no text", server, tool.name)
        return None
    return result.output


async def read_holdings(server: str, tools: Sequence[Tool], may_run: Callable[[Tool], bool],
                        call: Callable[[Tool, dict[str, Any]], Awaitable[Any]],
                        private: Collection[str] = ()) -> tuple[str, ...] | None:
    """The names `server` holds, read by calling (`call(tool, arguments)`, giving a `ToolResult`) each of its
    listing tools with no arguments, and its query tool with `SCHEMA_QUERIES` until one gives tables (never on the
    `private` database files, real paths: sidespin's own), then with `_row_queries` of those tables, where they
    `may_run`; None where none may run or every call failed."""
    names: list[str] = []
    read, answered = False, set()  # the databases a schema query answered for
    calls: list[tuple[Tool, dict[str, Any], str]] = [(t, {}, "") for t in listing_tools(tools)]
    if (querying := query_tool(tools)) is not None:
        tool, parameter = querying
        calls += [(tool, {**base, parameter: q}, json.dumps(base)) for base in _databases(tool, parameter, private)
                  for q in SCHEMA_QUERIES]
    rows: list[tuple[Tool, dict[str, Any]]] = []  # the row names to read after every table: a query a table
    for tool, arguments, database in calls:
        if not may_run(tool):
            logger.info("MCP_HOLDINGS {} {} not read: it would need a person's approval", server, tool.name)
            continue
        if database in answered:
            continue
        if (output := await _output(server, tool, arguments, call)) is not None:
            found = tables_in(output) if arguments else names_in(output)
            read = True
            answered |= {database} if arguments and found else set()
            names.extend(found)
            rows += [(tool, {**arguments, querying[1]: q}) for q in _row_queries(found)] if arguments else []
    for tool, arguments in rows[:MAX_ROW_TABLES]:
        output = await _output(server, tool, arguments, call)
        names.extend(n for n in names_in(output or "") if not _NAMING.match(n))  # a column's name is no row's
    if not read:
        return None
    held = {n.split("(")[0] for n in names if "(" in n}
    holds = tuple(dict.fromkeys(n for n in names if "(" in n or n not in held))[:MAX_NAMES]
    logger.info("MCP_HOLDINGS {} holds {} name(s): {}", server, len(holds), ", ".join(holds)[:300])
    return holds
