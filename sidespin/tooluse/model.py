"""What the decision asks the model, through llama.cpp's own endpoints: never a free answer, always a probability
(`call_chance`, `likeliest_name`, `fit_chance`, `goes_on`) or a continuation under a grammar or a schema
(`arguments`, `values_asked`, `string_rest`), after the conversation in the model's own chat template (`prompt`).
How that template writes a tool call is read off it by `read_format` (marked calls rendered through llama.cpp's
`/apply-template`); a template that renders no call it can read gets `FALLBACK`."""

from __future__ import annotations

import contextlib
import heapq
import json
import math
from dataclasses import dataclass
from os.path import commonprefix
from typing import Any, Collection, Protocol, Sequence

from loguru import logger

from sidespin.errors import BackendError
from sidespin.tools import Tool
from sidespin.tooluse.conversation import parts_of
from sidespin.tooluse.offer import DESCRIPTION, cut, offered_table
from sidespin.tooluse.schema import MAX_STRING, SHORT_STRING, Bounds, arguments_schema, bounded, token_budget
from sidespin.tooluse.values import asked_parameters
from sidespin.protocol.grammar import gbnf_literal

__all__ = ["Model", "names_grammar", "STRING_REST", "CallFormat", "FALLBACK", "Llama", "read_format", "system_prompt"]

_NAME_MARK, _ARGUMENT_MARK = "zqxname", "zqxarg"  # what a rendered call is found by
_NAME_STEPS, _NAME_TOKENS = 40, 40  # looks at the next tokens to find the likeliest name as a whole, 40 each
STRING_REST = 'root ::= [^"\\\\\\x00-\\x1f]{0,80} "\\""'  # the rest of a JSON string, to its closing quote
_FIT_SYSTEM = "You judge whether a function does what a user asks. Answer yes or no."
_FIT_QUESTION = "Function: {0}: {1}\n\nUser: {2}\n\nDoes this function do what the user asks?"
_FIT_EXAMPLES = (  # made-up functions, like no tool anyone offers
    ("get_stock_price", "Get the latest price of a stock by its ticker symbol.", "How tall is Mount Everest?", "no"),
    ("send_email", "Send an email to a recipient with a subject and body.", "Email Bob that the meeting moved to 3pm.",
     "yes"),
    ("translate_text", "Translate text into another language.", "What's the weather like in Oslo today?", "no"),
    ("book_flight", "Book a flight between two airports on a date.",
     "I need a flight from Boston to Denver next Friday.", "yes"))


class Llama(Protocol):
    """llama.cpp's own endpoints, as `sidespin.llm.llama.LlamaServer` offers them (a fake in tests)."""

    async def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str: ...
    async def complete(self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None,
                       max_tokens: int) -> str: ...
    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]: ...


@dataclass(frozen=True)
class CallFormat:
    """How the template writes calls: `opening` NAME `between` ARGUMENTS `closing`, calls joined by `separator`."""

    opening: str
    between: str
    closing: str
    separator: str
    native: bool  # the template lists the tools itself; otherwise a system message does

    def call_text(self, name: str, arguments: dict[str, Any]) -> str:
        """A call as the template writes it, without its opening."""
        return f"{name}{self.between}{json.dumps(arguments, ensure_ascii=False)}{self.closing}"

    def opens_call(self, token: str) -> bool:
        """Whether an answer's first token begins a call: the opening, a JSON object or a code fence."""
        return bool(stripped := token.strip()) and (
            self.opening.strip().startswith(stripped) or stripped.startswith(("{", "```", "<tool")))


FALLBACK = CallFormat('<tool_call>\n{"name": "', '", "arguments": ', "}\n</tool_call>", '\n<tool_call>\n{"name": "',
                      native=False)


async def read_format(llama: Llama) -> CallFormat:
    """The call format of the model's template, from chats rendered with marked calls (`FALLBACK` if none)."""
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
        start, one, two = [await llama.render(chat, [tool]) for chat in (asked, answered(1), answered(2))]
    except BackendError as error:
        logger.warning("TOOLUSE_FORMAT_FALLBACK the template could not render a call: {}", error)
        return FALLBACK
    if (found := _format_in(start, one, two)) is None:
        logger.warning("TOOLUSE_FORMAT_FALLBACK the template writes no call this route can read")
    return found or FALLBACK


