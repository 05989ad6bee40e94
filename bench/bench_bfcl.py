"""Tool use on a public yardstick: the Berkeley Function Calling Leaderboard's questions, scored by its own checker.

The rules, before the code:

- Data and checker are BFCL's, from the `bfcl-eval` package (pinned: BFCL_VERSION): the questions
  `bfcl_eval/data/BFCL_v4_<category>.json` as its own loader prepares them for a model (the
  "Python 3 syntax" hint added to each description), the answers `data/possible_answer/...`, and
  `bfcl_eval.eval_checker.ast_eval.ast_checker` (and `multi_turn_checker`) imported, never copied.
- `bfcl-eval` declares torch, vllm, every vendor's SDK... which its checker never imports. So it is
  installed with `pip install --no-deps bfcl-eval==BFCL_VERSION`, plus the `bench` extra of
  pyproject.toml (the few small packages the checker does import); this script does both when they
  are missing. Importing the checker would still pull every model handler through
  `bfcl_eval.constants.model_config`: a stand-in for that one module is put in `sys.modules` first,
  naming one model (CHECKER_MODEL) that keeps dots in function names.
- Each question's functions are offered the way an MCP server would publish them: BFCL's schema
  dialect ("dict", "float", "tuple", "any") turned into plain JSON Schema with BFCL's own type table
  (`GORILLA_TO_OPENAPI`, as its function-calling handlers use it), each listed tool made a registry
  `Tool` by `tool_from_mcp`, source `mcp:bfcl`. Names keep their dots (the registry and MCP allow
  them). Nothing of BFCL goes into the product's prompts: the tools are offered and the question asked.
- Each question is one turn of the product's rally (`chat_with_llm`, max_rounds=1) on one rung, every
  call held for approval, so nothing runs: the turn's `ToolProposed` calls are the answer, in order.
  Earlier messages of a question (a system message, earlier turns) are the conversation's history.
  A `MalformedCall`, or a turn the backend failed (TurnDone reason "error"), is a wrong answer in
  every category; other notices (an answer cut at --max-tokens) are kept as notes, not judged.
- Scoring as BFCL's eval_runner does: the AST checker with the category and Python; irrelevance and
  live_irrelevance are right when no call was made, live_relevance when at least one was.
- The aggregates as its leaderboard computes them (eval_runner_helper): Non-Live is the unweighted
  mean of simple, multiple, parallel and parallel_multiple (BFCL's "simple" also averages Java and
  JavaScript, not run here: simple is simple_python alone); Live is the mean of the four live AST
  categories weighted by each category's size in BFCL (a full run weights by count; with a sample,
  the full sizes keep the weights the leaderboard's); Irrelevance is the unweighted mean of
  irrelevance and live_irrelevance; Relevance is live_relevance alone.
- `--beside`: each question's functions are offered after the tools of other servers, never run (every
  call is held), as a person who connected several servers has them: `bench/server_eval/reference_tools.json`
  is the five MCP reference servers' 52 tools as they list them (`bench/bench_servers.py --dump-tools`).
  The route then reads one server's table at a time and must find the question's. A call of one of
  those tools is wrong (BFCL's checker knows only the question's functions).
- Also: median seconds per question, and answers whose visible text shows call syntax (a tool's
  name followed by "(", a JSON "arguments" key, a <tool_call> or <mcp-request> tag).
- multi_turn_base (only with --multi-turn, or named in --categories): BFCL's own executable classes
  (bfcl_eval/eval_checker/multi_turn_eval/func_source_code, which run here with mpmath) are the tools,
  really run; each turn is a turn of the rally (policy auto, BFCL's step limit as max_rounds), and the
  calls run in each turn go to `multi_turn_checker`. A turn cut at the limit (or by an error) fails
  the question, as BFCL's force-termination does; a malformed call there only ends its step, as in
  BFCL's loop. Slow: some 30 tools, a prompt of ~10,000 tokens (give --n-ctx 16384), several turns.

    python bench/bench_bfcl.py                                    qwen0.5b, the product's rung, 12 a category
    python bench/bench_bfcl.py --limit 2 --categories simple_python,live_irrelevance -v
    python bench/bench_bfcl.py --models qwen0.5b,qwen1.5b --rungs route,xml --json results.json
    python bench/bench_bfcl.py --ids wrong.txt -v                 the questions named (a line each, or a --json file)
    python bench/bench_bfcl.py --beside bench/server_eval/reference_tools.json   beside the reference servers' tools
    python bench/bench_bfcl.py --multi-turn --categories multi_turn_base --limit 2 --n-ctx 16384

Rungs: auto (the default: the rung the product takes with tool_mode auto, the first the backend
offers in the ladder's order, `sidespin.rungs.rungs_of`: route for a llama.cpp model), route, xml
or native (the same llama.cpp server spoken to with OpenAI `tools`). Models: qwen0.5b, qwen1.5b
(`scripts/fetch-model qwen2.5-coder-1.5b`), or a .gguf path. One model at a time, --threads llama.cpp
threads (default 1: the machine is shared); answers greedy (temperature 0, seed 42).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from loguru import logger

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mcp_types  # noqa: E402

from sidespin.approvals import Ruling  # noqa: E402
from sidespin.events import ErrorNotice, MalformedCall, TextDelta, ToolProposed, TurnDone  # noqa: E402
from sidespin.rungs import rungs_of  # noqa: E402
from sidespin.llm.base import Backend  # noqa: E402
from sidespin.llm.embedded import DEFAULT_N_CTX, EmbeddedBackend  # noqa: E402
from sidespin.llm.openai import OpenAIBackend  # noqa: E402
from sidespin.mcp.content import tool_from_mcp  # noqa: E402
from sidespin.rally import Conversation, RallyOptions, chat_with_llm  # noqa: E402
from sidespin.tools import Tool, ToolRegistry  # noqa: E402

BFCL_VERSION = "2026.3.23"
# BFCL keeps lock files (and would keep results) under its "project root": here, not in site-packages.
os.environ.setdefault("BFCL_PROJECT_ROOT", str(ROOT / ".cache" / "bfcl"))
MODEL_CONFIG = "bfcl_eval.constants.model_config"
CHECKER_MODEL = "sidespin"  # the one model the stand-in registry knows; it keeps "." in names
SOURCE = "mcp:bfcl"

MODELS_DIR = ROOT / ".cache" / "models"
NAMED_MODELS = {
    "qwen0.5b": MODELS_DIR / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen1.5b": MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
}
RUNGS = ("auto", "route", "xml", "native")

NON_LIVE = ("simple_python", "multiple", "parallel", "parallel_multiple")
LIVE = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
IRRELEVANCE = ("irrelevance", "live_irrelevance")
RELEVANCE = ("live_relevance",)
MULTI_TURN = "multi_turn_base"
CATEGORIES = NON_LIVE + LIVE + IRRELEVANCE + RELEVANCE
# The leaderboard's published figures (BFCL v4), Live / Irrelevance, for the reader's reference.
PUBLISHED = (
    ("Qwen2.5-0.5B-Instruct (prompt)", 31.6, 20.0),
    ("Qwen2.5-1.5B-Instruct (prompt)", 61.0, 60.7),
    ("Hammer2.1-0.5b (FC)", 62.9, 70.0),
    ("Hammer2.1-1.5b (FC)", 70.6, 71.9),
)
# Visible text that shows a call: tags and keys of written calls (a tool's name then "(" is looked for too).
CALL_MARKS = re.compile(r"<mcp-request|<tool_call|<function[=>\s]|\"(?:arguments|parameters)\"\s*:")


# --- BFCL, installed and imported --------------------------------------------------------------


def _model_config_stand_in() -> types.ModuleType:
    """What the checker reads of BFCL's model registry: whether a model turns "." into "_" in names."""
    module = types.ModuleType(MODEL_CONFIG)
    module.MODEL_CONFIG_MAPPING = {CHECKER_MODEL: types.SimpleNamespace(underscore_to_dot=False)}
    return module


