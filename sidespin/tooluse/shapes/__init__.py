"""Shapes: what holds for one kind of server, kept out of the decision's core.

A shape is a rule set for tools of one form, found only from what the tools declare: editors with an old and a
new text (`editor`), servers that work in folders (`folders`), tools that take an IANA time zone
(`timezones`), tools that calculate (`calculator`). Each has an id, `applies(tools)` (a predicate over the offered tools), and hooks the pipeline
calls at three stages, each of which does nothing by default:

- `favours(decision, tools)` (shortlist, whether): a rule id when the message asks for what these tools of this
  kind serve, so that their table is a candidate and a call is written and checked down to `NAMED_FLOOR`; else
  None;
- `narrow(decision)` (which): the tools a name is chosen among;
- `amend(decision, call, model, written)` (arguments): the call as this kind of tool needs it, or None to refuse it.

Every rule logs its id (`<shape>.<rule>`), and the decision's log line lists the ids that acted. A shape can be
switched off in `config.json` (`"shapes": {"editor": false}`); `SHAPES` lists them.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from sidespin.errors import ConfigError
from sidespin.tools import Tool
from sidespin.tooluse.decision import Shape
from sidespin.tooluse.shapes.calculator import Calculator
from sidespin.tooluse.shapes.editor import Editor
from sidespin.tooluse.shapes.folders import Folders
from sidespin.tooluse.shapes.timezones import TimeZones

__all__ = ["Shape", "SHAPES", "shapes_for", "check_switches"]

SHAPES: dict[str, Shape] = {shape.id: shape for shape in (Folders(), Editor(), TimeZones(), Calculator())}


def shapes_for(tools: Sequence[Tool], switches: Mapping[str, bool] | None = None) -> list[Shape]:
    """The shapes that apply to `tools` and are not switched off (`switches`: id to on or off), in `SHAPES` order."""
    switches = switches or {}
    return [shape for name, shape in SHAPES.items() if switches.get(name, True) and shape.applies(tools)]


def check_switches(switches: Mapping[str, bool]) -> None:
    """Raise `ConfigError` for a switch that names no shape."""
    unknown = sorted(set(switches) - set(SHAPES))
    if unknown:
        raise ConfigError(f"shapes: no shape is named {', '.join(map(repr, unknown))} (known: {', '.join(SHAPES)})")