def _format_in(start: str, one: str, two: str) -> CallFormat | None:
    """The format in a chat with no call (`start`), one call (`one`) and two (`two`); None if it cannot be read."""
    name = f"{_NAME_MARK}0"
    at = one.find(name)
    head = len(commonprefix([start, one]))  # the generation prompt and a written answer open the same way
    argument = one.find(f'"{_ARGUMENT_MARK}"', at)
    brace = one.rfind("{", at, argument) if argument >= 0 else -1
    value_end = one.find("}", argument)
    second = two.find(f"{_NAME_MARK}1")
    first_end = two.find("}", two.find(f'"{_ARGUMENT_MARK}"', two.find(name))) + 1
    if at < 0 or _NAME_MARK not in start or head == 0 or brace <= at + len(name) or value_end < 0 or second < 0 or (
            first_end <= 0):  # nothing between a name and its arguments: no name's end to read
        return None
    separator = two[first_end:second]
    closing = commonprefix([one[value_end + 1:], separator])
    return CallFormat(one[head:at], one[at + len(name):brace], closing, separator[len(closing):], native=True)


def system_prompt(tools: Sequence[Tool], form: CallFormat) -> str:
    """For a template that ignores `tools`: the tools and the call format, in a system message."""
    listed = "\n".join(json.dumps(t, ensure_ascii=False) for t in offered_table(tools))
    example = form.opening + form.call_text("<function-name>", {"<parameter>": "<value>"})
    return ("You may call one or more functions to assist with the user query. The functions:\n"
            f"{listed}\n\nTo call a function, answer with:\n{example}")


def names_grammar(names: Sequence[str], end: str) -> str:
    """A GBNF grammar whose only sentences are the given names, each followed by `end`."""
    return f"root ::= {' | '.join(gbnf_literal(name + end) for name in names)}\n"


