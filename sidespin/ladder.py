"""The ladder: which way a model asks for tools (native calls, the constrained route, or the XML block).

A backend offers the rungs it has: `native` where it takes tool definitions, `route` where llama.cpp's own completion
endpoint is reachable (the embedded model), `xml` everywhere. `tool_mode` in config.json (or SIDESPIN_TOOL_MODE)
names a rung; `auto` (the default) takes the first the backend offers in `PREFERENCE`."""

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
    """The rungs this backend really offers, in order of preference."""
    offered = {"route": backend.supports_routing, "native": backend.supports_tools, "xml": True}
    return [rung for rung in PREFERENCE if offered[rung]]


def choose_rung(backend: Backend, tool_mode: str) -> Choice:
    """The configured rung, or the best this backend offers."""
    return Choice(tool_mode, "config") if tool_mode != "auto" else Choice(rungs_of(backend)[0], "default")
