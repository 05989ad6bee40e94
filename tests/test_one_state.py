"""One state per turn: a send reads and parses its conversation file once, whichever way it comes in."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fasthtml.common import to_xml

from sidespin import versions
from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.protocol import format_block, poke_prompt
from tests.scripted import ScriptedBackend
from sidespin.events import ToolFinished, ToolProposed
from sidespin.mcp.attach import ResourceRef, attached_blocks, compose, split_attached
from sidespin.mcp.catalog import Catalog, Reading
from sidespin.tools import ToolCall, tool
from sidespin.transcript import Transcript, parse
from sidespin.transcript.parse import _Parser
from sidespin.web.live import TurnBoard
from sidespin.web.page import UserMessage


@tool(read_only=True)
def lookup(city: str) -> str:
    """Looks a city up."""
    return f"{city}: 12 °C"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parse of a transcript from now on (by whoever calls it), as the path it was read from."""
    seen: list[str] = []
    real = _Parser.transcript

    def counted(self, final_newline: bool):
        seen.append(self.path or "text")
        return real(self, final_newline)

    monkeypatch.setattr(_Parser, "transcript", counted)
    return seen


def settings_in(tmp_path: Path):
    return load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json", tool_mode="xml")


def script() -> ScriptedBackend:
    return ScriptedBackend([
        ["Hello."],
        ["Let me look.", format_block(ToolCall("lookup", {"city": "Lyon"}))],
        ["Lyon has 12 °C."],
    ])


async def test_a_send_from_the_page_parses_the_conversation_file_once(tmp_path: Path, parses: list[str]) -> None:
    async with Engine.open(settings_in(tmp_path), backend=script(), approval="auto") as engine:
        engine.registry.add(lookup)
        board = TurnBoard(engine)
        cid = engine.conversation().id
        await board.start(engine.conversation(cid), "hi").wait(timeout=10)
        parses.clear()
        # as the send route plays it: the conversation by its id, then the turn on the board
        live = board.start(engine.conversation(cid), "Weather in Lyon?")
        await live.wait(timeout=10)
        assert live.record.answer.text == "Let me look.\n\nLyon has 12 °C."
        assert len(parses) == 1, parses
        turns = engine.store.load(cid).turns
    assert [turn.user for turn in turns[:2]] == ["hi", "Weather in Lyon?"]


async def test_a_turn_played_by_the_engine_parses_the_conversation_file_once(tmp_path: Path,
                                                                             parses: list[str]) -> None:
    async with Engine.open(settings_in(tmp_path), backend=script(), approval="auto") as engine:
        engine.registry.add(lookup)
        conversation = engine.conversation()
        [_ async for _ in engine.events(conversation, "hi")]
        parses.clear()
        [_ async for _ in engine.events(engine.conversation(conversation.id), "Weather in Lyon?")]
        assert len(parses) == 1, parses


@tool
def send_note(text: str) -> str:
    """Sends a note (asks first)."""
    return f"sent: {text}"


async def test_a_call_approved_after_its_answer_went_on_runs_and_its_result_takes_its_place(tmp_path: Path) -> None:
    backend = ScriptedBackend([["Sending.", ToolCall("send_note", {"text": "hi"}, id="c1"), " Then I wait."],
                               ["Sent."]], supports_tools=True)
    settings = load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json", tool_mode="native")
    async with Engine.open(settings, backend=backend, approval="ask") as engine:
        engine.registry.add(send_note)
        conversation = engine.conversation()
        asked = [event async for event in engine.events(conversation, "send hi")]
        assert asked[-1].reason == "approval" and [call.id for call in asked[-1].pending] == ["c1"]
        decision = engine.decide(conversation, "yo", "c1")
        played = [event async for event in engine.events(conversation, None, decisions=decision.ready)]
        reloaded = engine.store.load(conversation.id).to_messages()
    assert [event.result.output for event in played if isinstance(event, ToolFinished)] == ["sent: hi"]
    assert played[-1].reason == "done"
    # what the model read next: the call, its result, then what the answer said after it
    assert [(m["role"], m.get("content")) for m in backend.calls[1][-3:]] == [
        ("assistant", "Sending."), ("tool", "sent: hi"), ("assistant", "Then I wait.")]
    assert reloaded[:3] == backend.calls[1][-4:-1]  # and a reload reads the same, the answer's end after it


async def test_a_pokes_tool_is_data_in_its_note_and_a_regenerate_pokes_it_again(tmp_path: Path) -> None:
    backend = ScriptedBackend([[format_block(ToolCall("lookup", {"city": "Oslo"}))], ["Oslo, then."],
                               [format_block(ToolCall("lookup", {"city": "Oslo"}))], ["Oslo again."]])
    async with Engine.open(settings_in(tmp_path), backend=backend, approval="auto") as engine:
        engine.registry.add(lookup)
        cid = engine.conversation().id
        [_ async for _ in engine.events(engine.conversation(cid), None, poke_tool="lookup",
                                        poke_arguments={"city": "Oslo"})]
        (turn, _) = engine.store.load(cid).turns
        assert turn.user_note == {"poke": {"tool": "lookup", "arguments": {"city": "Oslo"}}}
        assert turn.poke == "lookup" and engine.store.list()[0][1] == "🏓 lookup" == engine.store.load(cid).title()
        replay = versions.edit(engine.store, cid, 0)  # ↻ Regenerate
        [_ async for _ in engine.events(engine.conversation(cid), replay.text, note=replay.note)]
        (again, _) = engine.store.load(cid).turns
    assert again.user == turn.user and again.user_note == turn.user_note
    assert backend.calls[2][0]["role"] == "user"  # played as a Poke: its prompt alone, no teaching of every tool
    assert [e.call.name for e in again.events(last=True) if isinstance(e, ToolProposed)] == ["lookup"]


