"""The `editor` shape: tools replacing old text by new (`replacing_pair`); classes and evidence: docs/tool-use-rules.md.

- `editor.to_add`: adding to a file the conversation read, or changing a quoted text, offers the replacing tool alone.
- `editor.keeps_file`: an addition keeps a line of the file read and adds lines saying a word of the message (written
  again under a grammar of the file's lines once), else it is refused.
- `editor.quoted`: a change between quoted texts goes from one of them to another.
- `editor.no_change`: an edit whose every new text is its old is refused: it changes nothing.
- `editor.whole_file`: a tool writing a file's whole text (`whole_text`), for a file the conversation read, keeps
  its lines but at most `_CHANGED` that say a word of the message (where not, written again under a grammar of its
  lines, those saying a word of the message anew, and a line added), else it is refused; for a file that exists and
  was not read, it adds (its switch to add on, where asked), is overwritten where asked, or is refused: the file's
  text would be lost.
- `editor.stated_text`: a new file (or one overwritten) whose text the message states, quoted or after a colon ("with
  the line: - add a --count option"), is written with that text where the call's lacks it."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
from typing import Any, Sequence

from loguru import logger

from sidespin.protocol.grammar import gbnf_literal
from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model, names_grammar
from sidespin.tooluse.values import CALLED, QUOTED, asks_change

__all__ = ["Editor", "replacing_pair"]

Pair = tuple[str | None, str, str]  # the list parameter holding the edits (None: top level), old, new
_OLD, _NEW = re.compile(r"^old(?:[_A-Z]|$)"), re.compile(r"^new(?:[_A-Z]|$)")
_ADDING = re.compile(r"(?i)\b(?:add|append|insert|put|ajoute[rz]?|füge|hinzu|añade|agrega|aggiungi)\b")
_REPLACING = re.compile(r"(?i)\b(?:replace|instead|rather than|swap|remove|delete|change|rename|remplace|"
                        r"ersetze|reemplaza|sostituisci)\b|\bnew (?:file|folder|directory)\b")
_OVERWRITE = re.compile(r"(?i)\b(?:overwrit\w*|[ée]cras\w*|[üu]berschreib\w*|sobrescrib\w*|sovrascriv\w*)")
_CHANGING = re.compile(r"(?i)\b(?:change|replace|edit|update|correct|fix|swap|substitute|turn|modif(?:y|ie|ica)|"
                       r"remplace|ändere|ersetze|cambia|reemplaza|sostituisci)\b")
_WORD = re.compile(r"[^\W_]+")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")  # a Markdown list's item
_LISTING = re.compile(r"[^,\n]+,[^,\n]+,[^,\n]+$")  # a line that lists three things or more
_CHARACTER = '[^"\\\\\\x00-\\x1f]'  # of a JSON string as written: not its end, an escape or a control character
_TEXT_NAMES, _ADD_NAMES = frozenset("content contents text body data".split()), frozenset({"append", "add"})
_CHANGED = 3  # lines of a file read that a whole write may change or add
MOST_LINES, _LONGEST_LINE = 60, 200  # lines of a file an edit may start from, and characters of each
_ADDED_LINE, _ADDED_LINES, _ADDED_ITEM = 120, 5, 60  # an addition's longest line, most lines, longest listed item


def replacing_pair(tool: Tool) -> Pair | None:
    """The old and new text parameters of a replacing tool and the list holding them; None if it replaces none."""
    def pair(properties: dict[str, Any]) -> tuple[str, str] | None:
        strings = [n for n, s in properties.items() if isinstance(s, dict) and s.get("type") == "string"]
        old, new = [n for n in strings if _OLD.match(n)], [n for n in strings if _NEW.match(n)]
        return (old[0], new[0]) if len(old) == 1 and len(new) == 1 else None

    if (top := pair(tool.parameters)) is not None:
        return None, *top
    for name, schema in tool.parameters.items():
        items = schema.get("items") if isinstance(schema, dict) and schema.get("type") == "array" else None
        if isinstance(items, dict) and (inner := pair(items.get("properties") or {})) is not None:
            return name, *inner
    return None


def whole_text(tool: Tool) -> str | None:
    """The required text parameter of a tool writing a file's whole text (`write_file(path, content)`), or None."""
    texts = [n for n in tool.required if n.lower() in _TEXT_NAMES and (tool.parameters.get(n) or {}).get("type") ==
             "string"]
    paths = [n for n in tool.parameters if re.search(r"(?i)path|file", n)]
    return texts[0] if len(texts) == 1 and paths and replacing_pair(tool) is None else None


