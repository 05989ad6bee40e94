"""Conversation files: one markdown file per conversation, written whole or not at all.

A write that fails (a full disk, no permission) raises `NotSaved` and leaves the file as it was: the
new text goes to a temporary file beside it, which replaces it only once wholly written and synced.

No symbolic link is followed: a conversation file that is a link is not read (it is listed as
unreadable), and a trash folder that is a link is neither moved into nor read; so a link can never
take a read or a move out of the folder (and its data directory).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat as stat_kind
import tempfile
import time
from pathlib import Path
from typing import Callable, NamedTuple

from loguru import logger

from sidespin.errors import NotSaved, TranscriptError
from sidespin.transcript.markers import ASSISTANT, NOTE_PREFIX, USER, _marker, _note_data, _split_lines
from sidespin.transcript.model import UNTITLED, Transcript, _shorten, title_of
from sidespin.transcript.parse import parse

__all__ = ["TranscriptStore", "Stamp", "Loaded"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
Stamp = tuple[int, int, int]
Watcher = Callable[[str, "Transcript | None"], None]
_HEAD_BYTES = 64 * 1024  # what `list` reads of each file for its title
UNREADABLE = "⚠ unreadable:"  # the title `list` gives a file it cannot open
# a file's own bytes: never through a link (ELOOP), never blocking on a FIFO
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


class Loaded(NamedTuple):
    """A conversation file as it was read: its transcript, and its stamp then (None: it was not there)."""

    transcript: Transcript
    stamp: Stamp | None


def _read_file(path: Path, limit: int = -1) -> bytes:
    """The bytes of a regular file (up to `limit`), opened without following a link; OSError otherwise."""
    handle = os.open(path, _READ)
    try:
        if not stat_kind.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(handle)
        raise
    with os.fdopen(handle, "rb") as stream:
        return stream.read(limit)


def _unreadable(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "the file is a symbolic link; sidespin follows no link"
    return f"the file cannot be read ({error.strerror})"


def _is_entry(path: Path) -> bool:
    """A file or a link (not followed) is at `path`: what a move takes along."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return False
    return stat_kind.S_ISREG(mode) or stat_kind.S_ISLNK(mode)


def _write_atomic(path: Path, text: str) -> None:
    """Write a whole file or nothing: temp file beside it, fsync, rename over."""
    data = text.encode("utf-8")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    replaced = False
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        replaced = True
    finally:
        if not replaced:
            Path(temporary).unlink(missing_ok=True)


