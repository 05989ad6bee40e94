"""The `database` shape: a tool that runs SQL, or one whose server holds tables with their columns (`Tool.holds`,
`customers(id, name, city)`: `sidespin.mcp.holdings`); rules: docs/tool-use-rules.md.

- `database.new_id`: a new record's id is the database's to give: in an `INSERT` of one row, and in an object a tool
  that makes a record is given, a value for an id column (`id`, `uuid`, `key`, or one ending so) that no one said is
  left out ("INSERT INTO products (id, name) VALUES (1, 'Teacup')" writes the name alone).
- `database.table_of_columns`: a statement on one held table (no join) that names columns it lacks (set, compared,
  selected or inserted), where the message does not name that table and exactly one other held table has them all,
  is on that table ("UPDATE orders SET stock = 35" is on `products(id, name, price, stock)`).
- `database.by_name`: a row looked up by an id no one said (`WHERE id = 101`, a condition `{"id": 1}`), where the
  message gives one name (quoted, or in capitals: "Mug", "Ana Lima") the statement does not hold yet, is looked up by
  that name in its table's naming column (`name`, `title`, `label`); an id of another held table (`customer_id`)
  by a sub-query of that table ("WHERE customer_id = (SELECT id FROM customers WHERE name = 'Ana Lima')").
- `database.rows_not_tables`: a tool that makes, changes or removes a table or a column (a verb of a change and
  "table", "column" or "schema" in its name: `create_table`, `drop_table`, `alter_table`) is not named for a message
  that speaks of no table, column or schema: adding a product is a row, not a table.
- `database.any_case`: a column compared after `WHERE` with a text written in lower case is compared in lower case
  ("WHERE name = 'kettle'" is "WHERE lower(name) = 'kettle'": the person's case is not the database's)."""

from __future__ import annotations

import re
from typing import Any, Sequence

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import (IDS, QUOTED, READ_VERBS, STOP, asks_change, last_word, mentioned, said_in,
                                     words_of)

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
_NAMING = ("name", "title", "label")  # a column that names a row, in the order looked for
_CONDITION = frozenset("condition where filter criteria match".split())  # a parameter's last word that selects rows
_CAPITALISED = re.compile(r"(?<![\w'])([A-ZÀ-Þ][\w'-]*(?: [A-ZÀ-Þ][\w'-]*){0,2})")
_SCHEMA_WORDS = frozenset("table tables column columns schema".split())
_STRUCTURE = frozenset("schema schemas describe structure info tables columns".split())  # a tool telling the shape
_SCHEMA_CHANGE = frozenset("create drop alter delete remove rename add truncate".split())
_SCHEMA_SAID = re.compile(r"(?i)\b(?:tables?|columns?|schemas?|tableaux?|colonnes?|tabellen?|spalten?|tablas?|"
                          r"columnas?|tabelle|colonne)\b")
_PRONOUN = re.compile(r"(?i)\b(?:it|its|that|this|them|their|her|his|him|those|these|lui|leur|ihn|ihm|ihr|sein|"
                      r"seine|lo|los|las|su|sus|eso|esa|ese)\b")  # a thing spoken of as before (5 languages)
_BY_ID = re.compile(r"(?i)\b(\w+)\s*=\s*(\d+)\b")
_WHERE = re.compile(r"(?is)^(\s*(?:SELECT|UPDATE|DELETE)\b(?:[^()']|\([^()']*\)|'(?:[^']|'')*')*?\bWHERE\s+)([^();]*?)"
                    r"(\s*(?:\bLIMIT\s+\d+\s*)?;?\s*)$")  # one table's statement and its condition, no sub-query
_COMPARED = re.compile(r"(?i)\b(\w+)\s*(?:=|<>|!=|<=|>=|<|>|\bLIKE\b)\s*('(?:[^']|'')*'|[\w.]+)")


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


def _on_the_right_table(sql: str, tables: dict[str, set[str]], message: str, said: str) -> str:
    """`sql` on the one held table having every column it names (but an id compared with a number no one `said`: a
    made-up look-up), where its own table lacks one and `message` does not name it (`database.table_of_columns`)."""
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
    columns -= {c.lower() for c, v in _BY_ID.findall(bare) if _an_id(c) and not mentioned(int(v), said, c)}
    if not columns or columns <= tables[table]:
        return sql
    having = [t for t, held in tables.items() if columns <= held]
    if len(having) != 1:
        return sql
    return _TABLE.sub(lambda m: f"{m.group(1)} {m.group(2)}{having[0]}{m.group(4)}", sql, count=1)