def _kept(text: str, written: Any, message: str) -> bool:
    """Whether `written` keeps the lines of `text` but at most `_CHANGED`, each changed or added one saying a word of
    `message`, and changes something."""
    if not isinstance(written, str):
        return False
    before, after = text.splitlines(), written.splitlines()
    new = [line for line in after if line not in before]
    return 0 < len(new) <= _CHANGED and len([b for b in before if b not in after]) <= len(new) and all(
        _says_a_word(line, message) for line in new)


def _whole_grammar(text: str, message: str) -> str:
    """A grammar for a JSON string of `text`'s lines as they are, but those saying a word of `message` (from a key's
    "=" or ":" on, where there is one, written anew), then a line added, or none."""
    quote, newline = gbnf_literal('"'), gbnf_literal("\\n")  # as JSON writes them
    words, parts = {w for w in _WORD.findall(message.lower()) if len(w) >= 3}, []
    for line in text.splitlines()[:MOST_LINES]:
        written, key = gbnf_literal(json.dumps(line, ensure_ascii=False)[1:-1]) if line else "", re.match(
            r"[^=:]*[=:][ \t]*", line)
        anew = f"{gbnf_literal(json.dumps(key.group(), ensure_ascii=False)[1:-1])} added" if key else "added"
        parts.append(f"( {written} | {anew} )" if words & set(_WORD.findall(line.lower())) else written)
    end = f"( {newline} added )? {newline if text.endswith(chr(10)) else ''} {quote}"
    return f"root ::= {quote} {f' {newline} '.join(parts)} {end}\nadded ::= {_CHARACTER}{{1,{_ADDED_LINE}}}"


def _stated(message: str) -> str | None:
    """The text a request to make a file states: what follows a colon after a word for a text ("Create TODO.md with
    the line: - add a --count option"; not "…into unpaid.txt: one per line"), else its one quoted text that names
    nothing ("a note called 'Books'" names one); None where it states none."""
    after = re.search(r"\b(?:line|text|content|words|ligne|texte|contenu|zeile|inhalt|l[íi]nea|texto|contenido|riga|"
                      r"testo)\s*:\s+(\S.*)$", message.strip(), re.DOTALL | re.IGNORECASE)  # "with the line: …"
    if after and asks_change(message[:after.start()], new=True):
        return after.group(1).strip()
    unnamed = CALLED.sub(" ", message)  # "called 'Books to lend'": a name, not a text
    quoted = [next(part for part in found if part) for found in QUOTED.findall(unnamed)]
    return quoted[0].strip() if len(quoted) == 1 else None


def _holds(written: Any, stated: str) -> bool:
    """Whether a written text holds `stated`, spaces and case aside."""
    return isinstance(written, str) and " ".join(stated.split()).casefold() in " ".join(written.split()).casefold()


def _asks_to_add(message: str) -> bool:
    """Whether a message asks to add, in its own words: a quoted text's are what is written ("… the message 'Add a
    list'")."""
    unquoted = QUOTED.sub(" ", message)
    return bool(_ADDING.search(unquoted)) and not _REPLACING.search(unquoted)


def _quoted(message: str) -> list[str]:
    """The texts a request to change one text into another quotes (two to four), else []."""
    if _asks_to_add(message) or not _CHANGING.search(message):
        return []
    texts = [next(part for part in found if part) for found in QUOTED.findall(message)]
    texts = list(dict.fromkeys(t for t in texts if t.strip()))[:4]
    return texts if len(texts) >= 2 else []


def _asks_an_edit(decision: Decision) -> bool:
    """Whether the message asks to change one quoted text into another, or to add to a file it read."""
    read = any(not a.failed and _files_in(a.arguments) for a in decision.talk.answered)
    return bool(_quoted(decision.talk.last)) or (_asks_to_add(decision.talk.last) and read)


def _files_in(arguments: Any) -> set[str]:
    values = arguments.values() if isinstance(arguments, dict) else ()
    return {v.strip().rstrip("/") for v in values if isinstance(v, str) and ("/" in v or "." in v) and v.strip("/ ")}


def _text_read(talk: Talk, arguments: dict[str, Any], readers: set[str]) -> str | None:
    """The text of the latest successful call of a reader given a file `arguments` names (of a JSON object, its text
    under `_TEXT_NAMES`: `{"path": …, "content": "…"}`), or None."""
    files = _files_in(arguments)
    answer = next((done.answer for done in reversed(talk.answered) if done.name in readers and not done.failed and any(
        a == b or a.endswith("/" + b) or b.endswith("/" + a) for a in files for b in _files_in(done.arguments))), None)
    with contextlib.suppress(ValueError, AttributeError):
        return next((v for k, v in json.loads(answer or "").items() if k.lower() in _TEXT_NAMES and isinstance(v, str)),
                    answer)
    return answer


