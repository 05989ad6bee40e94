"""Full-text search over every conversation: an SQLite FTS5 index derived from the markdown files.

The rules, before the code:

- The files are the truth. The index (`search.sqlite3` in the data directory) may be deleted at
  any time: it is built again when it is missing, unreadable (corrupt) or made by another
  version of this module (`SCHEMA`).
- What is indexed, per turn: the person's text (a Poke as the line the page shows) and the
  answer's visible text. Not the calls, results, thoughts or notes.
- It is kept current two ways. The store tells the index of every file it writes (while an
  answer streams, at most once a second) and of every file it moves to or from the trash. And each search first compares every file's (inode, size, mtime) stamp with the one
  indexed: changed and new files are indexed again, deleted ones dropped. A hand edit is thus
  found by the next search.
- A query of plain words finds messages holding every word, the last one as a prefix (a word
  being typed: "zepp" finds "zeppelins"). A query using FTS5 syntax ("a phrase", OR, NOT, NEAR,
  prefix*, …) is tried as such; when that is not valid FTS5 or finds nothing, as plain words.
- Every search is bounded. SQLite finds and ranks the matches under a deadline (`SEARCH_SECONDS`,
  checked by a progress handler, which also stops it at once when its `cancel` event is set): out
  of time, `SearchStopped` says so. The snippets are cut here, not by FTS5's `snippet()` or
  `highlight()`, whose cost grows with the square of a message's matches (40 KB of "a a a …" took
  31 s): a linear scan of at most `SNIPPET_SCAN` characters of each message; a hit whose turn comes
  after the deadline gets the start of its message instead.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import stat
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from loguru import logger

from sidespin.errors import SearchStopped, TranscriptError
from sidespin.transcript import Text, Transcript, TranscriptStore

__all__ = ["SearchIndex", "Hit", "INDEX_FILE", "MARK"]

INDEX_FILE = "search.sqlite3"
SCHEMA = 2  # 2: files.turns, so a hit links to the page of a long conversation that draws it
MARK = ("\x02", "\x03")  # around each matched word of a snippet; removed from indexed text
SAVE_INTERVAL = 1.0  # seconds between two indexings of a conversation the store writes
SEARCH_SECONDS = 2.0  # what SQLite may spend finding and ranking the matches of one search
SNIPPET_SCAN = 100_000  # characters of a message looked through for its snippet
SNIPPET_CHARS = 160  # about FTS5's 16 tokens
_CHECK_EVERY = 1000  # SQLite virtual machine steps between two looks at the deadline
_OPERATORS = {"AND", "OR", "NOT", "NEAR"}
_UNMARK = str.maketrans("", "", "".join(MARK))
_PLAIN = re.compile(r"(?!.*\b(?:AND|OR|NOT|NEAR)\b)[\w\s]*")  # words only: no FTS5 syntax in it
_CREATE = """
CREATE TABLE files(conversation TEXT PRIMARY KEY, inode INTEGER, size INTEGER, mtime_ns INTEGER,
                   mtime REAL, title TEXT, turns INTEGER);
CREATE VIRTUAL TABLE messages USING fts5(body, conversation UNINDEXED, turn UNINDEXED, role UNINDEXED,
                                         tokenize = 'unicode61 remove_diacritics 2');
