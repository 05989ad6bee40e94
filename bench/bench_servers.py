"""Tool use on real third-party MCP servers: filesystem, memory, git, time and everything, as a person uses them.

The five reference servers (installed by scripts/setup-node, run from .cache/, nothing fetched)
are connected through an mcp.json written by bench/servers_setup.py into a temporary workspace:
a folder of notes, a git repository with two commits and an unstaged change, a memory graph and
a fixed local timezone (Europe/Berlin). The product's engine is opened once, in process, as
`sidespin ask` opens it (`Engine.open(settings, backend=..., approval="auto")`, the ladder picks
the rung; a fresh data directory, so the probe runs), with no plugins (the workspace's config.json
says `"plugins": false`): only the servers' tools.
Every call is run: a call the policy holds for a person (a destructive tool such as write_file or
edit_file, a call that changes something after a tool result of the turn, a path outside a server's
folders) is approved with `ya`, as a person would, and the turn played on. The workspace is
reset before each prompt and each script, so every one meets the same world.

1. Single prompts (bench/server_eval/prompts.jsonl), each a fresh conversation:
   - decisions: the turn's first call is the expected tool (one of them, when a prompt accepts
     several), or the turn makes no call on a no-tool prompt (a turn ended by an error is wrong)
   - called: tool prompts where the expected tool ran at some point of the turn
   - false calls: no-tool prompts that got a call
   - arguments: of the turns whose first call is the right tool and whose prompt states arguments
     for that tool's parameters, those whose arguments match (bench/server_checks.py)
   - failed calls: calls the server answered with an error (a wrong path, a repo_path outside the
     repository ...)
   - claims: answers that claim a tool's result or effect in a turn where no call succeeded. A heuristic:
     regular expressions (CLAIM_PATTERNS) for "the tool returned/answered", "I called/used ...",
     "I've created/saved/added/remembered ...", "has been created/saved ...", a tool name followed
     by "(" or "returned"; and results only a tool could give (MADE_UP): a clock time or date on
     a get_current_time prompt, a commit hash on a git prompt, a file size or date on a
     filesystem prompt
   - leaks: answers whose visible text shows call syntax: `<mcp-request`, `<tool_call>`,
     `<tool name=`, `{"name":`
   - median and 90th-percentile seconds per prompt, to the end of the answer (tools and approvals
     included), and the median prompt tokens of a turn (events.Usage, summed over its rounds)
2. Multi-turn scripts (bench/server_eval/scripts.jsonl), each one conversation (a message may ask
   for a new one: memory is for the next conversation), judged by its effect on disk, in the
   repository and in the memory file, and by the calls made (bench/server_checks.py).
3. Start-up, in a child process (`--startup-child`): seconds from the child's launch to the engine
   ready with the five servers (the probe included) and to the end of a first "Hello" turn (an
   error it ended with is shown), with a fresh data directory
   and an empty prompt-cache directory (cold), then again with both kept (warm: the recorded
   probe and evaluated prefixes reused); and the prompt tokens of that first turn.

    python bench/bench_servers.py                                  everything, on qwen0.5b
    python bench/bench_servers.py --limit 8 --only-prompts -v      a quick look at misses
    python bench/bench_servers.py --model qwen1.5b --only-scripts --json scripts.json --log servers.log

One model at a time, `--threads` llama.cpp threads (default 1: the machine is shared); answers
greedy (temperature 0, seed 42) and capped as the product caps them (settings.max_tokens).
"""

from __future__ import annotations

import argparse
import os
import asyncio
import contextlib
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

_LAUNCHED = time.perf_counter()  # the start-up child measures from here (before sidespin is imported)

from loguru import logger  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_checks import Call, Played, applicable, arguments_match, fill, judge, p90, ratio  # noqa: E402
from servers_setup import SERVER_NAMES, Workspace, make_workspace, missing_servers  # noqa: E402

from sidespin.config import load_settings  # noqa: E402
from sidespin.engine import Engine  # noqa: E402
from sidespin.events import (  # noqa: E402
    ErrorNotice, MalformedCall, QuestionAsked, TextDelta, ToolFinished, ToolProposed, TurnDone, Usage,
)