class TranscriptStore:
    """One markdown file per conversation, `<id>.md`, in one folder (usually data/conversations/)."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        # told of every file this store writes (with its transcript) or moves to or from the trash (None)
        self.watchers: list[Watcher] = []

    @property
    def trash_dir(self) -> Path:
        return self.directory / ".trash"

    def path(self, conversation_id: str) -> Path:
        if not _ID.fullmatch(conversation_id):
            raise TranscriptError(f"not a conversation id: {conversation_id!r}")
        return self.directory / f"{conversation_id}.md"

    def new(self) -> str:
        """Create an empty conversation file and return its id; `NotSaved` when none can be created."""
        while True:
            conversation_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
            try:
                with self.path(conversation_id).open("x", encoding="utf-8"):
                    pass
            except FileExistsError:
                continue
            except OSError as error:
                logger.error("TRANSCRIPT_NOT_SAVED new {}", error.strerror or error)
                raise NotSaved(str(self.directory), error.strerror or str(error)) from None
            logger.info("TRANSCRIPT_NEW {}", conversation_id)
            return conversation_id

    def exists(self, conversation_id: str) -> bool:
        try:
            return stat_kind.S_ISREG(self.path(conversation_id).lstat().st_mode)
        except FileNotFoundError:
            return False

    def list(self, *, every_version: bool = True, showing: str = "") -> list[tuple[str, str, float]]:
        """(id, title, mtime) of every conversation, the most recent first.

        `every_version=False`: of the versions an edit or a regenerate kept (the files one `versions`
        note links), one line, where the one changed last would be: that one, or `showing` if it is
        among them (the version open in the page); the others are reached from its ‹ › arrows.
        """
        return _listing(self.directory, every_version, showing)

    def trashed(self) -> list[tuple[str, str, float]]:
        """(id, title, mtime) of every conversation in the trash, the most recently changed first."""
        if self.trash_dir.is_symlink():
            logger.warning("TRASH_IS_A_LINK {}: not read", self.trash_dir)
            return []
        return _listing(self.trash_dir)

    def trash(self, conversation_id: str) -> None:
        """Move a conversation's file into the trash folder, from which `restore` brings it back."""
        path = self.path(conversation_id)
        if not _is_entry(path):
            raise TranscriptError(f"no conversation {conversation_id!r}", path=str(path))
        self.trash_dir.mkdir(exist_ok=True)
        self._move(path.name, to_trash=True)
        logger.info("TRANSCRIPT_TRASHED {}", conversation_id)
        self._tell(conversation_id, None)

    def restore(self, conversation_id: str) -> None:
        """Bring a conversation back from the trash; FileExistsError if one with its id is there already."""
        path = self.path(conversation_id)
        trashed = self.trash_dir / path.name
        if self.trash_dir.is_symlink() or not _is_entry(trashed):
            raise TranscriptError(f"no conversation {conversation_id!r} in the trash (a trash that is a symbolic "
                                  "link is not read)", path=str(trashed))
        if os.path.lexists(path):
            raise FileExistsError(f"a conversation {conversation_id!r} exists already; it was not replaced")
        self._move(path.name, to_trash=False)
        logger.info("TRANSCRIPT_RESTORED {}", conversation_id)
        self._tell(conversation_id, None)

    def _move(self, name: str, *, to_trash: bool) -> None:
        """Rename `name` between the folder and its trash, both held open: the trash is never a link followed."""
        folder = os.open(self.directory, _FOLDER)
        try:
            try:
                trash = os.open(self.trash_dir, _FOLDER | os.O_NOFOLLOW)
            except OSError as error:  # ELOOP: a link; ENOTDIR: a file in its place
                logger.warning("TRASH_REFUSED {}: {}", self.trash_dir, error.strerror)
                raise TranscriptError("the trash folder is a symbolic link or not a folder; nothing was moved",
                                      path=str(self.trash_dir)) from None
            try:
                source, target = (folder, trash) if to_trash else (trash, folder)
                os.replace(name, name, src_dir_fd=source, dst_dir_fd=target)
            finally:
                os.close(trash)
        finally:
            os.close(folder)

    def _tell(self, conversation_id: str, transcript: Transcript | None) -> None:
        for watcher in self.watchers:
            watcher(conversation_id, transcript)

    def read(self, conversation_id: str) -> str:
        path = self.path(conversation_id)
        try:
            data = _read_file(path)
        except FileNotFoundError:
            raise TranscriptError(f"no conversation {conversation_id!r}", path=str(path)) from None
        except OSError as error:  # a link, a folder in its place, no permission, …
            logger.warning("TRANSCRIPT_UNREADABLE {}: {}", path, error.strerror)
            raise TranscriptError(_unreadable(error), path=str(path)) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            raise TranscriptError("not UTF-8 text", path=str(path), line=line) from None

    def load(self, conversation_id: str) -> Transcript:
        """Parse the file as it is now on disk (a hand edit is the new truth)."""
        return parse(self.read(conversation_id), path=str(self.path(conversation_id)))

    def load_stamped(self, conversation_id: str) -> Loaded:
        """`load`, with the stamp the file had when it was read: whoever holds it later can tell whether
        the file changed since (`stamp`) without reading it again."""
        stamp = self.stamp(conversation_id)  # before reading: a write meanwhile makes the stamps differ
        return Loaded(self.load(conversation_id), stamp)

    def save(self, conversation_id: str, transcript: Transcript) -> None:
        """Write the whole file or nothing; `NotSaved` when it cannot be written (the file is then as it was)."""
        path = self.path(conversation_id)
        try:
            _write_atomic(path, transcript.render())
        except OSError as error:
            logger.error("TRANSCRIPT_NOT_SAVED conv={} {}", conversation_id, error.strerror or error)
            raise NotSaved(str(path), error.strerror or str(error)) from None
        self._tell(conversation_id, transcript)

    def stamp(self, conversation_id: str) -> Stamp | None:
        """What changes when anyone rewrites the file: inode, size, mtime."""
        try:
            stat = self.path(conversation_id).lstat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _listing(folder: Path, every_version: bool = True, showing: str = "") -> list[tuple[str, str, float]]:
    found, linked = [], {}
    for path in folder.glob("*.md"):
        if path.name.startswith(".") or not _ID.fullmatch(path.stem):
            continue
        try:
            stat = path.lstat()
            head = _split_lines(_read_file(path, _HEAD_BYTES).decode("utf-8", errors="replace"))
        except FileNotFoundError:
            continue  # deleted meanwhile
        except OSError as error:  # listed, so that a person sees it; the others are listed as ever
            logger.warning("TRANSCRIPT_UNREADABLE {}: {}", path, error.strerror)
            found.append((path.stem, f"{UNREADABLE} {path.name}", _mtime(path)))
            continue
        found.append((path.stem, _scan_title(head), stat.st_mtime))
        linked[path.stem] = _scan_versions(head)
    found.sort(key=lambda item: item[2], reverse=True)
    if every_version:
        return found
    by_id = {item[0]: item for item in found}
    shown, hidden = [], set()
    for item in found:  # newest first: the first of a family is shown, the rest hidden
        if item[0] in hidden:
            continue
        family, todo = set(), [item[0]]
        while todo:  # the versions of any of its turns, and theirs
            member = todo.pop()
            if member not in family:
                family.add(member)
                todo.extend(linked.get(member, ()))
        hidden |= family
        if showing in family and showing in by_id:  # in the family's place (and day), under its own title
            item = (showing, by_id[showing][1], item[2])
        shown.append(item)
    return shown


