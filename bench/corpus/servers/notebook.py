"""notebook: a small notes store served over MCP Streamable HTTP, the corpus's remote server of the dev half.

    python bench/corpus/servers/notebook.py --store notes.json --port 8765

serves http://127.0.0.1:8765/mcp until it is stopped (SIGTERM or Ctrl-C). The notes live in the JSON file
`--store` (`{"notes": [{"title", "body", "tags", "updated"}]}`), read on every call and written whole after
every change, so a file rewritten between calls is what the next call sees. Tools: add_note, list_notes,
read_note, update_note, append_to_note, delete_note, search_notes. A missing note is a tool error naming it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

__all__ = ["build", "main"]

READ_ONLY = ToolAnnotations(readOnlyHint=True)
CHANGES = ToolAnnotations(readOnlyHint=False, destructiveHint=False)
REMOVES = ToolAnnotations(readOnlyHint=False, destructiveHint=True)


class Notebook:
    """The notes in one JSON file: read whole on every call, written whole (atomically) after each change."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return list(json.loads(self.path.read_text(encoding="utf-8")).get("notes", []))

    def save(self, notes: list[dict[str, Any]]) -> None:
        handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"notes": notes}, out, ensure_ascii=False, indent=1)
        os.replace(temp, self.path)

    def find(self, notes: list[dict[str, Any]], title: str) -> dict[str, Any]:
        wanted = title.strip().lower()
        for note in notes:
            if note["title"].lower() == wanted:
                return note
        titles = ", ".join(repr(note["title"]) for note in notes) or "none"
        raise ValueError(f"no note titled {title!r} (notes: {titles})")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _shown(note: dict[str, Any]) -> str:
    tags = f" [{', '.join(note['tags'])}]" if note.get("tags") else ""
    return f"# {note['title']}{tags}\n{note['body']}"


def build(store: Path) -> MCPServer:
    """The server, its tools reading and writing `store`."""
    book = Notebook(store)
    server = MCPServer("notebook", instructions="A personal notebook: short notes with a title, a body and tags.")

    @server.tool(annotations=CHANGES)
    def add_note(title: str, body: str, tags: list[str] | None = None) -> str:
        """Create a new note in the notebook with a title, its text and optional tags."""
        notes = book.load()
        if any(note["title"].lower() == title.strip().lower() for note in notes):
            raise ValueError(f"a note titled {title!r} already exists; use update_note or append_to_note")
        notes.append({"title": title.strip(), "body": body, "tags": list(tags or []), "updated": _now()})
        book.save(notes)
        return f"Saved note {title.strip()!r}."

    @server.tool(annotations=READ_ONLY)
    def list_notes(tag: str | None = None) -> str:
        """List the titles of all notes, or only of those carrying a tag."""
        notes = [n for n in book.load() if tag is None or tag.lower() in (t.lower() for t in n.get("tags", []))]
        if not notes:
            return "No notes."
        return "\n".join(f"- {n['title']}" + (f" [{', '.join(n['tags'])}]" if n.get("tags") else "") for n in notes)

    @server.tool(annotations=READ_ONLY)
    def read_note(title: str) -> str:
        """Return the full text of one note, found by its title."""
        notes = book.load()
        return _shown(book.find(notes, title))

    @server.tool(annotations=REMOVES)
    def update_note(title: str, body: str) -> str:
        """Replace the text of an existing note."""
        notes = book.load()
        note = book.find(notes, title)
        note["body"], note["updated"] = body, _now()
        book.save(notes)
        return f"Updated note {note['title']!r}."

    @server.tool(annotations=CHANGES)
    def append_to_note(title: str, text: str) -> str:
        """Add a line of text at the end of an existing note."""
        notes = book.load()
        note = book.find(notes, title)
        note["body"] = note["body"].rstrip("\n") + "\n" + text
        note["updated"] = _now()
        book.save(notes)
        return f"Appended to note {note['title']!r}."

    @server.tool(annotations=REMOVES)
    def delete_note(title: str) -> str:
        """Delete a note from the notebook."""
        notes = book.load()
        note = book.find(notes, title)
        book.save([n for n in notes if n is not note])
        return f"Deleted note {note['title']!r}."

    @server.tool(annotations=READ_ONLY)
    def search_notes(query: str) -> str:
        """Find notes whose title, text or tags contain the given words."""
        words = query.lower().split()
        hits = [n for n in book.load()
                if all(w in (n["title"] + " " + n["body"] + " " + " ".join(n.get("tags", []))).lower() for w in words)]
        return "\n\n".join(_shown(n) for n in hits) if hits else f"No note matches {query!r}."

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the notebook MCP server, over Streamable HTTP on loopback")
    parser.add_argument("--store", required=True, type=Path, help="the notes' JSON file")
    parser.add_argument("--port", required=True, type=int)
    args = parser.parse_args(argv)
    app = build(args.store.resolve()).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