"""


@dataclass(frozen=True)
class Hit:
    """One message that matched: its conversation, turn number and role, and a snippet of it."""

    conversation: str
    title: str
    turn: int
    role: str  # "user" or "assistant"
    snippet: str  # matched words between MARK[0] and MARK[1]
    when: float  # the file's last change (seconds since the epoch)
    turns: int = 0  # how many turns its conversation has (a long one is drawn a window at a time)

    @property
    def text(self) -> str:
        """The snippet without its marks."""
        return self.snippet.translate(_UNMARK)


def messages_of(transcript: Transcript) -> Iterator[tuple[int, str, str]]:
    """(turn index, role, text) of what a person sees of each turn."""
    for index, turn in enumerate(transcript.turns):
        if turn.user:
            tool = turn.poke
            yield index, "user", f"🏓 Poke: call {tool}" if tool else turn.user
        answer = "".join(segment.raw for segment in turn.segments if isinstance(segment, Text)).strip()
        if answer:
            yield index, "assistant", answer


class _Folded(dict):
    """A `str.translate` table: each character to ONE character, lower case and without its accent (as the
    index's tokenizer folds it), so a folded text's offsets are the original's."""

    def __missing__(self, code: int) -> str:
        base = unicodedata.normalize("NFKD", chr(code).lower())[:1] or chr(code)
        self[code] = base
        return base


_FOLD = _Folded()


def _word_pattern(query: str) -> re.Pattern[str] | None:
    """The query's words, each as the start of a word (as FTS5 matches a prefix), folded."""
    words = {word.translate(_FOLD) for word in re.findall(r"\w+", query) if word not in _OPERATORS}
    if not words:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\w*")


def cut_snippet(text: str, pattern: re.Pattern[str] | None) -> str:
    """About `SNIPPET_CHARS` of `text` around its first match of `pattern`, each match marked with MARK;
    linear in the length of the text it looks through (at most `SNIPPET_SCAN`)."""
    folded = text[:SNIPPET_SCAN].translate(_FOLD)
    first = pattern.search(folded) if pattern is not None else None
    start = 0
    if first is not None and first.start() > SNIPPET_CHARS // 3:
        start = first.start() - SNIPPET_CHARS // 4
        start = folded.find(" ", start, first.start()) + 1 or start  # from a word's start
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        end = folded.rfind(" ", first.end() if first is not None and first.end() < end else start, end) + 1 or end
    pieces, at = [], start
    for match in (pattern.finditer(folded, start, end) if pattern is not None else ()):
        pieces += [text[at:match.start()], MARK[0], text[match.start():match.end()], MARK[1]]
        at = match.end()
    pieces.append(text[at:end])
    return ("…" if start > 0 else "") + "".join(pieces).strip() + ("…" if end < len(text) else "")


def plain_words(query: str) -> str:
    """The query as an FTS5 expression of plain words: each quoted, the last one a prefix."""
    terms = ['"' + term.replace('"', '""') + '"' for term in query.split()]
    if terms:
        terms[-1] += "*"
    return " ".join(terms)


class SearchIndex:
    """The FTS5 index of one store's conversations, in the SQLite file `path` (opened on first use)."""

    def __init__(self, path: Path | str, store: TranscriptStore) -> None:
        self.path = Path(path)
        self.store = store
        self._lock = threading.RLock()  # the server writes from its loop, a test or the CLI from another thread
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._indexed_at: dict[str, float] = {}
        store.watchers.append(self._saved)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> "SearchIndex":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- the file ----

    def _connection(self) -> sqlite3.Connection:
        """The open index; opened, or built again, when it is missing, replaced, corrupt or stale."""
        try:
            info = self.path.lstat()
            inode = info.st_ino
        except FileNotFoundError:
            inode = None
        else:
            if stat.S_ISLNK(info.st_mode):  # never written through: it is built again here
                logger.warning("SEARCH_INDEX_LINK {}: a symbolic link, removed and built again", self.path)
                self.close()
                self._remove()
                inode = None
        if self._db is not None:
            if inode == self._inode:
                return self._db
            logger.warning("SEARCH_INDEX_{} {}: opened again", "GONE" if inode is None else "REPLACED", self.path)
            self.close()
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as error:
            logger.warning("SEARCH_INDEX_CORRUPT {} ({}): built again", self.path, error)
            self._remove()
            self._db = self._open()
        self._inode = self.path.lstat().st_ino
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        try:
            db.execute("PRAGMA synchronous = OFF")  # derived data: a crash costs a rebuild, never a file
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version == SCHEMA and {"files", "messages"} <= tables:
                db.execute("SELECT count(*) FROM files").fetchone()
                return db
            if tables:
                logger.info("SEARCH_INDEX_STALE {} (version {}, expected {}): built again", self.path, version, SCHEMA)
                db.close()
                self._remove()
                db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
                db.execute("PRAGMA synchronous = OFF")
            db.executescript(_CREATE + f"PRAGMA user_version = {SCHEMA};")
            logger.info("SEARCH_INDEX_CREATED {}", self.path)
            return db
        except sqlite3.DatabaseError:
            db.close()
            raise

    def _remove(self) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    # ---- keeping it current ----

    def _saved(self, conversation_id: str, transcript: Transcript | None) -> None:
        """The store wrote a file (`transcript`) or moved one to or from the trash (None)."""
        now = time.monotonic()
        writing = transcript is not None and bool(transcript.turns) and transcript.turns[-1].model is not None
        if writing and now - self._indexed_at.get(conversation_id, float("-inf")) < SAVE_INTERVAL:
            return  # an answer streams: the next search finds the file's new stamp and catches up
        self._indexed_at[conversation_id] = now
        try:
            with self._lock:
                if transcript is None:
                    self._index_file(self._connection(), conversation_id)
                else:
                    self._write(self._connection(), conversation_id, transcript, self.store.stamp(conversation_id))
        except sqlite3.Error as error:  # the index is a cache: a failure here must not stop a conversation
            logger.warning("SEARCH_INDEX_WRITE_FAILED conv={} {}", conversation_id, error)

    def refresh(self) -> int:
        """Index again every file whose stamp changed, drop the deleted ones; return how many changed."""
        with self._lock:
            db = self._connection()
            indexed = {row[0]: tuple(row[1:]) for row in
                       db.execute("SELECT conversation, inode, size, mtime_ns FROM files")}
            on_disk = {cid: self.store.stamp(cid) for cid in self._conversation_ids()}
            changed = 0
            for cid in indexed.keys() - on_disk.keys():
                self._drop(db, cid)
                changed += 1
            for cid, stamp in on_disk.items():
                if stamp is not None and indexed.get(cid) != stamp:
                    self._index_file(db, cid)
                    changed += 1
            if changed:
                logger.info("SEARCH_INDEX_REFRESHED {} conversation(s) changed", changed)
            return changed

    def _conversation_ids(self) -> list[str]:
        ids = []
        for path in self.store.directory.glob("*.md"):
            try:
                self.store.path(path.stem)
            except TranscriptError:
                continue  # not a conversation's name (a temporary file, a stray note)
            ids.append(path.stem)
        return ids

    def _index_file(self, db: sqlite3.Connection, conversation_id: str) -> None:
        """Index a file as it is on disk; an unreadable one is indexed empty until it changes again."""
        stamp = self.store.stamp(conversation_id)  # before reading: a write meanwhile changes it again
        if stamp is None:
            self._drop(db, conversation_id)
            return
        try:
            transcript = self.store.load(conversation_id)
        except TranscriptError as error:
            logger.warning("SEARCH_INDEX_UNREADABLE {}", error)
            transcript = Transcript()
        self._write(db, conversation_id, transcript, stamp)

    def _write(self, db: sqlite3.Connection, conversation_id: str, transcript: Transcript,
               stamp: tuple[int, int, int] | None) -> None:
        if stamp is None:
            return
        rows = [(text.translate(_UNMARK), conversation_id, index, role)
                for index, role, text in messages_of(transcript)]
        with _transaction(db):
            db.execute("DELETE FROM messages WHERE conversation = ?", (conversation_id,))
            db.executemany("INSERT INTO messages(body, conversation, turn, role) VALUES (?, ?, ?, ?)", rows)
            db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (conversation_id, *stamp, stamp[2] / 1e9, transcript.title(), transcript.filled_turns))
        logger.debug("SEARCH_INDEXED conv={} messages={}", conversation_id, len(rows))

    def _drop(self, db: sqlite3.Connection, conversation_id: str) -> None:
        with _transaction(db):
            db.execute("DELETE FROM messages WHERE conversation = ?", (conversation_id,))
            db.execute("DELETE FROM files WHERE conversation = ?", (conversation_id,))
        logger.debug("SEARCH_DROPPED conv={}", conversation_id)

    # ---- searching ----

    def search(self, query: str, limit: int = 50, *, seconds: float = SEARCH_SECONDS,
               cancel: threading.Event | None = None) -> list[Hit]:
        """The messages matching `query`, best first (see the module docstring for the syntax).

        Raises `SearchStopped` when finding and ranking them takes over `seconds`, or `cancel` is set.
        """
        if not query.strip():
            return []
        deadline = time.monotonic() + seconds

        def stop() -> bool:
            return time.monotonic() > deadline or (cancel is not None and cancel.is_set())

        try:
            with self._lock:
                self.refresh()
                return self._matches(query, limit, stop)
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
                raise
            logger.warning("SEARCH_INDEX_CORRUPT {} ({}): built again", self.path, error)
            with self._lock:
                self.close()
                self._remove()
                self.refresh()
                return self._matches(query, limit, stop)

    def _matches(self, query: str, limit: int, stop: Callable[[], bool]) -> list[Hit]:
        db = self._connection()
        tries = [plain_words(query)] if _PLAIN.fullmatch(query) else [query, plain_words(query)]
        db.set_progress_handler(lambda: int(stop()), _CHECK_EVERY)  # a true answer interrupts the statement
        try:
            for expression in tries:
                try:
                    rows = db.execute(
                        "SELECT messages.conversation, files.title, messages.turn, messages.role,"
                        " substr(messages.body, 1, ?), files.mtime, files.turns"
                        " FROM messages JOIN files ON files.conversation = messages.conversation"
                        " WHERE messages MATCH ? ORDER BY rank LIMIT ?",
                        (SNIPPET_SCAN, expression, limit)).fetchall()
                except sqlite3.OperationalError as error:  # not FTS5 syntax (an unclosed quote, a lone AND …)
                    if stop():
                        logger.warning("SEARCH_STOPPED chars={}: out of time, or its client left", len(query))
                        raise SearchStopped("the search took too long and was stopped; try fewer, longer or rarer "
                                            "words") from None
                    logger.debug("SEARCH_QUERY_NOT_FTS {!r}: {}", query, error)
                    continue
                if rows:
                    return self._hits(rows, query, stop)
            return []
        finally:
            db.set_progress_handler(None, _CHECK_EVERY)

    def _hits(self, rows: list[tuple[Any, ...]], query: str, stop: Callable[[], bool]) -> list[Hit]:
        """The rows as hits, each with its snippet (after the deadline: the start of its message)."""
        pattern = _word_pattern(query)
        hits = []
        for cid, title, turn, role, body, mtime, turns in rows:
            snippet = cut_snippet(body, None if stop() else pattern)
            hits.append(Hit(cid, title, int(turn), role, snippet, mtime, turns or 0))
        return hits


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN … COMMIT, or ROLLBACK when the block raises (the connection is in autocommit mode)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
