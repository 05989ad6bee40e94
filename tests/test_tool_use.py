"""The embedded default model decides whether and which tool, for real (llama.cpp, the constrained route)."""

from __future__ import annotations

import pytest

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.events import TextDelta, ToolFinished, ToolProposed

pytestmark = pytest.mark.model

CASES = [
    ("What time is it in Asia/Tokyo?", "get_time", {"timezone": "Asia/Tokyo"}),
    ("Roll two six-sided dice.", "roll_dice", {"sides": 6, "count": 2}),
    ("What is the capital of France?", None, {}),
    ("Thanks, that was all!", None, {}),
]


async def test_the_default_model_calls_the_right_tool_or_none_and_never_shows_a_call(tmp_path):
    settings = load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json")
    async with Engine.open(settings, approval="auto") as engine:
        assert engine.rung.name == "route"  # the probe's pick for this model
        for text, tool, arguments in CASES:
            events = [event async for event in engine.events(engine.conversation(), text)]
            proposed = [event.call for event in events if isinstance(event, ToolProposed)]
            shown = "".join(event.text for event in events if isinstance(event, TextDelta))
            if tool is None:
                assert proposed == [], text
            else:
                assert [(call.name, call.arguments) for call in proposed] == [(tool, arguments)], text
                assert [e.result.ok for e in events if isinstance(e, ToolFinished)] == [True]
            assert shown.strip() and "<mcp-request" not in shown and '"arguments"' not in shown, text