# Before any bfcl_eval import: the real module imports every model handler and their SDKs.
sys.modules.setdefault(MODEL_CONFIG, _model_config_stand_in())


def missing_packages() -> list[str]:
    """What `pip install` needs to be given for this bench to run: bfcl-eval and the bench extra."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = extra["project"]["optional-dependencies"]["bench"]
    missing = [spec for spec in wanted if importlib.util.find_spec(_module_of(spec)) is None]
    return missing + ([f"bfcl-eval=={BFCL_VERSION}"] if importlib.util.find_spec("bfcl_eval") is None else [])


def _module_of(spec: str) -> str:
    return re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].replace("-", "_").lower()


def install(packages: list[str]) -> None:
    """Install into this interpreter's environment; bfcl-eval without its declared dependencies."""
    plain = [p for p in packages if not p.startswith("bfcl-eval")]
    bfcl = [p for p in packages if p.startswith("bfcl-eval")]
    for extra_args, group in (([], plain), (["--no-deps"], bfcl)):
        if not group:
            continue
        print(f"bench_bfcl: installing {' '.join(group)} {' '.join(extra_args)}".rstrip(), file=sys.stderr)
        done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *extra_args, *group])
        if done.returncode != 0:
            raise SystemExit(f"bench_bfcl: could not install {' '.join(group)} (pip exit {done.returncode}); "
                             f"try: {sys.executable} -m pip install {' '.join(extra_args + group)}")
    importlib.invalidate_caches()  # so that what was just installed is found by this process


