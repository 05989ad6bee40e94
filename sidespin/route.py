"""Constrained routing: a small llama.cpp model decides whether and which tool, then fills its arguments.

The rules, before the code:

- **Step 1, the decision.** One prompt: a system message listing every tool by the
  first sentence of its description, plus `none`, then what each tool's arguments
  need; worked user/assistant turns; then the user's message. The answer is generated
  under a GBNF grammar whose only sentences are the tool names and `none`, so it costs
  a handful of tokens and is never malformed. Everything before the user's message is
  the same text on every call, so llama.cpp's `cache_prompt` keeps it evaluated.
- **Step 2, the arguments**, only when the chosen tool has parameters: the same prompt,
  the same answer continued after the tool's name (`roll_dice {"sides": 20, …}` is how
  the worked turns answer), generated under a JSON schema derived from the tool's. Its
  prefix is step 1's prompt, so only the few tokens of the decision are new.
- **Every field is bounded**: strings by `maxLength`, integers by a range, arrays by
  `maxItems`, and the whole answer (numbers and free objects too) by `max_tokens` —
  an unbounded field is where a small model loops. Required properties stay required;
  an optional one that has a default becomes required too (the model writes the
  default or the user's value, so it never has to choose between a value and a comma);
  other optional ones stay optional.
- **Worked turns** (`Example`s) name tools; an example whose tool is not offered is
  left out. They are written for the built-in plugins, never copied from an evaluation
  set. No-tool examples (greetings, knowledge, code, and requests that only look like
  a tool's) are always kept: they teach *whether*, the hard part.
- **What small models write without constraint** is read by `parse_loose_call`: a bare
  `{"name": …, "arguments": …}` object, the same in a ```json fence or `<tool_call>`
  tags, and `<tool name="…">` with its params but no `<mcp-request>` wrapper.

The model is reached through two callables, so a fake replaces it in tests:
`render(messages) -> prompt` (llama.cpp's `POST /apply-template`) and
`complete(prompt, grammar, json_schema, max_tokens) -> text` (`POST /completion`).
`LlamaServer` provides both for a running llama.cpp server. What its completions cost is
added up inside `counting()` (a turn's usage line includes its route).
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable, Iterator, Sequence

import aiohttp
from loguru import logger

from sidespin.errors import BackendError, BadArguments, MalformedToolCall
from sidespin.protocol import MCP_TAG, parse_request
from sidespin.tools import Tool, ToolCall, coerce_arguments

__all__ = [
    "NONE",
    "Complete",
    "Render",
    "Example",
    "EXAMPLES",
    "Router",
    "Decision",
    "LlamaServer",
    "counting",
    "decision_grammar",
    "arguments_schema",
    "LooseCall",
    "find_loose_call",
    "parse_loose_call",
]

NONE = "none"

Complete = Callable[[str, str | None, dict[str, Any] | None, int], Awaitable[str]]
Render = Callable[[list[dict[str, str]]], Awaitable[str]]

_SPENT: ContextVar[list[tuple[int, int]] | None] = ContextVar("route_spent", default=None)


@contextlib.contextmanager
def counting() -> Iterator[list[tuple[int, int]]]:
    """The (prompt, written) tokens of each `LlamaServer.complete` awaited inside the block (in this task,
    and tasks it starts there). Each turn is a task of its own, so turns routed at once on one shared
    router never mix their counts."""
    spent: list[tuple[int, int]] = []
    token = _SPENT.set(spent)
    try:
        yield spent
    finally:
        _SPENT.reset(token)

MAX_STRING = 200  # characters in one string argument
MAX_ITEMS = 8  # items in one array argument
INTEGER_BOUND = 1_000_000  # |integer| when the tool's schema gives no range
_MAX_DESCRIPTION = 240
_MAX_ARGUMENT_NOTE = 90
_HISTORY_TURNS = 2
_HISTORY_CHARS = 240


# --- worked turns --------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One worked turn: a user's message and the right route (`tool` None: no tool)."""

    text: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


