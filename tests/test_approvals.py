"""Approvals: auto / ask / deny per tool, Parley's answer keys, and memory restored from the transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidespin.approvals import Approvals, outside_places
from sidespin.tools import Tool, ToolCall
from sidespin.transcript import TranscriptRecorder, TranscriptStore, parse

DATA = Path(__file__).resolve().parent / "data"


def make_tool(name: str, *, read_only: bool = False, destructive: bool = False) -> Tool:
    return Tool(name, "", {"type": "object", "properties": {}}, lambda: None, read_only=read_only, destructive=destructive)


SEARCH = make_tool("web_search")
CLOCK = make_tool("get_time", read_only=True)
DELETE = make_tool("delete_file", destructive=True)


def test_the_web_asks_for_tools_not_marked_read_only() -> None:
    approvals = Approvals("ask")
    assert [approvals.policy_for(t) for t in (SEARCH, CLOCK, DELETE)] == ["ask", "auto", "ask"]


def test_the_terminal_runs_at_once_except_destructive_tools() -> None:
    approvals = Approvals("auto")
    assert [approvals.policy_for(t) for t in (SEARCH, CLOCK, DELETE)] == ["auto", "auto", "ask"]


def test_configuration_per_tool_wins_and_deny_denies() -> None:
    approvals = Approvals("ask", per_tool={"delete_file": "auto", "get_time": "deny"})
    assert [approvals.policy_for(t) for t in (SEARCH, CLOCK, DELETE)] == ["ask", "deny", "auto"]
    assert Approvals("deny", per_tool={"get_time": "auto"}).policy_for(CLOCK) == "auto"
    assert Approvals("deny").policy_for(CLOCK) == "deny"
    with pytest.raises(ValueError, match="auto, ask, deny"):
        Approvals("sometimes")


def test_remembered_tools_run_at_once_but_destructive_ones_still_ask() -> None:
    approvals = Approvals("ask", remembered={"web_search", "delete_file"})
    assert approvals.policy_for(SEARCH) == "auto"
    assert approvals.policy_for(DELETE) == "ask"


CALLS = [
    ToolCall("web_search", {"query": "google stock price"}, "call_1"),
    ToolCall("web_search", {"query": "microsoft stock price"}, "call_2"),
    ToolCall("get_weather", {"city": "Paris"}, "call_3"),
]


def test_ya_approves_every_proposal_without_remembering() -> None:
    approvals = Approvals()
    assert approvals.apply_choice("ya", CALLS, None) == {"call_1": True, "call_2": True, "call_3": True}
    assert approvals.remembered == set()


def test_yA_approves_every_proposal_and_remembers_each_tool() -> None:
    approvals = Approvals()
    assert approvals.apply_choice("yA", CALLS, None) == {"call_1": True, "call_2": True, "call_3": True}
    assert approvals.remembered == {"web_search", "get_weather"}
    assert approvals.policy_for(SEARCH) == "auto"


def test_yo_approves_only_the_target() -> None:
    approvals = Approvals()
    assert approvals.apply_choice("yo", CALLS, "call_2") == {"call_2": True}
    assert approvals.remembered == set()


def test_yO_approves_the_target_and_remembers_its_tool() -> None:
    approvals = Approvals()
    assert approvals.apply_choice("yO", CALLS, "call_3") == {"call_3": True}
    assert approvals.remembered == {"get_weather"}


def test_n_refuses_the_target_or_everything() -> None:
    approvals = Approvals()
    assert approvals.apply_choice("n", CALLS, "call_1") == {"call_1": False}
    assert approvals.apply_choice("n", CALLS, None) == {"call_1": False, "call_2": False, "call_3": False}
    assert approvals.remembered == set()


def test_a_wrong_key_or_target_is_explained() -> None:
    approvals = Approvals()
    with pytest.raises(ValueError) as caught:
        approvals.apply_choice("yes", CALLS, None)
    for key in ("ya", "yA", "yo", "yO", "n"):
        assert key in str(caught.value)
    with pytest.raises(ValueError, match="call_1, call_2, call_3"):
        approvals.apply_choice("yo", CALLS, None)
    with pytest.raises(ValueError, match="pending"):
        approvals.apply_choice("yO", CALLS, "call_9")


def test_the_seed_example_remembers_the_tools_it_approved_with_yA() -> None:
    transcript = parse((DATA / "seed_example.md").read_bytes().decode("utf-8"))
    approvals = Approvals.from_transcript(transcript, "ask")
    assert approvals.remembered == {"repo_search", "web_search"}
    assert approvals.policy_for(SEARCH) == "auto"


def test_a_yO_written_to_the_file_is_remembered_after_a_reload(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    conversation = store.new()
    transcript = parse((DATA / "seed_pending.md").read_bytes().decode("utf-8"))
    store.save(conversation, transcript)
    approvals = Approvals.from_transcript(store.load(conversation), "ask")
    pending = store.load(conversation).pending_calls()
    decisions = approvals.apply_choice("yo", pending, "call_1")
    recorder = TranscriptRecorder(store, conversation, "m")
    for call_id in decisions:
        recorder.record_decision(call_id, "yo")
    assert Approvals.from_transcript(store.load(conversation), "ask").policy_for(SEARCH) == "ask"

    recorder.record_decision("call_2", "yO")
    reloaded = store.load(conversation)
    assert "❓:[yO] `" in store.read(conversation)
    assert reloaded.pending_calls() == []
    assert Approvals.from_transcript(reloaded, "ask").policy_for(SEARCH) == "auto"
    with pytest.raises(ValueError, match="ya, yA, yo, yO, n"):
        recorder.record_decision("call_2", "maybe")


def test_a_call_that_changes_something_after_a_result_asks_in_the_terminal() -> None:
    call = ToolCall("web_search", {"query": "x"})
    terminal = Approvals("auto")
    assert terminal.ruling(SEARCH, call, after_result=False).policy == "auto"  # what the person asked for
    asked = terminal.ruling(SEARCH, call, after_result=True)
    assert asked.policy == "ask" and "follows a tool result" in asked.why
    assert terminal.policy_for(CLOCK, ToolCall("get_time", {}), after_result=True) == "auto"  # it only reads
    assert Approvals("auto", remembered={"web_search"}).policy_for(SEARCH, call, after_result=True) == "auto"
    assert Approvals("auto", per_tool={"web_search": "auto"}).policy_for(SEARCH, call, after_result=True) == "auto"
    assert Approvals("auto", approve_all=True).policy_for(SEARCH, call, after_result=True) == "auto"


def test_a_path_outside_the_folders_asks_whatever_else_says_run(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "out").symlink_to(tmp_path)
    reader = Tool("read_file", "", {"type": "object", "properties": {}}, lambda: None, read_only=True,
                  places=(str(folder),))
    for path in ("/etc/passwd", "../secret", f"{folder}/../secret", f"{folder}/out/secret", "file:///etc/passwd"):
        call = ToolCall("read_file", {"path": path})
        assert outside_places(reader, call.arguments) == [path]
        for approvals in (Approvals("ask"), Approvals("auto", per_tool={"read_file": "auto"}),
                          Approvals("ask", remembered={"read_file"})):
            assert approvals.policy_for(reader, call) == "ask", (path, approvals.default)
        assert Approvals("ask", approve_all=True).policy_for(reader, call) == "auto"
    for path in ("notes.txt", f"{folder}/notes.txt", f"{folder}/a/../b.txt", str(folder)):
        assert outside_places(reader, {"path": path}) == [] and Approvals("ask").policy_for(
            reader, ToolCall("read_file", {"path": path})) == "auto"
    assert outside_places(reader, {"paths": ["notes.txt", "/etc/shadow"], "pattern": "*.md"}) == ["/etc/shadow"]
