"""How a model's chat template writes a tool call, read off the template by `read_format` (marked calls rendered
through llama.cpp's `/apply-template`); a template that renders no call it can read gets `FALLBACK`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from os.path import commonprefix
from typing import Any, Protocol

from loguru import logger

from sidespin.errors import BackendError

__all__ = ["CallFormat", "FALLBACK", "Llama", "read_format"]

_NAME_MARK, _ARGUMENT_MARK = "zqxname", "zqxarg"


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