# Written for the built-in plugins, independently of any evaluation set: two turns a tool
# (one of them not in English) and as many that need none, alternating so that neither
# answer is merely the most recent one.
EXAMPLES: tuple[Example, ...] = (
    Example("Please greet Ravi from the sales team.", "say_hello", {"name": "Ravi"}),
    Example("hey, how's it going?"),
    Example("what's the clock showing in Singapore at the moment?", "get_time", {"timezone": "Asia/Singapore"}),
    Example("What does UTC stand for?"),
    Example("roll 2d10", "roll_dice", {"sides": 10, "count": 2}),
    Example("Write a JavaScript function that returns a random integer between 1 and 6."),
    Example("hit me with some trivia about kitties", "get_cat_fact"),
    Example("Wat is het verschil tussen een huiskat en een leeuw?"),
    Example(
        "From the demo data, which customers are based in Lyon?",
        "query_database",
        {"sql": "SELECT name FROM users WHERE city = 'Lyon'"},
    ),
    Example("Explain what a GROUP BY clause does in SQL."),
    Example("look up the current price of Tesla shares online", "web_search", {"query": "Tesla share price"}),
    Example("What is the boiling point of water in Fahrenheit?"),
    Example("Che ore sono a Roma adesso?", "get_time", {"timezone": "Europe/Rome"}),
    Example("thanks, that's all I needed"),
    Example("Manda um olá para a Joana, por favor.", "say_hello", {"name": "Joana"}),
    Example("Ile to jest 12 razy 12?"),
    Example("Dimmi una curiosità sui gatti.", "get_cat_fact"),
    Example("Skriv en kort dikt om havet."),
    Example("Qual é o valor médio das encomendas?", "query_database", {"sql": "SELECT AVG(amount) FROM orders"}),
    Example("Can you recommend a good book about the history of Rome?"),
    Example(
        "Pesquisa na internet quem ganhou o último Tour de France.", "web_search", {"query": "Tour de France winner"}
    ),
    Example("Wie funktioniert eigentlich ein Kühlschrank?"),
    Example("I need one roll of a hundred-sided die", "roll_dice", {"sides": 100, "count": 1}),
)


# --- grammar and schema --------------------------------------------------------


def decision_grammar(names: Iterable[str]) -> str:
    """A GBNF grammar whose only sentences are the given names and `none`."""
    alternatives = [_gbnf_literal(name) for name in [*names, NONE]]
    return f"root ::= {' | '.join(alternatives)}\n"


def _gbnf_literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def arguments_schema(tool: Tool, *, max_string: int = MAX_STRING) -> dict[str, Any]:
    """The JSON schema step 2 generates under: the tool's properties, every field bounded.

    Required: the tool's required properties and the optional ones that have a default.
    No other keys are allowed. Strings are 1 to `max_string` characters (less if the tool
    says so), integers lie in the tool's range or ±`INTEGER_BOUND`, arrays hold at most
    `MAX_ITEMS`; an untyped property is a string.
    """
    properties = {name: _bounded(schema or {}, max_string) for name, schema in tool.parameters.items()}
    required = [
        name for name, schema in tool.parameters.items()
        if name in tool.required or "default" in (schema or {})
    ]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _bounded(schema: dict[str, Any], max_string: int) -> dict[str, Any]:
    """One property's schema in the subset llama.cpp turns into a grammar, with bounds added."""
    for key in ("anyOf", "oneOf"):
        choices = [c for c in schema.get(key) or [] if isinstance(c, dict) and c.get("type") != "null"]
        if choices:
            return _bounded(choices[0], max_string)
    if schema.get("enum"):
        return {"enum": list(schema["enum"])}
    if "const" in schema:
        return {"const": schema["const"]}
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "integer":
        low = schema.get("minimum", -INTEGER_BOUND)
        high = schema.get("maximum", INTEGER_BOUND)
        return {"type": "integer", "minimum": int(low), "maximum": int(high)}
    if kind in ("number", "boolean"):
        return {"type": kind}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        limit = min(int(schema.get("maxItems", MAX_ITEMS)), MAX_ITEMS)
        return {"type": "array", "items": _bounded(items, max_string), "maxItems": limit}
    if kind == "object" and schema.get("properties"):
        nested = {name: _bounded(sub or {}, max_string) for name, sub in schema["properties"].items()}
        bounded: dict[str, Any] = {"type": "object", "properties": nested, "additionalProperties": False}
        if schema.get("required"):
            bounded["required"] = [name for name in schema["required"] if name in nested]
        return bounded
    if kind == "object":
        return {"type": "object"}
    longest = min(int(schema.get("maxLength", max_string)), max_string)
    shortest = min(int(schema.get("minLength", 1)), longest)
    return {"type": "string", "minLength": shortest, "maxLength": longest}


