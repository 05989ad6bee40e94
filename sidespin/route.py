"""Constrained routing: a small llama.cpp model decides whether and which tools to call, then fills their arguments.

The rules, before the code:

- **Asked in the model's own words.** The decision prompt is the conversation in the model's
  own chat template, with the tools offered the way it was trained to read them (llama.cpp's
  `/apply-template` with `tools`). Nothing in it names a built-in tool or shows a worked
  turn, so it holds for tools the model has never seen. The conversation's earlier calls
  and results come with it, so a follow-up ("add bread to that list") has what it refers to.
- **The call format is read off the template**, not written here: a chat holding one
  rendered call shows the text that opens a call before its name, what stands between the
  name and the arguments, what closes it, and what separates two calls (`CallFormat`).
  A template that ignores `tools` gets a plain system prompt listing them, in the same format.
- **Whether**: the probability that the answer's first token opens a call (the format's
  opening, a `{`, a ``` fence), against a threshold measured per model (`threshold`), not
  the greedy token: a small model's likeliest first token is a call far more often than
  a call is right.
  A follow-up after answers in words is also asked alone (the system's message and it): a small model
  goes on answering in words. "And what time is that in Tokyo?" after an answer about New York had a
  chance of 0.02 in the conversation and 0.90 alone; "Now add bread to that grocery list" 0.05 and 0.91;
  "What's the capital of Portugal?" after a remembered name 0.00 and 0.39, so no call. The calls are
  still written reading the whole conversation, which says what "that" is.
- **Fits**: once the model has named a tool for a first call, it is asked plainly, in a chat of its
  own, whether that function does what the person asks (`Router._fits`), after four worked answers
  about made-up functions (and about each part of a message that asks several things); with a
  chance of "yes" under the model's bar (`FIT` unless measured for it) the call is not made, and the next
  likeliest name is tried. A small model that opened a call names the closest tool even where none
  fits ("the magnetic field 4m from a wire" with only `calculate_wave_amplitude` offered).
- **Which**: the offered name the model is likeliest to write after the opening, as a whole (the
  product of its tokens' probabilities, found best first), not the greedy path, which follows the
  likeliest first token into a prefix many names share ("create" for "Create a file called
  packing.txt …", as `create_directory`, where `write_file` was likelier as a name). Where the
  likeliest tokens name nothing offered, a grammar whose only sentences are the offered names writes
  it. A first name less likely than `NAME_FLOOR` (0.05) as a whole, among several, is the model not
  knowing which tool: it is refused, and the next likeliest tried, as below. On BFCL and the
  reference servers every first name under it was a wrong call or none (the 0.5B's `write_file` at
  0.03 for 'In notes/meeting.md, change "Tuesday at 10:00" to …' wrote "This is a note about the
  meeting."). A name whose description marks it deprecated and says which offered tool to use
  instead is that tool (`_instead`). **Arguments**: continued after the name and `between`, under
  the tool's JSON schema with every field bounded (`sidespin.arguments`). An optional argument whose
  value the conversation never mentions is dropped: a made-up filter silently changes what a tool
  returns. One the message asks for by name or by an allowed value, which the model left out, is
  written after the others (`_asked_values`). A call whose *required* values neither the
  conversation nor the tool's own description mention is not made at all (`invented`): a small
  model fills an unrelated tool with made-up values rather than answer in words. These rules live
  in `sidespin.grounding`.
- **More calls**: after a call, when the likeliest next tokens write the separator, another
  call follows, up to `MAX_CALLS`; a repeated call ends it. When they do not, one more call is
  tried anyway if the message may ask for several (`_asks_several`): a small model writes one call
  where "the time in Tokyo and in Paris" asks for two. Either way a call after the first is kept
  only if the message asks for it (`asked_for`), for a small model also goes on after the right
  call (the cone's volume, then its mass); one of the same tool that says what the message says where
  the earlier call made it up takes the earlier call's place (`corrects`: an Uber ride "plus", then
  "comfort", for "a comfortable Uber ride").
  Once results have come back the route decides again (list, then read), under a higher
  threshold: halfway from the first one to certainty, since a small model keeps calling.
  A tool already called since the person's message is not called again in that turn: a
  small model reads the file it just read, or one the result names, where the message asked
  for one read. Unless a call of it failed and nothing called it since: the error may tell how
  to mend the arguments, once. A small model mends nothing by itself (the 0.5B wrote
  "Europe/Tokyo" again, or Paris's call that had worked): such a call takes the model's next
  likeliest value for the one the error names (`_another_value`), or, when the error names none,
  the next likeliest tool ("Use git_add to stage changes first").
  Another tool needs a word of its own in the message, as a second call does. A question is
  answered by tools that only read, where the server says which (`sidespin.grounding.reads_only`), a
  request to change something by tools that change things (`changes_only`), and a chain ("…, then
  echo the result") by the tools of its step (`steps`). A request to add to a file the
  conversation read goes to a replacing tool, and its edit keeps the file (`sidespin.edits`,
  `_edited`): the 0.5B replaced the spinach of a grocery list with the bread it was asked to add.
  So does a change between two quoted texts, and its edit goes from one to the other.
- **A refused first call is not the model's only idea**: when the answer's first call is refused
  (a tool without required values sharing no word with the message, or required values no one
  said), the likeliest of the other names is tried, once. "When is my next dentist
  appointment? It should be in your memory." named `read_graph`, which shares no word with
  it; the next name was `search_nodes` for "dentist". "What time is it in Tokyo right now?"
  had the 1.5B write `convert_time` with a made-up time; the next name was `get_current_time`.
  That guess is called only when the conversation said one of its required values (of a tool
  requiring none, one of its values; not only where its server works): offered the plugins,
  "What's your name?" went on to `get_time`, and the 1.5B from `git_diff` to `git_diff_unstaged`
  of the server's own repository for "What is the difference between UTC and GMT?".
- **Nothing in common, no call**: a message that shares no meaningful word with any offered
  tool (and a conversation that called none) is answered in words without asking the model
  (`sidespin.tables.shares_a_word`, measured there on all of BFCL). Nor is a tool without
  required values (nothing for `invented` to check) that shares no word with the message:
  a small model names one when it knows no better ("What's 17 times 23?" → `get_cat_fact`). Nor,
  once its arguments are written, is a first call of such a tool whose required values all come
  from the tool itself, none from the conversation ("What's today's date?" → `git_status` of the
  server's repository).
- **Many tools**: when more than `SHORTLIST` tools are offered, the decision reads one table
  of them (`decision_tables`): a server's tools, their descriptions cut shorter, and the
  server cut in parts only when even that makes the prompt longer than about 2,000 tokens
  (`offered_table`). Tables do not change from one message to the
  next, so llama.cpp keeps each one's evaluated prompt and a decision costs only the
  conversation (at 75 tokens a second on two cores, a per-message shortlist of ten server
  tools cost 15–20 s a decision). The table is the one sharing the most words with the
  message (`table_for`); when none shares a word (another language), the one whose
  chance of a call is highest.
- **A second opinion**: where a larger model runs beside (`Router.second`, the embedded backend's
  `second_model`), a first decision this model is unsure of is that model's, whole: a chance of a call
  from `UNSURE_CALL` to the bar (in the conversation, not for the message asked alone), or a first name
  less likely than `SURE_NAME`. The 1.5B is twice as slow as the 0.5B and calls where nothing fits more
  often, so it decides only there. Decisions after results stay this model's. The arguments of every
  call this model names are the larger one's (`_writer`): its values are better.

The model is reached through a `Llama` (`sidespin.llm.llama.LlamaServer`, or a fake in tests).
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import json
import math
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable, Protocol, Sequence

from loguru import logger

from sidespin.arguments import MAX_STRING, SHORT_STRING, Bounds, arguments_schema, bounded, bounds_for, token_budget
from sidespin.edits import (
    added, anchored_grammar, as_quoted, asks_to_add, edit_written, for_editing, lines_of, listing_lines, quoted,
    quoted_grammar, readers, replacing_pair, text_read,
)
from sidespin.errors import BackendError, BadArguments, MalformedToolCall
from sidespin.formats import to_openai_tool
from sidespin.grounding import (
    a_path_said, asked_parameters, asks_for_a_change, asks_what_it_stores, changes_only, corrects,
    gives_a_value, given_a_folder_just_given, grounded, invented, names_a_folder, names_a_path, not_of_its_place,
    of_folders, readers_of_a_file_named, reads_only, refused, said_in, steps, with_a_word, word_of_its_own,
    zone_elsewhere,
)
from sidespin.protocol.grammar import gbnf_literal
from sidespin.said_values import as_said, files_said
from sidespin.tables import (
    answered_calls, called_tools, last_said, names_said, shares_a_word, table_for, tables, telling_words,
    words_matched,
)
from sidespin.tools import Tool, ToolCall, coerce_arguments, failed

__all__ = [
    "Llama",
    "Router",
    "CallFormat",
    "names_grammar",
    "THRESHOLD",
    "FIT",
    "MAX_CALLS",
    "SHORTLIST",
    "decision_tables",
    "offered_table",
]

MAX_CALLS = 4  # calls in one answer
SHORTLIST = 10  # tools the decision reads all at once; more are read a table at a time
TABLE_CHARS = 7_000  # of the offered tools' JSON in one table: 1,950 tokens at most (3.6 characters a token or more)
THRESHOLD = 0.5  # probability of a call's opening above which the model calls (see `Router.threshold`)
NAMED_FLOOR = 0.15  # ... above which a message that says a tool's name calls (`Router._route`)
NAME_FLOOR = 0.05  # a first call's name less likely than this as a whole is the model not knowing which tool
# Where a second, larger model decides instead (`Router.second`): a first decision whose chance of a call is from
# UNSURE_CALL up to the bar, or whose first name is less likely than SURE_NAME as a whole. Fitted on the 0.5B's and the
# 1.5B's answers to the same 171 BFCL questions (seeds 13 and 863): the 1.5B asked on 37 of them took the right answers
# from 113 to 124 (the 1.5B alone: 131). On two fresh seeds, asked on 38 of 210: 147 against 140 (docs/tool-use.md)
UNSURE_CALL = 0.25
SURE_NAME = 0.8
_DESCRIPTION = 300  # characters of a tool's description offered
_MESSAGE = 600  # characters of the message the model is asked whether a tool fits
_SHORTEST = 120  # ... at least, when a server's tools would not fit one table otherwise (cut before the server is)
_PARAMETER_NOTE = 120  # characters of a required parameter's description
_OPTIONAL_NOTE = 60  # ... of an optional one's (its value is kept only when the conversation mentions it)
_NOISE = frozenset({"$schema", "$id", "title"})  # schema keys left out of what the decision is offered
_VALUE_TOKENS = 12  # tokens of a failed value looked at for the model's other idea
_OTHER_IDEA = 0.003  # ... below this probability the model has none ("Asia" after "Europe/Tokyo" failed: 0.02;
# "America" after "Los Angeles" failed: 0.005, after three ideas that wrote the error's words back)
_IDEAS = 4  # other values written out, the likeliest first (most copy the error back: "No time zone found …")
_STRING_REST = 'root ::= [^"\\\\\\x00-\\x1f]{0,80} "\\""'  # the rest of a JSON string, to its closing quote
_FILE = re.compile(r"^(?:[/~\\]|\.{1,2}/|[A-Za-z]:)|\.[A-Za-z][A-Za-z0-9]{0,4}$")  # a path, or a file's name
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')  # what cannot stand inside a JSON string as written
_WORD_OF = re.compile(r"[^\W\d_]{4,}")  # a word of an error message (four letters or more)
FIT = 0.35  # the model's "yes, this function does what the user asks" below this, and the first call is not made
# The plain question a first call must pass (`Router._fits`), with worked answers about made-up functions that
# no offered tool, built-in or BFCL's, resembles. On 100 random BFCL question-function pairs (seed 7, none of them
# in a scored sample's seed) it told the right functions from the irrelevant ones with an AUC of 0.89 (0.80
# without the examples); under 0.35 fell 15 of the 50 irrelevant and 1 of the 50 right ones (0.45 took 20 and 1,
# but in the route it refused right calls at 0.38 to 0.44: see docs/tool-use.md).
_FIT_SYSTEM = "You judge whether a function does what a user asks. Answer yes or no."
_FIT_QUESTION = "Function: {name}: {description}\n\nUser: {message}\n\nDoes this function do what the user asks?"
_FIT_EXAMPLES = (
    ("get_stock_price", "Get the latest price of a stock by its ticker symbol.", "How tall is Mount Everest?", "no"),
    ("send_email", "Send an email to a recipient with a subject and body.", "Email Bob that the meeting moved to 3pm.",
     "yes"),
    ("translate_text", "Translate text into another language.", "What's the weather like in Oslo today?", "no"),
    ("book_flight", "Book a flight between two airports on a date.",
     "I need a flight from Boston to Denver next Friday.", "yes"),
)
_DEPRECATED = re.compile(r"(?is)\bdeprecated\b.*?\buse\s+[`'\"]?([\w.\-]+?)[`'\"]?\s+instead\b")  # and which tool
_NAME_STEPS = 40  # looks at the next tokens to find the likeliest name as a whole (a median 6 on BFCL and the servers)
_NAME_TOKENS = 40  # ... of the likeliest next tokens each
_EDIT_TOKENS = 320  # an edit written again (`Router._edited`): a line of the file twice and the lines added
_NAME_MARK = "zqxname"
_ARGUMENT_MARK = "zqxarg"


class Llama(Protocol):
    async def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str: ...

    async def complete(
        self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None, max_tokens: int
    ) -> str: ...

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]: ...


# what writes a call's arguments after the prompt up to its name (`Router._writer`)
Writer = Callable[[str, Tool, Bounds], Awaitable[str]]


# --- the call format, read off the template ----------------------------------------


@dataclass(frozen=True)
class CallFormat:
    """How the template writes calls: `opening` NAME `between` ARGUMENTS `closing`, calls joined by `separator`."""

    opening: str
    between: str
    closing: str
    separator: str
    native: bool  # the template lists the tools itself; otherwise `system_prompt` does

    def call_text(self, name: str, arguments: dict[str, Any]) -> str:
        return f"{name}{self.between}{json.dumps(arguments, ensure_ascii=False)}{self.closing}"


FALLBACK = CallFormat('<tool_call>\n{"name": "', '", "arguments": ', "}\n</tool_call>", '\n<tool_call>\n{"name": "',
                      native=False)


async def read_format(llama: Llama) -> CallFormat:
    """The call format of the model's template, from two chats rendered with a marked call (FALLBACK if none)."""
    asked = [{"role": "user", "content": "hi"}]
    tool = {"type": "function", "function": {"name": _NAME_MARK, "description": "x", "parameters": {
        "type": "object", "properties": {_ARGUMENT_MARK: {"type": "string"}}}}}

    def answered(count: int) -> list[dict[str, Any]]:
        calls = [{"id": f"call_{i}", "type": "function", "function": {
            "name": f"{_NAME_MARK}{i}", "arguments": json.dumps({_ARGUMENT_MARK: i})}} for i in range(count)]
        results = [{"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"} for i in range(count)]
        # a chat may not end on an answer with calls (llama.cpp would continue it): the person speaks again
        return asked + [{"role": "assistant", "content": "", "tool_calls": calls}, *results, asked[0]]

    try:
        start = await llama.render(asked, [tool])
        one, two = await llama.render(answered(1), [tool]), await llama.render(answered(2), [tool])
    except BackendError as error:
        logger.warning("ROUTE_FORMAT_FALLBACK the template could not render a call: {}", error)
        return FALLBACK
    found = _format_in(start, one, two)
    if found is None:
        logger.warning("ROUTE_FORMAT_FALLBACK the template writes no call this route can read")
        return FALLBACK
    return found