# --- questions ----------------------------------------------------------------------------------


@dataclass
class Question:
    id: str
    category: str
    entry: dict[str, Any]  # BFCL's test entry: "question", "function" (and multi-turn's classes and config)
    truth: Any  # BFCL's possible answer ("ground_truth"); None for relevance and irrelevance


def load_category(category: str) -> list[Question]:
    from bfcl_eval.utils import is_relevance_or_irrelevance, load_dataset_entry, load_ground_truth_entry

    entries = load_dataset_entry(category, include_prereq=False, include_language_specific_hint=True)
    if is_relevance_or_irrelevance(category):
        return [Question(entry["id"], category, entry, None) for entry in entries]
    truths = {row["id"]: row["ground_truth"] for row in load_ground_truth_entry(category)}
    return [Question(entry["id"], category, entry, truths[entry["id"]]) for entry in entries]


def sample(questions: list[Question], limit: int | None, seed: int) -> list[Question]:
    """A seeded random sample, the same for a category whatever other categories are asked for."""
    if not limit or limit >= len(questions):
        return questions
    category = questions[0].category
    chosen = set(random.Random(f"{seed}:{category}").sample(range(len(questions)), limit))
    return [q for i, q in enumerate(questions) if i in chosen]


def read_ids(path: Path) -> list[str]:
    """Ids one a line (# comments), or a JSON list of ids or of records with an "id" (a --json file)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        rows = [line.split("#")[0].strip() for line in text.splitlines()]
        return list(dict.fromkeys(row for row in rows if row))
    ids = [item["id"] if isinstance(item, dict) else str(item) for item in data]
    return list(dict.fromkeys(ids))


def category_of(question_id: str) -> str:
    return question_id.rsplit("_", 1)[0]  # simple_python_12, live_simple_3-2-0, multi_turn_base_7


def choose_questions(categories: list[str], limit: int | None, seed: int, ids: list[str] | None) -> list[Question]:
    if ids is not None:
        wanted = set(ids)
        asked = list(dict.fromkeys(category_of(i) for i in ids))
        found = [q for category in asked for q in load_category(category) if q.id in wanted]
        unknown = wanted - {q.id for q in found}
        if unknown:
            raise SystemExit(f"bench_bfcl: unknown ids: {', '.join(sorted(unknown)[:10])}")
        return found
    return [q for category in categories for q in sample(load_category(category), limit, seed)]


# --- tools as an MCP server would publish them ---------------------------------------------------


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """BFCL's parameter schema as plain JSON Schema: its types mapped by BFCL's own table (dict→object,
    float→number, tuple→array, any→string; unknown→string, as its handlers do); its `optional` flag
    (not JSON Schema) dropped."""
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    converted = {key: value for key, value in schema.items() if key != "optional"}
    if "type" in converted:
        converted["type"] = GORILLA_TO_OPENAPI.get(converted["type"], "string")
    if isinstance(converted.get("properties"), dict):
        converted["properties"] = {name: json_schema(sub) for name, sub in converted["properties"].items()}
    if isinstance(converted.get("items"), dict):
        converted["items"] = json_schema(converted["items"])
    return converted


def listed_tool(function: dict[str, Any]) -> mcp_types.Tool:
    """One BFCL function as an MCP server's tools/list would give it."""
    schema = {**json_schema(function["parameters"]), "type": "object"}
    return mcp_types.Tool(name=function["name"], description=function.get("description", ""), inputSchema=schema)


