"""Edits of a file's text: an addition keeps what was there, a change goes between the texts quoted (for the
route, `sidespin.route`).

The rules, before the code:

- **A replacing tool** (`replacing_pair`) takes an old text and a new one: two string parameters named
  old… and new… (`oldText`/`newText` of the reference filesystem server's `edit_file`, inside its `edits`
  list; `old_str`/`new_str`, `old_string`/`new_string` of other editors), at its top level or in the
  objects of a list parameter.
- **A request to add** (`asks_to_add`): "Now add bread to that grocery list, in the same file." It
  replaces nothing, so an edit for it keeps its old text whole in its new one, and its old text is text
  of the file. The 0.5B wrote `{"oldText": "bread", "newText": "bread"}`, which failed ("Could not find
  exact match"), and in another run `{"oldText": "spinach", "newText": "bread"}`, which lost the
  spinach (the edit asked for approval; a person in a hurry approves it).
- **The file's text** (`text_read`) is the answer of the conversation's latest call that was given the
  same file, when that call succeeded and its tool reads (its server marks it read-only; of a server that
  marks none, any tool but the replacing one).
- **It goes to the replacing tool** (`for_editing`): once the conversation has read a file, a request to
  add is offered, of a server that has a replacing tool, that tool alone. For the bread, the 0.5B named
  `write_file` and wrote "bread\nmilk\neggs…" over and over in place of the file, its headings and its
  second list gone; without `write_file`, it named `create_directory` for the file's path. So is a change
  between two quoted texts (below): for one, the 0.5B wrote `write_file` on the folder, the new text over
  and over.
- **Written again** (`anchored_grammar`): such an edit that does not keep its old text is written again
  under a grammar whose old text is a line of that file (one of its list's items, when it has a list),
  and whose new text is that line, a line break, and what the model adds after it; or a line that lists
  three things or more ("Present: Jonas, Priya, Mei"), a comma and the items added: for "Add Tom to
  the people present in that file." the 0.5B, offered only lines to add, added none, then answered with
  the file as it would be, Tom in that line (`listing_lines`).
- **A change between two quoted texts** (`quoted`): 'In notes/meeting.md, change "Tuesday at 10:00" to
  "Wednesday at 11:00".' An edit for a request to change that quotes two texts or more (and adds
  nothing) replaces one of them with another. The 0.5B wrote "old content" for "new content" (it
  failed). Such an edit whose texts are not two of the quoted ones is written again under a grammar
  whose old and new texts are two of them (`quoted_grammar`).
- **Only what is added** (`added`): of the lines after the old text, those that are no line of the
  file yet and say a word of the message (of the items after a line that lists, those it does not hold
  that say one); an edit that adds none is not made.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any, Sequence

from sidespin.grounding import asks_for_a_change
from sidespin.protocol.grammar import gbnf_literal
from sidespin.tables import answered_calls, last_said
from sidespin.tools import Tool, failed

_OLD = re.compile(r"^old(?:[_A-Z]|$)")
_NEW = re.compile(r"^new(?:[_A-Z]|$)")
_ADDING = re.compile(r"(?i)\b(?:add|append|insert|put|ajoute[rz]?|füge|hinzu|añade|agrega|aggiungi)\b")
_REPLACING = re.compile(r"(?i)\b(?:replace|instead|rather than|swap|remove|delete|change|rename|remplace|"
                        r"ersetze|reemplaza|sostituisci)\b|\bnew (?:file|folder|directory)\b")
MOST_LINES = 60  # lines of the file offered as the old text
_LONGEST_LINE = 200
_ADDED_LINE = 120  # characters of each line added
_ADDED_LINES = 5
_ADDED_ITEM = 60  # characters of the items added to a line that lists


def readers(tool: Tool, tools: Sequence[Tool]) -> set[str]:
    """The names of the tools of `tools` whose answer may be a file's text for an edit by `tool`: those of its
    server marked read-only, when it marks some; else every tool but `tool`."""
    marked = {t.name for t in tools if t.source == tool.source and t.read_only}
    return marked or {t.name for t in tools if t.name != tool.name}


def replacing_pair(tool: Tool) -> tuple[str | None, str, str] | None:
    """The old and new text parameters of a replacing tool and the list parameter that holds them (None: at the
    top level); None for a tool that replaces nothing."""
    pair = _pair(tool.parameters)
    if pair is not None:
        return None, *pair
    for name, schema in tool.parameters.items():
        items = schema.get("items") if isinstance(schema, dict) and schema.get("type") == "array" else None
        pair = _pair(items.get("properties") or {}) if isinstance(items, dict) else None
        if pair is not None:
            return name, *pair
    return None


def _pair(properties: dict[str, Any]) -> tuple[str, str] | None:
    strings = [name for name, schema in properties.items()
               if isinstance(schema, dict) and schema.get("type") == "string"]
    old = [name for name in strings if _OLD.match(name)]
    new = [name for name in strings if _NEW.match(name)]
    return (old[0], new[0]) if len(old) == 1 and len(new) == 1 else None


def for_editing(tools: Sequence[Tool], messages: Sequence[dict[str, Any]]) -> list[Tool]:
    """`tools`, but of a server with a replacing tool only that tool, when the last message asks to add
    (`asks_to_add`) and a call of the conversation read a file, or asks to change a quoted text into another
    (`quoted`); all of `tools` otherwise."""
    message = last_said(messages)
    if not quoted(message) and not (asks_to_add(message) and _read_a_file(messages)):
        return list(tools)
    replacing = {t.source for t in tools if replacing_pair(t) is not None}
    return [t for t in tools if t.source not in replacing or replacing_pair(t) is not None]


def _read_a_file(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether a call of the conversation that was given a file's path (a value with a slash or a dot) answered."""
    return any(not failed(answer) and _files_in(arguments) for _, _, arguments, answer in answered_calls(messages))


