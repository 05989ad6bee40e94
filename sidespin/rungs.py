"""The rungs of the ladder, one per way a model asks for tools: `Native` (the backend's tool definitions), `Route`
(`sidespin.tooluse` decides, the model only answers), `Xml` (a salted prompt teaches the `<mcp-request>` block).
`tool_mode` in config.json (or SIDESPIN_TOOL_MODE) names one; `auto` (the default) takes the first in `PREFERENCE`
the backend offers (`rungs_of`, `choose_rung`)."""

from __future__ import annotations

import collections
import itertools
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from sidespin.formats import call_from_openai, to_openai_tool
from sidespin.llm.base import Backend, Grammar
from sidespin.protocol import MCP_TAG, alternating, grammar_for, teaching_prompt, xml_history
from sidespin.tooluse import offered_table, tables
from sidespin.tools import FAILED, Tool, ToolCall, failed
from sidespin.transcript.markers import fence_for

__all__ = ["ANSWER_LEAD", "Ask", "Request", "Rung", "Native", "Route", "Xml", "rung_named", "Choice", "PREFERENCE",
           "rungs_of", "choose_rung"]

PREFERENCE = ("route", "native", "xml")
ANSWER_LEAD = "So,"  # what the answer's hidden beginning ends with: the model goes on to answer from the results


@dataclass
class Ask:
    """What an answer is asked from: the history (OpenAI-shaped), the tools, and the turn's settings."""

    history: list[dict[str, Any]]
    tools: list[Tool]
    system: str = ""
    salt: str | None = None
    grammar: bool = False  # the backend takes a GBNF grammar
    forced: Tool | None = None  # a Poke's first answer: one block calling exactly this tool


@dataclass
class Request:
    messages: list[dict[str, Any]]
    tools: list[Tool] | None = None
    grammar: Grammar | None = None
    lead: str = ""  # the answer's hidden beginning (the last message, the assistant's), which the model goes on from


class Rung:
    """The request for an answer (`request`), what its tool section costs (`tool_section`), and `holds_openings`."""

    name: ClassVar[str]
    holds_openings: ClassVar[bool] = True  # an answer opening like a call is held until read: a route's may imitate one

    def request(self, ask: Ask) -> Request:
        raise NotImplementedError

    def tool_section(self, tools: Sequence[Tool]) -> str:
        raise NotImplementedError

    async def decide(self, backend: Backend, ask: Ask) -> list[ToolCall] | None:
        """The calls decided before the answer ([] for none), or None: the answer itself may call."""
        return None