ToolBody = Callable[..., Awaitable[Any]]


async def _never_run(**arguments: Any) -> str:
    raise AssertionError("a single-turn BFCL question's calls wait for approval and are never run")


BESIDE: list[Tool] = []  # other servers' tools, offered before each question's (--beside)


def beside(path: Path) -> list[Tool]:
    """The tools of a `--beside` file (name, description, input_schema, source, places...): listed, never run."""
    return [Tool(fn=_never_run, **{**listed, "places": tuple(listed.get("places", ()))})
            for listed in json.loads(path.read_text(encoding="utf-8"))]


def offered(functions: list[dict[str, Any]], body: Callable[[str], ToolBody] | None = None) -> ToolRegistry:
    """A registry of the functions, made as the product makes an MCP server's tools (`tool_from_mcp`), after
    the tools of `BESIDE` whose names the functions do not take."""
    registry = ToolRegistry()
    names = {function["name"] for function in functions}
    for tool in BESIDE:
        if tool.name not in names:
            registry.add(tool)
    for function in functions:
        fn = body(function["name"]) if body else _never_run
        registry.add(tool_from_mcp(listed_tool(function), fn, source=SOURCE, timeout=60.0))
    return registry


# --- answers --------------------------------------------------------------------------------------


@dataclass
class Answer:
    calls: list[dict[str, dict[str, Any]]] = field(default_factory=list)  # BFCL's decoded form: [{name: arguments}]
    visible: str = ""
    problem: str = ""  # a malformed call or the backend's error: the answer is wrong whatever its category
    notes: str = ""  # what the rally told besides (an answer cut at max_tokens...)
    turns: list[list[str]] = field(default_factory=list)  # multi-turn: the calls run in each turn, as BFCL writes them


@dataclass
class Outcome:
    model: str
    rung: str
    id: str
    category: str
    expected: Any
    got: Any
    correct: bool
    seconds: float
    why: str = ""  # the checker's reason, for a wrong answer
    error: bool = False  # the backend failed (counted wrong)
    notes: str = ""
    shows_call: bool = False
    visible: str = ""


def split_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Earlier messages (the conversation's history) and the last user message's text."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    history = [{"role": m["role"], "content": m["content"]} for m in messages[:last]]
    return history, messages[last]["content"]


async def play_turn(
    conversation: Conversation, history: list[dict[str, Any]], text: str, backend: Backend, registry: ToolRegistry,
    options: RallyOptions, *, hold: bool,
) -> tuple[Answer, str]:
    """One turn of the rally on `history` (which it extends); its proposed calls, visible text, problems, and how
    it ended."""
    answer = Answer()
    visible: list[str] = []
    problems: list[str] = []
    notices: list[str] = []
    reason = "done"
    policy = (lambda *_: Ruling("ask")) if hold else None
    events = chat_with_llm(conversation, text, backend=backend, registry=registry, history=history, options=options,
                           policy=policy)
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, ToolProposed):
                answer.calls.append({event.call.name: dict(event.call.arguments)})
            elif isinstance(event, TextDelta):
                visible.append(event.text)
            elif isinstance(event, MalformedCall):
                problems.append(f"malformed call: {event.reason}")
            elif isinstance(event, ErrorNotice):
                notices.append(event.message)
            elif isinstance(event, TurnDone):
                reason = event.reason
    if reason == "error":  # the backend failed: no answer to judge (a notice such as a cut answer is not that)
        problems += [f"error: {notice}" for notice in notices]
    answer.visible, answer.problem, answer.notes = "".join(visible), "; ".join(problems), "; ".join(notices)
    return answer, reason