def _files_in(arguments: Any) -> set[str]:
    """The values of a call's `arguments` that may name a file: texts with a slash or a dot, without surrounding
    slashes."""
    values = arguments.values() if isinstance(arguments, dict) else ()
    return {_path(value) for value in values
            if isinstance(value, str) and ("/" in value or "." in value) and _path(value)}


def asks_to_add(message: str) -> bool:
    """Whether a message asks for something to be added, and for nothing to be replaced or removed."""
    return bool(_ADDING.search(message)) and not _REPLACING.search(message)


def quoted(message: str) -> list[str]:
    """The texts a request to change something (and to add nothing) quotes, when it quotes two or more, in their
    order, each once (at most `_QUOTES`); [] otherwise."""
    if asks_to_add(message) or not asks_for_a_change(message) or not _TEXT_CHANGE.search(message):
        return []
    texts = [next(part for part in found if part) for found in _QUOTED.findall(message)]
    texts = list(dict.fromkeys(text for text in texts if text.strip()))[:_QUOTES]
    return texts if len(texts) >= 2 else []


_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|«\s?([^»\n]{1,200}?)\s?»'
                     r"|(?<![^\W_])'([^'\n]{1,200})'(?![^\W_])")  # not the apostrophe of "it's"
_QUOTES = 4
# a text changed into another ("Rename "a.txt" to "b.txt"" is no edit of a text)
_TEXT_CHANGE = re.compile(r"(?i)\b(?:change|replace|edit|update|correct|fix|swap|substitute|turn|modif(?:y|ie|ica)|"
                          r"remplace|ändere|ersetze|cambia|reemplaza|sostituisci)\b")


def as_quoted(arguments: dict[str, Any], pair: tuple[str | None, str, str], texts: list[str]) -> bool:
    """Whether each edit of `arguments` replaces one of the quoted `texts` with another."""
    container, old, new = pair
    edits = arguments.get(container) if container is not None else [arguments]
    return isinstance(edits, list) and bool(edits) and all(
        isinstance(edit, dict) and edit.get(old) in texts and edit.get(new) in texts and edit.get(old) != edit.get(new)
        for edit in edits)


def quoted_grammar(pair: tuple[str | None, str, str], texts: list[str]) -> str:
    """A GBNF grammar for the edit's JSON after its opening (as `anchored_grammar`): its old text one of the quoted
    `texts`, its new text another."""
    container, old, new = pair
    choices = []
    for before, after in itertools.permutations(texts, 2):
        one, other = (json.dumps(text, ensure_ascii=False) for text in (before, after))
        text = f"{one}, {json.dumps(new)}: {other}" if container is None else \
            f"[{{{json.dumps(old)}: {one}, {json.dumps(new)}: {other}}}]"
        choices.append(gbnf_literal(text))
    return f"root ::= {' | '.join(choices)}\n"


def text_read(messages: Sequence[dict[str, Any]], arguments: dict[str, Any], readers: set[str]) -> str | None:
    """The answer of the latest call of a tool of `readers` in the conversation that was given a file `arguments`
    names (the same path, or one ending with the other), when that call succeeded; None when there is none. (An
    edit's answer is a diff, a write's a sentence: neither is the file.)"""
    files = _files_in(arguments)
    for _, name, given, answer in reversed(answered_calls(messages)):
        if name in readers and not failed(answer) and any(_same_file(a, b) for a in files for b in _files_in(given)):
            return answer
    return None


def _path(value: str) -> str:
    return value.strip().rstrip("/")


def _same_file(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a == b or a.endswith("/" + b) or b.endswith("/" + a))


def added(arguments: dict[str, Any], pair: tuple[str | None, str, str], text: str,
          message: str) -> dict[str, Any] | None:
    """`arguments` with each edit's new text cut to its old text and the lines after it that it adds (`_adds`);
    None when an edit's old text is no line of `text`, or its new text does not begin with it, or adds no line."""
    container, old, new = pair
    edits = arguments.get(container) if container is not None else [arguments]
    if not isinstance(edits, list) or not edits:
        return None
    lines = {line.strip() for line in text.splitlines()}
    kept = []
    for edit in edits:
        before = edit.get(old) if isinstance(edit, dict) else None
        after = edit.get(new) if isinstance(edit, dict) else None
        if not isinstance(before, str) or not isinstance(after, str) or not before.strip() \
                or before.strip() not in lines:
            return None
        if after.startswith(before + ", ") and _LISTING.search(before):  # an item more on a line that lists
            items = _items_added(after[len(before) + 2:], before, message)
            if not items:
                return None
            kept.append({**edit, new: ", ".join([before, *items])})
            continue
        adds = _adds(after[len(before) + 1:], lines, message) if after.startswith(before + "\n") else []
        if not adds:
            return None
        kept.append({**edit, new: "\n".join([before, *adds])})
    return {**arguments, container: kept} if container is not None else kept[0]