EVAL = ROOT / "bench" / "server_eval"
PROMPTS = EVAL / "prompts.jsonl"
SCRIPTS = EVAL / "scripts.jsonl"
MODELS_DIR = ROOT / ".cache" / "models"
NAMED_MODELS = {
    "qwen0.5b": MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen1.5b": MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
MALFORMED = "(malformed)"
MAX_APPROVALS = 8  # approvals in one turn before the bench stops playing it (the rounds limit ends it first)
LEAK = re.compile(r"<mcp-request|<tool_call>|<tool name=|\{\s*\"name\"\s*:")
_OBJECT = r"[^.\n]{0,60}\b(file|folder|directory|branch|commit|repositor|memory|graph|list|entit|to-?do)"
CLAIM_PATTERNS = [
    r"\bthe tool\b[^.\n]{0,40}\b(returned|answered|responded|replied|says|said|gave|showed|reported)",
    r"\btool (call|result|output|response)s?\b",
    r"\b(I|I've|I have|I just) (called|used|ran|invoked|executed|queried)\b[^.\n]{0,40}\b(tool|server)",
    r"\b(I've|I have|I just) (remembered|noted|stored|saved|memorized)\b",  # no call ran: nothing was kept
    r"\b(I've|I have|I just) (created|written|wrote|added|updated|edited|committed|staged|changed|replaced|made)\b"
    + _OBJECT,
    r"\b(has|have) been (created|written|saved|added|updated|edited|committed|stored|remembered|staged|changed)\b",
]
# a result only a tool could give, in a turn where none ran: the current time or date, a commit's hash, a file's size
# or date
_DATE = r"\b\d{4}-\d{2}-\d{2}\b"
MADE_UP = {
    "time": rf"\b\d{{1,2}}:\d{{2}}\b|\b\d{{1,2}} ?(AM|PM|a\.m\.|p\.m\.|heures|Uhr|horas)\b|{_DATE}",
    "git": r"\b[0-9a-f]{7,40}\b",
    "filesystem": rf"\b\d+([.,]\d+)? ?(KB|MB|GB|bytes|Bytes|octets)\b|{_DATE}",
}
HELLO = "Hello"


# --- a turn, played to its end ---------------------------------------------------------------------


@dataclass
class Turn:
    """What one user message led to: every call, the visible answer, and how it ended."""

    text: str
    first: str | None = None  # the first call's tool (MALFORMED: one that could not be read), None: no call
    first_arguments: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)  # the calls that finished, in order
    answer: str = ""
    seconds: float = 0.0
    approvals: int = 0  # calls held for a person and approved by the bench
    input_tokens: int | None = None
    output_tokens: int | None = None
    end: str = ""
    notes: list[str] = field(default_factory=list)

    def played(self) -> Played:
        return Played(self.calls, self.answer)


async def play(engine: Engine, conversation: Any, text: str) -> Turn:
    """One message to its TurnDone, approving (`ya`) every call the policy holds for a person."""
    turn = Turn(text)
    started = time.perf_counter()
    message: str | None = text
    decisions: dict[str, bool] | None = None
    while True:
        done = await _events(engine, conversation, message, decisions, turn)
        if done is None or done.reason != "approval" or not done.pending or turn.approvals >= MAX_APPROVALS:
            break
        turn.approvals += len(done.pending)
        decisions = engine.decide(conversation, "ya", None).ready or {}
        message = None
    turn.seconds = time.perf_counter() - started
    turn.end = done.reason if done is not None else "no TurnDone"
    if turn.end not in ("done",):
        turn.notes.append(f"turn ended: {turn.end}")
    if not turn.answer.strip():
        turn.notes.append("empty answer")
    return turn