async def answer_single(question: Question, backend: Backend, rung: str) -> Answer:
    """The calls a single-turn question gets: one turn, one round, every call held so nothing runs."""
    history, text = split_messages(question.entry["question"][0])
    with offered(question.entry["function"]) as registry:
        answer, _ = await play_turn(Conversation(), history, text, backend, registry,
                                    RallyOptions(mode=rung, max_rounds=1), hold=True)
    return answer


class Stage:
    """BFCL's executable classes for one multi-turn question, as the tools' bodies: each call runs on the
    instances of this run (`run_name`), and the call, as BFCL writes it, joins the current turn."""

    def __init__(self, question: Question, run_name: str) -> None:
        self.entry = question.entry
        self.run_name = run_name
        self.turns: list[list[str]] = []

    def body(self, name: str) -> ToolBody:
        async def run(**arguments: Any) -> str:  # async: calls run one after another, in the order proposed
            return self.execute(name, arguments)

        return run

    def execute(self, name: str, arguments: dict[str, Any]) -> str:
        from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

        call = f"{name}({','.join(f'{key}={value!r}' for key, value in arguments.items())})"
        self.turns[-1].append(call)
        results, _ = execute_multi_turn_func_call([call], self.entry["initial_config"], self.entry["involved_classes"],
                                                  self.run_name, self.entry["id"])
        return results[0]


async def answer_multi_turn(question: Question, backend: Backend, rung: str, run_name: str) -> Answer:
    """Every turn of a multi-turn question in one conversation, its calls really run on BFCL's classes."""
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

    stage = Stage(question, run_name)
    conversation, said = Conversation(), []  # said: the messages of every turn so far
    answer = Answer()
    options = RallyOptions(mode=rung, max_rounds=MAXIMUM_STEP_LIMIT)
    with offered(question.entry["function"], stage.body) as registry:
        for messages in question.entry["question"]:
            history, text = split_messages(messages)
            said.extend(history)
            stage.turns.append([])
            turn, reason = await play_turn(conversation, said, text, backend, registry, options, hold=False)
            answer.calls += turn.calls
            answer.visible += turn.visible + "\n"
            answer.notes = "; ".join(n for n in (answer.notes, turn.problem, turn.notes) if n)
            if reason in ("error", "limit"):  # a malformed call only ends its step, as in BFCL's own loop
                answer.problem = turn.problem if reason == "error" else f"turn {len(stage.turns)} was cut (limit)"
                break  # BFCL fails a force-terminated question whole
    answer.turns = stage.turns
    return answer


# --- scoring --------------------------------------------------------------------------------------


def judge(question: Question, answer: Answer, run_name: str = CHECKER_MODEL) -> tuple[bool, str]:
    """Right or wrong as BFCL's eval_runner says, and why when wrong; `run_name` keys multi-turn instances."""
    category = question.category
    if answer.problem:
        return False, answer.problem
    if "irrelevance" in category:
        return (not answer.calls), "" if not answer.calls else "a call where none was wanted"
    if "relevance" in category:
        return bool(answer.calls), "" if answer.calls else "no call where one was wanted"
    if category.startswith("multi_turn"):
        return _judge_multi_turn(question, answer, run_name)
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    result = ast_checker(question.entry["function"], answer.calls, question.truth, Language.PYTHON, category,
                         CHECKER_MODEL)
    errors = " ".join(e if isinstance(e, str) else json.dumps(e, default=str) for e in result["error"])
    return bool(result["valid"]), "" if result["valid"] else f"{result['error_type']}: {errors}"


