"""bench/bench_corpus.py's judge: checks on disk, in the database, in the memory file and in the answer, and claims
the results do not back; then, with the corpus's servers installed (bench/corpus/setup), turns played on the dev
half's real servers by a scripted model and judged as the bench judges them."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
CORPUS = BENCH / "corpus"
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(CORPUS))

from judge import CHECKS, Call, Played, claim, decision_right, judge  # noqa: E402
from workspace import (HALVES, docx_text, load_servers, make_workspace, missing_programs, serving,  # noqa: E402
                       xlsx_cells)

from sidespin.tools import ToolCall  # noqa: E402

READ_ONLY = {"read_query", "search_nodes", "read_text_file"}


def rows(half: str, name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / half / name).read_text(encoding="utf-8").splitlines() if line]


# --- the corpus's files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("half", HALVES)
def test_each_half_has_forty_prompts_a_quarter_of_them_needing_no_tool_in_four_languages(half: str) -> None:
    prompts = rows(half, "prompts.jsonl")
    servers = {server.name for server in load_servers(half)}
    assert len(prompts) >= 40 and len({p["id"] for p in prompts}) == len(prompts)
    no_tool = [p for p in prompts if p["tool"] is None]
    assert 0.2 <= len(no_tool) / len(prompts) <= 0.35
    assert {"near-miss", "beyond", "chat", "knowledge"} <= {p["why"] for p in no_tool}
    assert {"en", "fr", "de", "es"} <= {p["lang"] for p in prompts}
    assert all(p["server"] in servers for p in prompts if p["tool"])
    assert all(p.get("near", next(iter(servers))) in servers for p in no_tool)


@pytest.mark.parametrize("half", HALVES)
def test_each_half_has_ten_scripts_judged_by_known_checks(half: str) -> None:
    scripts = rows(half, "scripts.jsonl")
    assert len(scripts) >= 10 and len({s["name"] for s in scripts}) == len(scripts)
    assert all(check["check"] in CHECKS for s in scripts for check in s["checks"])
    covers = {s["covers"] for s in scripts}
    wanted = {"an edit of a value in a file just read", "a count from a table", "an insert then a check",
              "a query's result written to a file", "two things at once", "remember, then recall in a new conversation",
              "a calculation, then a follow-up", "list, then read", "a request no tool can do"}
    kinds = {server.kind for server in load_servers(half)}
    if "git" in kinds:
        wanted.add("write, then stage, then commit")
    if "notes" in kinds and half == "dev2":
        wanted.add("a to-do added, then listed")
    if half == "dev3":
        wanted |= {"a spreadsheet cell changed, then a sum over the sheet", "a spreadsheet row added, then read back"}
    assert wanted <= covers
    assert any(isinstance(m, dict) and m.get("new_conversation") for s in scripts for m in s["messages"])


def test_the_halves_pair_kinds_with_different_servers_and_the_blind_half_has_no_reference_server() -> None:
    dev, blind = load_servers("dev"), load_servers("blind")
    assert len(dev) + len(blind) >= 12
    assert not {s.package for s in dev} & {s.package for s in blind}
    assert all(s.registry != "reference" for s in blind)
    paired = {s.kind for s in dev} & {s.kind for s in blind}
    assert {"files", "memory", "git", "time", "sql", "calculator", "notes"} <= paired
    assert any(s.http for s in dev) and any(s.http for s in blind)  # a remote server in each half


def test_the_second_dev_half_uses_servers_of_neither_other_half_for_each_kind() -> None:
    dev2 = load_servers("dev2")
    others = {s.package for s in load_servers("dev")} | {s.package for s in load_servers("blind")}
    assert not {s.package for s in dev2} & others
    assert {"files", "memory", "sql", "calculator", "notes"} <= {s.kind for s in dev2}
    assert all(s.registry in ("npm", "pypi") and s.licence in ("MIT", "Apache-2.0", "BSD-3-Clause") for s in dev2)


def test_the_third_dev_half_uses_servers_of_no_other_half_for_each_kind() -> None:
    dev3 = load_servers("dev3")
    others = {s.package for half in ("dev", "blind", "dev2") for s in load_servers(half)}
    others |= {"@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem",
               "@modelcontextprotocol/server-memory", "mcp-server-git", "mcp-server-time"}  # bench_servers.py's
    assert not {s.package for s in dev3} & others
    kinds = {s.kind for s in dev3}
    assert {"documents", "sql", "files", "git"} <= kinds
    assert kinds & {"time", "calculator"} and kinds & {"memory", "notes"}
    assert all(s.registry in ("npm", "pypi") and s.licence in ("MIT", "Apache-2.0", "BSD-3-Clause") for s in dev3)


# --- the judge, offline ----------------------------------------------------------------------------------


def test_an_action_reported_with_no_changing_call_behind_it_is_a_claim_in_four_languages() -> None:
    for answer in ("I've added Nadia to the customers table.", "The note has been saved.",
                   "J'ai ajouté le produit.", "Ich habe die Datei gespeichert.", "He guardado el archivo."):
        assert claim(answer, [], READ_ONLY, backed_before=False), answer
    # a read does not back a write; a successful write does; a failed write does not
    read = [Call("read_query", {"query": "SELECT 1"})]
    assert claim("I've added Nadia.", read, READ_ONLY, backed_before=False) == "I've added"
    assert claim("I've added Nadia.", [Call("write_query", {"query": "INSERT ..."})], READ_ONLY, False) is None
    failed = [Call("write_query", {"query": "INSERT ..."}, error="no such table")]
    assert claim("Nadia has been added.", failed, READ_ONLY, backed_before=False)


def test_content_told_with_no_result_behind_it_is_a_claim_and_a_plain_answer_is_not() -> None:
    assert claim("The file contains three recipes.", [], READ_ONLY, backed_before=False)
    assert claim("There are 6 customers in the database.", [], READ_ONLY, backed_before=False)
    assert claim("The orders table has the following columns: order_id, ...", [], READ_ONLY, backed_before=False)
    assert claim("La table contient trois colonnes.", [], READ_ONLY, backed_before=False)
    assert claim("The file contains three recipes.", [Call("read_text_file", {})], READ_ONLY, False) is None
    assert claim("The file contains three recipes.", [], READ_ONLY, backed_before=True) is None  # an earlier result
    for answer in ("Canberra is the capital of Australia.", "I can't order a taxi: no tool here does that.",
                   "Sure! Here is a haiku about autumn rain."):
        assert claim(answer, [], READ_ONLY, backed_before=False) is None, answer


def test_a_decision_is_the_first_call_a_qualified_name_counts_and_an_error_decides_nothing() -> None:
    assert decision_right("read_query", ["read_query"], "done")
    assert decision_right("sqlite__read_query", ["read_query"], "done")
    assert not decision_right("write_query", ["read_query"], "done")
    assert decision_right(None, None, "done") and not decision_right("calculate", None, "done")
    assert not decision_right(None, None, "error")


def test_the_checks_read_the_database_the_commit_the_memory_and_the_answer(tmp_path: Path) -> None:
    space = make_workspace(tmp_path, "dev")
    places = space.places()
    count = {"check": "db_value", "sql": "SELECT count(*) FROM customers WHERE city = 'Oslo'", "equals": 2}
    assert judge(count, [], places)[0]
    with sqlite3.connect(space.database) as db:
        db.execute("INSERT INTO customers (name, city) VALUES ('Nadia Haddou', 'Oslo')")
    ok, reason = judge(count, [], places)
    assert not ok and "gave 3" in reason

    committed = {"check": "head_file_contains", "path": "TODO.md", "text": "--days"}
    assert judge(committed, [], places) == (False, "TODO.md is not in HEAD's commit")
    (space.repo / "TODO.md").write_text("- add a --days option\n")
    subprocess.run(["git", "add", "TODO.md"], cwd=space.repo, check=True)
    subprocess.run(["git", "commit", "-qm", "Add a to-do list"], cwd=space.repo, check=True)
    assert judge(committed, [], places)[0]
    assert judge({"check": "last_commit", "contains": "to-do list"}, [], places)[0]

    memory = {"check": "file_contains", "path": places["memory"], "text": "locker 218"}
    assert not judge(memory, [], places)[0]
    with space.memory.open("a") as graph:
        graph.write('\n{"type": "entity", "name": "gym", "entityType": "place", "observations": ["locker 218"]}')
    assert judge(memory, [], places)[0]
    either = {"check": "file_contains", "path": places["memory"], "any": ["locker no. 218", "locker 218"]}
    assert judge(either, [], places)[0] and not judge({**either, "any": ["locker 219"]}, [], places)[0]

    turns = [Played([], "It is 4,200."), Played([Call("calculate", {"expression": "350*12"})], "4200")]
    assert judge({"check": "answer_contains", "turn": 1, "any": ["4200", "4,200"]}, turns, places)[0]
    assert not judge({"check": "answer_contains", "turn": 1, "any": ["4300"]}, turns, places)[0]
    assert judge({"check": "call_made", "turn": 2, "tool": "calculate"}, turns, places)[0]
    assert judge({"check": "no_claim", "turn": 1}, turns, places)[0]
    claimed = [Played([], "I've saved the file.")]
    assert not judge({"check": "no_claim", "turn": 1}, claimed, places, READ_ONLY)[0]

    space.reset()  # the world comes back, in place
    assert judge(count, [], places)[0] and not judge(committed, [], places)[0]
    assert "218" not in space.memory.read_text()


@pytest.mark.skipif(bool(missing_programs("dev2")), reason="corpus servers missing: run bench/corpus/setup")
def test_the_second_dev_half_resets_its_knowledge_base_and_its_notes_and_to_dos(tmp_path: Path) -> None:
    space = make_workspace(tmp_path, "dev2")
    places = space.places()
    kb = {"check": "db_value", "database": places["kb"],
          "sql": "SELECT count(*) FROM entries WHERE data LIKE '%30917%'", "equals": 1}
    todos = {"check": "db_value", "database": places["toolkit"] + "/data.db",
             "sql": "SELECT count(*) FROM todos WHERE status = 'open'", "equals": 4}
    assert judge(kb, [], places)[0] and judge(todos, [], places)[0]
    assert judge({"check": "db_value", "sql": "SELECT count(*) FROM loans", "equals": 12}, [], places)[0]
    with sqlite3.connect(space.kb) as db:
        db.execute("DELETE FROM entries")
    with sqlite3.connect(space.toolkit / "data.db") as db:
        db.execute("UPDATE todos SET status = 'done'")
    note = space.toolkit / "notes" / "_global" / "cabin-wifi.md"
    note.write_text("gone")
    assert not judge(kb, [], places)[0] and not judge(todos, [], places)[0]
    missing = {"check": "db_value", "database": str(tmp_path / "none.db"), "sql": "SELECT 1", "equals": 1}
    assert judge(missing, [], places) == (False, "none.db does not exist")

    space.reset()
    assert judge(kb, [], places)[0] and judge(todos, [], places)[0]
    assert "moose-lake-42" in note.read_text() and note.read_text().startswith("---\ntags: [\"travel\"]")
    assert "shop" in json.loads(space.database_metadata.read_text())["databases"]  # keyed by the file's stem


@pytest.mark.skipif(bool(missing_programs("dev3")), reason="corpus servers missing: run bench/corpus/setup")
def test_the_third_dev_half_resets_its_spreadsheets_its_database_and_its_memory_store(tmp_path: Path) -> None:
    space = make_workspace(tmp_path, "dev3")
    places = space.places()
    assert space.database.name == "music-school.db"
    lavender = {"check": "xlsx_cell", "path": places["documents"] + "/plant-sale.xlsx", "sheet": "Plants", "cell": "C3",
                "equals": 6}
    students = {"check": "db_value", "sql": "SELECT count(*) FROM students", "equals": 14}
    bike = {"check": "db_value", "database": places["agent_memory"],
            "sql": "SELECT count(*) FROM memories WHERE value LIKE '%3917%'", "equals": 1}
    assert judge(lavender, [], places)[0] and judge(students, [], places)[0] and judge(bike, [], places)[0]
    assert xlsx_cells(space.documents / "choir-rota.xlsx")["Rota"]["B4"] == "Ruth"
    assert judge({"check": "xlsx_contains", "path": places["documents"] + "/choir-rota.xlsx", "text": "flapjacks"},
                 [], places)[0]
    (space.documents / "plant-sale.xlsx").unlink()
    with sqlite3.connect(space.database) as db:
        db.execute("DELETE FROM students WHERE id > 10")
    with sqlite3.connect(space.agent_memory) as db:
        db.execute("DELETE FROM memories")
    assert not any(judge(check, [], places)[0] for check in (lavender, students, bike))

    space.reset()
    assert judge(lavender, [], places)[0] and judge(students, [], places)[0] and judge(bike, [], places)[0]


def test_a_word_document_is_read_from_its_xml(tmp_path: Path) -> None:
    path = tmp_path / "letter.docx"
    body = ('<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>I apply to Riverside</w:t></w:r>'
            '<w:r><w:t xml:space="preserve"> Library.</w:t></w:r></w:p><w:p><w:r><w:t>Yours</w:t></w:r></w:p>'
            '</w:body></w:document>')
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("word/document.xml", body)
    assert docx_text(path) == "I apply to Riverside Library.\nYours"
    places = {"repo": str(tmp_path)}
    assert judge({"check": "docx_contains", "path": str(path), "text": "riverside library"}, [], places)[0]
    assert judge({"check": "docx_lacks", "path": str(path), "text": "Westbrook"}, [], places)[0]
    assert not judge({"check": "docx_contains", "path": str(tmp_path / "none.docx"), "text": "x"}, [], places)[0]


# --- on the dev half's real servers, with a scripted model -------------------------------------------------


@pytest.mark.node
@pytest.mark.skipif(bool(missing_programs("dev")), reason="corpus servers missing: run bench/corpus/setup")
async def test_turns_on_the_dev_servers_are_judged_by_their_effects_and_claims(tmp_path: Path) -> None:
    from bench_corpus import breakdown, run_engine, summary

    from tests.scripted import ScriptedBackend

    space = make_workspace(tmp_path, "dev")
    insert = "INSERT INTO customers (name, city, email) VALUES ('Nadia Haddou', 'Marseille', 'nadia@example.fr')"
    entity = {"name": "gym locker", "entityType": "fact", "observations": ["the user's gym locker is number 218"]}
    backend = ScriptedBackend([
        ["Hello!"],  # the unscored first turn
        [ToolCall("write_query", {"query": insert})], ["Nadia Haddou has been added."],  # right, backed
        ["I've added Nadia Haddou to the customers table."],  # no call: a miss and a claim
        ["Canberra."],  # rightly no call
        # the script: remember, then recall in a new conversation
        [ToolCall("create_entities", {"entities": [entity]})], ["I'll remember that."],
        [ToolCall("search_nodes", {"query": "locker"})], ["Your locker is number 218."],
    ], supports_tools=True)
    prompts = [
        {"id": "t1", "text": "Add a customer: Nadia Haddou from Marseille", "server": "sqlite", "tool": ["write_query"],
         "arguments": {"query": {"contains": ["insert", "nadia haddou"]}}},
        {"id": "t2", "text": "Add a customer: Nadia Haddou from Marseille", "server": "sqlite", "tool": ["write_query"]},
        {"id": "t3", "text": "What is the capital of Australia?", "server": None, "tool": None, "why": "knowledge"},
    ]
    script = {"name": "locker", "covers": "remember", "messages": [
        "Remember that my gym locker is number 218.", {"text": "What's my locker number?", "new_conversation": True}],
        "checks": [{"check": "call_made", "turn": 1, "tool": ["create_entities", "add_observations"]},
                   {"check": "file_contains", "path": "{memory}", "text": "218"},
                   {"check": "call_made", "turn": 2, "tool": ["search_nodes", "open_nodes", "read_graph"]},
                   {"check": "answer_contains", "turn": 2, "text": "218"}]}
    kinds = {server.name: server.kind for server in space.servers}
    args = SimpleNamespace(half="dev", show_misses=False, model="scripted", threads=1, warm=False)
    with serving(space):
        outcomes, results = await run_engine(args, space, prompts, [script], kinds, backend=backend)

    right, missed, chat = outcomes
    assert right.right and right.arguments_right is True and right.claim is None
    assert [c.tool for c in right.turn.calls] == ["write_query"] and right.turn.calls[0].error is None
    assert not missed.right and missed.claim == "I've added"
    assert chat.right and chat.kind == "none"
    assert results[0].passed, results[0].checks
    assert "218" in space.memory.read_text()  # the script's effect, left on disk after its last check

    total = summary(outcomes, results)
    assert total["tool_prompts_right"] == [1, 2] and total["no_tool_prompts_right"] == [1, 1]
    assert total["arguments_right"] == [1, 1] and total["scripts_passed"] == [1, 1] and total["claims"] == 1
    assert breakdown(outcomes, results, "kind")["sql"]["tool_prompts_right"] == [1, 2]


@pytest.mark.node
@pytest.mark.parametrize("half", HALVES)
async def test_every_server_of_a_half_starts_offline_and_lists_its_tools(half: str, tmp_path: Path) -> None:
    if missing_programs(half):
        pytest.skip("corpus servers missing: run bench/corpus/setup")
    from sidespin.mcp import MCPManager, load_mcp_config
    from sidespin.tools import ToolRegistry

    space = make_workspace(tmp_path, half)
    with serving(space):
        async with MCPManager(load_mcp_config(space.mcp_config), strict=True) as manager:
            registry = ToolRegistry()
            manager.register_into(registry)
            counts = {name: sum(t.source == f"mcp:{name}" for t in registry) for name in (s.name for s in space.servers)}
    assert all(counts.values()), counts
    if half == "blind":
        assert max(counts.values()) >= 30  # the Word server: a server with many tools


@pytest.mark.node
@pytest.mark.skipif(bool(missing_programs("dev")), reason="corpus servers missing: run bench/corpus/setup")
async def test_the_black_box_reads_back_from_a_transcript_the_calls_and_answers_the_engine_played(
        tmp_path: Path) -> None:
    from bench_corpus import _turns_from_transcript
    from bench_servers import play

    from sidespin.config import load_settings
    from sidespin.engine import Engine
    from tests.scripted import ScriptedBackend

    space = make_workspace(tmp_path, "dev")
    backend = ScriptedBackend([
        [ToolCall("calculate", {"expression": "2450/7"})], ["It is 350."],
        [ToolCall("calculate", {"expression": "350*12"})], ["That makes 4200."],
    ], supports_tools=True)
    with serving(space):
        async with Engine.open(load_settings(space.config, environ={}), backend=backend, approval="auto") as engine:
            conversation = engine.conversation()
            played = [await play(engine, conversation, text) for text in ("2450 / 7?", "Times 12?")]
            transcript = engine.transcript_path(conversation)
    read = _turns_from_transcript(Path(transcript), ["2450 / 7?", "Times 12?"])
    assert [t.text for t in read] == ["2450 / 7?", "Times 12?"]
    assert [t.answer for t in read] == [t.answer.strip() for t in played] == ["It is 350.", "That makes 4200."]
    assert [(c.tool, c.arguments, c.error) for t in read for c in t.calls] == [
        ("calculate", {"expression": "2450/7"}, None), ("calculate", {"expression": "350*12"}, None)]
    assert read[1].first == "calculate" and read[1].first_arguments == {"expression": "350*12"}


def test_general_knowledge_about_tables_and_files_is_no_claim() -> None:
    for answer in ("An index lets the database find rows without reading the whole table; the table has to be "
                   "kept in sync with it.", "A CSV file has one record per line."):
        assert claim(answer, [], READ_ONLY, backed_before=False) is None, answer


@pytest.mark.node
@pytest.mark.skipif(bool(missing_programs("dev")), reason="corpus servers missing: run bench/corpus/setup")
def test_the_black_box_reads_sidespin_ask_json_and_a_piped_sidespin_chat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio
    import io

    import sidespin.cli
    from bench_corpus import _tool_table, _turn_from_ask, _turns_from_transcript
    from workspace import approve_every_tool

    from sidespin.cli import build_parser
    from sidespin.terminal import run_chat
    from tests.scripted import ScriptedBackend

    space = make_workspace(tmp_path, "dev")
    insert = "INSERT INTO products (name, price, stock) VALUES ('travel grinder', 32, 10)"
    with serving(space):
        parameters, read_only = asyncio.run(_tool_table(space))
        assert "read_query" in read_only or "read_query" in parameters
        approve_every_tool(space, sorted(parameters))
        asked = ScriptedBackend([[ToolCall("write_query", {"query": insert})], ["Added."]], supports_tools=True)
        monkeypatch.setattr(sidespin.cli, "_backend_for", lambda args, settings: asked)
        sidespin.cli.cmd_ask(build_parser().parse_args(["--config", str(space.config), "ask", "--json", "--yes",
                                                        "Add a travel grinder at 32, ten in stock."]))
        turn = _turn_from_ask("Add a travel grinder", json.loads(capsys.readouterr().out))
        assert turn.first == "write_query" and turn.first_arguments == {"query": insert}
        assert [(c.tool, c.error) for c in turn.calls] == [("write_query", None)] and turn.answer == "Added."

        chatted = ScriptedBackend([[ToolCall("list_notes", {})], ["You have three notes."], ["Bye for now."]],
                                  supports_tools=True)
        transcript = tmp_path / "chat.md"
        monkeypatch.setattr(sys, "stdin", io.StringIO("Which notes do I have?\nThanks!\nbye\n"))
        args = build_parser().parse_args(["--config", str(space.config), "chat", "--transcript", str(transcript)])
        assert run_chat(args, backend=chatted) == 0
    read = _turns_from_transcript(transcript, ["Which notes do I have?", "Thanks!"])
    assert [t.text for t in read] == ["Which notes do I have?", "Thanks!"]
    assert [c.tool for c in read[0].calls] == ["list_notes"] and read[0].calls[0].error is None
    assert read[0].answer == "You have three notes." and read[1].answer == "Bye for now." and not read[1].calls
    from judge import judge as judge_check

    assert judge_check({"check": "db_value", "sql": "SELECT stock FROM products WHERE name = 'travel grinder'",
                        "equals": 10}, [], space.places())[0]
