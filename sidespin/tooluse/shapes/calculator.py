"""The `calculator` shape: tools that evaluate arithmetic or expressions.

Applies where a tool's name or description says it calculates or evaluates (`calculates`). A small model answers
arithmetic in its head, and is often wrong, with a tool that calculates offered. Rule:

- `calculator.asked` (shortlist, whether): a message that holds a calculation (two numbers with an operator or a word for one
  between them: "48 x 37", "12 plus 30", "7 fois 6") reads the table of a tool that calculates, and is written and
  checked as a call down to `NAMED_FLOOR`.
"""

from __future__ import annotations

import re
from typing import Sequence

from sidespin.tools import Tool
from sidespin.tooluse.decision import Decision, Shape

__all__ = ["Calculator", "calculates", "asks_calculation"]

_CALCULATES = re.compile(r"(?i)\b(?:calculat\w*|evaluat\w*|arithmetic|math\w*|expression|comput\w*)\b")
_CALCULATION = re.compile(r"(?i)\d[\d.,]*\s*(?:[-+*/×x÷^%]|times|plus|minus|divided by|multiplied by|"
                          r"to the power of|mal|fois|por|más|menos|moins)\s*\(?\s*\d")


def calculates(tool: Tool) -> bool:
    """Whether a tool's name or description says it calculates or evaluates expressions."""
    return bool(_CALCULATES.search(f"{tool.name.replace('_', ' ')} {tool.description[:200]}"))


def asks_calculation(text: str) -> bool:
    """Whether a message holds a calculation."""
    return _CALCULATION.search(text) is not None


class Calculator(Shape):
    id = "calculator"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(calculates(tool) for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        if asks_calculation(decision.talk.last) and any(calculates(tool) for tool in tools):
            return "calculator.asked"
        return None