def _token_budget(schema: dict[str, Any]) -> int:
    """Enough tokens for any answer the schema admits at a few characters a token, capped."""
    budget = 12
    for sub in schema.get("properties", {}).values():
        if sub.get("type") == "string":
            budget += 8 + sub.get("maxLength", MAX_STRING) // 2
        elif sub.get("type") == "array":
            budget += 8 + sub.get("maxItems", MAX_ITEMS) * 24
        elif sub.get("type") == "object":
            budget += 8 + _token_budget(sub)
        else:
            budget += 12
    return min(budget, 512)


# --- the router ---------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """Step 1's outcome: the prompt it completed (step 2 continues it) and the tool, None for none."""

    prompt: str
    tool: Tool | None


class Router:
    """Routes one user message to a `ToolCall` or to None, in at most two constrained completions."""

    def __init__(
        self,
        tools: Iterable[Tool],
        complete: Complete,
        render: Render,
        *,
        examples: Sequence[Example] = EXAMPLES,
        max_string: int = MAX_STRING,
    ) -> None:
        listed = list(tools)
        if any(t.name == NONE for t in listed):
            # it could never be chosen: the name is the no-tool answer
            logger.warning("ROUTE_TOOL_SKIPPED {} (the name is the router's no-tool answer)", NONE)
        self.tools = {t.name: t for t in listed if t.name != NONE}
        self.complete = complete
        self.render = render
        self.max_string = max_string
        self.grammar = decision_grammar(self.tools)
        self.schemas = {name: arguments_schema(t, max_string=max_string) for name, t in self.tools.items()}
        self.prefix = [{"role": "system", "content": self.system_prompt()}] + self._worked_turns(examples)

    def system_prompt(self) -> str:
        """What each tool does in one sentence (the decision), then what its arguments need."""
        lines = [
            "You route a user's message to one tool. Answer with the tool's name, followed by its "
            f"arguments as JSON when it takes any, or with the single word {NONE}.",
            "",
            "Tools:",
        ]
        lines += [f"- {t.name}: {_summary(t.description)}" for t in self.tools.values()]
        lines += [
            f"- {NONE}: no tool. For greetings and thanks addressed to you, for chit-chat, for questions "
            "answered from general knowledge, for explanations, translations, writing and code.",
            "",
            "Choose a tool when the message asks for what the tool does. A message that only talks "
            f"about a tool's subject (asks for a definition, an explanation or code) is {NONE}.",
        ]
        details = [line for t in self.tools.values() if (line := _argument_notes(t))]
        if details:
            lines += ["", "Arguments:", *details]
        return "\n".join(lines)

    def _worked_turns(self, examples: Sequence[Example]) -> list[dict[str, str]]:
        turns: list[dict[str, str]] = []
        for example in examples:
            if example.tool is not None and example.tool not in self.tools:
                continue
            turns.append({"role": "user", "content": example.text})
            turns.append({"role": "assistant", "content": self._answer(example)})
        return turns

    def _answer(self, example: Example) -> str:
        if example.tool is None:
            return NONE
        if not self.tools[example.tool].parameters:
            return example.tool
        return f"{example.tool} {json.dumps(example.arguments, ensure_ascii=False)}"

    def messages(self, text: str, history: Sequence[dict[str, Any]] | None = None) -> list[dict[str, str]]:
        """The decision's chat: the fixed prefix, then the message (with a short context if any)."""
        return self.prefix + [{"role": "user", "content": _with_context(text, history)}]

    async def decide(self, text: str, history: Sequence[dict[str, Any]] | None = None) -> Decision:
        """Step 1: whether and which tool, under the names-or-none grammar."""
        prompt = await self.render(self.messages(text, history))
        started = time.perf_counter()
        answer = (await self.complete(prompt, self.grammar, None, 16)).strip()
        if answer != NONE and answer not in self.tools:
            raise MalformedToolCall(f"the router answered {answer[:60]!r}, which is no tool and not {NONE!r}", answer)
        logger.info("ROUTE_DECISION {} in {:.3f}s", answer, time.perf_counter() - started)
        return Decision(prompt, None if answer == NONE else self.tools[answer])

    async def arguments(self, decision: Decision) -> dict[str, Any]:
        """Step 2: the chosen tool's arguments, continuing the decision's answer under its schema."""
        tool = decision.tool
        if tool is None or not tool.parameters:
            return {}
        schema = self.schemas[tool.name]
        started = time.perf_counter()
        raw = await self.complete(f"{decision.prompt}{tool.name} ", None, schema, _token_budget(schema))
        logger.info("ROUTE_ARGUMENTS {} chars={} in {:.3f}s", tool.name, len(raw), time.perf_counter() - started)
        logger.debug("ROUTE_ARGUMENTS_RAW {} {}", tool.name, raw)
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            raise MalformedToolCall(f"the arguments for {tool.name} were cut off or are not JSON", raw) from None
        try:
            return coerce_arguments(tool.input_schema, arguments)
        except BadArguments as error:
            raise MalformedToolCall(str(error), raw) from None

    async def route(self, text: str, history: Sequence[dict[str, Any]] | None = None) -> ToolCall | None:
        """The call the message asks for, or None. Raises `MalformedToolCall` or `BackendError`."""
        decision = await self.decide(text, history)
        if decision.tool is None:
            return None
        return ToolCall(decision.tool.name, await self.arguments(decision))


