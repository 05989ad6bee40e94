"""Catching an answer that claims a tool ran when it did not.

A small model that has seen tool results earlier in a conversation sometimes writes one
itself: "The tool read_file answered: …" in a turn where nothing ran (nothing was read,
nothing written). Such a claim is found in the answer's text and the turn says so with a
visible notice; the answer is kept as written, so the transcript stays what happened.

A claim is a sentence that has a tool (by the word "tool" or "function", or by a name that
is offered) answering, returning or being run, or that copies the way results are told to
the model ("[result of the tool …"). It counts when no call was made in the turn, or when
the tool it names was not among the turn's calls.
"""

from __future__ import annotations

import re
from typing import Iterable

__all__ = ["claimed_tool", "NOTICE"]

NOTICE = ("no tool ran for this answer: what it says a tool returned or did did not come from a tool, "
          "and nothing was done")

# past tense only: "get_time returns the time" describes a tool, "get_time returned 12:00" reports a result
_VERBS = r"(?:answered|returned|responded|replied|reported|said|gave|showed|came back)"
_RAN = r"(?:I|I've|I have|we)\s+(?:just\s+)?(?:called|ran|run|used|executed|invoked|queried)"


def claimed_tool(text: str, offered: Iterable[str], called: Iterable[str]) -> str | None:
    """The tool the answer claims ran (or "a tool") though it was not called in the turn, or None."""
    names = sorted({n for n in offered if n}, key=len, reverse=True)
    made = set(called)
    name_pattern = "|".join(re.escape(n) for n in names) or r"(?!)"
    patterns = (
        rf"\[?result of the tool\s+`?({name_pattern}|\w[\w.\-]*)",
        rf"\b(?:the\s+)?(?:tool|function)\s+[`'\"]?({name_pattern})[`'\"]?\s+{_VERBS}",
        rf"\bthe\s+(tool)(?:'s)?\s+(?:{_VERBS}|result|output)",
        rf"[`'\"]?\b({name_pattern})\b[`'\"]?\s+(?:tool\s+)?{_VERBS}\b",
        rf"\b{_RAN}\s+(?:the\s+)?(?:tool\s+|function\s+)?[`'\"]?({name_pattern})\b",
        rf"\baccording to\s+(?:the\s+)?(?:tool\s+)?[`'\"]?({name_pattern})\b",
    )
    for pattern in patterns:
        for found in re.finditer(pattern, text, re.IGNORECASE):
            tool = found.group(1)
            if (tool not in made) if tool in names else not made:
                return tool
    return None