async def _events(
    engine: Engine, conversation: Any, message: str | None, decisions: dict[str, bool] | None, turn: Turn
) -> TurnDone | None:
    done: TurnDone | None = None
    events = engine.events(conversation, message, decisions=decisions)
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta):
                turn.answer += event.text
            elif isinstance(event, ToolProposed) and turn.first is None:
                turn.first, turn.first_arguments = event.call.name, dict(event.call.arguments)
            elif isinstance(event, MalformedCall):
                turn.first = turn.first or MALFORMED
                turn.notes.append(f"malformed call: {event.reason}")
            elif isinstance(event, ToolFinished):
                result = event.result
                turn.calls.append(Call(result.call.name, dict(result.call.arguments), result.error))
            elif isinstance(event, Usage):
                turn.input_tokens = (turn.input_tokens or 0) + event.input
                turn.output_tokens = (turn.output_tokens or 0) + event.output
            elif isinstance(event, QuestionAsked) and engine.mcp is not None:
                engine.mcp.questions.answer(event.question_id, "decline")  # no person here to answer
            elif isinstance(event, ErrorNotice):
                turn.notes.append(event.message[:120])
            elif isinstance(event, TurnDone):
                done = event
    return done


# --- single prompts --------------------------------------------------------------------------------


@dataclass
class Outcome:
    row: dict[str, Any]  # the prompt's line, its placeholders filled
    turn: Turn
    expected: list[str]  # the tools that are right (empty: none is)
    server: str  # the expected tool's server, or "none"
    parameters: list[str]  # the first call's tool's parameters (for the argument matchers)
    claim: str | None = None  # see `claimed`

    @property
    def right(self) -> bool:
        """The right first call, or rightly none; a turn that ended in an error decided nothing."""
        if self.turn.end == "error":
            return False
        return self.turn.first in self.expected if self.expected else self.turn.first is None

    @property
    def called(self) -> bool:
        return any(call.tool in self.expected and call.error is None for call in self.turn.calls)

    @property
    def stated(self) -> dict[str, Any]:
        """The prompt's argument matchers that apply to the tool the turn chose first."""
        return applicable(self.row.get("arguments") or {}, self.parameters)

    @property
    def arguments_right(self) -> bool | None:
        """None: not scored (a wrong tool, or nothing stated for the chosen tool's parameters)."""
        if not self.expected or not self.right or not self.stated:
            return None
        return arguments_match(self.turn.first_arguments, self.stated)

    @property
    def leak(self) -> bool:
        return bool(LEAK.search(self.turn.answer))



def claimed(turn: Turn, tool_names: list[str], server: str, expected: list[str]) -> str | None:
    """The words of an answer that claim a tool's result or effect in a turn where no call succeeded (None: none do).

    Besides CLAIM_PATTERNS and a tool's name followed by "(" or "returned": a result with no call
    behind it (MADE_UP): the current time or date (a get_current_time prompt), a commit hash (a git
    prompt), a file's size or date (a filesystem prompt).
    """
    if any(call.error is None for call in turn.calls):
        return None  # a failed call gave nothing to quote
    patterns = CLAIM_PATTERNS + [rf"\b{re.escape(name)}\b`?\s*(\(|returned|answered|says|said)" for name in tool_names]
    found = next((m for p in patterns if (m := re.search(p, turn.answer, re.IGNORECASE))), None)
    if found is None and server in MADE_UP and (server != "time" or "get_current_time" in expected):
        found = re.search(MADE_UP[server], turn.answer)
    return found.group(0) if found else None