def _judge_multi_turn(question: Question, answer: Answer, run_name: str) -> tuple[bool, str]:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    decoded = [[calls] if calls else [] for calls in answer.turns]
    if len(decoded) != len(question.truth):
        return False, "multi_turn:force_terminated"
    result = multi_turn_checker(decoded, question.truth, question.entry, question.category, run_name)
    return bool(result["valid"]), "" if result["valid"] else f"{result['error_type']}: {result['error_message']}"


def expected_of(question: Question) -> Any:
    if "irrelevance" in question.category:
        return "no call"
    if "relevance" in question.category:
        return "at least one call"
    return question.truth


def shows_call(text: str, names: list[str]) -> bool:
    """The visible text shows call syntax: a call's tag or JSON keys, or a tool's name followed by "("."""
    return bool(CALL_MARKS.search(text)) or any(re.search(rf"\b{re.escape(name)}\s*\(", text) for name in names)


# --- a model, its rungs ------------------------------------------------------------------------------


def product_rung(backend: Backend) -> str:
    """The rung the product stands on with tool_mode auto: the first the backend offers in the ladder's order."""
    return rungs_of(backend)[0]


async def ask(question: Question, backend: Backend, rung: str, label: str, shown: str) -> Outcome:
    """One question on `rung`, scored; `shown` is the rung as the report names it ("auto=route")."""
    started = time.perf_counter()
    logger.info("BENCH_QUESTION {} {} {}", label, shown, question.id)  # the log's lines until the next are its own
    run_name = re.sub(r"\W", "_", f"sidespin_{label}_{rung}")  # BFCL keys its multi-turn instances by it
    multi_turn = question.category.startswith("multi_turn")
    if multi_turn:
        answer = await answer_multi_turn(question, backend, rung, run_name)
    else:
        answer = await answer_single(question, backend, rung)
    seconds = time.perf_counter() - started
    correct, why = judge(question, answer, run_name)
    names = [f["name"] for f in question.entry["function"]]
    return Outcome(label, shown, question.id, question.category, expected_of(question),
                   answer.turns if multi_turn else answer.calls, correct, seconds, why=why,
                   error=answer.problem.startswith("error:"), notes=answer.notes,
                   shows_call=shows_call(answer.visible, names), visible=answer.visible[:300])


