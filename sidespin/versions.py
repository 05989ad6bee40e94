"""Versions, forks and imports of conversations: operations over a `TranscriptStore`, nothing else.

The rules, before the code:

- **Nothing is lost.** Editing the user message of turn i (or regenerating its answer) first
  copies the whole conversation, as it is, into a NEW file: a version. Only then does the
  conversation keep its turns before i, to play turn i again (the caller starts that turn).
- **A version group** is the files that are the same conversation up to turn i and differ from
  it on. Every member keeps the whole group, oldest first, in its note at the top:
  `{"versions": {"<i>": ["<id>", ...]}}`; so any member draws "‹ 2/3 ›" at its message i without
  reading another file. The conversation being edited stays the newest member (its id is the one a
  person has open and links to); its copy takes its old place in the list.
- Groups of later turns (> i) belong to the old content: they move to the copy, and their other
  members are pointed at the copy. Groups of earlier turns stay with the conversation.
- **Reuse.** The tool results recorded in the replaced turns (i and after) are handed back, so
  playing turn i again runs no call that already ran, unless a person asks (`RallyOptions.reuse`).
  A call that did not run (refused, denied, cut, interrupted, a repeat) is not a result to reuse.
- **Fork**: a new file with the turns up to and including turn n, `{"forked_from": {"id", "turn"}}`.
- **Import**: a Parley file that parses becomes a new conversation; one that does not is refused
  with its line number (`TranscriptError.line`), and nothing is written.
- **An import grants nothing.** Its note `{"imported": {"name", "turns"}}`, written by the import (one
  the file holds is replaced), says how many turns came from the file: a `yA`/`yO` in them is not
  remembered here, their calls are shown as imported, their results are never reused. Its last answer
  is closed (nothing of it waits for a choice). A cut (an edit, a fork) keeps only the imported turns it
  keeps: what is played after them is this machine's. A file a person writes here by hand is theirs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from sidespin.errors import TranscriptError
from sidespin.events import ToolFinished
from sidespin.mcp.apps import APP_CONTEXT
from sidespin.mcp.attach import edited_note
from sidespin.tools import ToolResult
from sidespin.transcript import Transcript, TranscriptStore, parse
from sidespin.transcript.markers import IMPORTED

__all__ = ["Replay", "edit", "fork", "import_bytes", "recorded_results", "version_group", "MAX_IMPORT_BYTES",
           "MAX_IMPORT_TURNS"]

VERSIONS = "versions"
FORKED_FROM = "forked_from"
MAX_IMPORT_BYTES = 1_048_576  # the default; the web app passes settings.max_body_bytes
MAX_IMPORT_TURNS = 5_000  # messages an import takes; a page draws a window of them (sidespin.web.page)
_NOT_RUN = {"refused", "denied", "repeat", "cut", "interrupted"}


@dataclass
class Replay:
    """What an edit leaves the caller to play: turn `index` with `text` and its user `note` (the resources
    attached with `@` that it still holds), reusing `reuse`; `version` holds the old."""

    index: int
    text: str
    version: str
    reuse: list[ToolResult]
    note: dict[str, Any] = field(default_factory=dict)


def _groups(transcript: Transcript) -> dict[str, list[str]]:
    """The version groups a file keeps, {turn index as text: [ids, oldest first]}; anything malformed skipped."""
    found = transcript.meta.get(VERSIONS)
    if not isinstance(found, dict):
        return {}
    return {key: list(ids) for key, ids in found.items()
            if key.isdigit() and isinstance(ids, list) and all(isinstance(i, str) for i in ids)}


def version_group(transcript: Transcript, index: int) -> list[str]:
    """The ids of the versions of turn `index` this file knows (itself included), oldest first; [] if none."""
    return _groups(transcript).get(str(index), [])


def _user_turn(transcript: Transcript, index: int) -> str:
    if not 0 <= index < len(transcript.turns) or not transcript.turns[index].user:
        raise ValueError(f"there is no user message number {index} in this conversation")
    return transcript.turns[index].user


def _as_output(text: str) -> Any:
    """A recorded result's text as the tool returned it: JSON objects and lists parsed (a formatter reads them)."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (dict, list)) else text


def recorded_results(transcript: Transcript, start: int) -> list[ToolResult]:
    """The results of calls that ran in turns `start` and after, each once (the first for a name and arguments);
    never those an imported file brought: they did not run here."""
    found: dict[str, ToolResult] = {}
    for turn in transcript.turns[max(start, transcript.imported_turns):]:
        for event in turn.events(last=False):
            if not isinstance(event, ToolFinished) or event.result.kind in _NOT_RUN:
                continue
            result = event.result
            key = result.call.name + json.dumps(result.call.arguments, sort_keys=True, default=str)
            if result.ok:
                result = ToolResult(result.call, output=_as_output(result.output), seconds=result.seconds,
                                    attachments=result.attachments, structured=result.structured)
            found.setdefault(key, result)
    return list(found.values())


def _copy(transcript: Transcript) -> Transcript:
    return parse(transcript.render())


