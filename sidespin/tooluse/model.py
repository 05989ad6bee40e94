"""What the decision asks the model, through llama.cpp's own endpoints: never a free answer, always a probability
(`call_chance`, `likeliest_name`, `fit_chance`, `goes_on`) or a continuation under a grammar or a schema
(`arguments`, `values_asked`, `string_rest`), after the conversation in the model's own chat template (`prompt`)."""

from __future__ import annotations

import contextlib
import heapq
import json
import math
from typing import Any, Sequence

from loguru import logger

from sidespin.tools import Tool
from sidespin.tooluse.call_format import CallFormat, Llama, read_format
from sidespin.tooluse.offer import DESCRIPTION, cut, offered_table, system_prompt
from sidespin.tooluse.schema import MAX_STRING, SHORT_STRING, Bounds, arguments_schema, bounded, token_budget
from sidespin.tooluse.values import asked_parameters
from sidespin.protocol.grammar import gbnf_literal

__all__ = ["Model", "names_grammar", "STRING_REST"]

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

    async def likeliest_name(self, written: str, names: Sequence[str]) -> tuple[str, float] | None:
        """The name of `names` likeliest after `written` as a whole and its probability; None if none is found."""
        end = (await self.call_format()).between[0]  # the first character after a name
        ends = [name + end for name in names]
        frontier = [(0.0, "")]  # minus the log probability, the text written so far
        for _ in range(_NAME_STEPS):
            if not frontier:
                return None
            cost, prefix = heapq.heappop(frontier)
            if (done := next((end for end in ends if prefix.startswith(end)), None)) is not None:
                return done[:-1], math.exp(-cost)
            for token, p in await self.llama.next_tokens(written + prefix, _NAME_TOKENS):
                longer = prefix + token
                if token and p > 0 and any(end.startswith(longer) or longer.startswith(end) for end in ends):
                    heapq.heappush(frontier, (cost - math.log(p), longer))
        return None

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

    async def arguments(self, written: str, tool: Tool, bounds: Bounds, longest: int | None = None) -> str:
        """The arguments' JSON after `written` under the tool's bounded schema, strings up to `longest` characters
        (the model's own bound where None); once more with shorter strings where they were cut off."""
        longest = min(self.max_string, longest or self.max_string)
        for limit in dict.fromkeys((longest, min(longest, SHORT_STRING))):
            schema = arguments_schema(tool, max_string=limit, bounds=bounds)
            raw = await self.llama.complete(written, None, schema, token_budget(schema))
            try:
                json.loads(raw)
                return raw
            except json.JSONDecodeError:
                logger.info("TOOLUSE_ARGUMENTS_UNFINISHED {} with strings of up to {} characters", tool.name, limit)
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