def _says_a_word(text: str, message: str) -> bool:
    return bool({w for w in _WORD.findall(message.lower()) if len(w) >= 3} & set(_WORD.findall(text.lower())))


def _added(arguments: dict[str, Any], pair: Pair, text: str, message: str) -> dict[str, Any] | None:
    """`arguments` with each edit kept to a line of `text` and what it adds that says a word of the message, or None."""
    container, old, new = pair
    if not (edits := _edits(arguments, pair)):
        return None
    lines = {line.strip() for line in text.splitlines()}
    kept = []
    for edit in edits:
        before, after = (edit.get(old), edit.get(new)) if isinstance(edit, dict) else (None, None)
        if not isinstance(before, str) or not isinstance(after, str) or before.strip() not in lines - {""}:
            return None
        if after.startswith(before + ", ") and _LISTING.search(before):
            between, held = ", ", {item.strip().lower() for item in re.split(r"[,:]", before)}
            adds = [i for i in dict.fromkeys(p.strip() for p in after[len(before) + 2:].split(","))
                    if i and "\n" not in i and i.lower() not in held and _says_a_word(i, message)]
        else:
            between, rest = "\n", after[len(before) + 1:].split("\n") if after.startswith(before + "\n") else []
            adds = [line for line in dict.fromkeys(rest) if line.strip() and line.strip() not in lines
                    and _says_a_word(line, message)]
        if not adds:
            return None
        kept.append({**edit, new: between.join([before, *adds])})
    return {**arguments, container: kept} if container is not None else kept[0]


def _edits(arguments: dict[str, Any], pair: Pair) -> list[Any]:
    """The edits `arguments` hold: the list under the pair's container, else the arguments themselves; [] for none."""
    edits = arguments.get(pair[0]) if pair[0] is not None else [arguments]
    return edits if isinstance(edits, list) else []


def _unchanged(arguments: dict[str, Any], pair: Pair) -> bool:
    """Whether every edit of `arguments` replaces a text by itself."""
    edits = _edits(arguments, pair)
    return bool(edits) and all(isinstance(e, dict) and e.get(pair[1]) == e.get(pair[2]) for e in edits)


def _opening(pair: Pair, line: str, then: str) -> str:
    container, old, new = pair
    inner = json.dumps(line, ensure_ascii=False)[1:-1]
    head = f'"{inner}", {json.dumps(new)}: "{inner}{then}'
    return gbnf_literal(head if container is None else f'[{{{json.dumps(old)}: {head}')


def _anchored_grammar(pair: Pair, text: str) -> str | None:
    """A grammar for an edit from a line of `text` to that line and lines (or listed items) added; None if no line."""
    lines = [line.rstrip() for line in dict.fromkeys(text.splitlines()) if line.strip() and len(line) <= _LONGEST_LINE]
    items = ([line for line in lines if _ITEM.match(line)] or lines)[:MOST_LINES]
    listing = [line for line in lines if _LISTING.search(line) and not _ITEM.match(line)][:MOST_LINES]
    close = gbnf_literal('"' if pair[0] is None else '"}]')
    more = f"( {gbnf_literal(chr(92) + 'n')} added ){{0,{_ADDED_LINES - 1}}}"
    branches = [f"( {' | '.join(_opening(pair, line, then) for line in starts)} ) {rest} {close}"
                for starts, then, rest in ((items, chr(92) + "n", f"added {more}"), (listing, ", ", "item")) if starts]
    return (f"root ::= {' | '.join(branches)}\nadded ::= {_CHARACTER} {_CHARACTER}{{0,{_ADDED_LINE - 1}}}\n"
            f"item ::= {_CHARACTER} {_CHARACTER}{{0,{_ADDED_ITEM - 1}}}") if branches else None


async def _again(call: ToolCall, pair: Pair, grammar: str, model: Model, written: str) -> dict[str, Any] | None:
    """The call's arguments with its edits written again under `grammar` (None when cut off)."""
    container, old, new = pair
    others = {k: v for k, v in call.arguments.items() if k not in (container, old, new)}
    head = (json.dumps(others, ensure_ascii=False)[:-1] + ", " if others else "{") + json.dumps(container or old) + ": "
    answer = await model.llama.complete(written + head, grammar, None, 320)
    try:
        return json.loads(head + answer + "}")  # an object: `head` opens one
    except json.JSONDecodeError:
        return None