def _items_added(written: str, line: str, message: str) -> list[str]:
    """The items of `written` (after a line that lists: "Present: Jonas, Priya, Mei") that the line does not hold
    yet and that say a word of the message, each once."""
    held = {item.strip().lower() for item in re.split(r"[,:]", line)}
    return [item for item in dict.fromkeys(part.strip() for part in written.split(",")) if item and "\n" not in item
            and item.lower() not in held and _says_a_word(item, message)]


def _adds(written: str, lines: set[str], message: str) -> list[str]:
    """The lines of `written` that are no line of the file yet and say a word of the message (three letters or
    more), each once: the 0.5B went on after "- bread" with the rest of the list, "- eggs\n- spinach…"."""
    return [line for line in dict.fromkeys(written.split("\n")) if line.strip() and line.strip() not in lines
            and _says_a_word(line, message)]


def _says_a_word(text: str, message: str) -> bool:
    """Whether `text` has a word of the message of three letters or more."""
    return bool({word for word in _WORD.findall(message.lower()) if len(word) >= 3} & set(_WORD.findall(text.lower())))


_WORD = re.compile(r"[^\W_]+")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")  # a list's item, in Markdown
_LISTING = re.compile(r"[^,\n]+,[^,\n]+,[^,\n]+$")  # a line that lists three things or more: "… Jonas, Priya, Mei"


def lines_of(text: str) -> list[str]:
    """The lines of `text` an added line may follow: its list items when it has some (an item added to a list
    follows one of them: after the title, the 0.5B's first choice, it stands outside the list), else its lines
    that are not blank; each once, the first `MOST_LINES`."""
    lines = _lines(text)
    return ([line for line in lines if _ITEM.match(line)] or lines)[:MOST_LINES]


def listing_lines(text: str) -> list[str]:
    """The lines of `text` that list things in the line, an item more going after their last (`_LISTING`): "Add Tom
    to the people present" after "Present: Jonas, Priya, Mei". The first `MOST_LINES`."""
    return [line for line in _lines(text) if _LISTING.search(line) and not _ITEM.match(line)][:MOST_LINES]


def _lines(text: str) -> list[str]:
    """The lines of `text` an edit may begin at: not blank, nor longer than `_LONGEST_LINE`, each once."""
    return [line.rstrip() for line in dict.fromkeys(text.splitlines()) if line.strip() and len(line) <= _LONGEST_LINE]


def anchored_grammar(pair: tuple[str | None, str, str], lines: list[str], listing: Sequence[str] = ()) -> str:
    """A GBNF grammar for the edit's JSON after its opening (`"<list>": ` or `"<old>": `): the old text one of
    `lines`, the new text that line, a line break and up to `_ADDED_LINES` lines added; or one of the `listing`
    lines, the new text that line, a comma and the items added."""
    close = gbnf_literal('"' if pair[0] is None else '"}]')
    more = f"( {gbnf_literal(chr(92) + 'n')} added ){{0,{_ADDED_LINES - 1}}}"  # a line break, written as JSON does
    branches = [f"( {' | '.join(_opening(pair, line, chr(92) + 'n') for line in lines)} ) added {more} {close}"
                ] if lines else []
    if listing:
        branches.append(f"( {' | '.join(_opening(pair, line, ', ') for line in listing)} ) item {close}")
    return (f"root ::= {' | '.join(branches)}\n"
            f"added ::= {_CHARACTER} {_CHARACTER}{{0,{_ADDED_LINE - 1}}}\n"
            f"item ::= {_CHARACTER} {_CHARACTER}{{0,{_ADDED_ITEM - 1}}}")


def _opening(pair: tuple[str | None, str, str], line: str, then: str) -> str:
    """The literal of an edit's JSON up to what is added: its old text `line`, its new text `line` and `then`."""
    container, old, new = pair
    inner = json.dumps(line, ensure_ascii=False)[1:-1]
    if container is None:
        return gbnf_literal(f'"{inner}", {json.dumps(new)}: "{inner}{then}')
    return gbnf_literal(f'[{{{json.dumps(old)}: "{inner}", {json.dumps(new)}: "{inner}{then}')


_CHARACTER = '[^"\\\\\\x00-\\x1f]'  # of a JSON string as written, but its end, an escape or a control character


def edit_written(head: str, written: str) -> dict[str, Any] | None:
    """The arguments of an edit written under `anchored_grammar` after `head` (the arguments up to its opening);
    None when the model was cut off."""
    try:
        arguments = json.loads(head + written + "}")
    except json.JSONDecodeError:
        return None
    return arguments if isinstance(arguments, dict) else None