def _system(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": text}] if text.strip() else []


class Native(Rung):
    name = "native"

    def request(self, ask: Ask) -> Request:
        return Request(_system(ask.system) + ask.history, ask.tools or None)

    def tool_section(self, tools: Sequence[Tool]) -> str:
        return json.dumps([to_openai_tool(t) for t in tools], ensure_ascii=False) if tools else ""


class Xml(Rung):
    name = "xml"

    def request(self, ask: Ask) -> Request:
        # a Poke's own prompt teaches the one tool it asks for; a second copy would only slow the prefill
        teaching = teaching_prompt(ask.tools, salt=ask.salt) if ask.tools and ask.forced is None else ""
        system = "\n\n".join(part for part in (ask.system.strip(), teaching) if part)
        # a Poke's first answer must be one block calling its tool: the grammar holds from the first token
        tools, trigger = ([ask.forced], None) if ask.forced is not None else (ask.tools, "<" + MCP_TAG)
        grammar = Grammar(grammar_for(tools), trigger=trigger) if ask.grammar and tools else None
        return Request(_system(system) + xml_history(ask.history), None, grammar)

    def tool_section(self, tools: Sequence[Tool]) -> str:
        return teaching_prompt(tools) if tools else ""


class Route(Rung):
    name = "route"

    def request(self, ask: Ask) -> Request:
        messages = _system(ask.system) + narrated_history(ask.history)
        return Request(messages, lead=messages[-1]["content"] if messages[-1]["role"] == "assistant" else "")

    def tool_section(self, tools: Sequence[Tool]) -> str:
        """The largest table a decision reads (`sidespin.tooluse.tables`): what the tool list costs it at most."""
        return max((json.dumps(offered_table(t), ensure_ascii=False) for t in tables(tools)), key=len) if tools else ""

    async def decide(self, backend: Backend, ask: Ask) -> list[ToolCall] | None:
        return await (await backend.decider()).decide(_system(ask.system) + decision_history(ask.history), ask.tools)


def rung_named(name: str) -> Rung:
    return {rung.name: rung for rung in (Native, Route, Xml)}[name]()


@dataclass(frozen=True)
class Choice:
    """The chosen rung and where the choice came from: `config`, or `default` (the backend's best)."""

    name: str
    source: str

    def describe(self) -> dict[str, Any]:
        return {"tool_rung": self.name, "tool_rung_source": self.source}


def rungs_of(backend: Backend) -> list[str]:
    """The rungs this backend offers, best first (`route` where llama.cpp's own completion endpoint is reachable)."""
    offered = {"route": backend.supports_routing, "native": backend.supports_tools, "xml": True}
    return [rung for rung in PREFERENCE if offered[rung]]


def choose_rung(backend: Backend, tool_mode: str) -> Choice:
    """The configured rung, or the best this backend offers."""
    return Choice(tool_mode, "config") if tool_mode != "auto" else Choice(rungs_of(backend)[0], "default")


def narrated_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history for a model that only answers: earlier turns' results as the person's (`told_result`), this turn's
    as the beginning of its answer (`results_lead`); a failure a later call mended is not told."""
    told: list[dict[str, Any]] = []
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    asked = {item.get("id"): call_from_openai(item).arguments for m in messages if m["role"] == "assistant"
             for item in m.get("tool_calls") or []}
    results: list[tuple[str, dict[str, Any], str]] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            if _mended_later(messages, index):
                continue
            name, content = message.get("name", ""), str(message.get("content") or "")
            arguments = asked.get(message.get("tool_call_id"), {})
            if index > last_user >= 0:  # a result of this turn
                results.append((name, arguments, content))
            else:
                told.append({"role": "user", "content": told_result(name, arguments, content)})
        elif message["role"] != "assistant" or (message.get("content") or "").strip():  # calls alone: told by results
            told.append({"role": message["role"], "content": message.get("content") or ""})
    if results:
        told.append({"role": "assistant", "content": results_lead(results)})
    return alternating(told)


def told_result(name: str, arguments: dict[str, Any], content: str) -> str:
    """A result of an earlier turn as told to the answering model: what its call was run with, then `_shown`."""
    run = f"was run with {json.dumps(arguments, ensure_ascii=False)}" if arguments else "was run"
    return f"The tool {name} {run} and{_shown(content, ' gave:')}"


def results_lead(results: Sequence[tuple[str, dict[str, Any], str]]) -> str:
    """This turn's results (name, arguments, output) as the answer's beginning, each under "[name]" (with its
    arguments where the tool ran more than once) and `_shown`; then `ANSWER_LEAD`."""
    runs = collections.Counter(name for name, _, _ in results)
    return "\n\n".join((f"[{name} {json.dumps(arguments, ensure_ascii=False)}]" if runs[name] > 1 and arguments else
                        f"[{name}]") + _shown(content) for name, arguments, content in results) + "\n\n" + ANSWER_LEAD


def _shown(content: str, gave: str = "") -> str:
    """An output after `gave`, in a fence longer than any fence inside it; an error as " failed: …" on one line."""
    fence = fence_for(content)
    return f" failed: {content.removeprefix(FAILED)}" if failed(content) else f"{gave}\n{fence}\n{content}\n{fence}"


def _mended_later(messages: list[dict[str, Any]], index: int) -> bool:
    """Whether the result at `index` failed and a later call of the same tool succeeded before the next user message."""
    result = messages[index]
    turn = itertools.takewhile(lambda later: later["role"] != "user", messages[index + 1:])
    return failed(str(result.get("content") or "")) and any(
        later["role"] == "tool" and later.get("name") == result.get("name")
        and not failed(str(later.get("content") or "")) for later in turn)


def decision_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as the route's decision reads it: calls and results in the model's own format, results cut."""
    kept: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool":
            content = str(message.get("content") or "")
            content = content[:2000] + "…" if len(content) > 2000 else content
            kept.append({"role": "tool", "tool_call_id": message.get("tool_call_id"), "content": content})
        elif message["role"] in ("user", "assistant", "system"):
            kept.append({"role": message["role"], "content": message.get("content") or ""})
            if message["role"] == "assistant" and message.get("tool_calls"):
                kept[-1]["tool_calls"] = message["tool_calls"]
    return kept
