"""The ladder: which rung (`sidespin.rungs`) a model asks for tools by. `tool_mode` in config.json (or
SIDESPIN_TOOL_MODE) names one; `auto` (the default) takes the first in `PREFERENCE` the backend offers (`rungs_of`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sidespin.llm.base import Backend

__all__ = ["Choice", "PREFERENCE", "rungs_of", "choose_rung"]

PREFERENCE = ("route", "native", "xml")


@dataclass(frozen=True)
class Choice:
    """The chosen rung and where the choice came from: `config`, or `default` (the backend's best)."""

    name: str
    source: str

    def describe(self) -> dict[str, Any]:
        return {"tool_rung": self.name, "tool_rung_source": self.source}


def rungs_of(backend: Backend) -> list[str]:
    """The rungs this backend offers, best first (`route` where llama.cpp's own completion endpoint is reachable)."""
    offered = {"route": backend.supports_routing, "native": backend.supports_tools, "xml": True}
    return [rung for rung in PREFERENCE if offered[rung]]


def choose_rung(backend: Backend, tool_mode: str) -> Choice:
    """The configured rung, or the best this backend offers."""
    return Choice(tool_mode, "config") if tool_mode != "auto" else Choice(rungs_of(backend)[0], "default")
