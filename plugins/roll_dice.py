"""Dice, for games and for testing tool calls with integer arguments."""

from __future__ import annotations

import random

from sidespin.errors import ToolFailed
from sidespin.tools import tool


@tool(read_only=True)
def roll_dice(sides: int = 6, count: int = 1) -> dict:
    """Roll dice and report each roll and the total.

    Args:
        sides: faces on each die (2 to 1000)
        count: how many dice to roll (1 to 100)
    """
    if not 2 <= sides <= 1000:
        raise ToolFailed(f"sides must be between 2 and 1000, got {sides}")
    if not 1 <= count <= 100:
        raise ToolFailed(f"count must be between 1 and 100, got {count}")
    rolls = [random.randint(1, sides) for _ in range(count)]
    return {"rolls": rolls, "total": sum(rolls), "sides": sides}