_SENTENCE = re.compile(r"(.+?[.!?])(?<!e\.g\.)(?<!i\.e\.)(?=\s|$)", re.DOTALL)


def _summary(description: str) -> str:
    """The description's first sentence: what the tool does, without its caveats."""
    flat = " ".join(description.split())
    first = _SENTENCE.match(flat)
    return _one_line(first.group(1) if first else flat, _MAX_DESCRIPTION) or "(no description)"


def _argument_notes(tool: Tool) -> str:
    """`- name: the rest of its description. param (type, note); …` for a tool that takes arguments."""
    if not tool.parameters:
        return ""
    flat = " ".join(tool.description.split())
    first = _SENTENCE.match(flat)
    rest = _one_line(flat[first.end() :] if first else "", _MAX_DESCRIPTION)
    notes = []
    for name, schema in tool.parameters.items():
        schema = schema or {}
        kind = schema.get("type") if isinstance(schema.get("type"), str) else "any"
        note = _one_line(str(schema.get("description") or ""), _MAX_ARGUMENT_NOTE)
        notes.append(f"{name} ({kind}{', ' + note if note else ''})")
    return f"- {tool.name}: {rest + ' ' if rest else ''}{'; '.join(notes)}."


def _one_line(text: str, limit: int) -> str:
    """Every paragraph on one line, cut at `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _with_context(text: str, history: Sequence[dict[str, Any]] | None) -> str:
    """The message, preceded by the last turns of text (a follow-up such as "and in Lima?" needs them)."""
    said = [m for m in history or () if m.get("role") in ("user", "assistant") and m.get("content")]
    said = said[-2 * _HISTORY_TURNS :]
    if not said:
        return text
    earlier = "\n".join(f"{m['role']}: {_one_line(str(m['content']), _HISTORY_CHARS)}" for m in said)
    return f"(Earlier in this conversation:\n{earlier})\n\n{text}"


# --- llama.cpp ---------------------------------------------------------------


class LlamaServer:
    """`render` and `complete` for a running llama.cpp server (its own endpoints, not the OpenAI ones).

        async with LlamaServer(root_url, api_key) as server:
            router = Router(tools, server.complete, server.render)

    `POST /apply-template {"messages"}` answers `{"prompt"}` in the model's chat template;
    `POST /completion` takes `prompt`, `n_predict`, `temperature`, `cache_prompt`, and
    `grammar` (GBNF) or `json_schema`, and answers `{"content", "tokens_evaluated",
    "timings": {"cache_n", "prompt_n", …}}`.
    """

    def __init__(self, root_url: str, api_key: str | None = None, *, timeout: float = 60.0) -> None:
        self.root_url = root_url.rstrip("/").removesuffix("/v1")
        self.api_key = api_key
        self.timeout = timeout
        self.last_timings: dict[str, Any] = {}
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> "LlamaServer":
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._session = aiohttp.ClientSession(headers=headers, timeout=aiohttp.ClientTimeout(total=self.timeout))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            raise BackendError("the llama.cpp router client is not open: use `async with LlamaServer(...)`")
        url = self.root_url + path
        try:
            async with self._session.post(url, json=body) as response:
                if response.status >= 400:
                    excerpt = (await response.text())[:300]
                    raise BackendError(f"llama.cpp at {url} answered HTTP {response.status}: {excerpt}")
                answer = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError) as error:
            raise BackendError(f"llama.cpp at {url} could not be reached: {error or type(error).__name__}") from None
        if not isinstance(answer, dict):
            raise BackendError(f"llama.cpp at {url} answered {str(answer)[:200]}")
        return answer

    async def slot(self, action: str, filename: str, slot: int = 0) -> dict[str, Any]:
        """Save (or restore) what slot `slot` has evaluated to (from) `filename` in the server's slot folder."""
        return await self._post(f"/slots/{slot}?action={action}", {"filename": filename})

    async def render(self, messages: list[dict[str, str]]) -> str:
        answer = await self._post("/apply-template", {"messages": messages})
        if not isinstance(answer.get("prompt"), str):
            raise BackendError(f"llama.cpp's /apply-template answered without a prompt: {str(answer)[:200]}")
        return answer["prompt"]

    async def complete(
        self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None, max_tokens: int
    ) -> str:
        body: dict[str, Any] = {"prompt": prompt, "n_predict": max_tokens, "temperature": 0, "cache_prompt": True}
        if grammar is not None:
            body["grammar"] = grammar
        if json_schema is not None:
            body["json_schema"] = json_schema
        answer = await self._post("/completion", body)
        self.last_timings = dict(answer.get("timings") or {})
        spent = _SPENT.get()
        if spent is not None:  # llama.cpp's counts: the whole prompt (cached or not) and the tokens written
            spent.append((int(answer.get("tokens_evaluated") or 0), int(answer.get("tokens_predicted") or 0)))
        return str(answer.get("content") or "")


