"""The page's tool-cost line: what the tool list costs the model on each rung, and the route's shortlist."""

from __future__ import annotations

import json

from sidespin.route import SHORTLIST
from sidespin.tools import Tool
from sidespin.web.servers import Cost, tool_section


def many(count: int) -> list[Tool]:
    return [Tool(name=f"tool_{i}", description=f"Does thing {i}.", fn=lambda: None, source="mcp:x",
                 input_schema={"type": "object", "properties": {}}) for i in range(count)]


def test_with_many_tools_the_route_sends_a_shortlist_and_the_line_says_so() -> None:
    sent = json.loads(tool_section(many(52), "route"))
    assert len(sent) == SHORTLIST
    line = Cost(1234, True, "route", 52).line()
    assert line == f"tool list: 1,234 tokens (route prompt: the {SHORTLIST} of 52 tools most relevant to each message)"


def test_with_few_tools_every_rung_sends_them_all() -> None:
    for rung in ("route", "native"):
        assert len(json.loads(tool_section(many(3), rung))) == 3
    assert "tool_2" in tool_section(many(3), "xml")
    assert Cost(300, False, "route", 3).line() == "tool list: ≈ 300 tokens (route prompt)"
