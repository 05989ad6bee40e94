"""The `database` shape: a tool that runs SQL, or one whose server holds tables with their columns (`Tool.holds`,
`customers(id, name, city)`: `sidespin.mcp.holdings`); rules: docs/tool-use-rules.md.

- `database.new_id`: a new record's id is the database's to give: in an `INSERT` of one row, and in an object a tool
  that makes a record is given, a value for an id column (`id`, `uuid`, `key`, or one ending so) that no one said is
  left out ("INSERT INTO products (id, name) VALUES (1, 'Teacup')" writes the name alone).
- `database.table_of_columns`: a statement on one held table (no join) that names columns it lacks (set, compared,
  selected or inserted), where the message does not name that table and exactly one other held table has them all,
  is on that table ("UPDATE orders SET
  stock = 35" is on `products(id, name, price, stock)`)."""

from __future__ import annotations

import re
from typing import Any, Sequence

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import IDS, last_word, mentioned, words_of

__all__ = ["Database", "held_tables", "takes_sql"]

_HELD = re.compile(r"^(\w+)\((.*)\)$")
_SQL_PARAMETER = frozenset({"sql", "query", "statement", "sql_query"})
_SAYS_SQL = re.compile(r"(?i:\bsql\b)|\b(?:SELECT|INSERT|UPDATE|DELETE)\b")
_INSERT = re.compile(r"(?is)^(\s*INSERT\s+INTO\s+[`\"\[]?\w+[`\"\]]?\s*)\(([^()]*)\)(\s*VALUES\s*)\(([^()]*)\)"
                     r"(\s*;?\s*)$")  # one row
_VALUE = re.compile(r"'(?:[^']|'')*'|[^,]+")
_TABLE = re.compile(r"(?i)\b(UPDATE|INTO|FROM)\s+([`\"\[]?)(\w+)([`\"\]]?)")
_COLUMN = re.compile(r"(?i)\b(\w+)\s*(?:=|<>|!=|<=|>=|<|>|\bLIKE\b|\bIN\b|\bIS\b)")
_SELECTED = re.compile(r"(?is)^\s*SELECT\s+(?:DISTINCT\s+)?(.*?)\s+FROM\b")
_MAKES = frozenset("create insert add new make".split())


def held_tables(tools: Sequence[Tool]) -> dict[str, set[str]]:
    """The tables the tools' server holds, with their columns, lower case (`orders(id, total)`: {"orders": {…}})."""
    tables = {}
    for held in (h for t in tools for h in t.holds):
        if (found := _HELD.match(held)) is not None:
            tables[found.group(1).lower()] = {c.strip().lower() for c in found.group(2).split(",") if c.strip()}
    return tables


def takes_sql(tool: Tool) -> str | None:
    """The parameter a tool takes SQL in: a required text named for a query whose notes or tool say SQL; else None."""
    for name in tool.required:
        schema = tool.parameters.get(name)
        if name.lower() in _SQL_PARAMETER and isinstance(schema, dict) and schema.get("type") == "string" and (
                _SAYS_SQL.search(f"{tool.description} {schema.get('description') or ''}")):
            return name
    return None


def _an_id(column: str) -> bool:
    return last_word(column.strip(" `\"[]")) in IDS


def _without_new_id(sql: str, said: str) -> str:
    """An `INSERT` of one row without the id columns whose values `said` does not mention (`database.new_id`)."""
    if (found := _INSERT.match(sql)) is None:
        return sql
    columns = [c.strip() for c in found.group(2).split(",")]
    values = [v.strip() for v in _VALUE.findall(found.group(4))]
    if len(columns) != len(values) or len(columns) < 2:
        return sql
    kept = [(c, v) for c, v in zip(columns, values) if not _an_id(c) or mentioned(_number(v), said, c)]
    if len(kept) == len(columns):
        return sql
    return (f"{found.group(1)}({', '.join(c for c, _ in kept)}){found.group(3)}({', '.join(v for _, v in kept)})"
            f"{found.group(5)}")


def _number(value: str) -> Any:
    text = value.strip("'")
    return int(text) if text.isdigit() else text


def _on_the_right_table(sql: str, tables: dict[str, set[str]], message: str) -> str:
    """`sql` on the one held table having every column it names, where its own table lacks one and `message` does
    not name it (`database.table_of_columns`)."""
    bare = re.sub(r"'(?:[^']|'')*'", "''", sql)  # no column is inside a text
    named = {m.group(3).lower() for m in _TABLE.finditer(bare)}
    if len(named) != 1 or (table := named.pop()) not in tables or re.search(r"(?i)\bJOIN\b|\w\.\w", bare):
        return sql
    if any(w[:5] == table[:5] if len(w) >= 5 else w == table.removesuffix("s") for w in words_of(message)):
        return sql  # the table the person named ("bed" of `beds`)
    columns = {c.lower() for c in _COLUMN.findall(bare) if c.upper() not in ("WHERE", "AND", "OR", "NOT", "SET")}
    if selected := _SELECTED.match(bare):
        columns |= {c.strip().lower() for c in selected.group(1).split(",") if re.fullmatch(r"\s*\w+\s*", c)}
    if insert := _INSERT.match(sql):
        columns |= {c.strip(" `\"[]").lower() for c in insert.group(2).split(",")}
    if not columns or columns <= tables[table]:
        return sql
    having = [t for t, held in tables.items() if columns <= held]
    if len(having) != 1:
        return sql
    return _TABLE.sub(lambda m: f"{m.group(1)} {m.group(2)}{having[0]}{m.group(4)}", sql, count=1)


class Database(Shape):
    id = "database"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(takes_sql(t) for t in tools) or bool(held_tables(tools))

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool, arguments, rules = decision.names[call.name], dict(call.arguments), []
        if (parameter := takes_sql(tool)) is not None and isinstance(sql := arguments.get(parameter), str):
            if (fewer := _without_new_id(sql, decision.said)) != sql:
                rules.append("database.new_id")
            if (moved := _on_the_right_table(fewer, held_tables([tool]), decision.talk.last)) != fewer:
                rules.append("database.table_of_columns")
            arguments[parameter] = moved
        elif _MAKES & set(words_of(tool.name)):
            for name, value in call.arguments.items():
                if isinstance(value, dict) and (dropped := [k for k, v in value.items() if _an_id(k) and not mentioned(
                        v, decision.said, k)]) and len(dropped) < len(value):
                    arguments[name] = {k: v for k, v in value.items() if k not in dropped}
                    rules.append("database.new_id")
        if rules:
            logger.info("TOOLUSE_VALUE_AS_SAID {}: {}", call.name, ", ".join(dict.fromkeys(rules)))
            decision.notes.extend(dict.fromkeys(rules))
        return ToolCall(call.name, arguments, call.id)
