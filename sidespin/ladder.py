"""The ladder: which way a model asks for tools (native calls, the constrained route, or the XML block).

The rules, before the code:

- A backend offers the rungs it really has: `native` where it takes tool definitions
  (Ollama, OpenAI-compatible, Anthropic), `route` where llama.cpp's own completion
  endpoint is reachable (the embedded model), `xml` everywhere.
- `tool_mode` in config.json (or SIDESPIN_TOOL_MODE) names a rung, and that is the rung.
- With `auto` (the default), a backend that offers native calls but no route (a model
  behind Ollama, an OpenAI-compatible server, Anthropic) uses them: its server parses
  the calls. Where the route is on offer (a llama.cpp model), a short probe picks the
  rung the first time the model is loaded: four messages, two that need a built-in tool and two that
  need none, played through the rally on each rung with every call held for approval, so
  nothing runs; the rung with the most right decisions wins (ties: route, native, xml).
  The result is recorded in `ladder.json` in the data directory, per model, and reused.
- The chosen rung, and where it came from (config, probe, record, only), is shown by
  `/health` and `sidespin tools`.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from sidespin.events import ToolProposed
from sidespin.llm import Backend
from sidespin.tools import ToolRegistry

__all__ = ["Rung", "PROBES", "rungs_of", "choose_rung", "model_key", "recorded"]

PREFERENCE = ("route", "native", "xml")
# Not taken from any evaluation set; each names the built-in tool it needs (None: no tool).
PROBES: tuple[tuple[str, str | None], ...] = (
    ("Throw one twelve-sided die for me.", "roll_dice"),
    ("Thanks a lot, that was helpful!", None),
    ("What's the local time in Lima at the moment?", "get_time"),
    ("What does the abbreviation HTTP stand for?", None),
)


@dataclass(frozen=True)
class Rung:
    """The chosen rung, where the choice came from, and the probe's scores when there was one."""

    name: str
    source: str  # config, probe, record, server (the server parses native calls) or only
    scores: dict[str, int] | None = None

    def describe(self) -> dict[str, Any]:
        return {"tool_rung": self.name, "tool_rung_source": self.source, "tool_rung_scores": self.scores}


def rungs_of(backend: Backend) -> list[str]:
    """The rungs this backend really offers, in order of preference."""
    offered = {"xml"}
    if backend.supports_tools:
        offered.add("native")
    if backend.supports_routing:
        offered.add("route")
    return [rung for rung in PREFERENCE if rung in offered]


def model_key(backend: Backend) -> str:
    return f"{backend.name}:{backend.model}"


async def _decision(backend: Backend, registry: ToolRegistry, rung: str, text: str) -> str | None:
    """The tool the model asks for on `rung` (None: none), with every call held so that nothing runs."""
    from sidespin.rally import Conversation, RallyOptions, chat_with_llm  # the rally imports the backends too

    options = RallyOptions(mode=rung, max_rounds=1, turn_seconds=60, turn_tokens=96)
    turn = chat_with_llm(Conversation(), text, backend=backend, registry=registry, options=options,
                         policy=lambda tool: "ask")
    async with contextlib.aclosing(turn):
        async for event in turn:
            if isinstance(event, ToolProposed):
                return event.call.name
    return None


async def probe(backend: Backend, registry: ToolRegistry, rungs: list[str]) -> dict[str, int]:
    """Right decisions out of the probes whose tool is registered, per rung."""
    probes = [(text, tool) for text, tool in PROBES if tool is None or tool in registry]
    scores: dict[str, int] = {}
    for rung in rungs:
        started = time.perf_counter()
        scores[rung] = sum([await _decision(backend, registry, rung, text) == tool for text, tool in probes])
        logger.info("LADDER_PROBE model={} rung={} right={}/{} in {:.1f}s", model_key(backend), rung, scores[rung],
                    len(probes), time.perf_counter() - started)
    return scores


async def choose_rung(backend: Backend, registry: ToolRegistry, tool_mode: str, record: Path) -> Rung:
    """The rung to use: the configured one, the recorded one, or the probe's pick (then recorded)."""
    rungs = rungs_of(backend)
    if tool_mode != "auto":
        return Rung(tool_mode, "config")
    if "route" not in rungs:
        return Rung(rungs[0], "only" if len(rungs) == 1 else "server")
    key = model_key(backend)
    known = recorded(record)
    if key in known and known[key].get("rung") in rungs:
        return Rung(known[key]["rung"], "record", known[key].get("scores"))
    scores = await probe(backend, registry, rungs)
    best = max(rungs, key=lambda rung: (scores[rung], -PREFERENCE.index(rung)))
    known[key] = {"rung": best, "scores": scores, "probed": time.strftime("%Y-%m-%dT%H:%M:%S")}
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    logger.info("LADDER_CHOSEN model={} rung={} scores={}", key, best, scores)
    return Rung(best, "probe", scores)


def recorded(record: Path) -> dict[str, Any]:
    """The probes recorded so far: {model key: {"rung", "scores", "probed"}}."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}