async def run_rung(
    label: str, backend: Backend, rung: str, shown: str, questions: list[Question], verbose: bool
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for category in dict.fromkeys(q.category for q in questions):
        started = time.perf_counter()
        for question in (q for q in questions if q.category == category):
            outcome = await ask(question, backend, rung, label, shown)
            outcomes.append(outcome)
            if verbose and not outcome.correct:
                print_wrong(outcome)
        done = [o for o in outcomes if o.category == category]
        print(f"  {label} {shown} {category}: {sum(o.correct for o in done)}/{len(done)} in "
              f"{time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    return outcomes


async def run_model(
    label: str, path: Path, rungs: list[str], questions: list[Question], args: argparse.Namespace
) -> list[Outcome]:
    options = {"max_tokens": args.max_tokens, "temperature": 0, "seed": 42}
    second = str(model_path(args.second)) if args.second else None
    backend = EmbeddedBackend(path, threads=args.threads, n_ctx=args.n_ctx, options=options, start_timeout=300,
                              second_model=second)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="bench-bfcl-slots-") as slots:
        backend.slot_dir = Path(slots)  # the route saves each new tool set's prefix: one per question here
        async with backend:
            for asked in rungs:
                rung = product_rung(backend) if asked == "auto" else asked
                shown = f"auto={rung}" if asked == "auto" else rung
                if rung != "native":
                    outcomes += await run_rung(label, backend, rung, shown, questions, args.verbose)
                    continue
                async with native_client(backend, options) as native:
                    outcomes += await run_rung(label, native, rung, shown, questions, args.verbose)
    return outcomes


def native_client(backend: EmbeddedBackend, options: dict[str, Any]) -> OpenAIBackend:
    """The same llama.cpp server spoken to with OpenAI `tools` (its chat template's native calls)."""
    return OpenAIBackend(backend.base_url, api_key=backend.api_key, supports_tools=True, supports_grammar=True,
                         options=options, label="the embedded llama.cpp server (native tools)", keep_alive=False)


# --- report ---------------------------------------------------------------------------------------


def print_wrong(outcome: Outcome) -> None:
    got = json.dumps(outcome.got, ensure_ascii=False)[:300]
    expected = json.dumps(outcome.expected, ensure_ascii=False)[:300]
    print(f"  wrong {outcome.id}: {outcome.why[:200]}\n    expected {expected}\n    got      {got}")
    if outcome.visible.strip():
        print(f"    text     {outcome.visible[:160]!r}")


def accuracy(outcomes: list[Outcome], category: str) -> float | None:
    rows = [o for o in outcomes if o.category == category]
    return sum(o.correct for o in rows) / len(rows) if rows else None


def aggregates(outcomes: list[Outcome], sizes: dict[str, int]) -> list[tuple[str, float | None, str]]:
    """BFCL's leaderboard aggregates: (name, accuracy or None when a part was not run, how it is computed)."""
    def mean(categories: tuple[str, ...], weighted: bool) -> float | None:
        rates = [accuracy(outcomes, c) for c in categories]
        if any(rate is None for rate in rates):
            return None
        weights = [sizes[c] if weighted else 1 for c in categories]
        return sum(rate * w for rate, w in zip(rates, weights)) / sum(weights)

    rows = [
        ("Non-Live", mean(NON_LIVE, False), "unweighted mean of " + ", ".join(NON_LIVE)),
        ("Live", mean(LIVE, True), "mean weighted by BFCL's category sizes ("
         + ", ".join(f"{c} {sizes[c]}" for c in LIVE) + ")"),
        ("Irrelevance", mean(IRRELEVANCE, False), "unweighted mean of " + ", ".join(IRRELEVANCE)),
        ("Relevance", mean(RELEVANCE, False), "live_relevance"),
    ]
    if any(o.category == MULTI_TURN for o in outcomes):
        rows.append(("Multi-Turn", mean((MULTI_TURN,), False), "multi_turn_base only (BFCL averages four)"))
    return rows


def pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:5.1f}"


def print_report(outcomes: list[Outcome], sizes: dict[str, int]) -> None:
    for (model, rung) in dict.fromkeys((o.model, o.rung) for o in outcomes):
        mine = [o for o in outcomes if (o.model, o.rung) == (model, rung)]
        print(f"\n{model} / {rung}")
        header = f"  {'category':<24} {'right':>7} {'accuracy':>9} {'median s':>9} {'call text':>9} {'errors':>6}"
        print(header + "\n  " + "-" * (len(header) - 2))
        for category in dict.fromkeys(o.category for o in mine):
            rows = [o for o in mine if o.category == category]
            print(f"  {category:<24} {sum(o.correct for o in rows):>3}/{len(rows):<3} {pct(accuracy(rows, category)):>9} "
                  f"{statistics.median(o.seconds for o in rows):>9.1f} {sum(o.shows_call for o in rows):>9} "
                  f"{sum(o.error for o in rows):>6}")
        print(f"  {'all':<24} {sum(o.correct for o in mine):>3}/{len(mine):<3} {'':>9} "
              f"{statistics.median(o.seconds for o in mine):>9.1f} {sum(o.shows_call for o in mine):>9} "
              f"{sum(o.error for o in mine):>6}")
        for name, rate, how in aggregates(mine, sizes):
            print(f"  {name:<12} {pct(rate):>6}   {how}")
        print("  (n/a: a category of the aggregate was not run)")


