"""Which of many tools the decision reads: one *table* at a time, the one most relevant to the message.

A table is one source's tools (an MCP server's, or the plugins'), in their listed order; a source
whose tools weigh more than the budget is cut into as few even tables as fit (`tables`). The
tables never change while the tools do not, so each one's decision prompt is evaluated once and
kept (`sidespin.llm.embedded`): a decision then costs only the conversation's tokens. A table
also keeps a small model among tools made to be used together: offered ten tools from five
servers, the 0.5B answered "make a folder" with the memory server's `create_entities`.

Which table (`table_for`): BM25 (SQLite's FTS5, with the Porter stemmer) ranks the tools by their name
split into words, their description and their parameters' names and descriptions; the query is the words
of the last user message that carry meaning (not "the", "to", "that" …, nor numbers), and "file" when it
names one ("budget.csv"), and "current time" when it asks the date or the time it is now, or of the one
before when the last matches no tool. A table scores its best tool's BM25 score and a fifth of its
second best's (`_SECOND`), and half the best table's more when it holds a tool the conversation already
called (a follow-up often needs the same tool again, or its sibling). Not the sum over its tools: a big
server's many tools each matching a common word outvote the one tool made for the message. Offered
beside the five MCP reference servers' 52 tools, the question's own functions were chosen for 391 of
BFCL's 400 simple_python questions (267 summing inverse ranks), 198 of 200 multiple, 217 of 258
live_simple and 985 of 1,053 live_multiple (171, 145, 924); the best tool alone gave 390, 198, 218, 978,
half the second 387, 196, 212, 989; "Get the working hours of Louvre Museum in Paris." went to the file
server, whose 14 tools all say where they "work". A table whose server works in a folder the message
names (`Tool.places`) is chosen whatever the words ("open /home/me/notes/ideas.md" is the file server's,
though the memory server has `open_nodes`); so is, for a message that points back at "that file" (or "the
same list" …), the table of the tool the conversation called last. With no word in common, no table is
chosen: the route asks the model (`sidespin.route`).

`shares_a_word`: whether any offered tool shares a word with those messages at all. When none
does, no tool was called yet, the message is in the tools' own language and it asks for nothing
to be changed, the route answers in words without asking the model: "Hello" or "What's the
capital of Portugal?" name nothing any tool does. A request to change something is left to the
model (`sidespin.grounding.asks_for_a_change`): "Remember that my favourite colour is green."
shares no word with the memory server's tools, which store "entities" and "observations"
(on BFCL it takes 8 of the 884 live_irrelevance questions to the model, and 2 of live_simple's).
Words can only be compared within one language: a message counts as in the tools' language
when it shares a function word ("the", "for", "is" …) with their text, or is too short to have
one (three words at most). "¿Qué hora es ahora en Madrid?" is left to the
model, which knows `get_time` is about the time.

Measured on all of BFCL v4 (no model needed), the rule answers without the model 111 of 240
irrelevance and 320 of 884 live_irrelevance questions, and would refuse 5 of 400 simple_python,
2 of 200 multiple, 13 of 258 live_simple and 18 of 1,053 live_multiple questions that need a
call (meanings without a shared word: "listen to some music" for `play_song`). On the built-in
tools' 89 everyday prompts: 10 of the 32 that need no tool, and 4 of the 57 that need one
("Throw a d20 for me."; the route had 2 of those 4 right). Without the language check it cost
11 right decisions there, most of them asked in French, Spanish or German.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from typing import Any, Callable, Iterator, Sequence

from sidespin.tools import Tool

__all__ = ["DOMAINS", "answered_calls", "called_tools", "last_said", "names_said", "shares_a_word", "table_for",
           "tables", "words_matched", "words_of"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# words that match every description and tell no tool from another
_STOP = frozenset("""a an and are as at be but by can could do does for from have how i in is it its me my of on or
please so that the their them then there these this to was we what when where which who will with would you your
now same just some any all also get give tell show let lets want need about""".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SHORT_MESSAGE = 3  # words: "Hello", "Good morning!" have no function word to tell their language by
_SECOND = 0.2  # what a table's second best tool adds to its best one's score, as a share of its own (`table_for`)


def words_of(text: str) -> list[str]:
    """The words of a name or a sentence: `getCurrentWeather`, `get_current_weather` → get current weather."""
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text))]


def telling_words(text: str) -> list[str]:
    """`words_of` the text that tell something: not the function words of `_STOP`, nor single letters."""
    return [w for w in words_of(text) if w not in _STOP and len(w) > 1]


# an example value in a parameter's description: "(e.g., 'Asia/Tokyo', 'America/San_Francisco')", or one
# quoted: "such as 'Los Angeles, CA'" (not the apostrophe of "user's")
_EXAMPLE = re.compile(r"\((?:e\.\s?g\.|eg\b|for example)[^()]*\)|(?<![^\W_])'[^'\n]*'(?![^\W_])|\"[^\"\n]*\"",
                      re.IGNORECASE)


def _document(tool: Tool, examples: bool = True) -> tuple[str, str]:
    """A tool's name and body as indexed: the body its description and its parameters' names and descriptions,
    the latter without their "(e.g., …)" example values unless `examples`."""
    parameters = " ".join(
        f"{name} {(schema or {}).get('description') or ''}" for name, schema in tool.parameters.items()
    )
    if not examples:
        parameters = _EXAMPLE.sub(" ", parameters)
    return " ".join(words_of(tool.name)), " ".join(words_of(f"{tool.description} {parameters}"))


def _user_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]


def last_said(messages: Sequence[dict[str, Any]]) -> str:
    """The last user message's text ("" when none)."""
    said = _user_texts(messages)
    return said[-1] if said else ""


