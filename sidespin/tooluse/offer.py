"""What the model is offered: each tool as compact JSON (`offered`), and the tables a decision reads them in
(`tables`): few tools are one table, many one per source, cut into parts within `TABLE_CHARS`."""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Sequence

from sidespin.formats import to_openai_tool
from sidespin.tools import Tool
from sidespin.tooluse.relevance import Embedder, meant
from sidespin.tooluse.schema import listed as listed_values
from sidespin.tooluse.values import (REQUEST_AT, REQUEST_LEADS, READ_VERBS, allowed, asks_change, asks_question,
                                     last_word, reads, telling_words, words_of)

__all__ = ["SHORTLIST", "TABLE_CHARS", "offered", "offered_table", "tables", "cut", "deprecated_for", "held_names",
           "held_said", "held_for", "held_asked", "names_said", "named", "family_named", "action_named",
           "family_or_action", "look_ups", "beyond_tools"]

SHORTLIST = 10  # tools read all at once; more are read a table at a time
TABLE_CHARS = 7_000  # of the offered tools' JSON in one table: about 1,950 tokens at most
DESCRIPTION = 300  # characters of a tool's description offered
SHORTEST = 120  # ... at least, when a server's tools would not fit one table otherwise
_REQUIRED_NOTE, _OPTIONAL_NOTE = 120, 60  # characters of a required parameter's description, of an optional one's
_NOISE = frozenset({"$schema", "$id", "title"})
_DEPRECATED = re.compile(r"(?is)\bdeprecated\b.*?\buse\s+[`'\"]?([\w.\-]+?)[`'\"]?\s+instead\b")


def deprecated_for(tool: Tool) -> str | None:
    """The tool a tool's description says to use instead of it ("deprecated … use X instead"), or None."""
    return found.group(1) if (found := _DEPRECATED.search(tool.description)) else None


_NAMING = frozenset("id name title label text description".split())  # columns of any kind of table


def held_names(tools: Sequence[Tool], message: str, whole: bool = True, files: bool = False) -> list[str]:
    """The names of 3 letters or more the tools' server holds (`Tool.holds`; with `files`, files': a name with an
    extension) that the message says as whole words, or not `whole`, a word of (its first five letters: "my budget" of
    `budget-2025.xlsx`; of a table held with its columns, `products(id, name, price)`, a column's too, but one every
    held table has or one that names a row, `name` or `title`: "the price of the kettle" says `products`)."""
    said, words = f" {' '.join(words_of(message))} ", {w[:5] for w in telling_words(message) if len(w) >= 4}
    held = {n: telling_words(n) for t in tools for n in (h.split("(")[0] for h in t.holds) if "." in n[1:] or not files}
    if not whole and not files:
        columns = {h.split("(")[0]: set(telling_words(h.partition("(")[2])) for t in tools for h in t.holds if "(" in h}
        common = (set.intersection(*columns.values()) if columns else set()) | _NAMING
        held = {n: [*told, *(columns.get(n, set()) - common)] for n, told in held.items()}
    return [n for n, told in held.items() if len(n) >= 3 and (f" {' '.join(words_of(n))} " in said if whole else (
        words & {w[:5] for w in told}))]


def held_for(tool: Tool, arguments: dict[str, Any], made_up: Sequence[str], message: str) -> dict[str, Any]:
    """`arguments` of a tool that reads, with every made-up value (`values.invented`) of a parameter naming a thing (its
    name's last word `name`, `title`, `id` or `key`) replaced by the one name its server holds that the message says
    words of (`held_names`, not whole: "the cabin's wifi" of `cabin-wifi`); as they are where a made-up value names no
    thing, or the message says words of no held name or of several (`core.held_as_named`)."""
    found = held_names([tool], message, whole=False)
    if len(found) != 1 or not reads(tool, (tool,)) or any(last_word(n) not in _KEYS for n in made_up):
        return arguments
    return {**arguments, **{name: found[0] for name in made_up}}


_KEYS = frozenset({"name", "title", "id", "key"})  # a parameter's last word naming the thing a tool looks up


def held_said(tools: Sequence[Tool], message: str, whole: bool = True, files: bool = False) -> bool:
    """Whether the message says a name the tools' server holds (`held_names`)."""
    return bool(held_names(tools, message, whole, files))


def held_spoken_of(tools: Sequence[Tool], message: str) -> bool:
    """Whether the message says a name the tools' server holds as whole words or, a question, a word of one (of a
    table held with its columns, a column's: `held_names`)."""
    return held_said(tools, message) or asks_question(message) and held_said(tools, message, False)


def held_asked(tools: Sequence[Tool], message: str, embedder: Embedder | None = None) -> bool:
    """Whether the message names a thing the tools' server holds (`held_said`), or asks a question saying a word of a
    file it holds ("Who hosts in June, according to the rota?" of `choir-rota.xlsx`) or a word that says one of its
    names in another language (`relevance.meant`: "Combien de commandes…?" of `orders`)."""
    if held_said(tools, message):
        return True
    if not asks_question(message):
        return False
    names = list(dict.fromkeys(h.split("(")[0] for t in tools for h in t.holds))
    return held_said(tools, message, False, files=True) or any(meant(w, names, embedder) for w in dict.fromkeys(
        telling_words(message)) if len(w) >= 4)