def _format_in(start: str, one: str, two: str) -> CallFormat | None:
    # The template's generation prompt may differ from how it opens a written answer; both end the same way.
    name = f"{_NAME_MARK}0"
    at = one.find(name)
    head = _common_prefix(start, one)
    if at < 0 or _NAME_MARK not in start or head == 0:
        return None
    opening = one[head:at]
    argument = one.find(f'"{_ARGUMENT_MARK}"', at)
    if argument < 0 or one.rfind("{", at, argument) < 0:
        return None
    brace = one.rfind("{", at, argument)
    between = one[at + len(name) : brace]
    value_end = one.find("}", argument)
    second = two.find(f"{_NAME_MARK}1")
    first_end = two.find("}", two.find(f'"{_ARGUMENT_MARK}"', two.find(name))) + 1
    if value_end < 0 or second < 0 or first_end <= 0:
        return None
    closing_and_rest = one[value_end + 1 :]
    separator = two[first_end:second]
    closing = _common_prefix_text(closing_and_rest, separator)
    return CallFormat(opening, between, closing, separator[len(closing):], native=True)


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b):
        if x != y:
            break
        size += 1
    return size


def _common_prefix_text(a: str, b: str) -> str:
    return a[: _common_prefix(a, b)]


# --- grammar and schema ----------------------------------------------------------


def names_grammar(names: Iterable[str], end: str) -> str:
    """A GBNF grammar whose only sentences are the given names, each followed by `end`."""
    alternatives = [gbnf_literal(name + end) for name in names]
    return f"root ::= {' | '.join(alternatives)}\n"


# --- what is offered ---------------------------------------------------------------