class Editor(Shape):
    id = "editor"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(replacing_pair(tool) is not None or whole_text(tool) is not None for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        return "editor.to_add" if _asks_an_edit(decision) and self.applies(tools) else None

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        if not _asks_an_edit(decision):
            return decision.names
        sources = {t.source for t in decision.names.values() if replacing_pair(t) is not None}
        kept = {n: t for n, t in decision.names.items() if t.source not in sources or replacing_pair(t) is not None}
        if len(kept) < len(decision.names):
            decision.notes.append("editor.to_add")
        return kept

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool, message = decision.names[call.name], decision.talk.last
        if (pair := replacing_pair(tool)) is not None and _unchanged(call.arguments, pair):
            logger.info("TOOLUSE_REFUSED editor.no_change {}: each edit's new text is its old", call.name)
            decision.notes.append("editor.no_change")
            return None
        if pair is not None and (texts := _quoted(message)):
            return await self._quoted(decision, call, pair, texts, model, written)
        readers = {t.name for t in decision.tools if t.source == tool.source and t.read_only} or {
            t.name for t in decision.tools if t.name != tool.name}
        if pair is None and (field := whole_text(tool)) is not None:
            return await self._whole(decision, call, field, _text_read(decision.talk, call.arguments, readers), model,
                                     written)
        if pair is None or not _asks_to_add(message) or (
                text := _text_read(decision.talk, call.arguments, readers)) is None:
            return call
        kept = _added(call.arguments, pair, text, message)
        if kept is None and (grammar := _anchored_grammar(pair, text)) is not None:
            arguments = await _again(call, pair, grammar, model, written)
            kept = _added(arguments, pair, text, message) if arguments is not None else None
        if kept != call.arguments:  # refused (None) or cut
            decision.notes.append("editor.keeps_file")
        if kept is None:
            logger.info("TOOLUSE_REFUSED editor.keeps_file {}: it adds no line the message says", call.name)
            return None
        return ToolCall(call.name, kept, call.id)

    async def _whole(self, decision: Decision, call: ToolCall, field: str, text: str | None, model: Model,
                     written: str) -> ToolCall | None:
        """`call` of a tool writing a file's whole text, as `editor.whole_file` has it; None where refused."""
        tool, message = decision.names[call.name], decision.talk.last
        # not read: a new file, or one to replace, as written (with the text the message states, where it states
        # one); a file that exists, added to where the tool can and the message asks
        if text is None:
            if _OVERWRITE.search(message) or not any(isinstance(v, str) and os.path.isfile(v)
                                                     for v in call.arguments.values()):
                if (stated := _stated(message)) is None or _holds(call.arguments.get(field), stated):
                    return call
                decision.notes.append("editor.stated_text")
                logger.info("TOOLUSE_VALUE_AS_SAID {}.{}: the text the message states", call.name, field)
                return ToolCall(call.name, {**call.arguments, field: stated + "\n"}, call.id)
            adds = [n for n, s in tool.parameters.items() if n.lower() in _ADD_NAMES and (s or {}).get("type") ==
                    "boolean"]
            kept = {**call.arguments, adds[0]: True} if adds and _asks_to_add(message) else None
        elif _kept(text, call.arguments.get(field), message):
            return call
        else:
            arguments = await _again(call, (None, field, field), _whole_grammar(text, message), model, written)
            kept = arguments if arguments is not None and _kept(text, arguments.get(field), message) else None
        decision.notes.append("editor.whole_file")
        if kept is None:
            logger.info("TOOLUSE_REFUSED editor.whole_file {}: the file's text would be lost", call.name)
            return None
        return ToolCall(call.name, kept, call.id)

    async def _quoted(self, decision: Decision, call: ToolCall, pair: Pair, texts: list[str], model: Model,
                      written: str) -> ToolCall:
        container, old, new = pair
        edits = _edits(call.arguments, pair)
        if edits and all(isinstance(e, dict) and e.get(old) in texts and e.get(new) in texts
                         and e.get(old) != e.get(new) for e in edits):
            return call
        quoted = [json.dumps(text, ensure_ascii=False) for text in texts]  # written again: from one of them to another
        options = [f"{one}, {json.dumps(new)}: {other}" for one, other in itertools.permutations(quoted, 2)]
        if container is not None:
            options = [f"[{{{json.dumps(old)}: {option}}}]" for option in options]
        if (arguments := await _again(call, pair, names_grammar(options, ""), model, written)) is None:
            return call
        decision.notes.append("editor.quoted")
        return ToolCall(call.name, arguments, call.id)