def names_said(tools: Sequence[Tool], message: str) -> list[Tool]:
    """The tools whose name's telling words (but those all names share) the message says, or begins ("summing")."""
    said = set(telling_words(message))
    named = {t.name: [w for w in dict.fromkeys(telling_words(t.name)) if not w.isdigit()] for t in tools}
    shared = set.intersection(*(set(w) for w in named.values())) if len(tools) > 1 else set()
    return [t for t in tools if (words := [w for w in named[t.name] if w not in shared])
            and all(any(s.startswith(w) for s in said) for w in words)]


def named(tools: Sequence[Tool], message: str) -> set[str]:
    """The tools the message names by two words of their name or more (`core.tool_named`); where it asks a change, but
    those that only read ("put it on my to-do list" names where, not `todo_list`)."""
    return {t.name for t in names_said(tools, message) if len(telling_words(t.name)) > 1
            and not (asks_change(message) and reads(t, tools))}


def family_named(tools: Sequence[Tool], message: str) -> set[str]:
    """The tools of the one family the message names (`core.family_named`): a server's tools whose names begin with the
    same word, said in the message ("a to-do" of `todo_create`, `todo_list`), a word that is no verb; else none."""
    families: dict[tuple[str, str], set[str]] = {}
    for tool in tools:
        first = (words_of(tool.name) or [""])[0]
        if len(first) >= 3 and first not in READ_VERBS and not asks_change(first):
            families.setdefault((tool.source, first), set()).add(tool.name)
    said = telling_words(message)
    found = [names for (_, word), names in families.items() if len(names) > 1 and any(w.startswith(word) for w in said)]
    return found[0] if len(found) == 1 and len(found[0]) < len(tools) else set()


_MAKES = frozenset({"create", "new", "add", "make"})


# acts that reach people or the world outside the machine, by the verbs a request says them with (five languages)
# and the words a tool doing them says: a message asking one of them of tools that say none asks what no tool does
_WORLD = (
    (r"send|e-?mail|mail|text|message|envoie[rz]?|schick\w*|sende|env[íi]a|manda|invia", "send mail email messag sms"),
    (r"call|phone|ring|appelle[rz]?|ruf|llama|chiama", "call phone dial"),
    (r"book|reserve|r[ée]serve[rz]?|buche|reserviere|reserva|prenota", "book reserv appoint"),
    (r"buy|purchase|pay|ach[èe]te[rz]?|commande[rz]?|paie[rz]?|kaufe|bestelle|bezahle|compra|pide|paga",
     "buy purchas order pay cart checkout shop"),
    (r"print|imprime[rz]?|drucke|imprime|stampa", "print"),
    (r"post|tweet|publish|publie[rz]?|ver[öo]ffentliche|publica|pubblica", "post tweet publish"),
)


_LEADS = frozenset([*REQUEST_LEADS, "can", "could", "would", "will", "just"])  # what a request follows, not a request


def beyond_tools(tools: Sequence[Tool], message: str) -> bool:
    """Whether every request `message` makes (a clause's first word, or one after "please", "you", "and", "then"…;
    not after "to") asks an act outside the machine (`_WORLD`: to send, call, book, buy, print, publish) that no tool
    says (its name, description, parameters, or what its server holds, by a stem of the act: "mail", "reserv")
    (`core.beyond_tools`): "Email them a thank-you note." of a database's tools; not "Email Ana the report" beside
    `send_email`, nor "Order two mugs" of a server holding `orders`, nor "Show the orders and email them"."""
    words = re.findall(r"[.!?;:,]|[^\W\d_][\w'-]*", message)
    requests = [w for before, w in zip([".", *words], words) if w[0].isalpha() and w.lower() not in _LEADS and (
        before in ".!?;:," or before.lower() in _LEADS)]
    acts = [stems for w in requests for verbs, stems in _WORLD if re.fullmatch(f"(?i)(?:{verbs})", w)]
    if not acts or len(acts) < len(requests):
        return False
    said = " ".join(f"{t.name} {t.description} {json.dumps(t.input_schema)} {' '.join(t.holds)}" for t in tools).lower()
    return not any(re.search(rf"\b{stem}", said) for stems in acts for stem in stems.split())


def look_ups(tools: Sequence[Tool], refused: Tool, ids: set[str], new: bool = False) -> list[Tool]:
    """The tools of `refused`'s server and kind (a word of its name but a verb: "todo" of `todo_update`, "task" of
    `complete_task`) that need none of `ids`, the ids no one said, and only read: they find one
    (`core.look_up_first`); with `new`, that make a new thing (`create`, `new`, `add`, `make` in the name): it has no
    id yet."""
    kind = {w[:4] for w in telling_words(refused.name) if w not in READ_VERBS and not asks_change(w)}
    return [t for t in tools if t.source == refused.source and t.name != refused.name and (
        _MAKES & set(words_of(t.name)) if new else reads(t, tools)) and kind & {w[:4] for w in telling_words(t.name)}
            and not ids & {last_word(n) for n in t.required}]