def offered(tool: Tool, description: int | None = _DESCRIPTION) -> dict[str, Any]:
    """A tool as the decision is offered it: OpenAI-shaped, its descriptions cut short (its own to `description`),
    or whole (`description` None)."""
    described = copy.deepcopy(to_openai_tool(tool))
    function = described["function"]
    if description is not None:
        function["description"] = _cut(function.get("description") or "", description)
    if tool.places:  # where its server works (`sidespin.mcp.places`), after the cut so that it is always read;
        # nothing after the folder: a small model copied "repo." with the sentence's full stop into repo_path
        function["description"] += " It works in " + " and ".join(tool.places)
    function["parameters"] = _compact(function["parameters"])
    properties = function["parameters"].get("properties") or {}
    for name, schema in properties.items():
        if description is not None and isinstance(schema, dict) and isinstance(schema.get("description"), str):
            limit = _PARAMETER_NOTE if name in tool.required else _OPTIONAL_NOTE
            schema["description"] = _cut(schema["description"], limit)
    return described


def _compact(schema: Any) -> Any:
    """A schema without what tells a reader nothing: `$schema`, titles (a field's name again), a `null` default,
    and the `null` branch of "this type or null" (leaving it out means the same). Every prompt token costs time."""
    if isinstance(schema, list):
        return [_compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NOISE or (key == "default" and value is None):
            continue
        if key == "properties" and isinstance(value, dict):  # field names, not keywords: a field may be "title"
            kept[key] = {name: _compact(field) for name, field in value.items()}
        else:
            kept[key] = _compact(value)
    for key in ("anyOf", "oneOf"):
        branches = kept.get(key)
        if isinstance(branches, list):
            real = [b for b in branches if b != {"type": "null"}]
            if len(real) == 1 and len(real) < len(branches) and isinstance(real[0], dict):
                del kept[key]
                kept = {**real[0], **kept}
    return kept


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def decision_tables(tools: Sequence[Tool]) -> list[list[Tool]]:
    """The tables the decision reads `tools` in: one when they are few, else each source's, within `TABLE_CHARS`
    once their descriptions are cut as short as `_SHORTEST` (a server is cut in parts only when that is not enough)."""
    if len(tools) <= SHORTLIST:
        return [list(tools)]
    return tables(tools, lambda tool: _weight(tool, _SHORTEST), TABLE_CHARS)


def offered_table(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """A table as the decision is offered it: whole when its tools are few enough to be read at once and fit
    `TABLE_CHARS` (a parameter's note may give the form of its value past the first 120 characters: BFCL's
    `play_spotify_song` its example 'track:Doxy artist:Miles Davis'); else its descriptions cut short, only as short
    as it takes to fit (a table of many tools)."""
    if len(tools) <= SHORTLIST:
        whole = [offered(t, None) for t in tools]
        if sum(map(_chars, whole)) <= TABLE_CHARS:
            return whole
    description = _DESCRIPTION
    while len(tools) > SHORTLIST and description > _SHORTEST and sum(
            _weight(t, description) for t in tools) > TABLE_CHARS:
        description -= 20
    return [offered(t, description) for t in tools]


def _weight(tool: Tool, description: int) -> int:
    return _chars(offered(tool, description))


def _chars(described: dict[str, Any]) -> int:
    """The characters of a tool as offered, in the JSON the template writes."""
    return len(json.dumps(described, ensure_ascii=False))


def system_prompt(tools: Sequence[Tool], form: CallFormat) -> str:
    """For a template that ignores `tools`: the tools and the call format, in a system message."""
    listed = "\n".join(json.dumps(t, ensure_ascii=False) for t in offered_table(tools))
    example = form.opening + form.call_text("<function-name>", {"<parameter>": "<value>"})
    return ("You may call one or more functions to assist with the user query. The functions:\n"
            f"{listed}\n\nTo call a function, answer with:\n{example}")


# --- the router ---------------------------------------------------------------------


class _Unsure(Exception):
    """This model is unsure of a first decision, and a second one decides (its text: why, for the log)."""


class Router:
    """Routes a conversation's last message to the calls it asks for (none, one or several)."""

    def __init__(self, llama: Llama, *, threshold: float = THRESHOLD, fit: float = FIT,
                 max_string: int = MAX_STRING) -> None:
        self.llama = llama
        self.threshold = threshold
        self.fit = fit
        self.max_string = max_string
        self._format: CallFormat | None = None
        # A decision is several requests on llama.cpp's one slot; a table warmed between two of them (a
        # restore replaces the slot) would make the next evaluate the decision's whole prompt again.
        self.busy = asyncio.Lock()
        # what keeps a table's prompt evaluated ahead (`EmbeddedBackend`), awaited before deciding on it
        self.keep: Callable[[list[Tool]], Awaitable[None]] | None = None
        # the route of a larger model, which decides a first decision this one is unsure of (`UNSURE_CALL`,
        # `SURE_NAME`) and writes the arguments of the calls this one names; None where there is none, or it could
        # not start
        self.second: Callable[[], Awaitable[Router | None]] | None = None

    async def call_format(self) -> CallFormat:
        if self._format is None:
            self._format = await read_format(self.llama)
            logger.info("ROUTE_FORMAT native={} opening={!r}", self._format.native, self._format.opening)
        return self._format

    async def prompt(self, messages: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> str:
        """The decision's prompt: the conversation in the model's template, with `tools` offered."""
        form = await self.call_format()
        chat = [dict(m) for m in messages]
        if form.native:
            return await self.llama.render(chat, offered_table(tools))
        system = {"role": "system", "content": system_prompt(tools, form)}
        if chat and chat[0].get("role") == "system":
            chat[0] = {"role": "system", "content": f"{chat[0]['content']}\n\n{system['content']}"}
        else:
            chat.insert(0, system)
        return await self.llama.render(chat)

    async def route(self, messages: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> list[ToolCall]:
        """The calls the conversation's last message asks for ([] for none): the second model's where this one is
        unsure of a first decision and there is one (`second`), which then decides the whole of it; elsewhere this
        one's, with the arguments the second writes (`_writer`).

        Raises `MalformedToolCall` (arguments that do not fit) or `BackendError`.
        """
        async with self.busy:  # one decision at a time, and none while a table is warmed
            try:
                return await self._route(messages, tools)
            except _Unsure as unsure:
                why = str(unsure)
        second = await self.second() if self.second is not None else None
        if second is None:  # it could not start: this model decides, now and from now on, as without one
            self.second = None
            async with self.busy:
                return await self._route(messages, tools)
        logger.info("ROUTE_SECOND_OPINION {}: the larger model decides", why)
        return await second.route(messages, tools)

    async def _route(self, messages: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> list[ToolCall]:
        """The calls this model decides on; `_Unsure` where a second model decides."""
        listed = [t for t in tools]
        if not listed:
            return []
        if not shares_a_word(listed, messages) and not asks_for_a_change(last_said(messages)):
            logger.info("ROUTE_DECISION none (the message shares no word with any tool) tools={}", len(listed))
            return []
        started = time.perf_counter()
        form = await self.call_format()
        chosen, prompt, chance = await self._table(listed, messages, form)
        again = bool(messages) and messages[-1].get("role") == "tool"  # results came back: deciding again
        # after results, a surer model is needed, unless the message asked for a step not taken yet
        bar = (self.threshold + 1) / 2 if again and not _step_left(chosen, messages) else self.threshold
        # a second model decides where this one is unsure; of a call, in the conversation, not asked alone: "What's the
        # capital of Portugal?" after a name was remembered, 0.01, and 0.39 alone (the 1.5B searched the memory)
        unsure = self.second is not None and not again
        if unsure and UNSURE_CALL <= chance < bar:
            raise _Unsure(f"p_call={chance:.2f}")
        if chance < bar and not again and _answered_before(messages):
            chance = max(chance, await self._alone(messages, chosen, form, chance))
        if NAMED_FLOOR <= chance < bar and not again and (names := names_said(chosen, messages)):
            logger.info("ROUTE_NAMED {} p_call={:.2f}: the message says the tool's name, so it is written and "
                        "checked as a call", ",".join(t.name for t in names), chance)
            bar = NAMED_FLOOR
        readers = readers_of_a_file_named(chosen, last_said(messages)) if NAMED_FLOOR <= chance < bar and not again \
            else []
        if readers:
            logger.info("ROUTE_FILE_NAMED p_call={:.2f}: the message names a file by its path, and {} read files, so a "
                        "call is written and checked", chance, ",".join(t.name for t in readers))
            bar = NAMED_FLOOR
        if chance < bar:
            logger.info("ROUTE_DECISION none p_call={:.2f} tools={} in {:.3f}s", chance, len(chosen),
                        time.perf_counter() - started)
            return []
        words = words_matched(chosen, messages)
        by_name = _names(chosen, messages, listed, words, again)
        if readers:  # called for the file it names: by a tool that reads one
            by_name = {name: tool for name, tool in by_name.items() if tool in readers} or by_name
        if not by_name:
            logger.info("ROUTE_DECISION none (a question, and every tool changes things) p_call={:.2f} tools={}",
                        chance, len(chosen))
            return []
        writer = await self._writer(messages, chosen, prompt) if self.second is not None else None
        calls = await self._write(prompt + form.opening, by_name, form, messages, listed, words, again, unsure,
                                  writer, file_named=bool(readers))
        named = ",".join(c.name for c in calls) or "none"  # none: every call the model wrote was refused
        logger.info("ROUTE_DECISION {} p_call={:.2f} tools={} in {:.3f}s", named, chance, len(chosen),
                    time.perf_counter() - started)
        return calls

    async def _alone(self, messages: Sequence[dict[str, Any]], table: list[Tool], form: CallFormat,
                     chance: float) -> float:
        """The chance of a call for the last message asked alone (after the system's): a follow-up after answers in
        words. The calls are still written reading the whole conversation, which says what "that list" is."""
        alone = [m for m in messages[:1] if m.get("role") == "system"] + list(messages[-1:])
        chance_alone = await self.call_chance(await self.prompt(alone, table), form)
        logger.info("ROUTE_FOLLOW_UP p_call={:.2f} in the conversation, {:.2f} for the message alone", chance,
                    chance_alone)
        return chance_alone

    async def _write(self, written: str, by_name: dict[str, Tool], form: CallFormat,
                     messages: Sequence[dict[str, Any]], listed: list[Tool], words: dict[str, set[str]],
                     again: bool, unsure: bool = False, writer: Writer | None = None,
                     file_named: bool = False) -> list[ToolCall]:
        """The calls the model writes after `written` (the prompt and a call's opening), among `by_name`, each kept
        or refused by the rules of `sidespin.grounding` (`words`: what each tool matches of the message), their
        arguments by `writer` (`_writer`; this model's by default); `_Unsure` at a first name less likely than
        `SURE_NAME` when `unsure` (a second model decides). With `file_named` (`ROUTE_FILE_NAMED`), the likeliest of
        the names however unlikely: the 0.5B, wanting to answer that it could not, gave every reader under 0.001."""
        calls: list[ToolCall] = []
        asked = said_in(messages[-1:])
        message = last_said(messages)  # the person's last message (`asked` is the last one, a result after results)
        said = said_in(messages)
        called = _called_this_turn(messages) if again else set()  # not to be called again
        # the turn's values and the tool each went to: a folder listed may be gone into by another tool (`_deeper`)
        used = {value: tool for _, tool, arguments, _ in answered_calls(_this_turn(messages))
                for value in arguments.values() if isinstance(value, str)} if again else {}
        # what `refused` needs of the turn's calls, mendable ones too: their names (another tool needs a word of
        # its own beside them: the 0.5B mended a failed "Europe/Tokyo" with `convert_time`, which failed too)
        earlier = [ToolCall(name, {}) for name in sorted(_turn_tools(messages))] if again else []
        tried = False  # the model wrote no separator: the next call is tried, and kept only if the message asks it
        # the answer's first call refused: the next likeliest name is tried, once; after results, only while a
        # failed call may still be mended ("Europe/Tokyo" failed, and the 0.5B named `convert_time`, refused)
        second = not earlier or bool(_mendable(messages))
        several = _asks_several(message)  # one more call is tried only where the message may ask it
        guessing = False  # the call under way is that next name's: arguments that do not fit make no call

        def next_name(refused_name: str) -> bool:
            nonlocal second, guessing
            aliases = [name for name in by_name if _deprecated_for(by_name[name]) == refused_name]
            if calls or not second or len(by_name) - len(aliases) < 2:
                return False
            second, guessing = False, True
            for name in [refused_name, *aliases]:  # `read_file`, deprecated for `read_text_file`, is that tool again
                del by_name[name]
            logger.info("ROUTE_NEXT_NAME {} refused: the likeliest of the {} other tools", refused_name, len(by_name))
            return True

        while len(calls) < MAX_CALLS:
            try:
                named, chance = await self._name(written, by_name, form)
                if unsure and not calls and not guessing and chance is not None and chance < SURE_NAME:
                    raise _Unsure(f"{named} p={chance:.2f}")
                name = _instead(named, by_name)
                named_text = name + form.between
                guesses = set() if calls or earlier or guessing else _guesses(name, by_name, words, messages, listed)
                if guesses:
                    logger.info("ROUTE_WORDLESS {}: no word of the message, which {} other tools have: the likeliest "
                                "of those, as a guess", name, len(guesses))
                    for other in [other for other in by_name if other not in guesses]:
                        del by_name[other]
                    second, guessing = False, True
                    continue
                # among several names (one left is the rules' choice: "…, then echo the result" left only the
                # sum tool of its first step, which the 0.5B named at 0.02, wanting `echo`)
                if not calls and not earlier and not guessing and len(by_name) > 1 and chance is not None \
                        and chance < NAME_FLOOR and not file_named:
                    logger.info("ROUTE_NAME_UNSURE {} p={:.3f}: the model does not know which tool", name, chance)
                    if next_name(name):
                        continue
                    break
                if guessing and not by_name[name].parameters:  # a second guess needs values the message gave
                    logger.info("ROUTE_NEXT_NAME_REFUSED {}: no value to check, so no call", name)
                    break
                if _refused_by_name(by_name[name], called, messages, listed):
                    if next_name(name):
                        continue
                    break
                if not word_of_its_own(name, [*earlier, *calls], words):
                    logger.info("ROUTE_ANOTHER_REFUSED {} (no word of its own in the message), before its arguments",
                                name)
                    if next_name(name):
                        continue
                    break
                # the fit question cannot know what a store holds: asked whether `read_graph` does what "What is my
                # sister's name?" asks, the 0.5B said no (0.29)
                if not calls and not earlier and not asks_what_it_stores(by_name[name], message, listed) \
                        and not await self._fits(by_name[name], messages):
                    if next_name(name):
                        continue
                    break
                call, text = await self._call(written + named_text, by_name[name], form, said, message, used, writer)
                edit = await self._edited(written + named_text, by_name[name], call, messages, listed)
                if edit is None:
                    break
                call, text = edit, form.call_text(edit.name, edit.arguments)
                to_mend = _to_mend(call, messages) if again else None
                if to_mend is not None:  # a failed call written again: the model's next likeliest value, once
                    mended = await self._another_value(written + named_text, *to_mend)
                    if mended is None:  # or its next likeliest tool ("Use git_add to stage changes first")
                        if next_name(name):
                            continue
                        break
                    call, text = mended, form.call_text(mended.name, mended.arguments)
            except MalformedToolCall:
                if tried or guessing:
                    break
                raise
            if calls and names_a_folder(message) and given_a_folder_just_given(call, calls):
                logger.info("ROUTE_AFTER_RESULTS {}: a folder given to another call of this answer: decided again "
                            "once that call answered", call.name)
                break
            if refused(call, calls, by_name[call.name], said, asked, words, earlier) or (
                    not calls and not earlier and _of_itself(by_name[call.name], call, messages, listed, said)) or (
                    _zone_elsewhere(by_name[call.name], call, said, message)):
                other = await self._beside(written + named_text, call, by_name[call.name], calls, said, asked,
                                           words, earlier) if calls and several and not guessing else None
                if other is None:
                    if next_name(call.name):
                        continue
                    break
                call, text = other, form.call_text(other.name, other.arguments)
            if guessing and not gives_a_value(by_name[call.name], call.arguments, said):
                logger.info("ROUTE_NEXT_NAME_REFUSED {}: no value of it was said, so no call", call.name)
                break
            corrected = next((i for i, earlier in enumerate(calls) if corrects(call, earlier, asked)), None)
            if corrected is None:
                calls.append(call)
            else:  # not a second request: the first one, with the value the message says
                changed = sorted(k for k in call.arguments if call.arguments[k] != calls[corrected].arguments.get(k))
                logger.info("ROUTE_CORRECTED {}: {} as the message says, in place of the earlier call's", call.name,
                            ", ".join(changed))
                calls[corrected] = call
            guessing = False
            written += text
            tried = not await self._another(written, form)
            if tried and (again or not several):  # nothing asks for another call
                break
            written += form.separator
        return calls

    async def _table(self, tools: list[Tool], messages: Sequence[dict[str, Any]],
                     form: CallFormat) -> tuple[list[Tool], str, float]:
        """The table the decision reads (`decision_tables`), its prompt and the chance that it opens a call: the
        table sharing the most words with the message, or when none does, the one with the highest chance."""
        cut = decision_tables(tools)  # 3 ms for 52 tools: not worth keeping between decisions
        best = cut[0] if len(cut) == 1 else table_for(cut, messages)
        if best is None:  # no word in common: after results, the table of the turn's calls ("Ciudad de México")
            best = next((table for table in cut if {t.name for t in table} & _turn_tools(messages)), None)
        scored: list[tuple[float, list[Tool], str]] = []
        for table in [best] if best is not None else cut:
            if self.keep is not None:
                await self.keep(list(table))
            prompt = await self.prompt(messages, table)
            scored.append((await self.call_chance(prompt, form), list(table), prompt))
        chance, table, prompt = max(scored, key=lambda one: one[0])
        if len(cut) > 1:
            logger.info("ROUTE_TABLE {} tools={} of {} ({})", table[0].source, len(table), len(tools),
                        "by words" if best is not None else f"the likeliest call of {len(cut)} tables")
        return table, prompt, chance

    async def _fits(self, tool: Tool, messages: Sequence[dict[str, Any]]) -> bool:
        """Whether the model, asked plainly whether `tool` does what the last message asks, says yes with a chance
        of `fit` or more (`fit_chance`; `FIT` unless measured for the model), for the whole message or, when it
        asks several things, for one of them (`_requests`: "the weather in Boston and in San Francisco" is more
        than one weather tool does: the 1.5B said so at 0.51, under a bar of 0.6 tried for it). A small model that
        opened a call names the closest tool even where none fits: "What's the magnetic field at a point 4m away
        from a wire?" with only `calculate_wave_amplitude` offered."""
        started = time.perf_counter()
        said = last_said(messages)
        chance = 0.0
        for asked in [said, *_requests(said)]:
            chance = max(chance, await self.fit_chance(tool, asked))
            if chance >= self.fit:
                logger.info("ROUTE_FITS {} p_yes={:.2f} in {:.3f}s", tool.name, chance, time.perf_counter() - started)
                return True
        logger.info("ROUTE_DOES_NOT_FIT {} p_yes={:.2f} in {:.3f}s: the model says it does not do what was asked",
                    tool.name, chance, time.perf_counter() - started)
        return False

    async def fit_chance(self, tool: Tool, asked: str) -> float:
        """The model's chance of yes against no, asked plainly whether `tool` does what the message `asked` asks,
        after worked answers (`_FIT_EXAMPLES`); 1.0 when it answers neither."""
        chat: list[dict[str, Any]] = [{"role": "system", "content": _FIT_SYSTEM}]
        for name, description, message, answer in _FIT_EXAMPLES:
            chat += [{"role": "user", "content": _FIT_QUESTION.format(name=name, description=description,
                                                                      message=message)},
                     {"role": "assistant", "content": answer}]
        question = _FIT_QUESTION.format(name=tool.name, description=_cut(tool.description, _DESCRIPTION),
                                        message=_cut(asked, _MESSAGE))
        likely = await self.llama.next_tokens(await self.llama.render([*chat, {"role": "user", "content": question}]))
        yes = sum(p for token, p in likely if token.strip().lower().startswith("yes"))
        no = sum(p for token, p in likely if token.strip().lower().startswith("no"))
        return yes / (yes + no) if yes + no else 1.0

    async def call_chance(self, prompt: str, form: CallFormat) -> float:
        """The probability that the answer's first token opens a call."""
        likely = await self.llama.next_tokens(prompt)
        return sum(p for token, p in likely if _opens_call(token, form))

    async def _name(self, written: str, tools: dict[str, Tool], form: CallFormat) -> tuple[str, float | None]:
        """The next call's name, the likeliest as a whole (`_likeliest_name`), and its probability; else the name
        written under the names grammar (its probability unknown: None)."""
        likeliest = await self._likeliest_name(written, list(tools), form)
        if likeliest is not None:
            return likeliest
        answer = await self.llama.complete(written, names_grammar(tools, form.between), None, 48)
        name = answer.removesuffix(form.between)
        if name not in tools:
            raise MalformedToolCall(f"the router answered {answer[:60]!r}, which is no offered tool", answer)
        return name, None

    async def _likeliest_name(self, written: str, names: list[str], form: CallFormat) -> tuple[str, float] | None:
        """The offered name the model is likeliest to write after `written`, as a whole: the product of its tokens'
        probabilities, up to the first character of `between`, found best first (each step one look at the next
        tokens). Not the greedy path a grammar takes, which follows the likeliest first token and so a prefix that
        many names share: the 0.5B's "create" for "Create a file called packing.txt …", as `create_directory`, where
        `write_file` was likelier as a name. None when no name is found among the likeliest tokens within
        `_NAME_STEPS` looks (or `between` is empty: where a name ends would not be known)."""
        if not form.between:
            return None
        ends = [name + form.between[0] for name in names]
        frontier = [(0.0, "")]  # (minus the log probability, the text written so far), the likeliest first
        for _ in range(_NAME_STEPS):
            if not frontier:
                return None
            cost, prefix = heapq.heappop(frontier)
            done = next((end for end in ends if prefix.startswith(end)), None)
            if done is not None:
                logger.info("ROUTE_NAME {} p={:.2f} as a whole", done[:-1], math.exp(-cost))
                return done[:-1], math.exp(-cost)
            for token, p in await self.llama.next_tokens(written + prefix, _NAME_TOKENS):
                longer = prefix + token
                if token and p > 0 and any(end.startswith(longer) or longer.startswith(end) for end in ends):
                    heapq.heappush(frontier, (cost - math.log(p), longer))
        return None

    async def _call(self, written: str, tool: Tool, form: CallFormat, said: str,
                    asked: str = "", used: dict[str, str] | None = None,
                    writer: Writer | None = None) -> tuple[ToolCall, str]:
        """The named call's arguments under its schema, after `written`, which ends with the name (written by
        `writer`, this model by default), with the optional ones the message (`asked`) asks for and the model
        left out written after them (`_asked_values`); the optional ones kept only when the conversation, `said`,
        mentions them. The call and its text."""
        name = tool.name
        started = time.perf_counter()
        raw = "{}"
        bounds = bounds_for(said)
        if tool.parameters:
            raw = await (writer or self._arguments)(written, tool, bounds)
        logger.info("ROUTE_ARGUMENTS {} chars={} in {:.3f}s{}", name, len(raw), time.perf_counter() - started,
                    "" if writer is None else " by the second model")
        logger.debug("ROUTE_ARGUMENTS_RAW {} {}", name, raw)
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError:
            raise MalformedToolCall(f"the arguments for {name} were cut off or are not JSON", raw) from None
        if isinstance(arguments, dict):
            arguments = await self._asked_values(written, tool, raw, arguments, asked, bounds)
            arguments = await self._deeper(written, tool, raw, arguments, asked, said, used or {})
        try:
            arguments = coerce_arguments(tool.input_schema, arguments)
        except BadArguments as error:
            raise MalformedToolCall(str(error), raw) from None
        arguments = as_said(tool, arguments, said, asked)
        kept = grounded(tool, arguments, said)
        return ToolCall(name, kept), form.call_text(name, arguments)

    async def _edited(self, written: str, tool: Tool, call: ToolCall, messages: Sequence[dict[str, Any]],
                      listed: list[Tool]) -> ToolCall | None:
        """`call` (its arguments written after `written`), or, when it is an edit (`sidespin.edits`): for a request to
        change between quoted texts, one between them (`_as_quoted`); for a request to add to a file the
        conversation read, the edit that adds what it adds and keeps the rest, written again after a line of the
        file when it did not keep one. None: it adds nothing the message says."""
        pair = replacing_pair(tool)
        message = last_said(messages)
        if pair is not None and (texts := quoted(message)):
            return await self._as_quoted(written, tool, call, pair, texts)
        if pair is None or not asks_to_add(message):
            return call
        text = text_read(messages, call.arguments, readers(tool, listed))
        if text is None:
            return call
        kept = added(call.arguments, pair, text, message)
        lines, listing = lines_of(text), listing_lines(text)
        if kept is None and (lines or listing):
            arguments = await self._edit_again(written, call, pair, anchored_grammar(pair, lines, listing))
            kept = added(arguments, pair, text, message) if arguments is not None else None
            logger.info("ROUTE_EDIT_AGAIN {}: a request to add, and the edit kept no line of the file read: written "
                        "again after one of its {} lines, or at the end of one of its {} that list", tool.name,
                        len(lines), len(listing))
        if kept is None:
            logger.info("ROUTE_EDIT_REFUSED {}: it adds no line the message says to the file read", tool.name)
            return None
        if kept != call.arguments:
            logger.info("ROUTE_EDIT_ADDS {}: only the lines it adds that the message says", tool.name)
        return ToolCall(call.name, kept)

    async def _as_quoted(self, written: str, tool: Tool, call: ToolCall, pair: tuple[str | None, str, str],
                         texts: list[str]) -> ToolCall:
        """`call`, an edit for a request to change that quotes `texts`, when it replaces one of them with another;
        else written again so (`sidespin.edits.quoted_grammar`)."""
        if as_quoted(call.arguments, pair, texts):
            return call
        arguments = await self._edit_again(written, call, pair, quoted_grammar(pair, texts))
        if arguments is None:
            logger.info("ROUTE_EDIT_UNFINISHED {}: the edit written again was cut off; the first one stands", tool.name)
            return call
        logger.info("ROUTE_EDIT_QUOTED {}: a request to change that quotes {} texts: the edit written again between "
                    "them", tool.name, len(texts))
        return ToolCall(call.name, arguments)

    async def _edit_again(self, written: str, call: ToolCall, pair: tuple[str | None, str, str],
                          grammar: str) -> dict[str, Any] | None:
        """The arguments of `call` (written after `written`) with its edits written again under `grammar`; None when
        the model was cut off."""
        container, old, new = pair
        head = _opened({k: v for k, v in call.arguments.items() if k not in (container, old, new)}, container or old)
        return edit_written(head, await self.llama.complete(written + head, grammar, None, _EDIT_TOKENS))

    async def _asked_values(self, written: str, tool: Tool, raw: str, arguments: dict[str, Any], asked: str,
                            bounds: Bounds) -> dict[str, Any]:
        """`arguments` (written as `raw` after `written`) with the optional values the message asks for that the
        model left out (`asked_parameters`), each written after the others under its own bounded schema: the 0.5B
        closed 'Produce the access log for query "llama", at offset 434 …' after `offset` and `pageSize`. A switch
        written as neither 'True' nor 'False' ('dontcare') counts as left out, and when the message names it, it is
        written again as one of the two (`_undecided`)."""
        undecided = {name for name, value in arguments.items() if name not in tool.required
                     and _undecided(tool.parameters.get(name), value) and not _NO_PREFERENCE.search(asked)}
        if undecided:  # written again after the others, as if left out
            arguments = {name: value for name, value in arguments.items() if name not in undecided}
            raw = json.dumps(arguments, ensure_ascii=False)
        for name in asked_parameters(tool, arguments, asked):
            schema = bounded(_decided(tool.parameters[name]), self.max_string, bounds)
            head = raw.rstrip().removesuffix("}").rstrip()
            opening = head + ("" if head == "{" else ", ") + json.dumps(name) + ": "
            value = await self.llama.complete(written + opening, None, schema,
                                              token_budget({"properties": {name: schema}}))
            try:
                arguments = {**arguments, name: json.loads(value)}
            except json.JSONDecodeError:
                logger.info("ROUTE_ASKED_VALUE_UNFINISHED {}.{}: {!r}", tool.name, name, value[:60])
                continue
            raw = opening + value + "}"
            logger.info("ROUTE_ASKED_VALUE {}.{}: the message asks for it, and the model had left it out", tool.name,
                        name)
        return arguments

    async def _deeper(self, written: str, tool: Tool, raw: str, arguments: dict[str, Any], asked: str, said: str,
                      used: dict[str, str]) -> dict[str, Any]:
        """`arguments` (written as `raw` after `written`) with a path written on past a folder by the model, when the
        message (`asked`) names a folder or a path: a folder the tool's server works in (for "List the files in the
        notes folder, then read the largest one" the 0.5B listed that folder), what it adds said in the message; or a
        value another tool of this turn was called with (`used`: then it read the notes folder it had listed, as a
        file), what it adds said in the conversation, the listing's results too."""
        if not names_a_folder(asked) and not names_a_path(asked):
            return arguments
        message = said_in([{"content": asked}])
        gone_into = {value.rstrip("/") for value, other in used.items() if other != tool.name and value.rstrip("/")}
        places = {place.rstrip("/"): message for place in tool.places} | dict.fromkeys(gone_into, said)
        for name, value in arguments.items():
            folder = value.rstrip("/") if isinstance(value, str) else None
            if folder not in places or (folder.lower() in message and folder not in gone_into):
                continue  # not a folder to go past, or the very one the message names (to list, not to read)
            named = files_said(asked) if folder not in gone_into else []
            if len(named) == 1 and a_path_said(named[0], places[folder]):  # "Show me notes/ideas.md.": that file
                logger.info("ROUTE_PLACE_DEEPER {}.{}: past the folder it was written as, to the file said", tool.name,
                            name)
                return {**arguments, name: f"{folder}/{named[0]}"}
            written_as = re.search(rf"{re.escape(json.dumps(name))}\s*:\s*{re.escape(json.dumps(value))}", raw)
            if written_as is None:
                continue
            head = raw[:written_as.end() - 1] + ("" if value.endswith("/") else "/")
            rest = (await self.llama.complete(written + head, _STRING_REST, None, 24)).removesuffix('"').strip("/")
            if telling_words(rest) and a_path_said(rest, places[folder]):
                logger.info("ROUTE_PLACE_DEEPER {}.{}: past the folder it was written as, to one said", tool.name,
                            name)
                return {**arguments, name: f"{folder}/{rest}"}
        return arguments

    async def _beside(self, written: str, call: ToolCall, tool: Tool, calls: list[ToolCall], said: str, asked: str,
                      words: dict[str, set[str]], earlier: Sequence[ToolCall]) -> ToolCall | None:
        """A call after the answer's first, refused for one required value no one said, with the model's next
        likeliest value there (`_another_value`), when that call is made: for "What time is it in Tokyo and in
        Paris?" the 0.5B wrote Tokyo's call, then 'Europe/London' for the second, the example of the tool's text.
        None when the value is not a string, or the model has no other value that makes a call."""
        made_up = invented(tool, call.arguments, said)
        if len(made_up) != 1 or not isinstance(call.arguments[made_up[0]], str):
            return None
        value = call.arguments[made_up[0]]
        logger.info("ROUTE_MADE_UP_BESIDE {}.{}={!r}: the model's next likeliest value", call.name, made_up[0],
                    value[:60])
        other = await self._another_value(written, call, value, [c.arguments for c in calls],
                                          lambda mended: not refused(mended, calls, tool, said, asked, words, earlier))
        return None if other is None else ToolCall(other.name, as_said(tool, other.arguments, said, asked))

    async def _another_value(self, written: str, call: ToolCall, error: str, tried: list[dict[str, Any]],
                             makes: Callable[[ToolCall], bool] = lambda call: True) -> ToolCall | None:
        """`call`, which failed with `error` and was written again the same way, with the value the error names
        changed where the model hesitated most: at each token of that value, the likeliest token that does not
        go on writing it; the likeliest of those is written in its place and the string finished from there (a
        value the error itself says is passed over: the 0.5B began "No time zone found …"). "Europe/Tokyo"
        failed and the 0.5B wrote it again. Only a call that `makes` a call counts. None when the error names no value
        or the model had no other idea."""
        named = _named_value(call, error)
        if named is None:
            logger.info("ROUTE_SAME_FAILED_CALL {}: the error names none of its values: nothing to mend", call.name)
            return None
        parameter, value = named
        written += _opened({k: v for k, v in call.arguments.items() if k != parameter}, parameter) + '"'
        ideas: list[tuple[float, str, str]] = []  # probability, the value before it, the token
        consumed = ""
        for _ in range(_VALUE_TOKENS):
            rest = value[len(consumed):] + '"'
            likely = await self.llama.next_tokens(written + consumed, 10)
            ideas.extend((p, consumed, token) for token, p in likely
                         if token and not rest.startswith(token) and not _STRING_STOP.search(token))
            greedy = next((t for t, _ in likely if t and rest.startswith(t) and '"' not in t), None)
            if greedy is None:
                break
            consumed += greedy
        # the error's own words, but for the value's: "Unknown timezone" after "Invalid timezone: … Los Angeles"
        echoed = set(_WORD_OF.findall(error.lower())) - set(_WORD_OF.findall(value.lower()))
        for p, before, token in sorted(ideas, reverse=True)[:_IDEAS]:
            if p < _OTHER_IDEA:
                break
            tail = await self.llama.complete(written + before + token, _STRING_REST, None, 32)
            other = before + token + tail.removesuffix('"')
            mended = {**call.arguments, parameter: other}
            # not the error's words written back, nor a call the turn made already (Paris, which had worked)
            if other.strip() and not set(_WORD_OF.findall(other.lower())) & echoed and mended not in tried \
                    and makes(ToolCall(call.name, mended)):
                logger.info("ROUTE_ANOTHER_VALUE {}.{}: {!r} instead of {!r} (p={:.2f})", call.name, parameter,
                            other, value, p)
                return ToolCall(call.name, mended)
        logger.info("ROUTE_SAME_FAILED_CALL {}: no other value for {} is likely: nothing to mend", call.name, parameter)
        return None

    async def _writer(self, messages: Sequence[dict[str, Any]], table: list[Tool], prompt: str) -> Writer | None:
        """What writes the arguments of the calls this model writes after `prompt` (its prompt for `table`): the
        second model, where there is one that writes calls as this one does, after its own prompt and what this one
        wrote after `prompt`; None for this one.
        On three BFCL seeds, where both models named the same tools, the 1.5B's arguments were right on 135 of 167
        questions, the 0.5B's on 123."""
        second = await self.second() if self.second is not None else None
        if second is None:
            self.second = None  # it could not start
            return None
        if await second.call_format() != await self.call_format():
            logger.info("ROUTE_SECOND_OTHER_FORMAT: the second model writes calls otherwise, so this one writes")
            return None
        # its template may differ in a character (the 1.5B's tells the format as {{"name": …}}, the 0.5B's as
        # {"name": …}): so it writes after its own prompt
        own = await second.prompt(messages, table)

        async def write(text: str, tool: Tool, bounds: Bounds) -> str:
            return await second.arguments_for(own + text.removeprefix(prompt), tool, bounds, table)
        return write

    async def arguments_for(self, written: str, tool: Tool, bounds: Bounds, table: list[Tool]) -> str:
        """The arguments this model writes for a call another model named (`_writer`): `written` is this model's
        prompt for `table`, which is kept evaluated first (`keep`), and the other's answer up to the name."""
        async with self.busy:
            if self.keep is not None:
                await self.keep(table)
            return await self._arguments(written, tool, bounds)

    async def _arguments(self, prompt: str, tool: Tool, bounds: Bounds) -> str:
        """The arguments' JSON under the tool's bounded schema. A small model may write a string on and on (a
        path repeating itself) until the budget cuts it: then it is asked once more with strings of at most
        `SHORT_STRING` characters."""
        raw = ""
        for limit in dict.fromkeys((self.max_string, min(self.max_string, SHORT_STRING))):
            schema = arguments_schema(tool, max_string=limit, bounds=bounds)
            raw = await self.llama.complete(prompt, None, schema, token_budget(schema))
            try:
                json.loads(raw)
                return raw
            except json.JSONDecodeError:
                logger.info("ROUTE_ARGUMENTS_UNFINISHED {} with strings of up to {} characters", tool.name, limit)
        return raw

    async def _another(self, written: str, form: CallFormat) -> bool:
        """Whether the likeliest tokens after a call write the separator up to its first visible part.

        Whitespace alone decides nothing (a newline often comes before the end of the answer too):
        the greedy path is followed until it leaves the separator or reaches text in it.
        """
        consumed = ""
        for _ in range(4):
            likely = await self.llama.next_tokens(written + consumed, 5)
            if not likely or not likely[0][0]:
                return False
            consumed += likely[0][0]
            if not form.separator.startswith(consumed) and not consumed.startswith(form.separator):
                return False
            if consumed.strip():
                return True
        return False


def _names(chosen: list[Tool], messages: Sequence[dict[str, Any]], listed: list[Tool], words: dict[str, set[str]],
           again: bool) -> dict[str, Tool]:
    """The tools of the table (`chosen`) a call's name is chosen among, by what the message asks: a question, the
    ones that read, and a request to change something, the ones that change things (`sidespin.grounding`); a
    chain ("Add 12 and 30 with the sum tool, then echo the result"), a tool of its step."""
    text = last_said(messages)
    by_name = {t.name: t for t in reads_only(chosen, text, among=listed)}
    if len(by_name) < len(chosen):
        logger.info("ROUTE_READS_ONLY a question: {} of {} tools only read", len(by_name), len(chosen))
    if not again:  # after results, a folder listed may be read from
        folders = {t.name: t for t in of_folders(list(by_name.values()), text)}
        if len(folders) < len(by_name):
            logger.info("ROUTE_OF_FOLDERS a question about a folder: {} of {} tools speak of folders", len(folders),
                        len(by_name))
            by_name = folders
    changing = {t.name: t for t in changes_only(list(by_name.values()), text, among=listed)}
    # only where the message has a word for one of them: a table chosen by its chance alone ("Recuerda que mi
    # cumpleaños …" shares no word) may be the wrong one, and a wrong tool that changes things does harm
    if len(changing) < len(by_name) and any(words.get(name) for name in changing):
        logger.info("ROUTE_CHANGES_ONLY a request to change: {} of {} tools change things", len(changing),
                    len(by_name))
        by_name = changing
    editing = {t.name: t for t in for_editing(list(by_name.values()), messages)}
    if len(editing) < len(by_name):
        logger.info("ROUTE_EDITING a request to add to a file read, or to change a quoted text: {} of {} tools (a "
                    "server's replacing tool)", len(editing), len(by_name))
        by_name = editing
    of_step = _step_tools(list(by_name.values()), messages, later=again)
    if of_step:  # before results, its first step; after them, the steps that follow (and a failed call to mend)
        mendable = _mendable(messages) if again else set()
        fitting = {name: tool for name, tool in by_name.items() if name in of_step or name in mendable}
        if len(fitting) < len(by_name):
            logger.info("ROUTE_STEP {} of {} tools match the chain's {} step", len(fitting), len(by_name),
                        "next" if again else "first")
            by_name = fitting
    return by_name


# a message that says a choice does not matter: its switch's third choice is meant
_NO_PREFERENCE = re.compile(r"(?i)\b(?:don'?t|do not|doesn'?t|does not) (?:care|matter|mind)\b|\beither way\b|"
                            r"\bno preference\b|\bwhatever\b")


def _three_way(schema: Any) -> bool:
    """Whether a parameter is a switch with a third choice: 'True' and 'False' as texts, and another ('dontcare')."""
    allowed = schema.get("enum") if isinstance(schema, dict) else None
    return isinstance(allowed, list) and {"True", "False"} <= set(allowed) and len(allowed) > 2


def _undecided(schema: Any, value: Any) -> bool:
    """Whether a value is a switch's third choice (`_three_way`). For "… I'd prefer it to have in-unit laundry." the
    0.5B wrote `in_unit_laundry` 'dontcare', dropped as said by no one. Of BFCL's right answers, 62 of the 64 such
    switches the message names are 'True', 1 'False' and 1 free."""
    return _three_way(schema) and isinstance(value, str) and value not in ("True", "False")


def _decided(schema: dict[str, Any]) -> dict[str, Any]:
    """A switch's schema with only 'True' and 'False' allowed, when it has a third choice (`_three_way`)."""
    return {**schema, "enum": ["True", "False"]} if _three_way(schema) else schema


def _step_left(chosen: list[Tool], messages: Sequence[dict[str, Any]]) -> bool:
    """Whether the message asks for steps in order (`steps`) and a tool of `chosen` that matches a word of a step
    after the first has not been called since: "…, then echo the result back" after the sum (the 1.5B's chance of
    a call there was 0.69, under the bar for deciding again)."""
    return bool(_step_tools(chosen, messages, later=True) - _turn_tools(messages))


def _step_tools(tools: list[Tool], messages: Sequence[dict[str, Any]], later: bool) -> set[str]:
    """The names of `tools` that match a word of the last message's first step, or (`later`) of the steps after it;
    none when it asks for no steps in order."""
    chain = steps(last_said(messages))
    step = " ".join(chain[1:] if later else chain[:1])
    if not step:
        return set()
    return {name for name, words in words_matched(tools, [{"role": "user", "content": step}]).items() if words}


def _instead(name: str, tools: dict[str, Tool]) -> str:
    """The tool to call for `name`: the one its description, marked deprecated, says to use instead when that one
    is offered too ("DEPRECATED: Use read_text_file instead.", the reference filesystem server's `read_file`, which
    the 0.5B named for "What's on my to-do list?" and then, asked whether it fits, said no); else `name` itself."""
    other = _deprecated_for(tools[name])
    if other is None or other == name or other not in tools:
        return name
    logger.info("ROUTE_INSTEAD {} is deprecated: its description says to use {} instead", name, other)
    return other


# each run of spaces read from its start, one way: "\s*,?\s+" read 8,000 spaces after a word in more time than a
# decision may take (cubic: every start, every split), and held the event loop
_REQUEST_BREAK = re.compile(r"(?<=[.?!;])\s+|(?<![\s,])(?:\s*,)?\s+(?:and|also|as well as|then|plus)\s+", re.IGNORECASE)
_LIST_MARK = re.compile(r"[,，、;；]|(?<=[?？!！。])\s*\S")  # a list, or a second sentence, in any script


def _requests(text: str) -> list[str]:
    """The parts of a message that asks several things, split at sentences and "and" ([] when it asks one)."""
    parts = [part for part in _REQUEST_BREAK.split(text.strip()) if len(part.split()) >= 3]
    return parts if len(parts) > 1 else []


def _asks_several(text: str) -> bool:
    """Whether a message may ask for more than one call: an "and" (or "also", "then" …), a list, or a second
    sentence. Every parallel question of BFCL does (parallel, parallel_multiple, live_parallel and
    live_parallel_multiple: 440 of 440); the one more call tried after a model that wrote one is written for
    no other message (it cost the 1.5B 1.3 s of arguments for "Create a file called packing.txt", a repeat)."""
    text = text.strip()
    return bool(_REQUEST_BREAK.search(text) or _LIST_MARK.search(text))


def _deprecated_for(tool: Tool) -> str | None:
    """The tool a description marked deprecated says to use instead, if it says one."""
    found = _DEPRECATED.search(tool.description)
    return found.group(1) if found else None


def _refused_by_name(tool: Tool, called: set[str], messages: Sequence[dict[str, Any]], listed: list[Tool]) -> bool:
    """Whether a call of `tool` is refused from its name alone, before its arguments are written: a tool
    already called in this turn (`called`), or one without required values that shares no word with the
    message (in the language of the `listed` tools), unless the conversation called its server already: "What
    is my sister's name?" after "Remember that my sister's name is Ada." (`create_entities`) is about what the
    memory server holds, and `read_graph` reads it all."""
    if tool.name in called:
        logger.info("ROUTE_REPEAT {}: called already in this turn, so no call", tool.name)
        return True
    if not tool.required and not shares_a_word([tool], messages, listed) and not _spoken_of(tool, messages, listed):
        logger.info("ROUTE_UNRELATED {}: no required value to check and no word in common, so no call", tool.name)
        return True
    return False


def _guesses(name: str, by_name: dict[str, Tool], words: dict[str, set[str]], messages: Sequence[dict[str, Any]],
             listed: list[Tool]) -> set[str]:
    """The tools a first name the message has no word for gives way to (`with_a_word`): those of `by_name` that have
    one, but never one that deletes (for "Remember that my sister's name is Ada." the 0.5B named `create_entities`
    (0.95), and `delete_entities` has "names"). None when the name has a word, or its server is spoken of."""
    worded = with_a_word(list(by_name.values()), words)
    if name in {tool.name for tool in worded} or _spoken_of(by_name[name], messages, listed):
        return set()
    return {tool.name for tool in worded if not tool.destructive}


def _spoken_of(tool: Tool, messages: Sequence[dict[str, Any]], listed: list[Tool]) -> bool:
    """Whether the conversation is about what the tool's server holds, whatever its words: it called that server,
    or the message asks what a server that stores things holds (`asks_what_it_stores`)."""
    return bool(called_tools(messages) & {t.name for t in listed if t.source == tool.source}) \
        or asks_what_it_stores(tool, last_said(messages), listed)


def _of_itself(tool: Tool, call: ToolCall, messages: Sequence[dict[str, Any]], listed: list[Tool], said: str) -> bool:
    """Whether a first call is of a tool that shares no word with the message (in the language of the `listed`
    tools) and whose required values all come from the tool itself, none from the conversation (`said`): its
    description, or the folder its server works in. The 0.5B answered "What's today's date?" with `git_status`
    of the server's repository, the git table's first tool, the same way a tool without required values is
    named when the model knows no better (`_refused_by_name`). A path under the server's folder is a value from the
    conversation only where the message names a file, a folder or a path (`not_of_its_place`); a message in another
    language than the tools' then needs a word in common too: "Recuerda que mi cumpleaños es el 14 de mayo." had
    the 0.5B read the file server's '…/files/14'."""
    arguments = not_of_its_place(tool, call.arguments, last_said(messages))
    if not tool.required or gives_a_value(tool, arguments, said) or shares_a_word(
            [tool], messages, listed, other_language=arguments == call.arguments):
        return False
    logger.info("ROUTE_UNRELATED {}: no word in common and no value from the conversation, so no call", tool.name)
    return True


def _zone_elsewhere(tool: Tool, call: ToolCall, said: str, message: str) -> bool:
    """Whether a call's time zone is no one's while the message names a place (`zone_elsewhere`)."""
    named = zone_elsewhere(tool, call.arguments, said, message)
    if named is None:
        return False
    logger.info("ROUTE_ZONE_ELSEWHERE {}: a time zone no one said, for a message that names {!r}, so no call",
                call.name, named[:40])
    return True


def _to_mend(call: ToolCall, messages: Sequence[dict[str, Any]]) -> tuple[ToolCall, str, list[dict[str, Any]]] | None:
    """The failed call of this turn that `call`, written after results, stands for, its error, and the arguments
    of every call of its tool in the turn: the same call, when it failed and no call succeeded since (after one
    did, it is made again as it is: "No changes staged for commit" before `git_add`, not after; a call of another
    tool in the same answer ran beside it, and counts as since: the 0.5B wrote `git_commit` and `git_add` at
    once, and the commit failed, nothing staged yet); when it
    succeeded (the 0.5B wrote Paris's time again after Tokyo's failed beside it), the last call of its tool that
    failed, unless the same call succeeded too. None when nothing of it is to mend."""
    made = answered_calls(_this_turn(messages))
    mine = [(place, arguments, answer) for place, name, arguments, answer in made if name == call.name]
    succeeded = [arguments for _, arguments, answer in mine if not failed(answer)]
    failures = [(place, arguments, answer) for place, arguments, answer in mine
                if failed(answer) and arguments not in succeeded]
    tried = [arguments for _, arguments, _ in mine]
    same = [(place, answer) for place, arguments, answer in failures if arguments == call.arguments]
    if same:
        place, error = same[-1]
        return None if any(not failed(answer) and (later > place or (later == place and name != call.name))
                           for later, name, _, answer in made) else (call, error, tried)
    if failures and call.arguments in succeeded:
        _, arguments, error = failures[-1]
        return ToolCall(call.name, arguments), error, tried
    return None


def _named_value(call: ToolCall, error: str) -> tuple[str, str] | None:
    """The string argument of `call` whose value the error message names (the longest, when several do), unless it
    names a file: a wrong path is no near miss of a right one (the 0.5B's next ideas for a missing
    ".../notes.txt" were "not_found.txt" and "passport, charger, sunscreen.tmp"), while a wrong name in a
    vocabulary is ("Europe/Tokyo", "Asia/Tokyo")."""
    named = [(name, value) for name, value in call.arguments.items()
             if isinstance(value, str) and len(value) >= 2 and value.lower() in error.lower() and not _FILE.search(value)]
    return max(named, key=lambda pair: len(pair[1])) if named else None


def _opened(arguments: dict[str, Any], name: str) -> str:
    """`arguments` as JSON left open for one more, `name`, up to its value."""
    head = json.dumps(arguments, ensure_ascii=False)
    return (head[:-1] + ", " if arguments else "{") + json.dumps(name) + ": "


def _answered_before(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether the conversation answered the person before their last message."""
    return any(m.get("role") == "assistant" for m in messages[:-1]) and messages[-1].get("role") == "user"


def _this_turn(messages: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]]:
    """The messages since the person's last one."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[last + 1:]


def _turn_tools(messages: Sequence[dict[str, Any]]) -> set[str]:
    """The tools called since the person's last message."""
    return called_tools(_this_turn(messages))


def _mendable(messages: Sequence[dict[str, Any]]) -> set[str]:
    """The tools called since the person's last message whose failed call may still be mended (`_called_this_turn`)."""
    return _turn_tools(messages) - _called_this_turn(messages)


def _called_this_turn(messages: Sequence[dict[str, Any]]) -> set[str]:
    """The tools called since the person's last message, but one with a failed call that nothing called it after:
    called again, its arguments may be mended from the error ("Europe/Tokyo" is no time zone; "Asia/Tokyo" is),
    also when the same answer called it for something else too (Paris, beside Tokyo). Once only: a second failure,
    or any call after the failure, closes it."""
    turn = _this_turn(messages)
    made = [(i, call.get("id"), (call.get("function") or {}).get("name"))
            for i, m in enumerate(turn) for call in m.get("tool_calls") or []]
    unanswered = {m.get("tool_call_id") for m in turn
                  if m.get("role") == "tool" and failed(str(m.get("content") or ""))}
    mendable = set()
    for name in {name for _, _, name in made}:
        answers = [(i, call_id) for i, call_id, called in made if called == name]
        failures = [i for i, call_id in answers if call_id in unanswered]
        if len(failures) == 1 and all(i <= failures[0] for i, _ in answers):
            mendable.add(name)
    return called_tools(turn) - mendable


def _opens_call(token: str, form: CallFormat) -> bool:
    stripped = token.strip()
    if not stripped:
        return False
    opening = form.opening.strip()
    return (bool(opening) and opening.startswith(stripped)) or stripped.startswith(("{", "```", "<tool"))