def load_rows(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if limit and limit < len(rows):
        # evenly spaced, so a short run keeps the mix of servers, languages and no-tool prompts
        rows = [rows[int(i * len(rows) / limit)] for i in range(limit)]
    return rows


def places(space: Workspace) -> dict[str, str]:
    return {"files": str(space.files), "repo": str(space.repo), "memory": str(space.memory), "root": str(space.root)}


async def run_prompts(engine: Engine, space: Workspace, rows: list[dict[str, Any]], verbose: bool) -> list[Outcome]:
    tools = {tool.name: tool for tool in engine.registry}
    outcomes = []
    for number, raw in enumerate(rows, 1):
        row = fill(raw, places(space))
        expected = [] if row["tool"] is None else row["tool"] if isinstance(row["tool"], list) else [row["tool"]]
        space.reset()
        turn = await play(engine, engine.conversation(), row["text"])
        chosen = tools.get(turn.first or "")
        server = tools[expected[0]].source.removeprefix("mcp:") if expected and expected[0] in tools else "none"
        outcome = Outcome(row, turn, expected, server, list(chosen.parameters) if chosen else [],
                          claimed(turn, sorted(tools), server, expected))
        outcomes.append(outcome)
        logger.warning("BENCH_PROMPT {}/{} {} {:.1f}s {!r} -> {}", number, len(rows), "ok" if outcome.right else "MISS",
                       turn.seconds, row["text"][:50], turn.first)
        if verbose and (not outcome.right or outcome.arguments_right is False):
            print_miss(outcome)
    return outcomes


def print_miss(outcome: Outcome) -> None:
    turn = outcome.turn
    got = f"{turn.first} {json.dumps(turn.first_arguments, ensure_ascii=False)}" if turn.first else "no call"
    calls = "; ".join(f"{c.tool}" + (f" (failed: {c.error[:60]})" if c.error else "") for c in turn.calls)
    print(f"  MISS {outcome.row['text']!r}: expected {'/'.join(outcome.expected) or 'none'}"
          + (f" {json.dumps(outcome.stated, ensure_ascii=False)}" if outcome.stated else "") + f", got {got}"
          + (f"; ran {calls}" if calls else "") + (f"; {'; '.join(turn.notes)}" if turn.notes else "")
          + f"; answer {turn.answer[:140]!r}", flush=True)


# --- scripts ---------------------------------------------------------------------------------------


@dataclass
class ScriptResult:
    name: str
    turns: list[Turn]
    checks: list[tuple[bool, str]]

    @property
    def passed(self) -> bool:
        return all(ok for ok, _ in self.checks)

    @property
    def reason(self) -> str:
        failed = [why for ok, why in self.checks if not ok]
        return "; ".join(failed) if failed else f"{len(self.checks)} checks"


async def run_scripts(engine: Engine, space: Workspace, scripts: list[dict[str, Any]]) -> list[ScriptResult]:
    results = []
    for script in scripts:
        script = fill(script, places(space))
        space.reset()
        conversation = engine.conversation()
        turns: list[Turn] = []
        for message in script["messages"]:
            if isinstance(message, dict) and message.get("new_conversation"):
                conversation = engine.conversation()
            turns.append(await play(engine, conversation, message if isinstance(message, str) else message["text"]))
        checks = [judge(check, [t.played() for t in turns], space.repo) for check in script["checks"]]
        result = ScriptResult(script["name"], turns, checks)
        results.append(result)
        logger.warning("BENCH_SCRIPT {} {} {:.1f}s", result.name, "pass" if result.passed else "FAIL",
                       sum(t.seconds for t in turns))
    return results


# --- the engine, and the start-up child ------------------------------------------------------------


SECOND: list[str] = []  # the second model's file (`--second`), for every engine the bench opens


def model_path(name: str) -> Path:
    path = Path(name) if name.endswith(".gguf") else NAMED_MODELS.get(name)
    if path is None:
        raise SystemExit(f"unknown model {name!r}: use {', '.join(NAMED_MODELS)} or a .gguf path")
    if not path.is_file():
        raise SystemExit(f"{path} is missing (scripts/fetch-model assembles the Qwen models)")
    return path


def backend_for(path: Path, threads: int, max_tokens: int, slot_dir: Path | None = None) -> Any:
    # the constructor bench_tool_use.py uses: the CLI's backend with the bench's threads and greedy answers
    from sidespin.llm.embedded import EmbeddedBackend

    limit = {"max_tokens": max_tokens} if max_tokens > 0 else {}
    backend = EmbeddedBackend(path, threads=threads, options={**limit, "temperature": 0, "seed": 42},
                              start_timeout=300, second_model=SECOND[0] if SECOND else None)
    if slot_dir is not None:  # where evaluated prompt prefixes are kept: an empty one makes a cold start cold
        backend.slot_dir = slot_dir
    return backend


@contextlib.asynccontextmanager
async def open_engine(space: Workspace, path: Path, threads: int, slot_dir: Path | None = None) -> Any:
    """The engine `sidespin --config <workspace>/config.json ask` opens (its config.json switches plugins off)."""
    settings = load_settings(space.config)
    backend = backend_for(path, threads, settings.max_tokens, slot_dir)
    async with Engine.open(settings, backend=backend, approval="auto") as engine:
        failed = engine.mcp.failures if engine.mcp is not None else {name: "no mcp.json" for name in SERVER_NAMES}
        if failed:
            raise SystemExit(f"MCP servers failed: {failed}")
        yield engine


async def startup_child(args: argparse.Namespace) -> int:
    """Open the engine, play one "Hello", print the times (from this process's launch) as one JSON line."""
    space = Workspace(**{name: Path(value) for name, value in json.loads(args.startup_child).items()})
    async with open_engine(space, model_path(args.model), args.threads, space.root / "slots") as engine:
        ready = time.perf_counter() - _LAUNCHED
        turn = await play(engine, engine.conversation(), HELLO)
        answered = time.perf_counter() - _LAUNCHED
        print(json.dumps({"ready": ready, "answered": answered, "input_tokens": turn.input_tokens,
                          "tools": len(engine.registry), "rung": engine.rung.name, "rung_source": engine.rung.source,
                          "notes": turn.notes}), flush=True)
    return 0


async def measure_startup(args: argparse.Namespace, space: Workspace) -> list[dict[str, Any]]:
    """The cold start, then the warm one, each a child process timed from its launch by the parent too."""
    rows = []
    for label in ("cold", "warm"):
        command = [sys.executable, str(Path(__file__).resolve()), "--startup-child",
                   json.dumps({name: str(value) for name, value in asdict(space).items()}),
                   "--model", args.model, "--threads", str(args.threads),
                   *(["--second", args.second] if args.second else [])]
        started = time.perf_counter()
        child = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
        output, _ = await child.communicate()
        wall = time.perf_counter() - started
        lines = output.decode().strip().splitlines()
        if child.returncode != 0 or not lines:
            raise SystemExit(f"the {label} start-up child failed (exit {child.returncode})")
        rows.append({"start": label, **json.loads(lines[-1]), "wall": wall})
        logger.warning("BENCH_STARTUP {} {}", label, rows[-1])
    return rows


# --- report ----------------------------------------------------------------------------------------


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    tool = [o for o in outcomes if o.expected]
    none = [o for o in outcomes if not o.expected]
    scored = [o.arguments_right for o in outcomes if o.arguments_right is not None]
    seconds = [o.turn.seconds for o in outcomes]
    tokens = [o.turn.input_tokens for o in outcomes if o.turn.input_tokens]
    written = [o.turn.output_tokens for o in outcomes if o.turn.output_tokens]
    return {
        "prompts": len(outcomes),
        "decisions": (sum(o.right for o in outcomes), len(outcomes)),
        "called": (sum(o.called for o in tool), len(tool)),
        "false_calls": (sum(o.turn.first is not None for o in none), len(none)),
        "arguments": (sum(scored), len(scored)),
        "failed_calls": (sum(c.error is not None for o in outcomes for c in o.turn.calls),
                         sum(len(o.turn.calls) for o in outcomes)),
        "approvals": sum(o.turn.approvals for o in outcomes),
        "claims": sum(o.claim is not None for o in outcomes),
        "leaks": sum(o.leak for o in outcomes),
        "errors": sum(o.turn.end == "error" for o in outcomes),
        "median_seconds": statistics.median(seconds) if seconds else 0.0,
        "p90_seconds": p90(seconds),
        "median_input_tokens": statistics.median(tokens) if tokens else None,
        "median_output_tokens": statistics.median(written) if written else None,
    }


def print_prompts(outcomes: list[Outcome]) -> None:
    s = summary(outcomes)
    print(f"\nSingle prompts ({s['prompts']}, each a fresh conversation)")
    print(f"  right decisions            {ratio(*s['decisions']):>15}   (first call the right tool, or rightly none)")
    print(f"  tool prompts, tool called  {ratio(*s['called']):>15}   (the right tool ran at some point of the turn)")
    print(f"  no-tool prompts with a call{ratio(*s['false_calls']):>15}")
    print(f"  argument accuracy          {ratio(*s['arguments']):>15}   (right first call, stated arguments)")
    print(f"  calls that failed          {ratio(*s['failed_calls']):>15}   (the server answered with an error)")
    print(f"  approvals given            {s['approvals']:>15}   (calls held for a person, approved)")
    print(f"  claims without a call      {s['claims']:>15}")
    print(f"  call syntax in the answer  {s['leaks']:>15}")
    print(f"  turns ended by an error    {s['errors']:>15}   (counted as wrong decisions)")
    print(f"  seconds per prompt         {s['median_seconds']:>9.1f} median {s['p90_seconds']:.1f} p90")
    tokens = s["median_input_tokens"]
    print(f"  prompt tokens per turn     {'-' if tokens is None else f'{tokens:,.0f}':>15}   (median, all rounds)")
    written = s["median_output_tokens"]
    print(f"  tokens written per turn    {'-' if written is None else f'{written:,.0f}':>15}   (median, all rounds)")
    print(f"\n  {'server':<11} {'decisions':>15} {'called':>15} {'arguments':>15} {'median s':>9}")
    for server in [*SERVER_NAMES, "none"]:
        mine = [o for o in outcomes if o.server == server]
        if mine:
            part = summary(mine)
            print(f"  {server:<11} {ratio(*part['decisions']):>15} {ratio(*part['called']):>15} "
                  f"{ratio(*part['arguments']):>15} {part['median_seconds']:>9.1f}")
    for outcome in (o for o in outcomes if o.claim):
        print(f"  claim without a call in the answer to {outcome.row['text']!r}: {outcome.claim!r}")
    for outcome in (o for o in outcomes if o.leak):
        print(f"  call syntax in the answer to {outcome.row['text']!r}: {outcome.turn.answer[:120]!r}")


def print_scripts(results: list[ScriptResult]) -> None:
    print(f"\nScripts ({sum(r.passed for r in results)}/{len(results)} passed)")
    for result in results:
        seconds = sum(t.seconds for t in result.turns)
        print(f"  {'pass' if result.passed else 'FAIL'}  {result.name:<24} {seconds:6.1f}s  {result.reason}")


def print_startup(rows: list[dict[str, Any]]) -> None:
    print("\nStart-up (a child process; seconds from its launch)")
    print(f"  {'start':<6} {'engine ready':>12} {'first answer':>12} {'wall':>7} {'tools':>6} "
          f"{'prompt tokens':>14}  rung")
    for row in rows:
        tokens = "-" if row["input_tokens"] is None else f"{row['input_tokens']:,}"
        print(f"  {row['start']:<6} {row['ready']:>12.1f} {row['answered']:>12.1f} {row['wall']:>7.1f} "
              f"{row['tools']:>6} {tokens:>14}  {row['rung']} ({row['rung_source']})"
              + (f"  first answer: {'; '.join(row['notes'])}" if row["notes"] else ""))


def dump(path: Path, model: str, outcomes: list[Outcome], results: list[ScriptResult],
         startup: list[dict[str, Any]]) -> None:
    def turn(t: Turn) -> dict[str, Any]:
        return {**asdict(t), "calls": [asdict(c) for c in t.calls]}

    data = {
        "model": model,
        "prompts": {"summary": summary(outcomes) if outcomes else None, "outcomes": [
            {"text": o.row["text"], "expected": o.expected, "server": o.server, "right": o.right, "called": o.called,
             "arguments_right": o.arguments_right, "claim": o.claim, "leak": o.leak, "turn": turn(o.turn)}
            for o in outcomes]},
        "scripts": [{"name": r.name, "passed": r.passed, "checks": r.checks, "turns": [turn(t) for t in r.turns]}
                    for r in results],
        "startup": startup,
    }
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


async def main(args: argparse.Namespace) -> int:
    if args.second:
        SECOND[:] = [str(model_path(args.second))]
    if args.startup_child:
        return await startup_child(args)
    missing = missing_servers()
    if missing:
        raise SystemExit(f"servers not installed: {', '.join(missing)}; run scripts/setup-node")
    path = model_path(args.model)
    rows = [] if args.only_scripts else load_rows(PROMPTS, args.limit)
    scripts = [] if args.only_prompts else load_rows(SCRIPTS, args.limit)
    if args.match:  # a focused run: the prompts whose text, and the scripts whose name, match
        rows = [row for row in rows if re.search(args.match, row["text"], re.IGNORECASE)]
        scripts = [script for script in scripts if re.search(args.match, script["name"], re.IGNORECASE)]
    if args.dump_tools:
        return await dump_tools(Path(args.dump_tools), path, args.threads)
    print(f"model {path.name}; threads {args.threads}; {len(rows)} prompts, {len(scripts)} scripts")
    outcomes: list[Outcome] = []
    results: list[ScriptResult] = []
    startup: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as temp:
        if not (args.only_prompts or args.only_scripts or args.no_startup):
            startup = await measure_startup(args, make_workspace(Path(temp) / "startup"))
        if rows or scripts:
            space = make_workspace(Path(temp) / "run")
            started = time.perf_counter()
            async with open_engine(space, path, args.threads) as engine:
                opened = time.perf_counter() - started
                # a first turn, not scored: the first prompt then meets a ready engine (start-up is measured above)
                warm = await play(engine, engine.conversation(), HELLO)
                logger.warning("BENCH_ENGINE rung={} ({}) tools={} open {:.1f}s, first turn {:.1f}s {}",
                               engine.rung.name, engine.rung.source, len(engine.registry), opened, warm.seconds,
                               "; ".join(warm.notes))
                outcomes = await run_prompts(engine, space, rows, args.verbose)
                results = await run_scripts(engine, space, scripts)
                print(f"engine: rung {engine.rung.name} ({engine.rung.source}), {len(engine.registry)} tools, "
                      f"open in {opened:.1f}s, an unscored first turn in {warm.seconds:.1f}s")
    if outcomes:
        print_prompts(outcomes)
    if results:
        print_scripts(results)
    if startup:
        print_startup(startup)
    if args.json:
        dump(Path(args.json), path.name, outcomes, results, startup)
    return 0


async def dump_tools(path: Path, model: Path, threads: int) -> int:
    """Write the servers' tools as they list them (for `bench_bfcl.py --beside`), the workspace's folders as
    /home/me/...: what the route is offered of them, never to be run from the file."""
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as temp:
        space = make_workspace(Path(temp))
        async with open_engine(space, model, threads) as engine:
            listed = [{"name": t.name, "description": t.description, "input_schema": t.input_schema,
                       "source": t.source, "read_only": t.read_only, "destructive": t.destructive,
                       "places": [p.replace(str(space.root), "/home/me") for p in t.places]} for t in engine.registry]
    path.write_text(json.dumps(listed, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(listed)} tools written to {path}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen0.5b", help=f"{', '.join(NAMED_MODELS)} or a .gguf path")
    parser.add_argument("--second", help="a second, larger model that writes the arguments and decides where the "
                        "first is unsure (the embedded backend's second_model): "
                        f"{', '.join(NAMED_MODELS)} or a .gguf path")
    parser.add_argument("--limit", type=int, help="evenly spaced subset of N prompts (and of N scripts)")
    parser.add_argument("--match", help="only the prompts (texts) and scripts (names) matching this regex")
    parser.add_argument("--only-prompts", action="store_true", help="single prompts only")
    parser.add_argument("--only-scripts", action="store_true", help="multi-turn scripts only")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each wrong one with what happened")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--log", help="write the product's log (INFO and up) to this file")
    parser.add_argument("--dump-tools", help="only write the servers' tools to this JSON file (bench_bfcl.py --beside)")
    parser.add_argument("--startup-child", help=argparse.SUPPRESS)  # the workspace, as JSON
    return parser.parse_args(argv)


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    arguments = parse_args()
    if arguments.log:
        logger.add(arguments.log, level=os.environ.get("BENCH_LOG_LEVEL", "INFO"))
    sys.exit(asyncio.run(main(arguments)))
