"""Tool use on MCP servers sidespin was not built on: a half of bench/corpus (dev, dev2, dev3, blind), as one uses it.

The half's servers (bench/corpus/<half>/servers.json, installed by bench/corpus/setup, nothing fetched) are
connected through an mcp.json written into a temporary workspace with the half's world (files, Word documents, a
git repository, an SQLite database, a memory graph, notes, a to-do list: bench/corpus/workspace.py); its http
servers are started on loopback first. The world is reset before every prompt and every script.

    --via engine (default): the product's engine in process, as `sidespin ask` opens it (the workspace's
        config.json: no plugins), greedy answers (temperature 0, seed 42); a call the policy holds for a person is
        approved with `ya` and the turn played on.
    --via cli: black box. Each prompt is `sidespin --config <workspace>/config.json ask --json --yes TEXT`; each
        script is `sidespin chat` fed its messages on standard input (a new conversation is a new chat), with
        config.json setting every tool's approval to `auto`; calls and answers are read back from the
        transcript. The model is the configured one (`--model` passes a spec), sampled as the product samples.

Reported, per kind of server and per server: right decisions on the prompts that need a tool and on those that
need none, arguments right where the tool was right, scripts passed, claims the results do not back (see
bench/corpus/judge.py), median and 90th-percentile seconds per turn. `--json FILE` writes every turn.
`--warm` has every table evaluated (or restored from its saved prefix) before the first prompt, as a server does
at its start, and prints how long that took: the turns are then those of a running server, not of its first
minutes (the workspace's paths are in the tools' descriptions, so without it each run evaluates its tables anew).

For `--half blind` only totals are printed, and the JSON holds only totals, unless `--show-misses` is given: the
blind half is run once at the end of a stop and read then.

    python bench/bench_corpus.py --half dev
    python bench/bench_corpus.py --half dev --limit 6 --show-misses --json dev.json
    python bench/bench_corpus.py --half blind
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "corpus"))

from judge import Call, Played, applicable, arguments_match, bare, claim, decision_right, fill, judge  # noqa: E402
from server_checks import p90, ratio  # noqa: E402
from workspace import HALVES, Workspace, approve_every_tool, make_workspace, missing_programs, serving  # noqa: E402

CORPUS = ROOT / "bench" / "corpus"
SIDESPIN = ROOT / ".venv" / "bin" / "sidespin"
HELLO = "Hello"
WARM_SECONDS: list[float] = []  # with --warm: the seconds every table took to be ready before the first prompt
LEAK = re.compile(r"<mcp-request|<tool_call>|<tool name=|\{\s*\"name\"\s*:")


# --- what was played ---------------------------------------------------------------------------------


@dataclass
class Turn:
    """One message and what it led to (the engine's bench_servers.Turn, or one read back from the CLI)."""

    text: str
    first: str | None = None
    first_arguments: dict[str, Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    answer: str = ""
    seconds: float = 0.0
    end: str = "done"
    notes: list[str] = field(default_factory=list)

    def played(self) -> Played:
        return Played(self.calls, self.answer)


@dataclass
class PromptOutcome:
    row: dict[str, Any]
    turn: Turn
    kind: str  # the kind of the expected server (or of the near-miss's server), "none" for other no-tool prompts
    right: bool
    arguments_right: bool | None  # None: not scored
    claim: str | None

    @property
    def needs_tool(self) -> bool:
        return bool(self.row["tool"])

    @property
    def server(self) -> str:
        return self.row.get("server") or self.row.get("near") or "none"


@dataclass
class ScriptOutcome:
    script: dict[str, Any]
    turns: list[Turn]
    checks: list[tuple[bool, str]]
    claims: list[str]

    @property
    def passed(self) -> bool:
        return all(ok for ok, _ in self.checks)


def load_rows(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if limit and limit < len(rows):
        # evenly spaced: a short run keeps the mix of servers, languages and no-tool prompts
        rows = [rows[int(i * len(rows) / limit)] for i in range(limit)]
    return rows


def judge_prompt(row: dict[str, Any], turn: Turn, kinds: dict[str, str], parameters: dict[str, list[str]],
                 read_only: set[str]) -> PromptOutcome:
    expected = row["tool"]
    right = decision_right(turn.first, expected, turn.end)
    stated = applicable(row.get("arguments") or {}, parameters.get(bare(turn.first) or "", []))
    arguments_right = arguments_match(turn.first_arguments, stated) if expected and right and stated else None
    server = row.get("server") or row.get("near")
    return PromptOutcome(row, turn, kinds.get(server or "", "none"), right, arguments_right,
                         claim(turn.answer, turn.calls, read_only, backed_before=False))


def judge_script(script: dict[str, Any], turns: list[Turn], space: Workspace, read_only: set[str]) -> ScriptOutcome:
    played = [t.played() for t in turns]
    checks = [judge(check, played, space.places(), read_only) for check in script["checks"]]
    claims = []
    for index, turn in enumerate(turns):
        backed = any(call.error is None for earlier in turns[:index] for call in earlier.calls)
        found = claim(turn.answer, turn.calls, read_only, backed)
        if found:
            claims.append(f"turn {index + 1}: {found}")
    return ScriptOutcome(script, turns, checks, claims)


def messages_of(script: dict[str, Any]) -> list[tuple[str, bool]]:
    """(text, starts a new conversation) for each message of a script."""
    return [(m, False) if isinstance(m, str) else (m["text"], bool(m.get("new_conversation")))
            for m in script["messages"]]


# --- in process ----------------------------------------------------------------------------------------


async def run_engine(args: argparse.Namespace, space: Workspace, prompts: list[dict[str, Any]],
                     scripts: list[dict[str, Any]], kinds: dict[str, str], backend: Any | None = None
                     ) -> tuple[list[PromptOutcome], list[ScriptOutcome]]:
    """Play the prompts and scripts on the engine, in process; `backend`: the model (None: `args.model`, greedy)."""
    from bench_servers import backend_for, model_path, play

    from sidespin.config import load_settings
    from sidespin.engine import Engine

    settings = load_settings(space.config)
    if backend is None:
        import bench_servers
        if args.second_model:
            bench_servers.SECOND[:] = [str(model_path(args.second_model))]
        backend = backend_for(model_path(args.model), args.threads, settings.max_tokens)
    async with Engine.open(settings, backend=backend, approval="auto") as engine:
        failed = engine.mcp.failures if engine.mcp is not None else {"all": "no mcp.json"}
        if failed:
            raise SystemExit(f"MCP servers failed: {failed}")
        tools = list(engine.registry)
        parameters = {bare(t.name) or "": list(t.parameters) for t in tools}
        read_only = {bare(t.name) or "" for t in tools if t.read_only}
        warm = await play(engine, engine.conversation(), HELLO)  # unscored: the first prompt meets a ready engine
        logger.warning("CORPUS_ENGINE rung={} tools={} first turn {:.1f}s", engine.rung.name, len(tools), warm.seconds)
        if args.warm and engine.rung.name == "route":  # every table evaluated (or restored) before the first prompt
            started = time.perf_counter()
            await engine.backend.warm(tools)
            WARM_SECONDS.append(time.perf_counter() - started)
            logger.warning("CORPUS_WARM every table ready in {:.1f}s", WARM_SECONDS[-1])
        outcomes = []
        for number, raw in enumerate(prompts, 1):
            row = fill(raw, space.places())
            space.reset()
            turn = _turn_of(await play(engine, engine.conversation(), row["text"]))
            outcomes.append(judge_prompt(row, turn, kinds, parameters, read_only))
            _log_prompt(args, number, len(prompts), outcomes[-1])
        results = []
        for raw in scripts:
            script = fill(raw, space.places())
            space.reset()
            conversation = engine.conversation()
            turns = []
            for text, new in messages_of(script):
                if new:
                    conversation = engine.conversation()
                turns.append(_turn_of(await play(engine, conversation, text)))
            results.append(judge_script(script, turns, space, read_only))
            _log_script(args, results[-1])
    return outcomes, results


def _turn_of(played: Any) -> Turn:
    """bench_servers.Turn as this bench's Turn."""
    return Turn(played.text, played.first, played.first_arguments, list(played.calls), played.answer, played.seconds,
                played.end, list(played.notes))


def _log_prompt(args: argparse.Namespace, number: int, total: int, outcome: PromptOutcome) -> None:
    text = "" if hidden(args) else repr(outcome.row["text"][:50])
    logger.warning("CORPUS_PROMPT {}/{} {} {:.1f}s {}", number, total, "ok" if outcome.right else "MISS",
                   outcome.turn.seconds, text)


def _log_script(args: argparse.Namespace, outcome: ScriptOutcome) -> None:
    name = "" if hidden(args) else outcome.script["name"]
    logger.warning("CORPUS_SCRIPT {} {}", "pass" if outcome.passed else "FAIL", name)


def hidden(args: argparse.Namespace) -> bool:
    """Blind prompts, scripts and misses stay unseen unless --show-misses."""
    return args.half == "blind" and not args.show_misses


# --- black box -----------------------------------------------------------------------------------------


def _cli(space: Workspace, *arguments: str, stdin: str | None = None, timeout: float = 900) -> str:
    command = [str(SIDESPIN), "--config", str(space.config), *arguments]
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **space.env()}, cwd=space.root)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {done.returncode}: {done.stderr[-400:]}")
    return done.stdout


async def _tool_table(space: Workspace) -> tuple[dict[str, list[str]], set[str]]:
    """Each tool's parameters and the read-only ones, as the half's servers list them (no model loaded)."""
    from sidespin.mcp import MCPManager, load_mcp_config
    from sidespin.tools import ToolRegistry

    async with MCPManager(load_mcp_config(space.mcp_config), strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        tools = list(registry)
    return ({bare(t.name) or "": list(t.parameters) for t in tools},
            {bare(t.name) or "" for t in tools if t.read_only})


def run_cli(args: argparse.Namespace, space: Workspace, prompts: list[dict[str, Any]],
            scripts: list[dict[str, Any]], kinds: dict[str, str]) -> tuple[list[PromptOutcome], list[ScriptOutcome]]:
    parameters, read_only = asyncio.run(_tool_table(space))
    approve_every_tool(space, sorted(parameters))
    from bench_servers import model_path

    spec = [str(model_path(args.model))] if args.model_given else []
    model = ["--model", *spec] if spec else []
    outcomes = []
    for number, raw in enumerate(prompts, 1):
        row = fill(raw, space.places())
        space.reset()
        answer = json.loads(_cli(space, "ask", "--json", "--yes", *model, row["text"]))
        outcomes.append(judge_prompt(row, _turn_from_ask(row["text"], answer), kinds, parameters, read_only))
        _log_prompt(args, number, len(prompts), outcomes[-1])
    results = []
    for raw in scripts:
        script = fill(raw, space.places())
        space.reset()
        turns: list[Turn] = []
        for lines in _conversations(script):
            transcript = Path(tempfile.mkdtemp(dir=space.root)) / "chat.md"
            started = time.perf_counter()
            _cli(space, "chat", *spec, "--transcript", str(transcript),
                 stdin="\n".join([*lines, "bye"]) + "\n")
            read = _turns_from_transcript(transcript, lines)
            for turn in read:
                turn.seconds = (time.perf_counter() - started) / max(len(read), 1)  # the chat's wall time, shared
            turns.extend(read)
        results.append(judge_script(script, turns, space, read_only))
        _log_script(args, results[-1])
    return outcomes, results


def _turn_from_ask(text: str, answer: dict[str, Any]) -> Turn:
    """`sidespin ask --json`'s output as a Turn (a call held for a person counts as failed: it did not run)."""
    listed = answer["tool_calls"]
    calls = [Call(c["tool"], dict(c.get("arguments") or {}), c.get("error") or ("held" if c.get("held") else None))
             for c in listed]
    first = listed[0] if listed else None
    notices = list(answer.get("notices", []))
    # ask --json does not say how the turn ended: a notice other than a malformed or held call is the error it met
    errors = [n for n in notices if not n.startswith("malformed tool call") and "was not run" not in n]
    return Turn(text, first["tool"] if first else None, dict(first.get("arguments") or {}) if first else {},
                calls, answer["visible_text"], float(answer["seconds"]), "error" if errors else "done", notices)


def _conversations(script: dict[str, Any]) -> list[list[str]]:
    """A script's messages cut where a new conversation starts."""
    groups: list[list[str]] = []
    for text, new in messages_of(script):
        if new or not groups:
            groups.append([])
        groups[-1].append(text)
    return groups


def _turns_from_transcript(path: Path, lines: list[str]) -> list[Turn]:
    """The transcript's turns, one per message: the calls proposed and their results, the visible text."""
    from sidespin.transcript import Proposal, Result, Text, parse

    if not path.exists():
        return [Turn(line, end="error", notes=["no transcript written"]) for line in lines]
    turns: list[Turn] = []
    for record in parse(path.read_text(encoding="utf-8"), str(path)).turns:
        if record.user:
            turns.append(Turn(record.user))
        if not turns:
            continue
        turn = turns[-1]
        proposals: dict[str, Any] = {}
        for segment in record.segments:
            if isinstance(segment, Proposal):
                proposals[segment.call.id] = segment.call
                if turn.first is None:
                    turn.first, turn.first_arguments = segment.call.name, dict(segment.call.arguments)
            elif isinstance(segment, Result):
                call = proposals.get(segment.call_id)
                turn.calls.append(Call(segment.tool, dict(call.arguments) if call else {},
                                       segment.text[:200] if segment.is_error else None))
            elif isinstance(segment, Text):
                turn.answer += segment.raw
    for turn in turns:
        turn.answer = turn.answer.strip()
    return turns


# --- report --------------------------------------------------------------------------------------------


def summary(outcomes: list[PromptOutcome], results: list[ScriptOutcome]) -> dict[str, Any]:
    tool = [o for o in outcomes if o.needs_tool]
    none = [o for o in outcomes if not o.needs_tool]
    scored = [o.arguments_right for o in outcomes if o.arguments_right is not None]
    seconds = [o.turn.seconds for o in outcomes] + [t.seconds for r in results for t in r.turns]
    return {
        "prompts": len(outcomes),
        "tool_prompts_right": [sum(o.right for o in tool), len(tool)],
        "no_tool_prompts_right": [sum(o.right for o in none), len(none)],
        "decisions_right": [sum(o.right for o in outcomes), len(outcomes)],
        "arguments_right": [sum(scored), len(scored)],
        "scripts_passed": [sum(r.passed for r in results), len(results)],
        "claims": sum(o.claim is not None for o in outcomes) + sum(len(r.claims) for r in results),
        "leaks": sum(bool(LEAK.search(o.turn.answer)) for o in outcomes),
        "errors": sum(o.turn.end == "error" for o in outcomes),
        "turns": len(seconds),
        "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
        "p90_seconds": round(p90(seconds), 2) if seconds else None,
    }


def breakdown(outcomes: list[PromptOutcome], results: list[ScriptOutcome], key: str) -> dict[str, dict[str, Any]]:
    """summary() per kind or per server (`key`: "kind" or "server"); scripts are counted under the kinds and
    servers of the tools their checks name."""
    groups = sorted({getattr(o, key) for o in outcomes} | {g for r in results for g in script_groups(r, key)})
    return {group: summary([o for o in outcomes if getattr(o, key) == group],
                           [r for r in results if group in script_groups(r, key)]) for group in groups}


SCRIPT_GROUPS: dict[str, dict[str, str]] = {}  # tool name -> {"kind": ..., "server": ...}, filled by main


def script_groups(result: ScriptOutcome, key: str) -> set[str]:
    named = {bare(t) for check in result.script["checks"] if check["check"] == "call_made"
             for t in (check["tool"] if isinstance(check["tool"], list) else [check["tool"]])}
    return {SCRIPT_GROUPS[name][key] for name in named if name in SCRIPT_GROUPS}


def print_report(args: argparse.Namespace, outcomes: list[PromptOutcome], results: list[ScriptOutcome]) -> None:
    total = summary(outcomes, results)
    print(f"\ncorpus {args.half} half, via {args.via}: {total['prompts']} prompts, {len(results)} scripts")
    print(f"  prompts that need a tool, right   {ratio(*total['tool_prompts_right']):>15}")
    print(f"  prompts that need none, right     {ratio(*total['no_tool_prompts_right']):>15}")
    print(f"  arguments right (tool right)      {ratio(*total['arguments_right']):>15}")
    print(f"  scripts passed                    {ratio(*total['scripts_passed']):>15}")
    print(f"  claims the results do not back    {total['claims']:>15}")
    print(f"  call syntax in an answer          {total['leaks']:>15}")
    print(f"  turns ended by an error           {total['errors']:>15}")
    median, slow = total["median_seconds"], total["p90_seconds"]
    print(f"  seconds per turn                  {median if median is not None else '-':>9} median "
          f"{slow if slow is not None else '-'} p90 ({total['turns']} turns)")
    if WARM_SECONDS:
        print(f"  tables ready before the first prompt (--warm), untimed: {WARM_SECONDS[0]:.1f} s")
    for key in ("kind", "server"):
        print(f"\n  {key:<12} {'tool prompts':>15} {'no-tool':>15} {'arguments':>15} {'scripts':>13} {'claims':>6} "
              f"{'median s':>8}")
        for group, part in breakdown(outcomes, results, key).items():
            print(f"  {group:<12} {ratio(*part['tool_prompts_right']):>15} {ratio(*part['no_tool_prompts_right']):>15} "
                  f"{ratio(*part['arguments_right']):>15} {ratio(*part['scripts_passed']):>13} {part['claims']:>6} "
                  f"{part['median_seconds'] if part['median_seconds'] is not None else '-':>8}")
    if hidden(args):
        print("\n  (blind half: misses not shown; --show-misses prints them)")
        return
    for outcome in outcomes:
        if not outcome.right or outcome.arguments_right is False or outcome.claim:
            print_miss(outcome)
    print()
    for result in results:
        reason = "; ".join(why for ok, why in result.checks if not ok) or f"{len(result.checks)} checks"
        claims = f"; claims: {'; '.join(result.claims)}" if result.claims else ""
        print(f"  {'pass' if result.passed else 'FAIL'}  {result.script['name']:<22} "
              f"{sum(t.seconds for t in result.turns):6.1f}s  {reason}{claims}")


def print_miss(outcome: PromptOutcome) -> None:
    turn = outcome.turn
    got = f"{turn.first} {json.dumps(turn.first_arguments, ensure_ascii=False)}" if turn.first else "no call"
    ran = "; ".join(c.tool + (f" (failed: {c.error[:60]})" if c.error else "") for c in turn.calls)
    what = "MISS" if not outcome.right else "ARGS" if outcome.arguments_right is False else "CLAIM"
    print(f"  {what} {outcome.row['id']} {outcome.row['text']!r}: expected {'/'.join(outcome.row['tool'] or []) or 'none'}"
          f", got {got}" + (f"; ran {ran}" if ran else "") + (f"; claim {outcome.claim!r}" if outcome.claim else "")
          + (f"; {'; '.join(turn.notes)}" if turn.notes else "") + f"; answer {turn.answer[:140]!r}", flush=True)


def dump(path: Path, args: argparse.Namespace, outcomes: list[PromptOutcome], results: list[ScriptOutcome]) -> None:
    data: dict[str, Any] = {
        "half": args.half, "via": args.via, "model": args.model, "second_model": args.second_model,
        "warm_seconds": WARM_SECONDS[0] if WARM_SECONDS else None,
        "summary": summary(outcomes, results),
        "by_kind": breakdown(outcomes, results, "kind"), "by_server": breakdown(outcomes, results, "server"),
    }
    if not hidden(args):
        data["prompts"] = [{"id": o.row["id"], "text": o.row["text"], "expected": o.row["tool"], "server": o.server,
                            "kind": o.kind, "right": o.right, "arguments_right": o.arguments_right, "claim": o.claim,
                            "turn": _turn_json(o.turn)} for o in outcomes]
        data["scripts"] = [{"name": r.script["name"], "passed": r.passed, "checks": r.checks, "claims": r.claims,
                            "turns": [_turn_json(t) for t in r.turns]} for r in results]
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {**asdict(turn), "calls": [asdict(c) for c in turn.calls]}


# --- main ----------------------------------------------------------------------------------------------


def main(args: argparse.Namespace) -> int:
    if missing_programs(args.half):
        subprocess.run([str(CORPUS / "setup")], check=True)  # installs what is missing, pinned; no-op otherwise
    missing = missing_programs(args.half)
    if missing:
        raise SystemExit(f"servers not installed: {', '.join(missing)}; bench/corpus/setup did not install them")
    prompts = [] if args.only_scripts else load_rows(CORPUS / args.half / "prompts.jsonl", args.limit)
    scripts = [] if args.only_prompts else load_rows(CORPUS / args.half / "scripts.jsonl", args.limit)
    print(f"corpus {args.half}: {len(prompts)} prompts, {len(scripts)} scripts; model {args.model}, "
          f"threads {args.threads}, via {args.via}")
    with tempfile.TemporaryDirectory(prefix=f"corpus-{args.half}-") as temp:
        space = make_workspace(Path(temp), args.half)
        kinds = {server.name: server.kind for server in space.servers}
        with serving(space):
            groups = asyncio.run(_groups(space, kinds))
            SCRIPT_GROUPS.update(groups)
            if args.via == "cli":
                outcomes, results = run_cli(args, space, prompts, scripts, kinds)
            else:
                outcomes, results = asyncio.run(run_engine(args, space, prompts, scripts, kinds))
    print_report(args, outcomes, results)
    if args.json:
        dump(Path(args.json), args, outcomes, results)
    return 0


async def _groups(space: Workspace, kinds: dict[str, str]) -> dict[str, dict[str, str]]:
    """Each tool's server and kind, for counting scripts under them."""
    from sidespin.mcp import MCPManager, load_mcp_config
    from sidespin.tools import ToolRegistry

    async with MCPManager(load_mcp_config(space.mcp_config), strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        return {bare(t.name) or "": {"server": t.source.removeprefix("mcp:"), "kind": kinds.get(
            t.source.removeprefix("mcp:"), "?")} for t in registry}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", required=True, choices=HALVES)
    parser.add_argument("--via", default="engine", choices=("engine", "cli"),
                        help="the engine in process (default), or `sidespin ask --json` and `sidespin chat`")
    parser.add_argument("--model", default=None, help="qwen0.5b (default), qwen1.5b or a .gguf path")
    parser.add_argument("--second-model", default=None,
                        help="a second model beside the first (the embedded backend's second_model), e.g. qwen2.5-coder-1.5b")
    parser.add_argument("--limit", type=int, help="evenly spaced subset of N prompts (and of N scripts)")
    parser.add_argument("--only-prompts", action="store_true")
    parser.add_argument("--only-scripts", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--warm", action="store_true", help="evaluate every table before the first prompt, as a "
                        "server does at its start (untimed; its time is printed): the turns of a running server")
    parser.add_argument("--json", help="write every turn to this file (blind: totals only, unless --show-misses)")
    parser.add_argument("--show-misses", action="store_true", help="print (and write) the blind half's misses")
    parser.add_argument("--log", help="write the product's log (INFO and up) to this file")
    args = parser.parse_args(argv)
    args.model_given = args.model is not None
    args.model = args.model or "qwen0.5b"
    return args


if __name__ == "__main__":
    logger.remove()
    arguments = parse_args()
    blind = hidden(arguments)  # the blind half's run shows only the bench's own lines (no tool errors, no flagged text)
    logger.add(sys.stderr, level="WARNING", filter=lambda record: not blind or record["name"] == "__main__")
    if arguments.log:
        logger.add(arguments.log, level=os.environ.get("BENCH_LOG_LEVEL", "INFO"))
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main(arguments))
