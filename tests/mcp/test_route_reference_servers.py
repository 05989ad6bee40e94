"""Turns of more than one call against the real MCP reference servers (server-filesystem, mcp-server-time):
a follow-up that edits the file just read, a chain within one turn, two calls at once. The route's decisions
are scripted (tests/route_fake.py); the servers, the registry, the rally and the files on disk are real."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.events import ToolFinished, ToolStarted
from sidespin.tooluse import Decider
from tests.route_fake import FakeLlama, WritesAnEdit
from tests.scripted import ScriptedBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from servers_setup import make_workspace, missing_servers  # noqa: E402

pytestmark = [
    pytest.mark.node,
    pytest.mark.skipif(bool(missing_servers()), reason=f"not installed: {missing_servers()} (scripts/setup-node)"),
]


class RoutedModel(ScriptedBackend):
    supports_routing = True

    def __init__(self, answers: list, llama: FakeLlama) -> None:
        super().__init__(answers)
        self.llama = llama

    async def decider(self) -> Decider:
        return Decider(self.llama)


async def play(engine: Engine, conversation, text: str) -> list:
    """One turn; a call that waits for a person (a destructive one) is approved once, as ya on the page."""
    events = [event async for event in engine.events(conversation, text)]
    if events[-1].reason == "approval":
        decision = engine.decide(conversation, "ya", None)
        events += [event async for event in engine.events(conversation, None, decisions=decision.ready)]
    return events


@pytest.fixture
def space(tmp_path: Path):
    return make_workspace(tmp_path)


def settings_of(space):
    return load_settings(space.config, environ={}, tool_mode="route", approval="auto", plugins=False)


async def test_a_follow_up_edits_the_file_just_read_and_the_decision_saw_what_was_read(space) -> None:
    todo = str(space.files / "notes" / "todo.md")
    read = "Read notes/todo.md and tell me what I need to buy."
    add = "Now add bread to that list in the same file."
    before = Path(todo).read_text()
    llama = FakeLlama({
        read: [("read_text_file", {"path": todo})],
        add: [("edit_file", {"path": todo, "edits": [{"oldText": "- rice", "newText": "- rice\n- bread"}]})],
    })
    model = RoutedModel([["Milk, eggs, spinach, coffee beans and rice."], ["Bread is on the list now."]], llama)
    async with Engine.open(settings_of(space), backend=model, approval="auto") as engine:
        conversation = engine.conversation()
        first = await play(engine, conversation, read)
        second = await play(engine, conversation, add)
    assert [e.result.ok for e in first if isinstance(e, ToolFinished)] == [True]
    assert [e.result.ok for e in second if isinstance(e, ToolFinished)] == [True]
    assert Path(todo).read_text() == before.replace("- rice", "- rice\n- bread")  # the effect on disk, not a claim
    decided = [a for a in llama.asked if a["kind"] == "render" and add in str(a["messages"])][0]
    assert "coffee beans" in str(decided["messages"])  # the follow-up's decision saw the file as it was read


async def test_an_edit_that_would_replace_a_line_to_add_one_is_written_again_to_keep_the_file(space) -> None:
    """The 0.5B, asked to add bread to the grocery list it had read, wrote `write_file` with the list over and over
    in place of the file, and another time an edit of "spinach" into "bread"."""
    todo = space.files / "notes" / "todo.md"
    read = "Read notes/todo.md for me."
    add = "Now add bread to that grocery list, in the same file."
    before = todo.read_text()
    llama = WritesAnEdit({
        read: [("read_text_file", {"path": str(todo)})],
        add: [("edit_file", {"path": str(todo), "edits": [{"oldText": "spinach", "newText": "bread"}]})],
    }, line="- spinach", adds="- bread\n- eggs")  # and on with the rest of the list, as the 0.5B did
    model = RoutedModel([["Here it is."], ["Bread is on the list now."]], llama)
    async with Engine.open(settings_of(space), backend=model, approval="auto") as engine:
        conversation = engine.conversation()
        await play(engine, conversation, read)
        second = await play(engine, conversation, add)
    assert [(e.result.call.name, e.result.ok) for e in second if isinstance(e, ToolFinished)] == [("edit_file", True)]
    assert todo.read_text() == before.replace("- spinach", "- spinach\n- bread")  # spinach kept, eggs not twice
    assert "# To do" not in llama.offered and "- milk" in llama.offered  # a list's item follows its items


async def test_a_chain_in_one_turn_lists_then_reads(space) -> None:
    notes = str(space.files / "notes")
    text = "List my notes, then read the meeting one."
    llama = FakeLlama({text: [("list_directory", {"path": notes})]},
                      after={text: [("read_text_file", {"path": f"{notes}/meeting.md"})]})
    model = RoutedModel([["The meeting notes say …"]], llama)
    async with Engine.open(settings_of(space), backend=model, approval="auto") as engine:
        events = await play(engine, engine.conversation(), text)
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [r.call.name for r in finished] == ["list_directory", "read_text_file"]
    assert "meeting.md" in str(finished[0].output) and all(r.ok for r in finished)
    assert (space.files / "notes" / "meeting.md").read_text()[:30] in str(finished[1].output)


async def test_two_times_asked_at_once_are_two_calls_running_together(space) -> None:
    text = "What time is it in Tokyo and in Paris?"
    llama = FakeLlama({text: [("get_current_time", {"timezone": "Asia/Tokyo"}),
                              ("get_current_time", {"timezone": "Europe/Paris"})]})
    model = RoutedModel([["It is evening in Tokyo and morning in Paris."]], llama)
    async with Engine.open(settings_of(space), backend=model, approval="auto") as engine:
        events = await play(engine, engine.conversation(), text)
    started = [i for i, e in enumerate(events) if isinstance(e, ToolStarted)]
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert len(started) == 2 and max(started) < min(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    assert sorted("Tokyo" in str(r.output) for r in finished) == [False, True] and all(r.ok for r in finished)
    assert any("Paris" in str(r.output) for r in finished)


async def test_a_repository_the_person_never_names_is_the_one_mcp_json_gave_the_git_server(space) -> None:
    # "my repo" names no path: where the git server works is offered with its tools, the files' folder with the
    # filesystem server's, and a call with that folder counts as known
    text = "What's the git status of my repo?"
    llama = FakeLlama({text: [("git_status", {"repo_path": str(space.repo)})]})
    model = RoutedModel([["One file is changed and not staged."]], llama)
    async with Engine.open(settings_of(space), backend=model, approval="auto") as engine:
        events = await play(engine, engine.conversation(), text)
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [(r.call.name, r.ok) for r in finished] == [("git_status", True)]
    assert "greet.py" in str(finished[0].output)  # the repository's own unstaged change
    decided = [a for a in llama.asked if a["kind"] == "render" and text in str(a["messages"])][0]
    offered = {t["function"]["name"]: t["function"]["description"] for t in decided["tools"]}
    assert offered["git_status"].endswith(f"It works in {space.repo}")  # no full stop to copy into a path
    assert all(str(space.files) not in description for name, description in offered.items() if name.startswith("git"))
    assert not any(m["role"] == "system" for m in decided["messages"])  # not a system message: see mcp/places
