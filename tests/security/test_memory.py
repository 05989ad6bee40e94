"""10. Conversations not in use leave memory; finished turns are kept only for a while."""

from __future__ import annotations

import asyncio
import gc
import weakref

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.rally import Conversation, chat_with_llm
from sidespin.tools import ToolRegistry, tool
from sidespin.web.live import TurnBoard
from tests.scripted import ScriptedBackend


async def test_conversations_not_in_use_leave_memory_and_a_running_one_stays(tmp_path):
    settings = load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json")
    backend = ScriptedBackend([lambda messages: ["ok"]] * 400)
    async with Engine.open(settings, backend=backend, approval="auto") as engine:
        ids = [engine.conversation().id for _ in range(300)]
        for cid in ids:  # each page view opens one
            engine.conversation(cid)
        held = engine.conversation(ids[0])
        board = TurnBoard(engine)
        turns = [board.start(engine.conversation(cid), "hi") for cid in ids[:120]]
        await asyncio.gather(*(turn.wait(timeout=30) for turn in turns))
        gc.collect()
        assert set(engine.conversations) == {held.id}  # only the one still referenced
        assert len(board.turns) <= 51  # finished turns are forgotten (their transcript has them)
        assert engine.store.load(ids[5]).to_messages()[-1] == {"role": "assistant", "content": "ok"}  # read back


@tool(read_only=True)
def say_hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


async def test_a_played_turn_lets_its_conversation_go_at_once_not_at_the_next_collection():
    call = '<mcp-request>\n  <tool name="say_hello" />\n  <param name="name">Ann</param>\n</mcp-request>'
    conversation = Conversation()
    gone = weakref.ref(conversation)
    gc.disable()  # the engine's weak map of conversations: nothing of a finished turn may keep one in a cycle
    try:
        async for _ in chat_with_llm(conversation, "hi", backend=ScriptedBackend([[call], ["Done."]]),
                                     registry=ToolRegistry([say_hello])):
            pass
        del conversation, _
        assert gone() is None
    finally:
        gc.enable()