def _queries(messages: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The meaningful words of the last user message, then of the one before it; a message naming a file
    ("budget.csv", "notes/meeting.md") has the word "file" too (`_names_a_file`). Not numbers: "10" in
    'change "Tuesday at 10:00" to …' matched a tool's "1-10" and read the wrong server's table. Without them, beside
    the reference servers, BFCL's own table is read for 1 more of simple_python's 400 questions, 1 more of
    live_simple's 258 and 6 more of live_multiple's 1,053, and no question that needs a call loses its shared word
    (4 of live_irrelevance's 884, "I want to buy 10 wheat hot chicken legs …", are answered in words)."""
    said = _user_texts(messages)
    return [list(dict.fromkeys([*(w for w in telling_words(text) if not w.isdigit()),
                                *(["file"] if _names_a_file(text) else []),
                                *(["current", "time"] if _ASKS_NOW.search(text) else [])]))
            for text in said[-2:][::-1]]


# a question for the date or the time it is now ("What's today's date?", "What day is it?", "what time is it now"):
# it asks for the current time, a word it need not say. "What's today's date?" shared only "date" with `git_log`
# (whose commits are filtered by dates), and "What day is it today?" no word with any of the reference servers' tools.
# "What's the date of the last commit?" asks for no now.
_ASKS_NOW = re.compile(
    r"(?i)\b(?:what|which)\b(?:'s| is)?(?:\s+(?:the|today's))?\s+(?:date|day|time)\b"
    r"(?:\s+is\s+it\b|(?:\s+(?:is|it|right|exactly))*\s+(?:today|now)\b)|\btoday'?s date\b")


# a file's name, with or without its folders: a lower-case extension of up to four characters after a letter or digit
_FILE_NAME = re.compile(r"^[\w./~\\%-]*[^\W_]\.([a-z][a-z0-9]{0,3})$")
DOMAINS = frozenset("com org net io co gov edu ai app dev info".split())  # "facebook.com" names a site, not a file


def _names_a_file(text: str) -> bool:
    """Whether the text names a file: "Wie groß ist die Datei budget.csv?" and "Peux-tu lire le fichier budget.csv ?"
    share no word with the file server's tools, and read the time server's table (the likeliest call) instead.
    Measured without the model on BFCL beside the reference servers (`bench_bfcl.py --beside`): no question of
    simple_python, multiple, live_simple or live_multiple reads another table for it, and 1 of live_irrelevance's
    884 ("can you remove background from cat.jpeg") is asked of the model instead of answered in words."""
    for token in text.split():
        name = _FILE_NAME.match(token.strip(".,;:!?()[]\"'`"))
        if name and "://" not in token and "@" not in token and name.group(1) not in DOMAINS:
            return True
    return False


def answered_calls(messages: Sequence[dict[str, Any]]) -> list[tuple[int, str, dict[str, Any], str]]:
    """Each call of `messages` that has its answer: the place of the message that made it, its tool, arguments,
    answer."""
    answers = {m.get("tool_call_id"): str(m.get("content") or "") for m in messages if m.get("role") == "tool"}
    made = []
    for place, message in enumerate(messages):
        for one in message.get("tool_calls") or []:
            function = one.get("function") or {}
            if one.get("id") in answers:
                with contextlib.suppress(json.JSONDecodeError):
                    arguments = json.loads(function.get("arguments") or "{}")
                    made.append((place, str(function.get("name")), arguments, answers[one.get("id")]))
    return made


def called_tools(messages: Sequence[dict[str, Any]]) -> set[str]:
    """The names of the tools `messages` called."""
    return {
        str((call.get("function") or {}).get("name"))
        for message in messages for call in message.get("tool_calls") or []
    }


def tables(tools: Sequence[Tool], weigh: Callable[[Tool], int], budget: int) -> list[list[Tool]]:
    """`tools` in tables: each source's together, in their listed order, cut into as few even parts as keep
    each within `budget` (by `weigh`, what a tool costs the decision)."""
    sources: dict[str, list[Tool]] = {}
    for tool in tools:  # the plugins (`plugin:dice`, `plugin:web` …) are one source
        source = "plugin" if tool.source.startswith("plugin") else tool.source
        sources.setdefault(source, []).append(tool)
    cut: list[list[Tool]] = []
    for listed in sources.values():
        parts = max(1, -(-sum(weigh(t) for t in listed) // budget))
        size = -(-len(listed) // parts)
        cut.extend(listed[i : i + size] for i in range(0, len(listed), size))
    return cut


def table_for(cut: Sequence[Sequence[Tool]], messages: Sequence[dict[str, Any]]) -> Sequence[Tool] | None:
    """The table of `cut` most relevant to the last user messages; None when none shares a word with them (nor
    names a folder a server works in, nor points back at a file or a list after a call: `_REFERS_BACK`)."""
    said = last_said(messages)
    named = [index for index, table in enumerate(cut) if any(_names_folder(said, tool.places) for tool in table)]
    if not named and _REFERS_BACK.search(said) and (last := _last_called(messages)):
        named = [index for index, table in enumerate(cut) if any(tool.name == last for tool in table)]
    everything = [tool for table in cut for tool in table]
    scored = next((found for query in _queries(messages) if (found := _scored(everything, query))), [])
    if not scored:
        return cut[named[0]] if named else None
    table_of = {tool.name: index for index, table in enumerate(cut) for tool in table}
    best: dict[int, list[float]] = {}
    for tool, score in scored:  # best first
        best.setdefault(table_of[tool.name], []).append(score)
    called = called_tools(messages)

    def score(index: int) -> float:
        bonus = scored[0][1] / 2 if {t.name for t in cut[index]} & called else 0.0
        return sum(found * weight for found, weight in zip(best.get(index, []), (1, _SECOND))) + bonus

    return cut[max(named or range(len(cut)), key=score)]


# a message that points back at a file or a list the conversation has had: "Add Tom to the people present in that
# file." after the file server read it went to the git server's table for "add" (`git_add`)
# ("this list: 3, 1, 2" brings its own)
_REFERS_BACK = re.compile(r"(?i)\b(?:that|the same)\s+(?:file|list|document|note|page|folder)\b")


def _last_called(messages: Sequence[dict[str, Any]]) -> str | None:
    """The name of the tool the conversation called last."""
    calls = [call for message in messages for call in message.get("tool_calls") or []]
    return str((calls[-1].get("function") or {}).get("name")) if calls else None


def _names_folder(said: str, places: Sequence[str]) -> bool:
    """Whether the message names one of the folders a server works in (`Tool.places`)."""
    return any(folder.rstrip("/") in said for folder in places if folder.strip("/"))


def shares_a_word(tools: Sequence[Tool], messages: Sequence[dict[str, Any]], among: Sequence[Tool] = (), *,
                  other_language: bool = True) -> bool:
    """Whether the last two user messages share a meaningful word with any of `tools`, or one was called, or
    (`other_language`) the last message is in another language than the tools' (`among`, when more tools are
    offered than asked about: then words cannot tell). A message sharing a word with another of `among` is in
    their language: "What's today's date?" has one function word, "what", which no reference server's tool has,
    but `git_log` speaks of dates (on BFCL's right answers this refuses none more)."""
    queries = _queries(messages)
    if called_tools(messages) & {t.name for t in tools} or any(_ranked(tools, q) for q in queries):
        return True
    words = words_of(last_said(messages))
    if not other_language or len(words) <= _SHORT_MESSAGE or (among and any(_ranked(among, q) for q in queries)):
        return False
    function_words = {w for w in words if w in _STOP and len(w) > 1}
    tools_words = {w for tool in among or tools for part in _document(tool) for w in part.split()}
    return not function_words & tools_words


def words_matched(tools: Sequence[Tool], messages: Sequence[dict[str, Any]]) -> dict[str, set[str]]:
    """For each of `tools`, the meaningful words of the last user message its text matches (stemmed as the
    tables': "restaurants" matches "restaurant"), not counting its parameters' example values ("(e.g., …)", or
    quoted): the word of its own another call needs (`sidespin.grounding.word_of_its_own`). `convert_time`'s
    "(e.g., 'Asia/Tokyo', …)" matched "What time is it in Tokyo right now?", so after `get_current_time` had
    answered it the 0.5B converted Tokyo's time to Tokyo's, twice, and both calls failed; a train search's "such
    as 'Los Angeles, CA'" let it follow the tickets booked to Los Angeles with a search no one asked for.
    Whether a message shares a word with a tool at all, and which table it reads, count the examples: on BFCL,
    leaving them out lost 7 questions that need a call ("Order me pizza", whose tool gives "(e.g., 'PIZZA',
    'BURGER')") and won 3 of irrelevance."""
    query = next(iter(_queries(messages)), [])
    matched: dict[str, set[str]] = {tool.name: set() for tool in tools}
    with _indexed(tools, examples=False) as db:
        for word in query:
            for (row,) in db.execute("SELECT rowid FROM tools WHERE tools MATCH ?", (f'"{word}"',)):
                matched[tools[row].name].add(word)
    return matched


def names_said(tools: Sequence[Tool], messages: Sequence[dict[str, Any]]) -> list[Tool]:
    """The tools whose name the last user message says: every meaningful word of the name (not a number, nor a
    function word: "get", nor one every name of `tools` has: the reference git server's "git"), stemmed as the
    tables' ("what movies are playing" says `get_movies`; "what the weather will be like" says
    `Weather_1_GetWeather`)."""
    query = next(iter(_queries(messages)), [])
    if not query:
        return []
    of_name = {tool.name: [w for w in dict.fromkeys(telling_words(tool.name)) if not w.isdigit()] for tool in tools}
    shared = set.intersection(*(set(words) for words in of_name.values())) if len(tools) > 1 else set()
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE said USING fts5(words, tokenize='porter unicode61')")
        db.execute("INSERT INTO said(words) VALUES (?)", (" ".join(query),))

        def said(word: str) -> bool:
            return db.execute("SELECT count(*) FROM said WHERE said MATCH ?", (f'"{word}"',)).fetchone()[0] > 0

        return [tool for tool in tools if (words := [w for w in of_name[tool.name] if w not in shared])
                and all(said(w) for w in words)]


def _ranked(tools: Sequence[Tool], query: list[str]) -> list[Tool]:
    """The tools sharing a word with the query, best BM25 first (the name weighs twice the description)."""
    return [tool for tool, _ in _scored(tools, query)]


def _scored(tools: Sequence[Tool], query: list[str]) -> list[tuple[Tool, float]]:
    """The tools sharing a word with the query and their BM25 scores (higher is better), best first."""
    if not query:
        return []
    with _indexed(tools) as db:
        match = " OR ".join(f'"{word}"' for word in query)
        rows = db.execute("SELECT rowid, -bm25(tools, 2.0, 1.0) AS score FROM tools WHERE tools MATCH ? "
                          "ORDER BY score DESC", (match,))
        return [(tools[row], score) for row, score in rows]


@contextlib.contextmanager
def _indexed(tools: Sequence[Tool], examples: bool = True) -> Iterator[sqlite3.Connection]:
    """An in-memory FTS5 table of the tools' documents, rowid = index in `tools`."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE tools USING fts5(name, body, tokenize='porter unicode61')")
        db.executemany("INSERT INTO tools(rowid, name, body) VALUES (?, ?, ?)",
                       [(index, *_document(tool, examples)) for index, tool in enumerate(tools)])
        yield db
