"""Writing a call's arguments: the schema without the optional parameters `grounded` would drop anyway
(`schema.dropped_whatever`) against the tool's whole schema, on the embedded model.

Same model, same prompts, greedy; each tool and message is written both ways, interleaved (whole, without,
whole, without…) so that load on the machine hits both alike. The tools are shaped like real servers' (a
spreadsheet's cell search, a log search, a folder listing, a version control's log, a notes search, a range
read), each with optional switches, counts and choices the messages do not say. Reports the median seconds and
characters written each way, their ratio, and whether the values kept after `grounded` are the same.

    python bench/bench_arguments.py [--reps 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidespin.llm.embedded import EmbeddedBackend  # noqa: E402
from sidespin.tools import Tool  # noqa: E402
from sidespin.tooluse.schema import bounds_for, dropped_whatever  # noqa: E402
from sidespin.tooluse.values import grounded, said_in  # noqa: E402

TEXT, FLAG, COUNT = {"type": "string"}, {"type": "boolean"}, {"type": "integer"}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Tool:
    return Tool(name=name, description=description, fn=lambda **_: None, source="mcp:bench",
                input_schema={"type": "object", "properties": properties, "required": required})


CASES = [
    (_tool("find_cells", "Find cells whose value matches a query in an Excel workbook.",
           {"path": TEXT, "query": TEXT, "sheet": TEXT, "exact": FLAG, "case_sensitive": FLAG,
            "mode": {"type": "string", "enum": ["value", "formula", "both"]}, "max_results": COUNT},
           ["path", "query"]), "Where does 'snacks' appear in rota.xlsx?"),
    (_tool("search_log", "Search a log file for lines matching a pattern.",
           {"path": TEXT, "pattern": TEXT, "ignore_case": FLAG, "context_lines": COUNT, "invert": FLAG,
            "level": {"type": "string", "enum": ["debug", "info", "warning", "error"]}}, ["path", "pattern"]),
     "Look for 'timeout' in server.log."),
    (_tool("list_directory", "List the files and folders in a directory.",
           {"path": TEXT, "recursive": FLAG, "max_depth": COUNT, "include_hidden": FLAG,
            "sort_by": {"type": "string", "enum": ["name", "size", "modified"]}}, ["path"]),
     "What is in the folder /home/ana/photos?"),
    (_tool("git_log", "Show the commit history of a repository.",
           {"repo_path": TEXT, "max_count": COUNT, "author": TEXT, "all_branches": FLAG, "reverse": FLAG},
           ["repo_path"]), "Show me the history of the repository at /srv/metronome."),
    (_tool("search_notes", "Search the notes by their text.",
           {"query": TEXT, "limit": COUNT, "case_sensitive": FLAG, "include_archived": FLAG,
            "order": {"type": "string", "enum": ["newest", "oldest", "relevance"]}}, ["query"]),
     "Find my notes about the dentist."),
    (_tool("read_range", "Read the values of a range of cells.",
           {"path": TEXT, "range": TEXT, "sheet": TEXT, "include_formulas": FLAG, "as_table": FLAG,
            "max_rows": COUNT}, ["path", "range"]), "Read A1:C8 of budget.xlsx."),
]


async def write(decider: Any, tool: Tool, message: str, leave: set[str]) -> tuple[float, str]:
    model = decider.model
    form = await model.call_format()
    messages = [{"role": "user", "content": message}]
    written = await model.prompt(messages, [tool]) + form.opening + tool.name + form.between
    started = time.perf_counter()
    raw = await model.arguments(written, tool, bounds_for(said_in([message])), None, leave)
    return time.perf_counter() - started, raw


async def main(args: argparse.Namespace) -> int:
    backend = EmbeddedBackend(threads=args.threads)
    await backend.start()
    try:
        decider = await backend.decider()
        rows = []
        for tool, message in CASES:
            said = said_in([message])
            leave = dropped_whatever(tool, said, said)
            await write(decider, tool, message, set())  # the prompt evaluated once, for both ways alike
            times: dict[str, list[float]] = {"whole": [], "without": []}
            raws: dict[str, str] = {}
            for _ in range(args.reps):
                for way, left in (("whole", set()), ("without", leave)):
                    seconds, raws[way] = await write(decider, tool, message, left)
                    times[way].append(seconds)
            kept = [grounded(tool, json.loads(raws[way]), said, said) for way in ("whole", "without")]
            rows.append((tool.name, statistics.median(times["whole"]), statistics.median(times["without"]),
                         len(raws["whole"]), len(raws["without"]), kept[0] == kept[1], sorted(leave)))
            if kept[0] != kept[1]:
                print(f"{tool.name}: kept {json.dumps(kept[0])} whole, {json.dumps(kept[1])} without")
    finally:
        await backend.aclose()
    print(f"{'tool':16} {'whole s':>8} {'without s':>9} {'ratio':>6} {'chars':>11}  same  left out")
    for name, whole, without, a, b, same, left in rows:
        print(f"{name:16} {whole:8.2f} {without:9.2f} {whole / without:5.2f}x {a:5d}/{b:<5d}  "
              f"{'yes' if same else 'NO ':4}  {', '.join(left)}")
    total_whole, total_without = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{'all':16} {total_whole:8.2f} {total_without:9.2f} {total_whole / total_without:5.2f}x")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3, help="runs of each way per tool (default 3)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    sys.exit(asyncio.run(main(parser.parse_args())))