def _names_given(message: str, written: str, held: Sequence[str] = ()) -> list[str]:
    """The names `message` gives that `written` does not hold: its quoted texts, else the rows' names its server
    holds that it says in any case ("the tea tin": `Tea tin`), else its runs of one to three capitalised words (a
    sentence's first word only within two or more and no verb of a request or function word: "Dev Patel", not "Set
    Mug"; no word in capitals alone: "SQL")."""
    quoted = [next(g for g in found.groups() if g) for found in QUOTED.finditer(message)]
    if quoted:
        return [q for q in quoted if q.lower() not in written.lower()]
    if said := _rows_said(message, held):
        return [h for h in said if h.lower() not in written.lower()]
    names = []
    for found in _CAPITALISED.finditer(message):
        words = [w.removesuffix("'s") for w in found.group(1).split() if not w.isupper()]
        if words and re.search(r"(?:^|[.!?¿¡]\s*)$", message[:found.start()]) and (len(words) == 1 or asks_change(
                words[0]) or words[0].lower() in STOP | READ_VERBS):  # a sentence's first word, as a verb or alone
            words = words[1:]
        if (name := " ".join(words)) and name.lower() not in written.lower():
            names.append(name)
    return list(dict.fromkeys(names))


def _rows_said(message: str, rows: Sequence[str]) -> list[str]:
    """The rows' names held that `message` says, in any case, as whole words."""
    return [h for h in rows if re.search(rf"(?i)(?<!\w){re.escape(h)}(?!\w)", message)]


def _naming_message(last: str, previous: str, held: Sequence[str]) -> str:
    """The message that names the row a call is about: the last; for a follow-up that gives no name and speaks of
    its thing by a pronoun ("Raise its price by 5.", "Lösche ihn."), the one before."""
    return previous if previous and _PRONOUN.search(last) and not _names_given(last, "", held) else last


def _naming(columns: set[str]) -> str | None:
    return next((c for c in _NAMING if c in columns), None)


def _by_name(sql: str, tables: dict[str, set[str]], message: str, said: str, told: str, held: Sequence[str]) -> str:
    """`sql` with its first comparison of an id no one said with a number made a look-up by the one name the message
    gives (`database.by_name`); a statement (no sub-query, no join) whose `WHERE` compares only values the person did
    not say (`told`: a listing's, made up) has that `WHERE` made the look-up, by the table's naming column or, where it
    has none, by each of its `…_id` columns whose table has one (`customer_id = (SELECT …) OR product_id = …`: the
    name is the row of whichever table holds it)."""
    named = {m.group(3).lower() for m in _TABLE.finditer(sql)}
    if len(named) != 1 or (table := named.pop()) not in tables or len(names := _names_given(message, sql, held)) != 1:
        return sql
    text = names[0].replace("'", "''")
    where = _WHERE.match(sql)
    plain = where and not re.search(r"(?i)\b(?:JOIN|ORDER|GROUP|HAVING|UNION)\b", sql)
    compared = _COMPARED.findall(where.group(2)) if plain else []
    if compared and all(not mentioned(_number(v), told, c) for c, v in compared):
        keys = [c for c in sorted(tables[table]) if _an_id(c) and _looked_up(c, tables)]
        naming = _naming(tables[table])
        looked_up = f"{naming} = '{text}'" if naming else " OR ".join(str(_looked_up(k, tables, text)) for k in keys)
        return f"{where.group(1)}{looked_up}{where.group(3)}" if looked_up else sql
    for found in _BY_ID.finditer(sql):
        column, value = found.group(1), int(found.group(2))
        if not _an_id(column) or mentioned(value, said, column) or column.lower() not in tables[table]:
            continue
        looked_up = _looked_up(column, tables, text)
        if looked_up is None and not column.lower().removesuffix("id").rstrip("_") and (
                naming := _naming(tables[table])):
            looked_up = f"{naming} = '{text}'"
        if looked_up is not None:
            return sql[:found.start()] + looked_up + sql[found.end():]
    return sql