class Model:
    """One llama.cpp model, asked for the decision's probabilities and constrained continuations."""

    def __init__(self, llama: Llama, max_string: int) -> None:
        self.llama, self.max_string = llama, max_string
        self._format: CallFormat | None = None

    async def call_format(self) -> CallFormat:
        if self._format is None:
            self._format = await read_format(self.llama)
            logger.info("TOOLUSE_FORMAT native={} opening={!r}", self._format.native, self._format.opening)
        return self._format

    async def prompt(self, messages: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> str:
        """The decision's prompt: the conversation in the model's template, with `tools` offered."""
        form = await self.call_format()
        chat = [dict(m) for m in messages]
        if form.native:
            return await self.llama.render(chat, offered_table(tools))
        system = system_prompt(tools, form)
        if chat and chat[0].get("role") == "system":
            system = f"{chat.pop(0)['content']}\n\n{system}"
        chat.insert(0, {"role": "system", "content": system})
        return await self.llama.render(chat)

    async def call_chance(self, prompt: str) -> float:
        """The probability that the answer after `prompt` opens with a call."""
        form = await self.call_format()
        return sum(p for token, p in await self.llama.next_tokens(prompt) if form.opens_call(token))

    async def likeliest_name(self, written: str, names: Sequence[str], write: bool = False
                             ) -> tuple[str, float] | None:
        """The name of `names` likeliest after `written` as a whole and its probability; None if none is found, or
        with `write`, the one the model writes when it may write no other (`forced_name`), at probability 0.0."""
        end = (await self.call_format()).between[0]  # the first character after a name
        ends = [name + end for name in names]
        frontier = [(0.0, "")]  # minus the log probability, the text written so far
        for _ in range(_NAME_STEPS):
            if not frontier:
                break
            cost, prefix = heapq.heappop(frontier)
            if (done := next((end for end in ends if prefix.startswith(end)), None)) is not None:
                return done[:-1], math.exp(-cost)
            for token, p in await self.llama.next_tokens(written + prefix, _NAME_TOKENS):
                longer = prefix + token
                if token and p > 0 and any(end.startswith(longer) or longer.startswith(end) for end in ends):
                    heapq.heappush(frontier, (cost - math.log(p), longer))
        forced = await self.forced_name(written, names) if write else None
        return (forced, 0.0) if forced else None

    async def forced_name(self, written: str, names: Sequence[str]) -> str | None:
        """The name of `names` the model writes after `written` when it may write no other (a grammar of the names);
        None if it writes none."""
        end = (await self.call_format()).between
        chosen = (await self.llama.complete(written, names_grammar(names, end), None, 24)).removesuffix(end)
        return chosen if chosen in names else None

    async def fits(self, tool: Tool, message: str, floor: float) -> bool:
        """Whether the model says `tool` does what `message` asks, or one of the things it asks: a yes of `floor` or
        more to the message or one of its parts."""
        for asked in [message, *parts_of(message)]:
            if await self.fit_chance(tool, asked) >= floor:
                return True
        return False

    async def fit_chance(self, tool: Tool, asked: str) -> float:
        """The chance of "yes" over "no" that `tool` (and what it holds) does what `asked` asks (1.0: neither)."""
        chat: list[dict[str, Any]] = [{"role": "system", "content": _FIT_SYSTEM}]
        for *case, answer in _FIT_EXAMPLES:
            chat += [{"role": "user", "content": _FIT_QUESTION.format(*case)}, {"role": "assistant", "content": answer}]
        held = f" It holds {', '.join(tool.holds)}" if tool.holds else ""  # its server's things, by name
        question = _FIT_QUESTION.format(tool.name, cut(tool.description, DESCRIPTION) + held, cut(asked, 600))
        likely = await self.llama.next_tokens(await self.llama.render([*chat, {"role": "user", "content": question}]))
        yes, no = (sum(p for token, p in likely if token.strip().lower().startswith(word)) for word in ("yes", "no"))
        return yes / (yes + no) if yes + no else 1.0

    async def arguments(self, written: str, tool: Tool, bounds: Bounds, longest: int | None = None,
                        leave: Collection[str] = ()) -> str:
        """The arguments' JSON after `written` under the tool's bounded schema without the optional parameters in
        `leave`, strings up to `longest` characters (the model's own bound where None); once more with shorter
        strings where they were cut off."""
        longest = min(self.max_string, longest or self.max_string)
        for limit in dict.fromkeys((longest, min(longest, SHORT_STRING))):
            schema = arguments_schema(tool, max_string=limit, bounds=bounds, leave=leave)
            raw = await self.llama.complete(written, None, schema, token_budget(schema))
            try:
                json.loads(raw)
                return raw
            except json.JSONDecodeError:
                logger.info("TOOLUSE_ARGUMENTS_UNFINISHED {} with strings of up to {} characters ({} written, "
                            "ending {!r})", tool.name, limit, len(raw), raw[-60:])
        return raw

    async def values_asked(self, written: str, tool: Tool, raw: str, message: str, bounds: Bounds) -> dict[str, Any]:
        """The optional values `message` asks for (`values.asked_parameters`) that the arguments the model wrote (`raw`,
        after `written`) leave out, each written next under its bounded schema; those cut off are left out."""
        arguments, values = json.loads(raw), {}
        for name in asked_parameters(tool, arguments, message):
            head = raw.rstrip().removesuffix("}").rstrip()
            opening = head + ("" if head == "{" else ", ") + json.dumps(name) + ": "
            schema, value = bounded(tool.parameters[name], MAX_STRING, bounds), None
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(await self.llama.complete(written + opening, None, schema, token_budget(
                    {"properties": {"v": schema}})))
            if value is not None:
                values[name], raw = value, opening + json.dumps(value, ensure_ascii=False) + "}"
                logger.info("TOOLUSE_ASKED_VALUE {}.{}: the message asks for it", tool.name, name)
        return values

    async def string_rest(self, written: str) -> str:
        """The rest of a JSON string begun at the end of `written`, without its closing quote."""
        return (await self.llama.complete(written, STRING_REST, None, 32)).removesuffix('"')

    async def goes_on(self, written: str) -> bool:
        """Whether the likeliest tokens after a call (`written`) write the separator up to its first visible part."""
        form = await self.call_format()
        consumed = ""
        for _ in range(4):
            token = likely[0][0] if (likely := await self.llama.next_tokens(written + consumed, 5)) else ""
            consumed += token
            if not token or not (form.separator.startswith(consumed) or consumed.startswith(form.separator)):
                return False
            if consumed.strip():
                return True
        return False
