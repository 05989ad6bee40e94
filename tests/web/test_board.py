"""The page's turn board: each question gets its own message, where a reload draws it."""

from __future__ import annotations

import asyncio

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.web.live import TurnBoard
from tests.scripted import ScriptedBackend


async def test_questions_sent_before_the_first_is_written_each_get_their_own_message(tmp_path):
    settings = load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json")
    backend = ScriptedBackend([["one"], ["two"], ["three"]], delay=0.01)
    async with Engine.open(settings, backend=backend, approval="auto") as engine:
        board = TurnBoard(engine)
        conversation = engine.conversation()
        turns = [board.start(conversation, text) for text in ("a", "b", "c")]  # before any task has run
        assert [turn.id for turn in turns] == ["turn-0", "turn-1", "turn-2"]
        await asyncio.gather(*(turn.wait(timeout=30) for turn in turns))
        transcript = engine.store.load(conversation.id)
        assert [transcript.turns[i].user for i in range(3)] == ["a", "b", "c"]  # the ids are where reload draws them
