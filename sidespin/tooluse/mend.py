"""One mend from an error: a failed call written again (`to_mend`) gets, for the value the error names
(`another_value`), a value the error offers ("Available sheets: 'Plants'"), else the model's next likeliest, but not
one that writes the error's words back or a call already made; and an id mended before its call from the listing
that holds the thing the message names (`ids_as_listed`)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Container, Sequence

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import IDS, last_word, telling_words

__all__ = ["to_mend", "mendable", "another_value", "ids_as_listed"]

_VALUE_TOKENS, _OTHER_IDEA, _IDEAS = 12, 0.003, 4  # a value's tokens read, least chance of another, others tried
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')
_WORD_OF = re.compile(r"[^\W\d_]{4,}")
_OFFERS = re.compile(r"(?i)\b(?:available|valid|allowed|supported|existing|expected|possible|one of|did you mean|"
                     r"choose from|options? are)\b([^\n]{0,300})")
_QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"")
_FIELD = re.compile(r"""["']?([\w-]+)["']?\s*[:=]\s*["']?([\w.:-]+)""")  # a record's field: `"id": "a1f0"`, `id=7`
_FILE = re.compile(r"^(?:[/~\\]|\.{1,2}/|[A-Za-z]:)|\.[A-Za-z][A-Za-z0-9]{0,4}$")  # a path: no near miss of another


def mendable(talk: Talk) -> set[str]:
    """The tools of this turn with one failed call that no call of theirs followed: they may be called again."""
    turn = talk.this_turn
    failed_at = {name: [a.place for a in turn if a.name == name and a.failed] for name in {a.name for a in turn}}
    return {name for name, places in failed_at.items()
            if len(places) == 1 and all(a.place <= places[0] for a in turn if a.name == name)}


def to_mend(call: ToolCall, talk: Talk,
            readers: Container[str] = ()) -> tuple[ToolCall, str, list[dict[str, Any]]] | None:
    """The failed call `call` stands for, its error and every arguments its tool was tried with: `call` if it failed
    and no call but of `readers` (they change nothing it needs) succeeded since, its tool's failed one if it did."""
    made = talk.this_turn
    mine = [a for a in made if a.name == call.name]
    succeeded = [a.arguments for a in mine if not a.failed]
    failures = [a for a in mine if a.failed and a.arguments not in succeeded]
    tried = [a.arguments for a in mine]
    if failure := next((a for a in reversed(failures) if a.arguments == call.arguments), None):
        since = any(not a.failed and a.name not in readers and (
            a.place > failure.place or (a.place == failure.place and a.name != call.name)) for a in made)
        return None if since else (call, failure.answer, tried)
    return ((ToolCall(call.name, failures[-1].arguments), failures[-1].answer, tried)
            if failures and call.arguments in succeeded else None)


async def another_value(model: Model, written: str, call: ToolCall, error: str, tried: list[dict[str, Any]],
                        makes: Callable[[ToolCall], bool] = lambda call: True) -> ToolCall | None:
    """`call` (written after `written`) with another value where the error names one and `makes` accepts; or None."""
    named = [(k, v) for k, v in call.arguments.items() if isinstance(v, str) and len(v) >= 2
             and v.lower() in error.lower() and not _FILE.search(v)]
    if not named:
        logger.info("TOOLUSE_MEND_NOTHING {}: the error names none of its values", call.name)
        return None
    parameter, value = max(named, key=lambda pair: len(pair[1]))  # the longest string the error names, not a path
    offered = [a or b for a, b in _QUOTED.findall(found.group(1))] if (found := _OFFERS.search(error)) else []
    for other in offered:  # "Available sheets: 'Plants'": a value the error offers, in its order
        if other != value and (mended := {**call.arguments, parameter: other}) not in tried and makes(
                ToolCall(call.name, mended)):
            logger.info("TOOLUSE_MEND {}.{}: {!r} for {!r}, as the error offers", call.name, parameter, other, value)
            return ToolCall(call.name, mended)
    others = {k: v for k, v in call.arguments.items() if k != parameter}  # as JSON left open for `parameter`'s value
    written += (json.dumps(others, ensure_ascii=False)[:-1] + ", " if others else "{") + json.dumps(parameter) + ': "'
    ideas: list[tuple[float, str, str]] = []  # probability, the value before it, the token
    consumed = ""
    for _ in range(_VALUE_TOKENS):
        rest = value[len(consumed):] + '"'
        likely = await model.llama.next_tokens(written + consumed, 10)
        ideas.extend((p, consumed, token) for token, p in likely if p >= _OTHER_IDEA and token
                     and not rest.startswith(token) and not _STRING_STOP.search(token))
        if (greedy := next((t for t, _ in likely if t and rest.startswith(t) and '"' not in t), None)) is None:
            break
        consumed += greedy
    echoed = set(_WORD_OF.findall(error.lower())) - set(_WORD_OF.findall(value.lower()))
    for p, before, token in sorted(ideas, reverse=True)[:_IDEAS]:
        other = before + token + await model.string_rest(written + before + token)
        mended = {**call.arguments, parameter: other}
        if other.strip() and not set(_WORD_OF.findall(other.lower())) & echoed and mended not in tried \
                and makes(ToolCall(call.name, mended)):
            logger.info("TOOLUSE_MEND {}.{}: {!r} instead of {!r} (p={:.2f})", call.name, parameter, other, value, p)
            return ToolCall(call.name, mended)
    logger.info("TOOLUSE_MEND_NOTHING {}: no other value for {} is likely", call.name, parameter)
    return None


def ids_as_listed(tool: Tool, arguments: dict[str, Any], results: Sequence[str], message: str) -> dict[str, Any]:
    """`arguments` with a required id (a parameter whose name ends in id, key or uuid) that no result holds replaced
    by the id of the one record the results list that shares the most words with `message` ("Mark 'Renew passport'
    as done" after a listing of `{"id": "a1f0…", "text": "Renew passport"}`): a small model copies long ids badly.
    A record is a result's text from one `"id": value` (or `id: value`, `id=value`) to the next, cut JSON too."""
    asked, fixed = set(telling_words(message)), dict(arguments)
    for name in (n for n in tool.required if last_word(n) in IDS and isinstance(arguments.get(n), str)):
        listed = []
        for answer in results:
            hits = [m for m in _FIELD.finditer(answer) if last_word(m.group(1)) == last_word(name)]
            listed += [(m.group(2), asked & set(telling_words(answer[m.end(): nxt.start() if nxt else None])))
                       for m, nxt in zip(hits, [*hits[1:], None])]
        if arguments[name] in {i for i, _ in listed} or not listed:
            continue
        best = max(len(words) for _, words in listed)
        if best and len(ids := {i for i, words in listed if len(words) == best}) == 1:
            fixed[name] = ids.pop()
            logger.info("TOOLUSE_ID_AS_LISTED {}.{}: the id a result gives the thing the message names", tool.name,
                        name)
    return fixed