def _cut_imported(transcript: Transcript, kept: int) -> None:
    """After a cut to `kept` turns, only those stay imported: a turn played at their place later is this machine's."""
    imported = transcript.meta.get(IMPORTED)
    if isinstance(imported, dict) and transcript.imported_turns > kept:
        transcript.set_meta(IMPORTED, {**imported, "turns": kept})


def _set_group(store: TranscriptStore, member: str, key: str, ids: list[str]) -> None:
    """Write a group into another member's file; a member gone or broken is left as it is."""
    try:
        transcript = store.load(member)
    except TranscriptError as error:
        logger.warning("VERSION_LINK_SKIPPED {} turn={}: {}", member, key, error)
        return
    groups = _groups(transcript)
    groups[key] = ids
    transcript.set_meta(VERSIONS, groups)
    store.save(member, transcript)


def edit(store: TranscriptStore, cid: str, index: int, text: str | None = None) -> Replay:
    """Keep conversation `cid` as it is in a new version file, then cut it before turn `index`.

    `text` None: the same user text (a regenerate). The caller plays turn `index` with `Replay.text`.
    Raises ValueError when turn `index` has no user message, TranscriptError when a file cannot be read.
    """
    transcript = store.load(cid)
    old_text = _user_turn(transcript, index)
    text = old_text if text is None else text.strip()
    if not text:
        raise ValueError("the edited message is empty")
    note = transcript.turns[index].user_note
    note = note if text == old_text else edited_note(note, text)
    reuse = recorded_results(transcript, index)
    version = store.new()
    key = str(index)
    groups = _groups(transcript)
    group = [version if member == cid else member for member in groups.get(key, [cid])]
    group = [member for member in group if member != cid] + [cid]
    if version not in group:
        group.insert(len(group) - 1, version)
    later = {k: [version if m == cid else m for m in ids] for k, ids in groups.items() if int(k) > index}

    copy = _copy(transcript)
    copy.set_meta(VERSIONS, {**later, key: group})
    store.save(version, copy)  # the old content is safe before anything else changes
    for k, ids in [(key, group), *later.items()]:
        for member in ids:
            if member not in (cid, version):
                _set_group(store, member, k, ids)

    transcript.set_meta(VERSIONS, {**{k: v for k, v in groups.items() if int(k) < index}, key: group})
    transcript.turns = transcript.turns[:index]
    _cut_imported(transcript, index)
    transcript.end_turn()  # the answer before is complete: the new message fills the empty 💬:
    store.save(cid, transcript)
    logger.info("CONVERSATION_VERSION_KEPT conv={} turn={} version={} reusable={}", cid, index, version, len(reuse))
    return Replay(index, text, version, reuse, note)


def fork(store: TranscriptStore, cid: str, index: int) -> str:
    """A new conversation holding the turns of `cid` up to and including turn `index`; its id."""
    transcript = store.load(cid)
    if not 0 <= index < len(transcript.turns) or transcript.turns[index].is_placeholder:
        raise ValueError(f"there is no message number {index} in this conversation to fork at")
    copy = _copy(transcript)
    complete = index + 1 < len(copy.turns)  # a turn followed by another is over: nothing of it waits
    copy.turns = copy.turns[: index + 1]
    _cut_imported(copy, index + 1)
    if complete:
        copy.end_turn()
    copy.set_meta(VERSIONS, None)
    copy.set_meta(FORKED_FROM, {"id": cid, "turn": index})
    forked = store.new()
    store.save(forked, copy)
    logger.info("CONVERSATION_FORKED conv={} turn={} new={}", cid, index, forked)
    return forked


def import_bytes(store: TranscriptStore, data: bytes, name: str = "", limit: int = MAX_IMPORT_BYTES) -> str:
    """A Parley-format file as a new conversation; its id.

    Raises TranscriptError (with `.line`) for a file that is not UTF-8 or does not parse, ValueError for
    one too large (over `limit` bytes or `MAX_IMPORT_TURNS` messages) or with no 💬: message; in each
    case nothing is written.
    """
    if len(data) > limit:
        raise ValueError(f"the file has {len(data)} bytes; the limit is {limit} (max_body_bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TranscriptError("not UTF-8 text", path=name or None,
                              line=data[: error.start].count(b"\n") + 1) from None
    transcript = parse(text, path=name or "the uploaded file")
    if not any(turn.user for turn in transcript.turns):
        raise ValueError("the file holds no conversation: no line starts with 💬:")
    transcript.end_turn()  # nothing of it waits for a choice here: its last answer is over
    held = transcript.filled_turns
    if held > MAX_IMPORT_TURNS:
        raise ValueError(f"the file has {held:,} messages; an import takes at most {MAX_IMPORT_TURNS:,} "
                         f"(and {limit:,} bytes)")
    transcript.set_meta(VERSIONS, None)  # its links name files of another place
    transcript.set_meta(APP_CONTEXT, None)  # what apps told a model elsewhere: a file's text, not an app's here
    transcript.set_meta(IMPORTED, {**({"name": name[:200]} if name else {}), "turns": held})
    imported = store.new()
    store.save(imported, transcript)
    logger.info("CONVERSATION_IMPORTED conv={} bytes={} turns={}", imported, len(data), len(transcript.turns))
    return imported
