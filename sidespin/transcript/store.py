"""Conversation files: one markdown file per conversation, written whole or not at all."""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import time
from pathlib import Path

from loguru import logger

from sidespin.errors import TranscriptError
from sidespin.transcript.model import USER, Transcript, _shorten, _split_lines
from sidespin.transcript.parse import parse

__all__ = ["TranscriptStore", "Stamp"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
Stamp = tuple[int, int, int]


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

    def path(self, conversation_id: str) -> Path:
        if not _ID.fullmatch(conversation_id):
            raise TranscriptError(f"not a conversation id: {conversation_id!r}")
        return self.directory / f"{conversation_id}.md"

    def new(self) -> str:
        """Create an empty conversation file and return its id."""
        while True:
            conversation_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
            try:
                with self.path(conversation_id).open("x", encoding="utf-8"):
                    pass
            except FileExistsError:
                continue
            logger.info("TRANSCRIPT_NEW {}", conversation_id)
            return conversation_id

    def exists(self, conversation_id: str) -> bool:
        return self.path(conversation_id).is_file()

    def list(self) -> list[tuple[str, str, float]]:
        """(id, title, mtime) of every conversation, the most recent first."""
        found = []
        for path in self.directory.glob("*.md"):
            if path.name.startswith(".") or not _ID.fullmatch(path.stem):
                continue
            try:
                stat = path.stat()
                title = _scan_title(path.read_bytes().decode("utf-8", errors="replace"))
            except FileNotFoundError:
                continue  # deleted meanwhile
            found.append((path.stem, title, stat.st_mtime))
        return sorted(found, key=lambda item: item[2], reverse=True)

    def read(self, conversation_id: str) -> str:
        path = self.path(conversation_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise TranscriptError(f"no conversation {conversation_id!r}", path=str(path)) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            raise TranscriptError("not UTF-8 text", path=str(path), line=line) from None

    def load(self, conversation_id: str) -> Transcript:
        """Parse the file as it is now on disk (a hand edit is the new truth)."""
        return parse(self.read(conversation_id), path=str(self.path(conversation_id)))

    def save(self, conversation_id: str, transcript: Transcript) -> None:
        _write_atomic(self.path(conversation_id), transcript.render())

    def stamp(self, conversation_id: str) -> Stamp | None:
        """What changes when anyone rewrites the file: inode, size, mtime."""
        try:
            stat = self.path(conversation_id).stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _scan_title(text: str) -> str:
    for line in _split_lines(text):
        if line.startswith(USER) and line[len(USER):].strip():
            return _shorten(line[len(USER):])
    return "(new conversation)"