def _looked_up(column: str, tables: dict[str, set[str]], text: str = "") -> str | None:
    """`column = (SELECT id FROM <its table> WHERE <naming column> = 'text')` for an `…_id` column whose table (by
    its base: `customer_id` of `customers`) has a naming column; None where there is none."""
    base = column.lower().removesuffix("_id").removesuffix("id").rstrip("_")
    other = next((t for t in tables if base and t in (base, f"{base}s", f"{base}es")), None)
    naming = _naming(tables[other]) if other else None
    return f"{column} = (SELECT id FROM {other} WHERE {naming} = '{text}')" if naming else None


def _conditions_by_name(arguments: dict[str, Any], tables: dict[str, set[str]], message: str, said: str,
                        held: Sequence[str]) -> dict[str, Any]:
    """`arguments` with a condition object's id no one said (`{"id": 1}`), or one the table lacks written with a name
    (`{"customer_id": "Dev Patel"}` of `customers`), made the one name the message gives, in the naming column of the
    table the call names (`database.by_name`)."""
    table = next((str(v).lower() for k, v in arguments.items() if last_word(k) == "table"), "")
    if (naming := _naming(columns := tables.get(table, set()))) is None:
        return arguments
    fixed = dict(arguments)
    for name, value in arguments.items():
        ids = [k for k, v in value.items() if _an_id(k) and (not mentioned(v, said, k) or k.lower() not in columns and (
            isinstance(v, str) and not v.strip().isdigit()))] if isinstance(value, dict) and last_word(
            name) in _CONDITION else []
        written = " ".join(str(v) for o in arguments.values() if isinstance(o, dict) for k, v in o.items()
                           if k != naming and k not in ids)  # a name the call writes in another column is no row's
        if ids and len(names := _names_given(message, written, held)) == 1:
            fixed[name] = {**{k: v for k, v in value.items() if k not in ids}, naming: names[0]}
    return fixed


def _inlined(sql: str, arguments: dict[str, Any], parameter: str) -> tuple[str, str | None]:
    """`sql` with its `?` placeholders written as the values another argument lists for them, one each in order (a
    list, an object's `values` list, or an object's values: numbers as they are, texts quoted), and that argument's
    name; where none lists as many (`database.inline_values`): the model writes its values beside the statement in a
    form the server may not bind (`{"name": …}` for `?`, a schema's `values` list)."""
    marks = len([m for m in re.findall(r"'(?:[^']|'')*'|\?", sql) if m == "?"])
    for name, value in arguments.items() if marks else ():
        found = value if isinstance(value, list) else value.get("values") if isinstance(value, dict) and isinstance(
            value.get("values"), list) else list(value.values()) if isinstance(value, dict) else []
        if name != parameter and len(found) == marks and all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in found):
            literals = iter(str(v) if not isinstance(v, str) else "'" + v.replace("'", "''") + "'" for v in found)
            written = re.sub(r"'(?:[^']|'')*'|\?", lambda m: next(literals) if m.group(0) == "?" else m.group(0), sql)
            return written, name
    return sql, None


_UP = (r"raise[sd]?|increase[sd]?|add(?:ed)?|bump(?:ed)?|gain(?:ed)?|received|got|bought|more|extra|augmente\w*|"
       r"re[çc]u|plus|erh[öo]h\w*|mehr|bekommen|erhalten|sube|aumenta\w*|recib\w+|m[áa]s|aggiung\w*|ricevut\w*")
_DOWN = (r"lower(?:ed)?|decrease[sd]?|reduce[sd]?|cut|drop(?:ped)?|los[te]|sold|used|less|fewer|baisse\w*|"
         r"r[ée]dui\w*|vendu\w*|moins|senk\w*|reduzier\w*|verkauft|weniger|baja|vend[íi]\w*|menos|vendut\w*|meno")
_SET = re.compile(r"(?i)\bSET\s+(\w+)\s*=\s*(?:\1\s*\*\s*\(?\s*[\d.]+(?:\s*[+]\s*[\d.]+\s*/\s*100\s*\))?|"
                  r"(\d+(?:\.\d+)?))(?=\s*(?:,|\bWHERE\b|;|$))")