def action_named(tools: Sequence[Tool], message: str) -> set[str]:
    """The tools a reading verb the message opens a request with is an allowed value of (`core.action_named`): "List
    the files…" of `dir_ops(action: "create" | "list" | "delete")`."""
    verbs = {verb.lower() for verb in re.findall(REQUEST_AT + r"(\w+)", message)} & READ_VERBS
    return {t.name for t in tools for n in t.required if verbs & {v.lower() for v in allowed(t.parameters.get(n))
                                                                  + listed_values(t, n)}}


def cut(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def offered(tool: Tool, description: int | None = DESCRIPTION) -> dict[str, Any]:
    """A tool as the decision is offered it, its descriptions cut to `description` (None: whole)."""
    described = copy.deepcopy(to_openai_tool(tool))
    function = described["function"]
    if description is not None:
        function["description"] = cut(function.get("description") or "", description)
    if tool.places:  # after the cut, so it is always read; no full stop a small model would copy into a path
        function["description"] += " It works in " + " and ".join(tool.places)
    function["description"] += " It holds " + ", ".join(tool.holds) if tool.holds else ""  # `sidespin.mcp.holdings`
    function["parameters"] = _compact(function["parameters"])
    for name, sub in (function["parameters"].get("properties") or {}).items():
        if description is not None and isinstance(sub, dict) and isinstance(sub.get("description"), str):
            sub["description"] = cut(sub["description"], _REQUIRED_NOTE if name in tool.required else _OPTIONAL_NOTE)
    return described


def _compact(schema: Any) -> Any:
    """A schema without `$schema`, titles, a `null` default, and the `null` branch of "this type or null"."""
    if isinstance(schema, list):
        return [_compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {  # properties are field names, not keywords: a field may be "title"
        key: {name: _compact(field) for name, field in value.items()}
        if key == "properties" and isinstance(value, dict) else _compact(value)
        for key, value in schema.items() if key not in _NOISE and not (key == "default" and value is None)}
    for key in ("anyOf", "oneOf"):
        if isinstance(branches := kept.get(key), list):
            real = [b for b in branches if b != {"type": "null"}]
            if len(real) == 1 and len(real) < len(branches) and isinstance(real[0], dict):
                del kept[key]
                kept = {**real[0], **kept}
    return kept


def family_or_action(tools: Sequence[Tool], message: str) -> tuple[str, set[str]] | None:
    """The rule and the tools of the one family the message names, else of the one action it names; else None."""
    for rule, says in (("core.family_named", family_named), ("core.action_named", action_named)):
        if found := says(tools, message):
            return rule, found
    return None


def tables(tools: Sequence[Tool]) -> list[list[Tool]]:
    """The tables a decision reads `tools` in: one when they are few, else each source's, cut to fit, a family of
    its tools (names with the same first word: `todo_create`, `todo_list`) in one part where it fits; a family cut
    in parts has its listings (tools that only read and need no value: `todo_list`) in each of them."""
    if len(tools) <= SHORTLIST:
        return [list(tools)]
    sources: dict[str, list[Tool]] = {}
    for tool in tools:  # the plugins (`plugin:dice`, `plugin:web` …) are one source
        sources.setdefault("plugin" if tool.source.startswith("plugin") else tool.source, []).append(tool)
    parts: list[list[Tool]] = []
    for listed in sources.values():
        count = max(1, -(-_chars(listed, SHORTEST) // TABLE_CHARS))
        size, families, mine = -(-len(listed) // count), {}, []
        for tool in listed:
            families.setdefault((words_of(tool.name) or [""])[0] if count > 1 else "", []).append(tool)
        part: list[Tool] = []
        for chunk in (f[i: i + size] for f in (families.values() if len(families) > 1 else [listed])
                      for i in range(0, len(f), size)):
            if part and len(part) + len(chunk) > size:  # the chunk starts the next part
                mine.append(part)
                part = []
            part += chunk
        for part in [*mine, part]:  # a family cut in parts: its listings (they read, need nothing) in each
            kin = [t for f, tools in families.items() if f and any(t in part for t in tools) for t in tools]
            parts.append(part + [t for t in kin if t not in part and not t.required and reads(t, listed)])
    return parts


def offered_table(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """A table as offered: whole when few and within `TABLE_CHARS`, else cut only as short as it takes to fit."""
    if len(tools) <= SHORTLIST:
        whole = [offered(t, None) for t in tools]
        if sum(len(json.dumps(one, ensure_ascii=False)) for one in whole) <= TABLE_CHARS:
            return whole
    description = DESCRIPTION
    while len(tools) > SHORTLIST and description > SHORTEST and _chars(tools, description) > TABLE_CHARS:
        description -= 20
    return [offered(t, description) for t in tools]


def _chars(tools: Sequence[Tool], description: int | None) -> int:
    """The characters of `tools` as offered with their descriptions cut to `description`."""
    return sum(len(json.dumps(offered(t, description), ensure_ascii=False)) for t in tools)
