"""Versions, forks and imports of conversation files (sidespin.versions), and replaying an edited turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidespin import versions
from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.errors import TranscriptError
from sidespin.protocol import format_block
from sidespin.tools import ToolCall, ToolRegistry, tool
from sidespin.transcript import TranscriptStore
from tests.scripted import ScriptedBackend

CALL = ToolCall("lookup", {"city": "Lyon"}, id="call_1")


def conversation(store: TranscriptStore, answers: list[str]) -> str:
    """A conversation with one turn per answer; the second turn made a tool call."""
    cid = store.new()
    transcript = store.load(cid)
    for number, answer in enumerate(answers):
        transcript.add_user(f"question {number}")
        transcript.start_answer("scripted")
        if number == 1:
            transcript.add_proposal(CALL)
            transcript.add_result(CALL, "Lyon: 12 °C", details={"seconds": 0.5})
        transcript.append_text(answer)
        transcript.end_turn()
    store.save(cid, transcript)
    return cid


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "conversations")


def test_editing_a_message_keeps_the_conversation_as_it_was_in_a_new_file(store):
    cid = conversation(store, ["zero", "one", "two"])
    before = store.read(cid)

    replay = versions.edit(store, cid, 1, "question one, edited")

    kept = store.load(replay.version)
    assert [t.user for t in kept.turns if t.user] == ["question 0", "question 1", "question 2"]
    assert before.split("💬:", 1)[1] == store.read(replay.version).split("💬:", 1)[1]  # every turn, byte for byte
    now = store.load(cid)
    assert [t.user for t in now.turns if t.user] == ["question 0"]
    assert now.next_user_index() == 1 and replay.text == "question one, edited"
    assert versions.version_group(now, 1) == [replay.version, cid]
    assert versions.version_group(kept, 1) == [replay.version, cid]
    assert len(store.list()) == 2


def test_a_second_edit_joins_the_group_and_each_member_knows_all_three(store):
    cid = conversation(store, ["zero", "one"])
    first = versions.edit(store, cid, 1, "edit A").version
    transcript = store.load(cid)  # play the edited turn as the engine would
    transcript.add_user("edit A")
    transcript.start_answer("scripted")
    transcript.append_text("answer A")
    transcript.end_turn()
    store.save(cid, transcript)

    second = versions.edit(store, cid, 1, "edit B").version

    group = [first, second, cid]
    for member in group:
        assert versions.version_group(store.load(member), 1) == group
    assert "answer A" in store.read(second) and "answer A" not in store.read(first)


def test_an_edit_earlier_moves_the_groups_of_later_messages_to_the_copy(store):
    cid = conversation(store, ["zero", "one", "two"])
    late = versions.edit(store, cid, 2, None).version  # a regenerate of the last answer
    transcript = store.load(cid)
    transcript.add_user("question 2")
    store.save(cid, transcript)

    early = versions.edit(store, cid, 0, "question zero, edited").version

    assert versions.version_group(store.load(cid), 2) == []
    assert versions.version_group(store.load(early), 2) == [late, early]
    assert versions.version_group(store.load(late), 2) == [late, early]
    assert versions.version_group(store.load(cid), 0) == [early, cid]


def test_the_sidebar_lists_the_versions_of_a_conversation_once(store):
    import os

    cid = conversation(store, ["zero", "one", "two"])
    late = versions.edit(store, cid, 2, None).version
    early = versions.edit(store, cid, 0, "question zero, edited").version
    other = conversation(store, ["elsewhere"])
    forked = versions.fork(store, late, 0)  # a fork is a conversation of its own
    for age, member in enumerate([late, early, cid, other, forked]):  # oldest first
        os.utime(store.path(member), (1_000_000 + age, 1_000_000 + age))

    assert {item[0] for item in store.list()} == {cid, late, early, other, forked}  # every file
    assert [item[0] for item in store.list(every_version=False)] == [forked, other, cid]
    # the version open in the page stands for its family, in the family's place
    listed = store.list(every_version=False, showing=late)
    assert [item[0] for item in listed] == [forked, other, late]
    assert listed[2][2] == store.path(cid).stat().st_mtime  # where the family's newest is, in its day
    assert [item[0] for item in store.list(every_version=False, showing=other)] == [forked, other, cid]


def test_editing_a_message_that_is_not_there_is_refused_and_writes_nothing(store):
    cid = conversation(store, ["zero"])
    with pytest.raises(ValueError, match="no user message number 5"):
        versions.edit(store, cid, 5, "x")
    with pytest.raises(ValueError, match="no user message number 1"):
        versions.edit(store, cid, 1, "x")  # the empty 💬: that waits for the next question
    assert len(store.list()) == 1


def test_a_fork_keeps_the_turns_up_to_the_message_and_says_where_it_came_from(store):
    cid = conversation(store, ["zero", "one", "two"])
    forked = versions.fork(store, cid, 1)

    transcript = store.load(forked)
    assert [t.user for t in transcript.turns if t.user] == ["question 0", "question 1"]
    assert transcript.meta["forked_from"] == {"id": cid, "turn": 1}
    assert transcript.turns[-1].is_placeholder  # the forked answer is complete: the next message goes on
    assert "Lyon: 12 °C" in store.read(forked)
    assert [t.user for t in store.load(cid).turns if t.user] == ["question 0", "question 1", "question 2"]


GOOD = "💬: What is 2+2?\n🤖:[some model]\n\n4.\n\n💬: \n"
BAD = "💬: hello\n🤖:\n\n❓: `not json`\n"


def test_a_good_file_is_imported_as_a_new_conversation(store):
    cid = versions.import_bytes(store, GOOD.encode(), "sums.md")
    transcript = store.load(cid)
    assert transcript.turns[0].user == "What is 2+2?"
    assert transcript.meta["imported"] == {"name": "sums.md", "turns": 1}  # the turns that came with the file
    assert store.read(cid).endswith(GOOD)


def test_a_file_that_does_not_parse_is_refused_with_its_line_and_nothing_is_written(store):
    with pytest.raises(TranscriptError) as refused:
        versions.import_bytes(store, BAD.encode(), "bad.md")
    assert refused.value.line == 4 and "bad.md, line 4" in str(refused.value)
    with pytest.raises(TranscriptError) as refused:
        versions.import_bytes(store, "💬: ok\n".encode() + b"\xff", "latin.md")
    assert refused.value.line == 2
    with pytest.raises(ValueError, match="limit is 10"):
        versions.import_bytes(store, GOOD.encode(), "big.md", limit=10)
    with pytest.raises(ValueError, match="no conversation"):
        versions.import_bytes(store, b"just some notes\n", "notes.md")
    assert store.list() == []


# ---------------------------------------------------------------- replaying a turn reuses what ran

class Counter:
    def __init__(self) -> None:
        self.runs = 0


def engine_with(tmp_path: Path, backend: ScriptedBackend, counter: Counter) -> Engine:
    @tool(read_only=True)
    def lookup(city: str) -> str:
        """Looks a city up."""
        counter.runs += 1
        return f"{city}: 12 °C (run {counter.runs})"

    settings = load_settings(data_dir=tmp_path / "data", tool_mode="xml", mcp_config=tmp_path / "none.json")
    return Engine(settings, backend, ToolRegistry([lookup]))


def weather_turn(note: str) -> list[list[str]]:
    return [[format_block(ToolCall("lookup", {"city": "Lyon"}))], [f"It is mild ({note})."]]


async def play(engine: Engine, cid: str, text: str, **kwargs) -> None:
    async for _ in engine.events(engine.conversation(cid), text, **kwargs):
        pass


async def test_a_regenerated_answer_reuses_the_recorded_result_and_does_not_run_the_tool_again(tmp_path):
    counter = Counter()
    backend = ScriptedBackend(weather_turn("first") + weather_turn("second") + weather_turn("third"))
    engine = engine_with(tmp_path, backend, counter)
    cid = engine.conversation().id
    await play(engine, cid, "Weather in Lyon?")
    assert counter.runs == 1

    replay = versions.edit(engine.store, cid, 0, None)
    await play(engine, cid, replay.text, reuse=replay.reuse)

    assert counter.runs == 1  # not run again
    record = engine.store.load(cid).record(0)
    (card,) = record.calls.values()
    assert card.reused and card.status == "done" and card.result == "Lyon: 12 °C (run 1)"
    assert "It is mild (second)." in record.answer.text
    assert '"reused":true' in engine.store.read(cid)
    assert "Lyon: 12 °C (run 1)" in str(backend.calls[-1])  # the model read the recorded result

    replay = versions.edit(engine.store, cid, 0, None)
    await play(engine, cid, replay.text, reuse=[])  # the person ticked "run tools again"
    assert counter.runs == 2
    (card,) = engine.store.load(cid).record(0).calls.values()
    assert not card.reused and card.result == "Lyon: 12 °C (run 2)"
    assert len(versions.version_group(engine.store.load(cid), 0)) == 3


async def test_a_regenerated_poke_is_made_to_call_its_tool_again(tmp_path):
    counter = Counter()
    backend = ScriptedBackend(weather_turn("first") + weather_turn("second"), supports_grammar=True)
    engine = engine_with(tmp_path, backend, counter)
    cid = engine.conversation().id
    await play(engine, cid, None, poke_tool="lookup", poke_arguments={"city": "Lyon"})
    forced = backend.grammars[0]

    replay = versions.edit(engine.store, cid, 0, None)
    await play(engine, cid, replay.text, reuse=[])  # "run tools again"

    assert counter.runs == 2
    again = backend.grammars[2]  # the first answer of the regenerated turn
    assert again is not None and again.trigger is None  # one block calling the tool, from the first token
    assert again.trigger == forced.trigger and again.text == forced.text
    assert backend.grammars[3] is None or backend.grammars[3].trigger is not None  # its answer after is free


def test_only_calls_that_ran_are_reused(store):
    cid = store.new()
    transcript = store.load(cid)
    transcript.add_user("go")
    transcript.start_answer("scripted")
    refused = ToolCall("lookup", {"city": "Paris"}, id="c2")
    transcript.add_proposal(CALL)
    transcript.add_result(CALL, '{"temp": 12}', details={"seconds": 0.1})
    transcript.add_proposal(refused)
    transcript.decide("c2", "n")
    transcript.end_turn()
    store.save(cid, transcript)

    (result,) = versions.recorded_results(store.load(cid), 0)
    assert result.call.arguments == {"city": "Lyon"} and result.output == {"temp": 12}  # a formatter reads it


# ---------------------------------------------------------------- the routes refuse bad input with a reason

def test_bad_edits_forks_exports_and_imports_get_a_4xx_with_a_reason_and_write_nothing(tmp_path):
    from tests.conftest import in_process
    from tests.test_server import stream_events, turn_id

    with in_process(ScriptedBackend([["Hello."]] * 5), tmp_path / "data") as client:
        cid = str(client.get("/").url).rsplit("/", 1)[1]
        stream_events(client, turn_id(client.post("/send", data={"cid": cid, "msg": "hi"}).text))
        store = TranscriptStore(tmp_path / "data" / "conversations")
        files = sorted(store.directory.glob("*.md"))
        refusals = [
            ("/edit_message", {"cid": cid, "turn": "x", "text": "a"}, 400, "message number"),
            ("/edit_message", {"cid": cid, "turn": "7", "text": "a"}, 400, "no user message number 7"),
            ("/edit_message", {"cid": cid, "turn": "0", "text": "  "}, 400, "empty"),
            ("/edit_message", {"cid": "nope", "turn": "0", "text": "a"}, 404, "nope"),
            ("/regenerate", {"cid": cid, "turn": "1"}, 400, "no user message number 1"),
            ("/fork", {"cid": cid, "turn": "3"}, 400, "no message number 3"),
            ("/import", {"file": "not a file"}, 400, "choose a markdown file"),
        ]
        for path, form, status, reason in refusals:
            response = client.post(path, data=form)
            assert response.status_code == status, (path, form, response.text)
            assert reason in response.json()["error"]
        response = client.get("/export", params={"cid": "../secrets"})
        assert response.status_code == 404 and "not a conversation id" in response.json()["error"]
        upload = {"file": ("x.md", b"\xf0\x9f\x92\xac: hi\n\xf0\x9f\xa4\x96:\n\n\xe2\x9d\x93: `{`\n")}
        response = client.post("/import", files=upload, headers={"Accept": "application/json"})
        answer = response.json()
        assert response.status_code == 400 and answer["line"] == 4 and "x.md, line 4" in answer["error"]
        assert sorted(store.directory.glob("*.md")) == files

        response = client.get("/export", params={"cid": cid})
        assert response.headers["content-disposition"] == f'attachment; filename="{cid}.md"'
        assert response.text == store.read(cid)
