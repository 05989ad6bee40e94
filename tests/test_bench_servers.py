"""bench/bench_servers.py's offline parts: the workspace it writes and the checks that judge its scripts;
and, with the servers installed (scripts/setup-node), the five real servers started from that workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from server_checks import CHECKS, Call, Played, applicable, arguments_match, fill, judge  # noqa: E402
from servers_setup import ENTRY_POINTS, NODE, SERVER_NAMES, make_workspace, missing_servers  # noqa: E402

from sidespin.config import load_settings  # noqa: E402
from sidespin.mcp import MCPManager, load_mcp_config  # noqa: E402
from sidespin.tools import ToolCall, ToolRegistry  # noqa: E402


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def test_the_workspace_names_the_five_servers_in_an_mcp_json_the_product_loads(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    configs = {config.name: config for config in load_mcp_config(space.mcp_config)}
    assert set(configs) == set(SERVER_NAMES)
    assert all(config.transport == "stdio" and not config.disabled for config in configs.values())
    # installed programs, never a download at run time
    assert all(config.command in (str(NODE), str(ENTRY_POINTS[name])) for name, config in configs.items())
    assert not any("npx" in config.command or "uvx" in config.command for config in configs.values())
    assert str(space.files) in configs["filesystem"].args
    assert configs["memory"].env == {"MEMORY_FILE_PATH": str(space.memory)}
    assert configs["git"].cwd == str(space.repo) and str(space.repo) in configs["git"].args
    assert "--local-timezone" in configs["time"].args


def test_sidespin_run_with_the_workspace_config_uses_its_data_dir_and_mcp_json(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    settings = load_settings(space.config, environ={})
    assert settings.data_dir == space.data_dir
    assert settings.mcp_config == space.mcp_config
    assert settings.plugins_folder is None  # the servers' tools alone
    assert load_settings(None, environ=space.env()).data_dir == space.data_dir


def test_the_workspace_holds_notes_a_repository_with_two_commits_and_a_memory(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    assert "- milk" in (space.files / "notes" / "todo.md").read_text()
    assert (space.files / "budget.csv").read_text().startswith("month,category,amount\n")
    assert git(space.repo, "log", "--format=%s").splitlines() == [
        "Add a farewell function and usage notes", "Initial commit"]
    assert git(space.repo, "status", "--porcelain").strip() == "M greet.py"
    names = {json.loads(line).get("name") for line in space.memory.read_text().splitlines()}
    assert {"Biscuit", "Dr. Okafor"} <= names


def test_reset_undoes_what_a_turn_did_and_keeps_the_folders(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    (space.files / "notes" / "todo.md").write_text("- bread\n")
    (space.files / "packing.txt").write_text("passport")
    git(space.repo, "branch", "feature-x")
    space.memory.write_text("")
    space.reset()
    assert "bread" not in (space.files / "notes" / "todo.md").read_text()
    assert not (space.files / "packing.txt").exists()
    assert "feature-x" not in git(space.repo, "branch")
    assert "Biscuit" in space.memory.read_text()


def test_matchers_take_exact_values_words_and_alternatives() -> None:
    assert arguments_match({"timezone": " asia/tokyo"}, {"timezone": "Asia/Tokyo"})
    assert not arguments_match({"max_count": "2"}, {"max_count": 2})  # a number must be a number
    assert arguments_match({"path": "/tmp/x/notes/todo.md"}, {"path": {"contains": ["todo.md"]}})
    assert not arguments_match({}, {"path": {"contains": ["todo.md"]}})
    assert arguments_match({"a": 25, "b": 17}, {"a": {"any_of": [17, 25]}, "b": {"any_of": [17, 25]}})
    # a list of objects is read as its JSON
    entities = [{"name": "user", "entityType": "person", "observations": ["favourite colour: green"]}]
    assert arguments_match({"entities": entities}, {"entities": {"contains": ["green"]}})
    assert applicable({"query": 1, "names": 2, "entities": 3}, ["query"]) == {"query": 1}


def test_placeholders_become_the_workspace_paths_everywhere(tmp_path: Path) -> None:
    row = {"text": "git status for {repo}", "arguments": {"repo_path": {"contains": ["{repo}"]}}, "tool": None}
    filled = fill(row, {"repo": str(tmp_path)})
    assert filled["text"] == f"git status for {tmp_path}"
    assert filled["arguments"]["repo_path"]["contains"] == [str(tmp_path)]
    assert filled["tool"] is None


def test_file_branch_and_commit_checks_read_the_disk(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    todo = {"check": "file_contains", "path": str(space.files / "notes" / "todo.md"), "text": "Bread"}
    branch = {"check": "branch_exists", "name": "feature-x"}
    commit = {"check": "last_commit", "contains": "see you soon"}
    assert [judge(c, [], space.repo)[0] for c in (todo, branch, commit)] == [False, False, False]
    assert "lacks 'Bread'" in judge(todo, [], space.repo)[1]
    with (space.files / "notes" / "todo.md").open("a") as file:
        file.write("- bread\n")
    git(space.repo, "branch", "feature-x")
    git(space.repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "Say see you soon")
    assert [judge(c, [], space.repo)[0] for c in (todo, branch, commit)] == [True, True, True]
    missing = {"check": "file_contains", "path": str(space.files / "nope.md"), "text": "x"}
    assert judge(missing, [], space.repo) == (False, "nope.md does not exist")
    replaced = {"check": "file_lacks", "path": str(space.files / "notes" / "todo.md"), "text": "spinach"}
    assert judge(replaced, [], space.repo)[0] is False  # still there
    (space.files / "notes" / "todo.md").write_text("- kale\n")
    assert judge(replaced, [], space.repo)[0] is True
    assert judge({**missing, "check": "file_lacks"}, [], space.repo)[0] is False  # no file lacks nothing


def test_call_checks_count_only_calls_that_ran_in_the_named_turn(tmp_path: Path) -> None:
    turns = [
        Played([Call("list_directory", {"path": "notes"}), Call("read_text_file", {"path": "notes/ideas.md"})],
               "Here are your ideas."),
        Played([Call("get_current_time", {"timezone": "Asia/Tokyo"}, error="server gone")], "It is noon."),
    ]
    read = {"check": "call_made", "turn": 1, "tool": ["read_text_file", "read_file"],
            "arguments": {"path": {"contains": ["ideas.md"]}}}
    assert judge(read, turns, tmp_path)[0]
    assert not judge({**read, "turn": 2}, turns, tmp_path)[0]
    failed = judge({"check": "call_made", "tool": "get_current_time"}, turns, tmp_path)
    assert not failed[0] and "failed: server gone" in failed[1]
    assert judge({"check": "calls_in_turn", "turn": 1, "at_least": 2}, turns, tmp_path)[0]
    assert not judge({"check": "calls_in_turn", "turn": 2, "at_most": 0}, turns, tmp_path)[0]
    assert judge({"check": "answer_contains", "turn": 1, "text": "IDEAS"}, turns, tmp_path)[0]
    assert not judge({"check": "answer_contains", "turn": 2, "text": "ideas"}, turns, tmp_path)[0]
    with pytest.raises(ValueError, match="unknown check"):
        judge({"check": "file_exists"}, turns, tmp_path)


def test_every_prompt_and_script_of_the_set_is_well_formed() -> None:
    prompts = [json.loads(line) for line in (BENCH / "server_eval" / "prompts.jsonl").read_text().splitlines()]
    assert len(prompts) >= 35 and 0.2 <= sum(p["tool"] is None for p in prompts) / len(prompts) <= 0.3
    assert all(set(p) == {"text", "tool", "arguments"} for p in prompts)
    scripts = [json.loads(line) for line in (BENCH / "server_eval" / "scripts.jsonl").read_text().splitlines()]
    assert len({s["name"] for s in scripts}) == len(scripts) >= 8
    assert all(check["check"] in CHECKS for s in scripts for check in s["checks"])


@pytest.mark.node
@pytest.mark.skipif(bool(missing_servers()), reason="MCP servers missing: run scripts/setup-node")
async def test_the_five_real_servers_start_from_the_workspace_and_list_their_tools(tmp_path: Path) -> None:
    space = make_workspace(tmp_path)
    async with MCPManager(load_mcp_config(space.mcp_config), strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        sources = {tool.source for tool in registry}
        assert sources == {f"mcp:{name}" for name in SERVER_NAMES}
        assert len(registry) >= 50
        assert {"read_text_file", "edit_file", "search_nodes", "git_log", "convert_time", "echo"} <= set(
            registry.names())

        # the paths a person states: relative to the files folder, "." for the repository (the git server runs in it)
        todo = await registry.execute(ToolCall("read_text_file", {"path": "notes/todo.md"}))
        assert "coffee beans" in todo.output
        status = await registry.execute(ToolCall("git_status", {"repo_path": "."}))
        assert "greet.py" in status.output
        dog = await registry.execute(ToolCall("search_nodes", {"query": "Biscuit"}))
        assert "beagle" in dog.text()
        now = await registry.execute(ToolCall("get_current_time", {"timezone": "Europe/Berlin"}))
        assert "Europe/Berlin" in now.text()


@pytest.mark.node
@pytest.mark.skipif(bool(missing_servers()), reason="MCP servers missing: run scripts/setup-node")
async def test_the_bench_plays_a_held_call_to_its_end_by_approving_it(tmp_path: Path) -> None:
    from bench_servers import play

    from sidespin.engine import Engine
    from tests.scripted import ScriptedBackend

    space = make_workspace(tmp_path)
    lines = [{"oldText": "- rice", "newText": "- rice\n- bread"}]
    edit = ToolCall("edit_file", {"path": "notes/todo.md", "edits": lines})
    backend = ScriptedBackend([[edit], ["Bread is on the list."]], supports_tools=True)
    settings = load_settings(space.config, environ={})
    async with Engine.open(settings, backend=backend, approval="auto") as engine:
        turn = await play(engine, engine.conversation(), "Add bread to my grocery list in notes/todo.md.")
    assert turn.approvals == 1  # edit_file is destructive: held for a person, approved by the bench
    assert turn.first == "edit_file" and [call.tool for call in turn.calls] == ["edit_file"]
    assert turn.calls[0].error is None and turn.answer == "Bread is on the list." and turn.end == "done"
    todo = {"check": "file_contains", "path": str(space.files / "notes" / "todo.md"), "text": "bread"}
    assert judge(todo, [turn.played()], space.repo)[0]
