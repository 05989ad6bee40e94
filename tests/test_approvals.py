"""Approvals: auto / ask / deny per tool, Parley's answer keys, and memory restored from the transcript."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidespin.approvals import Approvals
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
