"""The `calculator` shape: tools that evaluate arithmetic or expressions.

Applies where a tool calculates (`calculates`): its name or description says it calculates or evaluates, or says an
arithmetic operation ("Multiply two numbers", `square_root`) and it takes numbers only. Rule:

- `calculator.asked` (shortlist, whether, which): a message that holds a calculation (two numbers with an operator
  or a word for one between them: "48 x 37", "12 plus 30", "7 fois 6"; a share of a number, "15% of 80"; a root
  of one) reads the table of a tool that calculates, is written and checked as a call down to `NAMED_FLOOR`, and
  its name is chosen among the tools that calculate.
"""

from __future__ import annotations

import re
from typing import Sequence

from sidespin.tools import Tool
from sidespin.tooluse.decision import Decision, Shape

__all__ = ["Calculator", "calculates", "asks_calculation"]

_CALCULATES = re.compile(r"(?i)\b(?:calculat\w*|evaluat\w*|arithmetic|math\w*|expression|comput\w*)\b")
_OPERATION = re.compile(r"(?i)\b(?:add|sum|subtract|minus|multipl\w*|divi\w*|power|exponent\w*|sqrt|root|modulo|"
                        r"percent\w*|factorial|logarithm)\b")
_CALCULATION = re.compile(r"(?i)\d[\d.,]*\s*(?:[-+*/×x÷^%]|times|plus|minus|divided by|multiplied by|"
                          r"to the power of|mal|fois|por|más|menos|moins)\s*\(?\s*\d|"
                          r"\d\s*%\s*(?:of|de|von|di|du)\s+\d|"
                          r"(?:square root|sqrt|racine carr[ée]e|ra[íi]z cuadrada|wurzel)"
                          r"\s*(?:of|de|aus|von)?\s*\(?\d")
_NUMBER = frozenset({"number", "integer"})


def calculates(tool: Tool) -> bool:
    """Whether a tool says it calculates or evaluates, or says an arithmetic operation and requires numbers only."""
    said = f"{tool.name.replace('_', ' ').replace('-', ' ')} {tool.description[:200]}"
    if _CALCULATES.search(said):
        return True
    kinds = [(tool.parameters.get(name) or {}).get("type") for name in tool.required]
    return bool(kinds) and all(kind in _NUMBER for kind in kinds) and bool(_OPERATION.search(said))


def asks_calculation(text: str) -> bool:
    """Whether a message holds a calculation."""
    return _CALCULATION.search(text) is not None


class Calculator(Shape):
    id = "calculator"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(calculates(tool) for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        return "calculator.asked" if asks_calculation(decision.talk.last) and self.applies(tools) else None

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        if "calculator.asked" not in decision.notes:
            return decision.names
        return {n: t for n, t in decision.names.items() if calculates(t)} or decision.names
