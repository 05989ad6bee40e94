"""The page's tool-cost line: how many tools the model is offered, what their list costs it on each rung, and the
route's tables."""

from __future__ import annotations

import json

from sidespin.tooluse.offer import SHORTLIST, TABLE_CHARS
from sidespin.tools import Tool
from sidespin.web.servers import Cost, tool_section


def many(count: int, source: str = "mcp:x") -> list[Tool]:
    return [Tool(name=f"{source[4:]}_{i}", description=f"Does thing {i}. " * 10, fn=lambda: None, source=source,
                 input_schema={"type": "object", "properties": {}}) for i in range(count)]


def test_with_many_tools_the_route_sends_one_table_and_the_line_counts_the_largest() -> None:
    tools = [*many(30, "mcp:big"), *many(12, "mcp:mid"), *many(10, "mcp:small")]
    sent = json.loads(tool_section(tools, "route"))
    assert SHORTLIST < len(sent) < 30 and {t["function"]["name"][:3] for t in sent} == {"big"}  # a part of one server
    assert len(json.dumps(sent, ensure_ascii=False)) <= TABLE_CHARS
    line = Cost(1234, True, "route", 52).line()
    assert line == ("52 tools offered · tool list: 1,234 tokens "
                    "(route prompt, at most: one server's table of the 52 tools, for each message)")


def test_with_few_tools_every_rung_sends_them_all() -> None:
    for rung in ("route", "native"):
        assert len(json.loads(tool_section(many(3), rung))) == 3
    assert "x_2" in tool_section(many(3), "xml")
    assert Cost(300, False, "route", 3).line() == "3 tools offered · tool list: ≈ 300 tokens (route prompt)"
    assert Cost(80, True, "xml", 1).line() == "1 tool offered · tool list: 80 tokens (tool prompt)"


def test_with_no_tool_the_line_says_none_is_offered() -> None:
    assert tool_section([], "route") == ""
    assert Cost(0, True, "route", 0).line() == "no tools offered to the model"
