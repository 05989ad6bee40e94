"""Shapes: what holds for one kind of server, kept out of the decision's core.

A shape (`sidespin.tooluse.decision.Shape`) is the rules for tools of one form, found from what they declare: `editor`,
`folders`, `timezones`, `calculator`, `memory`, `database`. `applies(tools)` says where it holds; its hooks act at
the shortlist (`carry_on`, after results), whether (`unasked`), which and arguments stages. Each rule logs its id;
`config.json` turns a shape off (`"shapes": {"editor": false}`)."""

from __future__ import annotations

from typing import Mapping, Sequence

from sidespin.errors import ConfigError
from sidespin.tools import Tool
from sidespin.tooluse.decision import Shape
from sidespin.tooluse.shapes.calculator import Calculator
from sidespin.tooluse.shapes.database import Database
from sidespin.tooluse.shapes.editor import Editor
from sidespin.tooluse.shapes.folders import Folders
from sidespin.tooluse.shapes.memory import Memory
from sidespin.tooluse.shapes.timezones import TimeZones

__all__ = ["Shape", "SHAPES", "shapes_for", "check_switches"]

SHAPES: dict[str, Shape] = {shape.id: shape for shape in (Folders(), Editor(), TimeZones(), Calculator(), Memory(),
                                                       Database())}


def shapes_for(tools: Sequence[Tool], switches: Mapping[str, bool] | None = None) -> list[Shape]:
    """The shapes that apply to `tools` and are not switched off (`switches`: id to on or off), in `SHAPES` order."""
    return [shape for name, shape in SHAPES.items() if (switches or {}).get(name, True) and shape.applies(tools)]


def check_switches(switches: Mapping[str, bool]) -> None:
    """Raise `ConfigError` for a switch that names no shape."""
    if unknown := sorted(set(switches) - set(SHAPES)):
        raise ConfigError(f"shapes: no shape is named {', '.join(map(repr, unknown))} (known: {', '.join(SHAPES)})")