# --- calls written without constraint -----------------------------------------


@dataclass(frozen=True)
class LooseCall:
    """A call found in free text, and the span of text it occupies (fences and tags included)."""

    call: ToolCall
    start: int
    end: int


_NAME_KEYS = ("name", "tool", "tool_name", "function", "function_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "params", "args", "input")
_MAX_SCAN = 20_000  # characters of a reply searched for a call
_MAX_OBJECTS = 200  # "{" positions tried
_FENCE_BEFORE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?[ \t]*\Z")
_FENCE_AFTER = re.compile(r"[ \t]*\r?\n?[ \t]*```")
_TAG_BEFORE = re.compile(r"<(tool_call|function_call)>\s*\Z")
_TOOL_ELEMENT = re.compile(r"<tool(?=[\s/>])", re.IGNORECASE)
_PARAM_RUN = re.compile(
    r"""\A(?:\s*<param\b[^>]*/\s*>|\s*<param\b[^>]*>.*?</param\s*>|\s*<params\s*>.*?</params\s*>|\s*</tool\s*>)+""",
    re.IGNORECASE | re.DOTALL,
)
_TOOL_TAG_END = re.compile(r"[^<>]*>")
# <param name="x" value="v" />: how small models often write a param; read as <param name="x">v</param>
_VALUE_PARAM = re.compile(
    r"""<param\s+name\s*=\s*(["'])(.*?)\1\s+value\s*=\s*(["'])(.*?)\3\s*/\s*>""", re.IGNORECASE | re.DOTALL
)


def parse_loose_call(text: str, tools: Iterable[Tool]) -> ToolCall | None:
    """The first call to a registered tool written without the `<mcp-request>` block, or None.

    Raises `MalformedToolCall` when the text clearly calls a registered tool but its
    arguments do not fit the tool's schema (so the rally can say so instead of showing it).
    """
    found = find_loose_call(text, tools)
    return found.call if found else None


def find_loose_call(text: str, tools: Iterable[Tool]) -> LooseCall | None:
    """Like `parse_loose_call`, with the span to hide from the page."""
    known = {t.name: t for t in tools}
    text = text[:_MAX_SCAN]
    if not any(name in text for name in known):
        return None  # the common case, decided without parsing anything
    candidates = [c for c in (_first_json_call(text, known), _first_tool_element(text, known)) if c is not None]
    return min(candidates, key=lambda c: c.start) if candidates else None


def _first_json_call(text: str, known: dict[str, Tool]) -> LooseCall | None:
    position = text.find("{")
    for _ in range(_MAX_OBJECTS):
        if position == -1:
            break
        parsed = _object_at(text, position, known)
        named = _named_call(parsed[0], known) if parsed is not None else None
        if parsed is not None and named is not None:
            start, end = _widen(text, position, parsed[1])
            return LooseCall(_checked(known[named[0]], named[1], text[start:end]), start, end)
        position = text.find("{", position + 1)
    return None


def _object_at(text: str, start: int, known: dict[str, Tool]) -> tuple[Any, int] | None:
    """The JSON (or Python-literal) object starting at `start`, and where it ends."""
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
        return (value, end) if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    end = _balanced_end(text, start)
    if end is None or not any(name in text[start:end] for name in known):
        return None
    try:  # single quotes, True/False: what a model trained on Python writes
        value = ast.literal_eval(text[start:end])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return (value, end) if isinstance(value, dict) else None


def _balanced_end(text: str, start: int) -> int | None:
    depth, quote, escaped = 0, "", False
    for index in range(start, min(len(text), start + 4000)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _named_call(value: dict[str, Any], known: dict[str, Tool]) -> tuple[str, Any] | None:
    """(tool name, raw arguments) when the object is shaped like a call to a registered tool."""
    if isinstance(value.get("function"), dict):  # OpenAI: {"type": "function", "function": {...}}
        return _named_call(value["function"], known)
    for key in _NAME_KEYS:
        name = value.get(key)
        if isinstance(name, str) and name in known:
            arguments = next((value[k] for k in _ARGUMENT_KEYS if k in value), {})
            return name, arguments
    if len(value) == 1:  # {"get_time": {"timezone": "UTC"}}
        (name, arguments), = value.items()
        if name in known and isinstance(arguments, dict):
            return name, arguments
    return None


def _checked(tool: Tool, arguments: Any, raw: str) -> ToolCall:
    if not tool.parameters:
        # whatever a model writes for a tool that takes nothing (often a copy of a schema) means nothing
        return ToolCall(tool.name, {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            raise MalformedToolCall(f"the arguments of {tool.name!r} are not valid JSON", raw) from None
    if arguments is None:
        arguments = {}
    try:
        return ToolCall(tool.name, coerce_arguments(tool.input_schema, arguments))
    except BadArguments as error:
        raise MalformedToolCall(str(error), raw) from None


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Grow a JSON call's span over a ``` fence or `<tool_call>` tags that wrap nothing else."""
    fence_before = _FENCE_BEFORE.search(text, 0, start)
    fence_after = _FENCE_AFTER.match(text, end)
    if fence_before and fence_after:
        return fence_before.start(), fence_after.end()
    tag_before = _TAG_BEFORE.search(text, 0, start)
    if tag_before:
        closing = re.compile(rf"\s*</{tag_before.group(1)}>").match(text, end)
        if closing:
            return tag_before.start(), closing.end()
    return start, end


def _first_tool_element(text: str, known: dict[str, Tool]) -> LooseCall | None:
    """`<tool name="x" />` and the `<param>`s after it, read as the block they lack."""
    for element in _TOOL_ELEMENT.finditer(text):
        tag_end = _TOOL_TAG_END.match(text, element.end())
        if tag_end is None:
            continue
        end = tag_end.end()
        params = _PARAM_RUN.match(text[end:])
        if params is not None:
            end += params.end()
        raw = text[element.start() : end]
        body = _VALUE_PARAM.sub(lambda m: f'<param name="{m.group(2)}">{m.group(4)}</param>', raw)
        try:
            call = parse_request(f"<{MCP_TAG}>{body}</{MCP_TAG}>", known.values())
        except MalformedToolCall as error:
            if any(f'"{name}"' in raw or f"'{name}'" in raw for name in known):
                raise MalformedToolCall(error.reason, raw) from None
            continue
        return LooseCall(call, element.start(), end)
    return None