def _by_amount(sql: str, message: str) -> str:
    """`sql` with the one column it sets made that column plus or minus the one number `message` says (digits or a
    word, in five languages), where the message says which way the amount goes ("raise it by 5", "I sold
    three") and neither a percentage nor what it comes to ("lower it to 10"), and the statement sets that number or
    the column times a factor (`database.by_amount`): "by 5" was written `price = 5` or `price = price * 1.05`."""
    said = said_in([message])
    up, down = (re.search(rf"(?i)\b(?:{way})\b", message) for way in (_UP, _DOWN))
    numbers = set(re.findall(r"(?<![\d.])\d+(?:\.\d+)?", said))
    if bool(up) == bool(down) or len(numbers) != 1 or re.search(r"%|percent|prozent|por ?ciento|pour ?cent", said):
        return sql
    amount, found = numbers.pop(), list(_SET.finditer(sql))
    if len(found) != 1 or found[0].group(2) is not None and float(found[0].group(2)) != float(amount) or re.search(
            rf"(?i)\b(?:to|auf|à|a|al|en|zu)\s+{re.escape(amount)}\b", said):
        return sql
    column = found[0].group(1)
    return sql[:found[0].start()] + f"SET {column} = {column} {'+' if up else '-'} {amount}" + sql[found[0].end():]


def _any_case(sql: str) -> str:
    """`sql` with each comparison after its `WHERE` of a column with a text in lower case made one of the column in
    lower case (`database.any_case`): "WHERE name = 'kettle'" finds `Kettle`."""
    where = re.search(r"(?i)\bWHERE\b", sql)
    if where is None:
        return sql
    head, tail = sql[:where.end()], sql[where.end():]
    return head + re.sub(r"(?<![\w.(])([A-Za-z_]\w*)(\s*=\s*)('[^'A-Z]*')", lambda m: f"lower({m.group(1)}){m.group(2)}"
                         f"{m.group(3)}" if re.search("[a-z]", m.group(3)) else m.group(0), tail)


class Database(Shape):
    id = "database"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(takes_sql(t) for t in tools) or bool(held_tables(tools))

    def unasked(self, decision: Decision, tool: Tool) -> str | None:
        words, said = set(words_of(tool.name)), _SCHEMA_SAID.search(decision.talk.last)
        if words & _SCHEMA_WORDS and words & _SCHEMA_CHANGE and not said:
            return "database.rows_not_tables"
        rows = [h for h in tool.holds if "(" not in h]  # a row the server holds, named: its data asked, not its shape
        structure = words & _STRUCTURE or {"table", "names"} <= words  # `all_table_names`: the tables' names
        if structure and not said and _rows_said(decision.talk.last, rows):
            return "database.rows_not_schema"
        return None

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool, arguments, rules = decision.names[call.name], dict(call.arguments), []
        tables, held = held_tables([tool]), [h for h in tool.holds if "(" not in h]  # tables; rows' names
        message = _naming_message(decision.talk.last, decision.talk.previous, held)
        if (parameter := takes_sql(tool)) is not None and isinstance(sql := arguments.get(parameter), str):
            if (listed := _inlined(sql, arguments, parameter))[1] is not None:
                sql, rules = listed[0], [*rules, "database.inline_values"]
                del arguments[listed[1]]
            if (fewer := _without_new_id(sql, decision.said)) != sql:
                rules.append("database.new_id")
            if (moved := _on_the_right_table(fewer, tables, decision.talk.last, decision.said)) != fewer:
                rules.append("database.table_of_columns")
            told = said_in([decision.talk.told])
            if (amounted := _by_amount(moved, decision.talk.last)) != moved:
                moved, rules = amounted, [*rules, "database.by_amount"]
            if (looked_up := _by_name(moved, tables, message, decision.said, told, held)) != moved:
                rules.append("database.by_name")
            if (cased := _any_case(looked_up)) != looked_up:
                rules.append("database.any_case")
            arguments[parameter] = cased
        elif (named := _conditions_by_name(arguments, tables, message, decision.said, held)) != arguments:
            arguments = named
            rules.append("database.by_name")
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