def test_the_page_draws_a_poke_from_its_note_and_an_older_poke_from_its_prompt() -> None:
    noted = to_xml(UserMessage("Poke: call the lookup tool.", note={"poke": {"tool": "lookup"}}))
    older = to_xml(UserMessage(poke_prompt([lookup], tool_name="lookup")))  # a file written before the note
    for drawn in (noted, older):
        assert "🏓 Poke: call lookup" in drawn and "Now call" not in drawn
    assert "🏓" not in to_xml(UserMessage("Poke: call the lookup tool.", note={"attached": []}))


class Shelf:
    """An MCP manager with two text resources, as `compose` reads them."""

    texts = {"demo://a": "line one\nline two", "demo://b": "```\nfenced\n```"}

    async def catalog(self, fresh: bool = False) -> Catalog:
        return Catalog(resources=[{"server": "demo", "uri": uri, "name": uri[-1]} for uri in self.texts])

    async def read_resource(self, server: str, uri: str) -> Reading:
        return Reading(self.texts[uri])


async def test_a_messages_attachments_are_told_apart_by_its_note_and_an_older_messages_by_its_text() -> None:
    # what a person typed may look like an attached block: only the note says which blocks are attachments
    typed = "Compare these. I wrote:\n\n📎 demo://fake (demo)\n```\nnot attached\n```"
    refs = [ResourceRef("demo", "demo://a", "a"), ResourceRef("demo", "demo://b", "b")]
    composed = await compose(Shelf(), typed, refs, max_chars=1000)
    transcript = Transcript()
    transcript.add_user(composed.text, composed.note)
    turn = parse(transcript.render()).turns[0]
    said, blocks = attached_blocks(turn.user, turn.user_note)
    assert said == typed
    assert [(block["name"], block["body"]) for block in blocks] == [("a", "line one\nline two"),
                                                                      ("b", "```\nfenced\n```")]
    drawn = to_xml(UserMessage(turn.user, note=turn.user_note))
    assert drawn.count('class="attached"') == 2 and "not attached" in drawn.split('class="attached-list"')[0]
    assert split_attached(turn.user)[0] == "Compare these. I wrote:"  # read from the text, it was cut short
    # a message written before the note kept each block's lines is read from its text, as it always was
    plain = await compose(Shelf(), "Compare these.", refs, max_chars=1000)
    older = {"attached": [{key: value for key, value in row.items() if key != "lines"}
                          for row in plain.note["attached"]]}
    assert attached_blocks(plain.text, older) == attached_blocks(plain.text, plain.note) == ("Compare these.", blocks)
    assert to_xml(UserMessage(plain.text, note=older)) == to_xml(UserMessage(plain.text, note=plain.note))
    # and so is one whose lines a hand edit moved
    assert attached_blocks("Added by hand.\n" + plain.text, plain.note) == ("Added by hand.\nCompare these.", blocks)



def test_a_send_a_poke_and_a_choice_from_the_page_each_parse_the_file_once(tmp_path: Path,
                                                                           parses: list[str]) -> None:
    # in-process (no socket is the point here): the routes as the page posts to them
    from starlette.testclient import TestClient

    from tests.conftest import app_for

    say = format_block(ToolCall("say_hello", {"name": "Ada"}))
    backend = ScriptedBackend([["Hello."], [say], ["I said hello to Ada."]])
    app = app_for(backend, tmp_path, tool_mode="xml", tools={"say_hello": {"approval": "ask"}})
    with TestClient(app, base_url=f"http://127.0.0.1:{app.state.settings.port}") as client:
        engine, board = app.state.engine, app.state.board
        cid = engine.conversation().id

        def played(response, step: str) -> None:
            assert response.status_code == 200, (step, response.text)
            assert len(parses) == 1, (step, parses)  # before the turn ends: what the route itself read
            while board.running(cid):
                time.sleep(0.02)

        parses.clear()
        played(client.post("/send", data={"cid": cid, "msg": "hi"}), "send")
        parses.clear()
        played(client.post("/poke", data={"cid": cid, "tool": "say_hello", "arguments": '{"name": "Ada"}'}), "poke")
        [waiting] = engine.store.load(cid).pending_calls()
        parses.clear()
        played(client.post("/approve", data={"cid": cid, "call_id": waiting.id, "choice": "ya"}), "approve")
        text = engine.store.path(cid).read_text(encoding="utf-8")
    assert "Hello." in text and "I said hello to Ada." in text  # each turn was played to its end and written
    assert text.count("say_hello") >= 2 and "Hello, Ada" in text  # the call, approved, ran: its result is there