def _mtime(path: Path) -> float:
    try:
        return path.lstat().st_mtime
    except OSError:
        return 0.0


def _scan_versions(head: list[str]) -> set[str]:
    """The ids a file's `versions` note links it to (sidespin.versions), read from its top lines like the title."""
    linked: set[str] = set()
    for line in head:
        marker = _marker(line)
        if marker == USER:
            break
        if marker == NOTE_PREFIX:
            groups = (_note_data(line) or {}).get("versions")
            if isinstance(groups, dict):
                linked.update(m for ids in groups.values() if isinstance(ids, list) for m in ids if isinstance(m, str))
    return linked


def _scan_title(head: list[str]) -> str:
    """`Transcript.title` read from the top of a file without parsing it: the title a person gave
    (the note before the first 💬:), else the first message (a Poke as "🏓 tool"), else the first answer's line."""
    where, user, note = "preamble", [], {}
    for line in head:
        marker = _marker(line)
        if where == "user" and marker in (None, NOTE_PREFIX):
            if marker is None:
                user.append(line)
            else:  # what the message carries besides its text (a Poke's tool)
                note.update(_note_data(line) or {})
            continue
        if "".join(user).strip():
            return title_of("".join(user), note)
        if marker == USER:
            where, user = "user", [line[len(USER):]]
        elif marker == ASSISTANT:
            where = "answer"
        elif where == "preamble" and marker == NOTE_PREFIX:
            given = (_note_data(line) or {}).get("title")
            if isinstance(given, str) and given.strip():
                return _shorten(given)
        elif where == "answer" and marker is None and line.strip():
            return _shorten(line)
        elif marker is not None:
            where = "elsewhere"  # thoughts, calls, results: not a title
    return title_of("".join(user), note) if "".join(user).strip() else UNTITLED