def print_published() -> None:
    print("\nBFCL v4 leaderboard, published (full sets, BFCL's own prompts or FC mode): Live / Irrelevance")
    for name, live, irrelevance in PUBLISHED:
        print(f"  {name:<32} {live:5.1f} / {irrelevance:5.1f}")


def model_path(name: str) -> Path:
    if name.endswith(".gguf"):
        return Path(name)
    if name not in NAMED_MODELS:
        raise SystemExit(f"unknown model {name!r}: use {', '.join(NAMED_MODELS)} or a .gguf path")
    return NAMED_MODELS[name]


def category_sizes(categories: tuple[str, ...]) -> dict[str, int]:
    return {category: len(load_category(category)) for category in categories}


def split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


async def main(args: argparse.Namespace) -> int:
    missing = missing_packages()
    if missing:
        install(missing)
    categories = split(args.categories) or list(CATEGORIES)
    if args.multi_turn and MULTI_TURN not in categories:
        categories.append(MULTI_TURN)
    unknown = [c for c in categories if c not in CATEGORIES + (MULTI_TURN, "live_parallel_multiple")]
    rungs = split(args.rungs) or ["auto"]
    if unknown or any(r not in RUNGS for r in rungs):
        raise SystemExit(f"categories: {', '.join(CATEGORIES + (MULTI_TURN,))}; rungs: {', '.join(RUNGS)}")
    ids = read_ids(Path(args.ids)) if args.ids else None
    questions = choose_questions(categories, args.limit, args.seed, ids)
    if args.beside:
        BESIDE[:] = beside(Path(args.beside))
        print(f"each question's functions offered after {len(BESIDE)} tools of {args.beside}")
    print(f"{len(questions)} BFCL questions (bfcl-eval {BFCL_VERSION}, seed {args.seed}) in "
          f"{len(dict.fromkeys(q.category for q in questions))} categories; threads {args.threads}, "
          f"answers capped at {args.max_tokens} tokens, context {args.n_ctx}")
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    for name in split(args.models) or ["qwen0.5b"]:
        path = model_path(name)
        if not path.is_file():
            print(f"{name}: skipped, {path} is missing (scripts/fetch-model assembles the Qwen models)")
            continue
        label = name if name in NAMED_MODELS else path.stem
        outcomes += await run_model(f"{label}+{args.second}" if args.second else label, path, rungs, questions, args)
    print_report(outcomes, category_sizes(LIVE))
    print_published()
    print(f"\n{len(outcomes)} answers in {time.perf_counter() - started:.0f}s")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(o) for o in outcomes], ensure_ascii=False, indent=1),
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--second", help="a second, larger model that writes the arguments and decides where the "
                        "first is unsure (the embedded backend's second_model): "
                        f"{', '.join(NAMED_MODELS)} or a .gguf path")
    parser.add_argument("--models", help=f"comma-separated: {', '.join(NAMED_MODELS)} or .gguf paths (default qwen0.5b)")
    parser.add_argument("--rungs", help=f"comma-separated, of {', '.join(RUNGS)} (default auto: the product's pick)")
    parser.add_argument("--categories", help=f"comma-separated (default: {','.join(CATEGORIES)})")
    parser.add_argument("--multi-turn", action="store_true", help=f"also {MULTI_TURN} (tools really run; slow)")
    parser.add_argument("--limit", type=int, default=12, help="questions per category, a seeded sample (default 12; 0: all)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--ids", help="run these question ids (a line each, or a JSON list, or a --json file)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX, help=f"context (default {DEFAULT_N_CTX}, the product's)")
    parser.add_argument("--max-tokens", type=int, default=256, help="cap of one answer (default 256)")
    parser.add_argument("--beside", help="offer these tools (a JSON list) before each question's functions, never run")
    parser.add_argument("--json", help="write every answer to this file")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each wrong answer")
    parser.add_argument("--log", help="also write the product's log (INFO) to this file")
    arguments = parser.parse_args()
    if arguments.log:
        logger.add(arguments.log, level="INFO")
    sys.exit(asyncio.run(main(arguments)))
