"""The shapes: rules for one kind of server, each found from what the tools declare, each switched off by config."""

from __future__ import annotations

import dataclasses
import sqlite3
import json
from typing import Any

import pytest

from sidespin.errors import ConfigError
from sidespin.tools import Tool
from sidespin.tooluse import Decider
from sidespin.tooluse.relevance import Embedder, rank
from sidespin.tooluse.shapes import check_switches, shapes_for
from sidespin.tooluse.shapes.editor import Editor, replacing_pair
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.decision import Decision
from sidespin.tooluse.shapes.folders import Folders, files_named, folders_named
from sidespin.tooluse.shapes.memory import asks_memory, stores
from sidespin.tooluse.shapes.timezones import as_zone, zones_named
from sidespin.tooluse.shapes.calculator import Calculator, asks_calculation, calculates, operation_stated
from tests.route_fake import FakeLlama, WritesAnEdit
from tests.tooluse.tools import ADD_NOTE, EVALUATE, FORECAST, called, tool

HOME = "/srv/docs"
TEXT = {"type": "string"}
CAT = tool("cat", "Print a document's text.", {"file": TEXT}, ["file"], source="mcp:docs", read_only=True,
           places=(HOME,))
SUBSTITUTE = tool("substitute", "Replace one piece of a document's text with another.",
                  {"file": TEXT, "old_str": TEXT, "new_str": TEXT}, ["file", "old_str", "new_str"],
                  source="mcp:docs", places=(HOME,))
OVERWRITE = tool("overwrite", "Write a document whole.", {"file": TEXT, "text": TEXT}, ["file", "text"],
                 source="mcp:docs", places=(HOME,))
DOCS = [CAT, SUBSTITUTE, OVERWRITE]
PLAN = "# Trip\n\nPacking:\n- passport\n- charger\n\nCrew: Ana, Bo, Cy\n"


def many_tools(source: str, count: int) -> list[Tool]:
    return [tool(f"job_{i}", f"Run job number {i} of the queue.", {"x": TEXT}, ["x"], source=source)
            for i in range(count)]


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def read_then(text: str, content: str = PLAN) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "cat", "arguments": json.dumps(
        {"file": f"{HOME}/trip.md"})}}
    return [*user("Show me trip.md"), {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": content}, {"role": "assistant", "content": "Here."},
            *user(text)]


async def decided(model: FakeLlama, messages: list[dict], tools: list[Tool], **options) -> list[tuple]:
    return [(c.name, c.arguments) for c in await Decider(model, **options).decide(messages, tools)]


def test_each_shape_applies_where_the_tools_declare_its_form_and_can_be_switched_off() -> None:
    assert [s.id for s in shapes_for(DOCS)] == ["folders", "editor"]
    assert [s.id for s in shapes_for([EVALUATE])] == ["calculator"]
    assert [s.id for s in shapes_for([FORECAST])] == []
    clock = tool("clock", "Time now.", {"tz": {"type": "string", "description": "IANA name, e.g. 'Asia/Tokyo'"}},
                 ["tz"])
    assert [s.id for s in shapes_for([clock])] == ["timezones"]
    assert [s.id for s in shapes_for(DOCS, {"editor": False})] == ["folders"]
    with pytest.raises(ConfigError, match="no shape is named 'edits'"):
        check_switches({"edits": False})


# --- editor ---------------------------------------------------------------------------------------------------


ADD = "Add a toothbrush to the packing list in that file."


def test_a_replacing_tool_is_one_with_an_old_and_a_new_text_at_the_top_level_or_in_a_list() -> None:
    assert replacing_pair(SUBSTITUTE) == (None, "old_str", "new_str") and replacing_pair(OVERWRITE) is None
    nested = tool("patch", "Patch.", {"changes": {"type": "array", "items": {"type": "object", "properties": {
        "oldText": TEXT, "newText": TEXT}}}}, ["changes"])
    assert replacing_pair(nested) == ("changes", "oldText", "newText")


async def test_an_addition_to_a_file_read_goes_to_the_replacing_tool_and_keeps_the_line_it_replaced() -> None:
    wants = [("overwrite", {"file": f"{HOME}/trip.md", "text": "toothbrush"}),
             ("substitute", {"file": f"{HOME}/trip.md", "old_str": "passport", "new_str": "toothbrush"})]
    model = WritesAnEdit({ADD: wants}, line="- charger", adds="- toothbrush")
    assert await decided(model, read_then(ADD), DOCS) == [
        ("substitute", {"file": f"{HOME}/trip.md", "old_str": "- charger", "new_str": "- charger\n- toothbrush"})]
    assert model.offered == ["- passport", "- charger", "Crew: Ana, Bo, Cy"]  # the list's items, the line listing
    switched = WritesAnEdit({ADD: wants}, line="- charger", adds="- toothbrush")
    assert (await decided(switched, read_then(ADD), DOCS, shapes={"editor": False}))[0][0] == "overwrite"


async def test_an_edit_whose_new_text_is_its_old_is_not_made_and_the_next_name_is_tried() -> None:
    """`editor.no_change`: "Tidy that file." after a read; the model's replacing call would change nothing."""
    text = "Tidy that file."
    same = {"file": f"{HOME}/trip.md", "old_str": "- passport", "new_str": "- passport"}
    model = FakeLlama({text: [("substitute", same), ("cat", {"file": f"{HOME}/trip.md"})]},
                      name_tokens={"": [('substitute",', 0.7), ('cat",', 0.2), ('overwrite",', 0.1)]})
    assert await decided(model, read_then(text), DOCS) == [("cat", {"file": f"{HOME}/trip.md"})]
    changed = {**same, "new_str": "- passport (valid)"}
    model = FakeLlama({text: [("substitute", changed)]}, name_tokens={"": [('substitute",', 0.9), ('cat",', 0.1)]})
    assert await decided(model, read_then(text), DOCS) == [("substitute", changed)]


async def test_an_item_added_to_a_line_that_lists_goes_at_its_end_and_an_edit_adding_nothing_is_not_made() -> None:
    crew = "Add Dee to the crew in that file."
    wants = [("substitute", {"file": f"{HOME}/trip.md", "old_str": "Crew: Ana, Bo, Cy", "new_str": "Crew: Dee"})]
    model = WritesAnEdit({crew: wants}, line="Crew: Ana, Bo, Cy", adds="Dee")
    assert await decided(model, read_then(crew), DOCS) == [
        ("substitute", {"file": f"{HOME}/trip.md", "old_str": "Crew: Ana, Bo, Cy", "new_str": "Crew: Ana, Bo, Cy, Dee"})]
    nothing = WritesAnEdit({ADD: [("substitute", {"file": f"{HOME}/trip.md", "old_str": "x", "new_str": "y"})]},
                           line="- charger", adds="- charger")
    assert await decided(nothing, read_then(ADD), DOCS) == []


async def test_a_change_between_two_quoted_texts_goes_from_one_to_the_other() -> None:
    change = f'In {HOME}/trip.md, change "Crew: Ana" to "Crew: Eve".'
    model = FakeLlama({change: [("substitute", {"file": f"{HOME}/trip.md", "old_str": "old", "new_str": "new"})]})
    assert await decided(model, user(change), DOCS) == [
        ("substitute", {"file": f"{HOME}/trip.md", "old_str": "Crew: Ana", "new_str": "Crew: Eve"})]


class RewritesTheFile(FakeLlama):
    """A model that, asked to write a file's text again under a grammar of its lines, writes `text`."""

    def __init__(self, *args: Any, text: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.text, self.grammars = text, []

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None,
                       max_tokens: int) -> str:
        if grammar is not None and "added )?" in grammar:
            self.grammars.append(grammar)
            return json.dumps(self.text)
        return await super().complete(prompt, grammar, json_schema, max_tokens)


def _cabinet(home: str) -> list[Tool]:
    """A file server in no bench that writes whole files only, with a switch to add at the end."""
    return [tool("peek", "Show a file's text.", {"file": TEXT}, ["file"], source="mcp:cabinet", read_only=True,
                 places=(home,)),
            tool("put", "Write a file.", {"file": TEXT, "body": TEXT, "append": {"type": "boolean"}}, ["file", "body"],
                 source="mcp:cabinet", places=(home,), destructive=True)]


@pytest.mark.parametrize("writes, rewrites, wanted", [
    ("keep_days = 30", "[backup]\nkeep_days = 30\nhost = nas\n", "[backup]\nkeep_days = 30\nhost = nas\n"),
    ("[backup]\nkeep_days = 30\nhost = nas\n", "never asked", "[backup]\nkeep_days = 30\nhost = nas\n"),
    ("keep_days = 30", "[backup]\nkeep_days = 30\nhost = cloud\n", None),  # a line no one asked for changed
])
async def test_a_whole_file_written_after_it_was_read_keeps_its_lines_but_the_ones_asked(tmp_path, writes, rewrites,
                                                                                         wanted) -> None:
    """`editor.whole_file`: a one-line `body` would have erased the file; written again under a grammar of its lines
    it keeps them; a rewrite changing a line the message does not speak of is refused."""
    (tmp_path / "backup.ini").write_text("[backup]\nkeep_days = 14\nhost = nas\n")
    path, text = str(tmp_path / "backup.ini"), "Keep 30 days instead."
    read = [*user("Open backup.ini"), *called("c1", "peek", json.dumps({"file": path}),
                                               "[backup]\nkeep_days = 14\nhost = nas\n"),
            {"role": "assistant", "content": "It keeps 14 days."}, *user(text)]
    model = RewritesTheFile({text: [("put", {"file": path, "body": writes})]}, text=rewrites)
    calls = await decided(model, read, _cabinet(str(tmp_path)))
    assert calls == ([("put", {"file": path, "body": wanted})] if wanted else [])
    assert len(model.grammars) == (writes != wanted or wanted is None)


async def test_a_change_of_the_file_read_before_is_written_to_that_file_whatever_path_the_model_wrote(tmp_path):
    """`folders.file_before`: "/mnt/nas", a path the file's own text says, is not the file the change is of."""
    (tmp_path / "backup.ini").write_text("[backup]\ntarget = /mnt/nas\nkeep_days = 14\n")
    path, text = str(tmp_path / "backup.ini"), "Keep 30 days instead."
    read = [*user("Open backup.ini"), *called("c1", "peek", json.dumps({"file": path, "mode": "text"}),
                                               "[backup]\ntarget = /mnt/nas\nkeep_days = 14\n"),
            {"role": "assistant", "content": "It keeps 14 days."}, *user(text)]
    whole = "[backup]\ntarget = /mnt/nas\nkeep_days = 30\n"
    model = RewritesTheFile({text: [("put", {"file": "/mnt/nas", "body": whole})]}, text=whole)
    assert await decided(model, read, _cabinet(str(tmp_path))) == [("put", {"file": path, "body": whole})]
    read[2]["content"] = json.dumps({"path": path, "content": "[backup]\ntarget = /mnt/nas\nkeep_days = 14\n"})
    model = RewritesTheFile({text: [("put", {"file": path, "body": "keep_days = 30"})]}, text=whole)
    assert await decided(model, read, _cabinet(str(tmp_path))) == [("put", {"file": path, "body": whole})]  # as JSON
    assert model.grammars and '"target = /mnt/nas"' in model.grammars[0]  # the file's lines, not the JSON's


async def test_a_whole_file_not_read_is_added_to_where_the_tool_can_and_otherwise_not_written(tmp_path) -> None:
    (tmp_path / "lisbon.md").write_text("# Lisbon\n- tram 28\n")
    path, add, put = str(tmp_path / "lisbon.md"), "Add a line 'fado dinner' to lisbon.md.", "Write 'fado' in lisbon.md."
    new = str(tmp_path / "porto.md")
    cabinet = _cabinet(str(tmp_path))
    for text, arguments, wanted in (
            (add, {"file": path, "body": "fado dinner"}, {"file": path, "body": "fado dinner", "append": True}),
            (put, {"file": path, "body": "fado"}, None),  # no addition asked: the file's text would be lost
            ("Overwrite lisbon.md with 'fado dinner'.", {"file": path, "body": "fado dinner"},
             {"file": path, "body": "fado dinner"}),  # as asked
            ("Write porto.md with the line 'port wine'.", {"file": new, "body": "port wine"},
             {"file": new, "body": "port wine"})):  # a new file: as written
        model = FakeLlama({text: [("put", arguments)]})
        assert await decided(model, user(text), cabinet) == ([("put", wanted)] if wanted else []), text
    without = [cabinet[0], tool("put", "Write a file.", {"file": TEXT, "body": TEXT}, ["file", "body"],
                                source="mcp:cabinet", places=(str(tmp_path),))]
    assert await decided(FakeLlama({add: [("put", {"file": path, "body": "fado dinner"})]}), user(add), without) == []


@pytest.mark.parametrize("text, name, stated", [
    ("Create a file plan.md in my folder with the line: - sow the beans on Friday", "plan.md",
     "- sow the beans on Friday"),
    ("Crée le fichier appels.txt avec la ligne : appeler Marc lundi", "appels.txt", "appeler Marc lundi"),
    ("Make a new file seeds.txt containing 'basil, dill'", "seeds.txt", "basil, dill"),
])
async def test_a_new_file_whose_text_the_message_states_is_written_with_that_text(tmp_path, text, name, stated):
    """A small model writes a made-up text ("This is a test file.") for a new file whose text the message states:
    the stated text is written; a text holding it is kept as written, and a message stating none is as written."""
    cabinet, new = _cabinet(str(tmp_path)), str(tmp_path / name)
    made_up = FakeLlama({text: [("put", {"file": new, "body": "This is a test file."})]})
    assert await decided(made_up, user(text), cabinet) == [("put", {"file": new, "body": stated + "\n"})]
    holding = FakeLlama({text: [("put", {"file": new, "body": f"Plan\n{stated.upper()}\n"})]})
    assert await decided(holding, user(text), cabinet) == [("put", {"file": new, "body": f"Plan\n{stated.upper()}\n"})]
    named = FakeLlama({f"Create a file called '{name}' for my seeds.": [("put", {"file": new, "body": "Seeds"})]})
    assert await decided(named, user(f"Create a file called '{name}' for my seeds."), cabinet) == [
        ("put", {"file": new, "body": "Seeds"})]  # a quoted name states no text
    plain = f"Make a new file {name} for my seeds."
    model = FakeLlama({plain: [("put", {"file": new, "body": "Seeds"})]})
    assert await decided(model, user(plain), cabinet) == [("put", {"file": new, "body": "Seeds"})]


# --- folders --------------------------------------------------------------------------------------------------


def test_the_files_a_message_names_are_names_with_an_extension_and_their_folders() -> None:
    assert files_named("Show me notes/ideas.md and budget.csv, not example.com") == ["notes/ideas.md", "budget.csv"]
    assert files_named("Sign Jo up: jo.k@post.de, from Lyon") == []  # an e-mail address names no file


async def test_a_relative_path_is_inside_the_servers_folder_and_one_climbing_out_is_left_as_written() -> None:
    text = "Print notes/plan.md"
    assert await decided(FakeLlama({text: [("cat", {"file": "notes/plan.md"})]}), user(text), DOCS) == [
        ("cat", {"file": f"{HOME}/notes/plan.md"})]
    climb = "Print ../../etc/passwd"
    assert await decided(FakeLlama({climb: [("cat", {"file": "../../etc/passwd"})]}), user(climb), DOCS) == [
        ("cat", {"file": "../../etc/passwd"})]


async def test_a_message_naming_a_file_calls_a_reader_down_to_the_floor_and_the_folder_alone_becomes_it() -> None:
    text = "trip.md?"
    model = FakeLlama({text: [("cat", {"file": HOME})]}, p_call=0.2)
    assert await decided(model, user(text), DOCS) == [("cat", {"file": f"{HOME}/trip.md"})]
    assert await decided(FakeLlama({"trip?": [("cat", {"file": HOME})]}, p_call=0.2), user("trip?"), DOCS) == []


async def test_where_a_folder_server_marks_no_tool_its_reader_is_told_by_its_name_and_may_take_a_list() -> None:
    """No annotations: `read_files` (one required list) reads, `file_ops` and `config_ops` (an action) do not."""
    text = "What's in garden/planting.md?"
    plain = [tool("config_ops", "Config operations: set a root, get a file's info.", {"action": TEXT, "path": TEXT},
                  ["action"], source="mcp:ed", places=(HOME,)),
             tool("file_ops", "File operations.", {"action": TEXT, "file_path": TEXT}, ["action"], source="mcp:ed",
                  places=(HOME,)),
             tool("read_files", "A reader.", {"requests": {"type": "array"}}, ["requests"], source="mcp:ed",
                  places=(HOME,))]
    wanted = ("read_files", {"requests": [{"path": f"{HOME}/garden/planting.md"}]})
    model = FakeLlama({text: [("config_ops", {"action": "set_root", "path": HOME}), wanted]}, p_call=0.2,
                      name_tokens={"": [('config_ops",', 0.6), ('file_ops",', 0.3), ('read_files",', 0.1)]})
    assert await decided(model, user(text), plain) == [wanted]


@pytest.mark.parametrize("text", ["Wie groß ist die Datei trip.md und wann wurde sie zuletzt geändert?",
                                  "When was trip.md last modified?", "Quelle est la taille de trip.md ?"])
async def test_a_question_about_a_files_size_or_times_goes_to_a_tool_that_tells_them_not_its_text(text) -> None:
    """The model likes the reader best; a question about the file's size or times is for a tool whose name or first
    sentence says it tells them. A question about its text still reads it."""
    stat = tool("file_stat", "Stat a file: its size and times.", {"file": TEXT}, ["file"], source="mcp:docs",
                read_only=True, places=(HOME,))
    names = {"": [('cat",', 0.8), ('file_stat",', 0.2)]}
    model = FakeLlama({text: [("cat", {"file": "trip.md"}), ("file_stat", {"file": "trip.md"})]}, name_tokens=names)
    assert await decided(model, user(text), [*DOCS, stat]) == [("file_stat", {"file": f"{HOME}/trip.md"})]
    what = "What's in trip.md?"
    model = FakeLlama({what: [("cat", {"file": "trip.md"})]}, name_tokens=names)
    assert await decided(model, user(what), [*DOCS, stat]) == [("cat", {"file": f"{HOME}/trip.md"})]
    ops = tool("config_ops", "Config and metadata operations.\n\nArgs:\n    action:\n        - \"set_root\": Add a root"
               "\n        - \"get_info\": Get metadata for a file", {"action": TEXT, "path": TEXT}, ["action"],
               source="mcp:docs", places=(HOME,))  # unmarked, of several actions one of which reads
    reader = tool("read_file", "Read a file.", {"path": TEXT}, ["path"], source="mcp:docs", places=(HOME,))
    names = {"": [('read_file",', 0.8), ('config_ops",', 0.2)]}
    model = FakeLlama({text: [("read_file", {"path": "trip.md"}),
                              ("config_ops", {"action": "get_info", "path": "trip.md"})]}, name_tokens=names)
    assert await decided(model, user(text), [reader, ops]) == [
        ("config_ops", {"action": "get_info", "path": f"{HOME}/trip.md"})]


@pytest.mark.parametrize("text, file", [("Create packing.md with a line: socks", "packing.md"),
                                        ("Schreib in todo.txt: Milch kaufen", "todo.txt"),
                                        ("Renomme budget.csv en budget-2025.csv", "budget.csv")])
async def test_a_message_naming_a_file_it_asks_to_make_or_change_is_written_by_a_tool_that_changes_it(text, file):
    reads = {"": [('cat",', 0.7), ('overwrite",', 0.2), ('substitute",', 0.1)]}
    wants = {text: [("overwrite", {"file": file, "text": text}), ("cat", {"file": file})]}
    for p_call in (0.2, 0.9):  # under the bar, and over it
        model = FakeLlama(wants, name_tokens=reads, p_call=p_call)
        assert (await decided(model, user(text), DOCS))[0][0] == "overwrite"
    writes = {"": [('overwrite",', 0.7), ('cat",', 0.2), ('substitute",', 0.1)]}
    for asked in (f"What does {file} say?", f"Open {file} and tell me what the margin is set to."):
        model = FakeLlama({asked: [("cat", {"file": file})]}, name_tokens=writes, p_call=0.2)
        assert (await decided(model, user(asked), DOCS))[0][0] == "cat"


async def test_a_path_that_names_no_file_where_the_message_names_one_is_that_file() -> None:
    text = "Make a new file gifts/list.txt listing: tea, socks"
    for written in ("tea", "tea.txt"):
        model = FakeLlama({text: [("overwrite", {"file": written, "text": "tea\nsocks"})]})
        assert await decided(model, user(text), DOCS) == [("overwrite", {"file": f"{HOME}/gifts/list.txt",
                                                                         "text": "tea\nsocks"})]


def two_folders(root) -> list[Tool]:
    """A reader working in two folders under `root`, `notes/trip/` existing in the first only."""
    (root / "notes" / "trip").mkdir(parents=True)
    (root / "code").mkdir()
    return [tool("cat", "Print a document's text.", {"file": TEXT}, ["file"], source="mcp:docs", read_only=True,
                 places=(f"{root}/notes", f"{root}/code"))]


@pytest.mark.parametrize("written, placed", [("trip/plan.md", "notes/trip/plan.md"),
                                             ("{root}/trip/plan.md", "notes/trip/plan.md"),
                                             ("{root}/trip", "notes/trip"), ("{root}/code/trip", "notes/trip"),
                                             ("{root}/code/new.md", None), ("plan.md", None),
                                             ("/etc/passwd", None)])
async def test_a_path_for_a_server_of_several_folders_is_in_the_one_where_its_folder_is(tmp_path, written, placed):
    tools, value = two_folders(tmp_path), written.format(root=tmp_path)
    text = f"Print {value}"
    model = FakeLlama({text: [("cat", {"file": value})]})
    assert await decided(model, user(text), tools) == [
        ("cat", {"file": f"{tmp_path}/{placed}" if placed else value})]


async def test_a_new_file_under_the_folders_parent_goes_where_files_of_its_extension_are(tmp_path) -> None:
    """A file server working in a letters folder and a code folder: a new `.txt` file written under their parent goes
    to the one holding `.txt` files; a `.csv` file neither holds stays as written."""
    tools = [tool("save", "Write a file's text.", {"file": TEXT, "text": TEXT}, ["file", "text"], source="mcp:docs",
                  places=(str(tmp_path / "letters"), str(tmp_path / "code")))]
    (tmp_path / "letters").mkdir()
    (tmp_path / "letters" / "landlord.txt").write_text("Dear Sir,")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "main.py").write_text("print(1)")
    for name, placed in (("late.txt", f"{tmp_path}/letters/late.txt"), ("late.csv", f"{tmp_path}/late.csv")):
        text = f"Write 'Ana, Bo' into a new file {name} in my folder."
        model = FakeLlama({text: [("save", {"file": f"{tmp_path}/{name}", "text": "Ana, Bo"})]})
        assert await decided(model, user(text), tools) == [("save", {"file": placed, "text": "Ana, Bo"})], name


@pytest.mark.parametrize("text, written, placed", [
    ("Create TODO.md in my metronome repo with the line: tap tempo", "TODO.md", "code/TODO.md"),
    ("Crée TODO.md dans le dépôt avec la ligne : tempo", "TODO.md", "code/TODO.md"),
    ("Create TODO.md in my metronome repo with the line: tap tempo", "notes/TODO.md", "code/TODO.md"),
    ("Create TODO.md with the line: tap tempo", "TODO.md", None),  # no repository said: which folder is not known
    ("Create TODO.md with the line: tap tempo", "notes/TODO.md", None)])
async def test_a_new_file_goes_to_the_repository_a_message_says(tmp_path, text, written, placed):
    """A file server working in a notes folder and a repository (`.git`): a new file written under their parent, or
    in the notes, goes to the repository where the message says "repository" (in another language too)."""
    tools = [tool("save", "Write a file's text.", {"file": TEXT, "text": TEXT}, ["file", "text"], source="mcp:docs",
                  places=(str(tmp_path / "notes"), str(tmp_path / "code")))]
    (tmp_path / "notes").mkdir()
    (tmp_path / "code" / ".git").mkdir(parents=True)
    value = f"{tmp_path}/{written}"
    model = FakeLlama({text: [("save", {"file": value, "text": "tap tempo"})]})
    assert await decided(model, user(text), tools) == [
        ("save", {"file": f"{tmp_path}/{placed}" if placed else value, "text": "tap tempo"})]


async def test_a_folder_given_where_a_file_is_taken_is_the_file_its_listing_named_that_the_message_speaks_of(
        tmp_path) -> None:
    (tmp_path / "trip").mkdir()
    for name in ("itinerary.md", "packing.txt"):
        (tmp_path / "trip" / name).write_text("…")
    reader = tool("cat", "Print a document's text.", {"file": TEXT}, ["file"], read_only=True, places=(str(tmp_path),))
    listing = [*user("What is in trip/?"), *called("c1", "cat", json.dumps({"file": f"{tmp_path}/trip"}),
                                                   "[FILE] itinerary.md\n[FILE] packing.txt"),
               {"role": "assistant", "content": "Two files."}]
    for text, read in (("Read me the itinerary.", f"{tmp_path}/trip/itinerary.md"), ("Read me both.", None)):
        model = FakeLlama({text: [("cat", {"file": f"{tmp_path}/trip"})]})
        wanted = [("cat", {"file": read or f"{tmp_path}/trip"})]  # "both": no one file of the listing
        assert await decided(model, [*listing, *user(text)], [reader]) == wanted


REPO = "/srv/project"
HISTORY = tool("history", "The recent changes of a repository.", {"repository": TEXT}, ["repository"],
               source="mcp:vcs", read_only=True, places=(REPO,))
RECORD = tool("record", "Record the given files in the repository's next revision.",
              {"repository": TEXT, "paths": {"type": "array", "items": TEXT}}, ["repository", "paths"],
              source="mcp:vcs", places=(REPO,))


async def test_a_parameter_that_takes_a_folder_written_as_a_file_is_the_servers_folder() -> None:
    text = "What happened to setup.cfg lately?"
    model = FakeLlama({text: [("history", {"repository": "setup.cfg"})]})
    assert await decided(model, user(text), [HISTORY, RECORD]) == [("history", {"repository": REPO})]
    relative = "Record lib/core.py"
    model = FakeLlama({relative: [("record", {"repository": "lib/core.py", "paths": ["lib/core.py"]})]})
    assert await decided(model, user(relative), [HISTORY, RECORD]) == [
        ("record", {"repository": REPO, "paths": ["lib/core.py"]})]


async def test_a_file_named_is_read_by_the_server_whose_readers_take_a_file_not_one_that_takes_a_folder() -> None:
    for text, path in (("trip.md?", "trip.md"), (f"open {HOME}/trip.md", f"{HOME}/trip.md")):
        model = FakeLlama({text: [("cat", {"file": path}), ("history", {"repository": path})]}, p_call=0.2)
        assert await decided(model, user(text), [HISTORY, RECORD, *DOCS]) == [("cat", {"file": f"{HOME}/trip.md"})]


def test_a_file_named_favours_the_server_whose_folder_holds_it_else_files_like_it_else_every_one(tmp_path) -> None:
    """Two servers read files in their folders; "setlist.md" is one level down in the second's: only its table is
    favoured, and a third's folder holding the second's is not (its nearest folder is the second's); a file no folder
    holds (a new one) favours the server whose folder holds files of its extension, else every server."""
    (tmp_path / "grids").mkdir()
    (tmp_path / "drawer" / "gigs").mkdir(parents=True)
    (tmp_path / "drawer" / "gigs" / "setlist.md").write_text("1. Blue in Green")
    grid = tool("read_grid", "Read a grid's cells.", {"path": TEXT}, ["path"], source="mcp:grid", read_only=True,
                places=(str(tmp_path / "grids"),))
    plain = tool("read_text", "Read a text file.", {"path": TEXT}, ["path"], source="mcp:drawer", read_only=True,
                 places=(str(tmp_path / "drawer"),))
    above = tool("print_file", "Print a file.", {"path": TEXT}, ["path"], source="mcp:printer", read_only=True,
                 places=(str(tmp_path),))
    for text, favoured in (("Read me setlist.md", [None, "folders.file_named", None]),
                           ("Show me tour.md", [None, "folders.file_named", None]),
                           ("Read me tour.txt", ["folders.file_named"] * 3)):
        decision = Decision(Talk(user(text)), [grid, plain, above], [Folders()], text.lower())
        assert [Folders().favours(decision, [t]) for t in (grid, plain, above)] == favoured, text


def test_a_file_to_make_or_add_to_favours_a_server_with_a_tool_that_takes_its_text(tmp_path) -> None:
    """A repository both a version control server and a file server work in: making a file (or adding to one) is for
    the server that takes what is written, not the one that stages files; staging it is for the other."""
    (tmp_path / "garden-app").mkdir()
    (tmp_path / "garden-app" / "README.md").write_text("# Garden app\n")
    places = (str(tmp_path / "garden-app"),)
    vcs = [tool("vcs_stage", "Stage files for the next commit.", {"repo_path": TEXT, "files": {
        "type": "array", "items": TEXT}}, ["repo_path", "files"], source="mcp:vcs", places=places),
           tool("vcs_commit", "Record staged changes.", {"repo_path": TEXT, "message": TEXT}, ["repo_path", "message"],
                source="mcp:vcs", places=places)]
    disk = [tool("put_file", "Write a file.", {"path": TEXT, "text": TEXT}, ["path", "text"], source="mcp:disk",
                 places=places)]
    for text, favoured in (("In the garden-app repo, create PLANTS.md listing: basil", [None, "folders.file_named"]),
                           ("Add a line 'prune roses' to README.md", [None, "folders.file_named"]),
                           ("Stage PLANTS.md, please.", ["folders.file_named", "folders.file_named"])):
        decision = Decision(Talk(user(text)), [*vcs, *disk], [Folders()], text.lower())
        assert [Folders().favours(decision, table) for table in (vcs, disk)] == favoured, text


async def test_a_file_name_alone_is_the_file_the_conversation_named_in_its_folder() -> None:
    text = "Add Eve to the crew in that file."
    model = FakeLlama({"Show me notes/trip.md": [("cat", {"file": "notes/trip.md"})],
                       text: [("overwrite", {"file": "trip.md", "text": "Crew: Eve"})]})
    messages = [*user("Show me notes/trip.md"), {"role": "assistant", "content": "Here it is."}, *user(text)]
    assert await decided(model, messages, [OVERWRITE]) == [
        ("overwrite", {"file": f"{HOME}/notes/trip.md", "text": "Crew: Eve"})]


async def test_a_file_the_person_named_written_in_no_folder_of_the_servers_is_that_file() -> None:
    """`folders.file_said`: "travel/lisbon.md" named, the model writes "/tmp/lisbon.md" (no folder the server works
    in): it is the named file in the server's folder; a path already in the folder is left as it is."""
    text = "Then add a line 'fado dinner' to notes/trip.md."
    for written in ("/tmp/trip.md", "/var/data/notes/trip.md", f"{HOME}/notes/trip.md"):
        model = FakeLlama({text: [("overwrite", {"file": written, "text": "fado dinner"})]})
        assert await decided(model, user(text), [OVERWRITE]) == [
            ("overwrite", {"file": f"{HOME}/notes/trip.md", "text": "fado dinner"})], written


def test_a_verb_inside_a_quoted_text_asks_no_addition() -> None:
    """"… commit it with the message 'Add a to-do list'" quotes what is written: no addition to the file just written
    (`editor.to_add`), nor a change of it (`folders.file_before`); "Add 'milk' to it" is both."""
    written = [*user("Write notes/trip.md"), *called("c1", "overwrite", json.dumps({"file": f"{HOME}/notes/trip.md"}),
                                                       "Wrote the to-do list.")]
    for text, added in (("Stage it and commit it with the message 'Add a to-do list'.", False),
                        ('Now commit it with the message "Add a to-do list".', False),
                        ("Add 'milk' to it.", True)):
        decision = Decision(Talk([*written, *user(text)]), DOCS, [Editor(), Folders()], text.lower())
        assert Editor().favours(decision, DOCS) == ("editor.to_add" if added else None), text
        assert Folders().favours(decision, DOCS) == ("folders.file_before" if added else None), text


def _shelf(home: str) -> list[Tool]:
    """A document server of another shape: a folder's listing, a file's text, a new folder."""
    return [tool("catalog", "List what a directory holds.", {"dir": TEXT}, ["dir"], source="mcp:shelf",
                 read_only=True, places=(home,)),
            tool("folder_tree", "Show the tree under a folder.", {"path": TEXT}, ["path"], source="mcp:shelf",
                 read_only=True, places=(home,)),
            tool("peek", "Print a document's text.", {"file": TEXT}, ["file"], source="mcp:shelf", read_only=True,
                 places=(home,)),
            tool("make_folder", "Create a folder.", {"folder": TEXT}, ["folder"], source="mcp:shelf",
                 places=(home,))]


def test_a_folder_is_named_as_a_path_ending_in_a_slash_or_a_word_the_message_calls_a_folder(tmp_path) -> None:
    (tmp_path / "drafts" / "old").mkdir(parents=True)
    (tmp_path / "notes").mkdir()
    home = [str(tmp_path)]
    assert folders_named("Was liegt im Ordner drafts?", home) == ["drafts"]
    assert folders_named("ls drafts/old/ please", home) == ["drafts/old"]
    assert folders_named("Find my notes that mention Marta.", home) == []  # a word, not called a folder
    assert folders_named("What is in the music folder?", home) == []  # no such folder
    assert folders_named("Show the ../ folder", home) == []


async def test_a_folder_named_is_listed_by_a_tool_that_takes_a_folder_inside_the_servers_folder(tmp_path) -> None:
    (tmp_path / "drafts").mkdir()
    shelf = _shelf(str(tmp_path))
    for text in ("What's inside the drafts folder?", "Montre-moi le dossier drafts.", "drafts/ ?"):
        model = FakeLlama({text: [("peek", {"file": "drafts"}), ("catalog", {"dir": "drafts"})]}, p_call=0.2)
        assert await decided(model, user(text), [*DOCS, *shelf]) == [("catalog", {"dir": f"{tmp_path}/drafts"})]
    model = FakeLlama({"drafts/ ?": [("folder_tree", {"path": "drafts"})]})
    assert await decided(model, user("drafts/ ?"), shelf) == [("folder_tree", {"path": f"{tmp_path}/drafts"})]
    missing = "What's inside the music folder?"
    model = FakeLlama({missing: [("peek", {"file": "music"})]}, p_call=0.2)
    assert await decided(model, user(missing), shelf) == []  # no folder of the server's: the core's bar holds


async def test_a_question_about_the_persons_files_lists_a_folder_of_the_server_that_holds_them(tmp_path) -> None:
    """"Welche Dateien habe ich?" names no file or folder: the shelf's table is read, the call is one that takes a
    folder and only reads, in the server's folder, though the model would peek at a file; no change is asked of it."""
    shelf = _shelf(str(tmp_path))
    for text in ("Welche Dateien habe ich?", "Where are my files about the trip?", "Montre-moi mes fichiers."):
        model = FakeLlama({text: [("peek", {"file": "trip"}), ("catalog", {"dir": str(tmp_path)})]}, p_call=0.2)
        assert await decided(model, user(text), [*DOCS, *shelf]) == [("catalog", {"dir": str(tmp_path)})], text
    text = "Tidy up my files."  # a change: not this rule's
    model = FakeLlama({text: [("make_folder", {"folder": "tidy"})]}, p_call=0.2)
    assert await decided(model, user(text), [*DOCS, *shelf]) == []


async def test_a_question_about_the_persons_files_lists_with_a_tool_named_for_files_not_for_a_kind_of_them(
        tmp_path) -> None:
    """A photo server lists albums in a folder, a drive lists any folder: "What files do I have?" reads the drive's
    table, though the model likes the albums; with no tool named for files or folders, the albums' is read."""
    home = str(tmp_path)
    albums = tool("list_albums", "List the photo albums in a folder.", {"folder": TEXT}, ["folder"],
                  source="mcp:photos", read_only=True, places=(home,))
    drive = [tool("list_folder", "List a folder's entries.", {"path": TEXT}, ["path"], source="mcp:drive",
                  read_only=True, places=(home,)),
             tool("read_file", "Read a file.", {"path": TEXT}, ["path"], source="mcp:drive", read_only=True,
                  places=(home,))]
    padding = many_tools("mcp:misc", 9)
    for text in ("What files do I have?", "Quels fichiers ai-je ?"):
        model = FakeLlama({text: [("list_albums", {"folder": home}), ("list_folder", {"path": home})]}, p_call=0.2)
        assert await decided(model, user(text), [albums, *drive, *padding]) == [("list_folder", {"path": home})]
        alone = FakeLlama({text: [("list_albums", {"folder": home})]}, p_call=0.2)
        assert await decided(alone, user(text), [albums, *padding]) == [("list_albums", {"folder": home})]


async def test_files_of_a_kind_are_found_by_a_tool_taking_a_pattern_and_files_as_a_whole_stay_listed(
        tmp_path) -> None:
    home = str(tmp_path)
    shelf = [*_shelf(home), tool("seek", "Find the files under a path whose names match.", {
        "path": TEXT, "match": {"type": "string", "description": "a glob such as *.txt"}}, ["path", "match"],
        source="mcp:shelf", read_only=True, places=(home,))]  # a path, not called a folder: no folder's tool
    wanted = ("seek", {"path": home, "match": "*.pdf"})
    for text in ("Which PDF files do I have?", "Trouve tous mes fichiers PDF.", "Welche PDF-Dateien liegen hier?",
                 "Busca mis archivos .pdf"):
        model = FakeLlama({text: [("catalog", {"dir": home}), wanted]}, p_call=0.2)
        assert await decided(model, user(text), [*DOCS, *shelf]) == [wanted], text
    for text in ("What files do I have?", "Find my files about the trip."):  # no kind: the listing stays
        model = FakeLlama({text: [("catalog", {"dir": home}), wanted]}, p_call=0.2)
        assert await decided(model, user(text), [*DOCS, *shelf]) == [("catalog", {"dir": home})], text


SETTINGS = "[audio]\nvolume = 7\n[display]\ntheme = light\n"


async def test_a_change_after_a_file_was_read_goes_to_a_tool_that_changes_that_file() -> None:
    edit = ("substitute", {"file": f"{HOME}/trip.md", "old_str": "volume = 7", "new_str": "volume = 4"})
    for text in ("Turn it down to 4.", "Stelle das Theme auf dark."):
        model = FakeLlama({text: [("cat", {"file": f"{HOME}/trip.md"}), edit]}, p_call=0.2)
        assert await decided(model, read_then(text, SETTINGS), [*DOCS, ADD_NOTE]) == [edit], text
    text = "Now add a note called Plumber that says Mr Alves comes on Thursday."
    model = FakeLlama({text: [("add_note", {"title": "Plumber", "body": "Mr Alves comes on Thursday."})]})
    assert await decided(model, read_then(text, SETTINGS), [*DOCS, ADD_NOTE]) == [
        ("add_note", {"title": "Plumber", "body": "Mr Alves comes on Thursday."})]  # another thing: not that file's


# --- timezones ------------------------------------------------------------------------------------------------


ZONE = {"type": "string", "description": "An IANA zone name, e.g. 'Europe/Madrid'."}
WALL = tool("wall_clock", "The time now in a zone.", {"zone": ZONE}, ["zone"], read_only=True)


def test_a_place_or_a_zone_under_the_wrong_area_is_its_zone_and_a_message_names_places() -> None:
    assert as_zone("Europe/Tokyo") == "Asia/Tokyo" and as_zone("Sao Paulo") == "America/Sao_Paulo"
    assert as_zone("PST") == "PST"
    assert [as_zone(z) for z in ("Hong/Kong", "Buenos/Aires", "Los/Angeles", "Rio/Janeiro")] == [  # a place's words
        "Asia/Hong_Kong", "America/Argentina/Buenos_Aires", "America/Los_Angeles", "Rio/Janeiro"]  # parted by "/"
    assert zones_named("What time is it in Lisbon and in Porto?") == (["Europe/Lisbon"], ["Porto"])
    assert zones_named("Is it day in Lima and in Oslo?")[0] == ["America/Lima", "Europe/Oslo"]  # in its order


async def test_a_zone_no_one_said_is_the_place_named_or_no_call_for_a_place_without_a_zone() -> None:
    text = "What time is it in Montevideo?"
    assert await decided(FakeLlama({text: [("wall_clock", {"zone": "Europe/Madrid"})]}), user(text), [WALL]) == [
        ("wall_clock", {"zone": "America/Montevideo"})]
    porto = "What time is it in Porto?"
    assert await decided(FakeLlama({porto: [("wall_clock", {"zone": "Europe/Madrid"})]}), user(porto), [WALL]) == []
    federal = "Hora actual en el Distrito Federal de México"  # a name the zone lacks, and one it holds, accented
    model = FakeLlama({federal: [("wall_clock", {"zone": "America/Mexico_City"})]})
    assert await decided(model, user(federal), [WALL]) == [("wall_clock", {"zone": "America/Mexico_City"})]
    assert await decided(FakeLlama({text: [("wall_clock", {"zone": "Europe/Madrid"})]}), user(text), [WALL],
                         shapes={"timezones": False}) == []  # the tool's example, said by no one: the core refuses


def test_a_place_named_in_another_language_is_its_zone_and_a_city_without_one_stays_a_name() -> None:
    meaning = Embedder()
    assert zones_named("¿Qué hora es en Estocolmo y en Atenas?", meaning)[0] == ["Europe/Stockholm", "Europe/Athens"]
    assert zones_named("Wie spät ist es in Kopenhagen?", meaning)[0] == ["Europe/Copenhagen"]
    assert zones_named("Que horas são em Varsóvia?", meaning)[0] == ["Europe/Warsaw"]
    for town in ("Que horas são em Coimbra?", "Wie spät ist es in Nürnberg?", "Quelle heure à Strasbourg ?"):
        assert zones_named(town, meaning)[0] == [], town  # no zone's place: the name stays a name
    assert zones_named("Wie spät ist es in Kopenhagen?") == ([], ["Kopenhagen"])  # without embeddings


async def test_a_zone_no_one_said_is_the_place_named_in_another_language() -> None:
    text = "Quelle heure est-il à Copenhague ?"
    model = FakeLlama({text: [("wall_clock", {"zone": "Europe/Paris"})]})
    assert await decided(model, user(text), [WALL], embedder=Embedder()) == [
        ("wall_clock", {"zone": "Europe/Copenhagen"})]
    assert await decided(model, user(text), [WALL]) == []  # without embeddings: another place's time, refused


async def test_a_zone_no_one_said_is_the_first_place_named_that_the_answers_calls_have_not_used() -> None:
    text = "Is it night in Lima or in Oslo right now?"
    for first in ("America/Lima", "Europe/Madrid"):  # the first written as said, or as no one said
        model = FakeLlama({text: [("wall_clock", {"zone": first}), ("wall_clock", {"zone": "Europe/Madrid"})]})
        assert await decided(model, user(text), [WALL]) == [("wall_clock", {"zone": "America/Lima"}),
                                                             ("wall_clock", {"zone": "Europe/Oslo"})]


async def test_an_optional_zone_left_out_is_the_place_named_and_stays_out_when_none_is() -> None:
    clock = tool("clock_now", "The current date and time.", {"tz": {**ZONE, "default": "UTC"}}, [], read_only=True)
    for text, wanted in (("Wie spät ist es gerade in Kopenhagen?", {"tz": "Europe/Copenhagen"}),
                         ("What's the time in Lima right now?", {"tz": "America/Lima"}), ("What time is it?", {})):
        model = FakeLlama({text: [("clock_now", {})]})
        assert await decided(model, user(text), [clock], embedder=Embedder()) == [("clock_now", wanted)], text


def test_a_number_times_a_number_is_no_time_asked_but_times_of_a_day_are() -> None:
    talk = Talk(user("What's 17 times 23?"))
    d = Decision(talk, [WALL, ADD_NOTE], shapes_for([WALL, ADD_NOTE]), talk.last.lower())
    d.table = [WALL, ADD_NOTE]
    assert list(d.choosable(set())) == ["add_note"]
    for asked in ("What times does the ferry leave?", "Three times a day, at what hour?"):
        talk = Talk(user(asked))
        d = Decision(talk, [WALL], shapes_for([WALL]), asked.lower())
        d.table = [WALL]
        assert list(d.choosable(set())) == ["wall_clock"], asked


async def test_a_zone_no_one_said_is_not_one_the_same_call_already_takes() -> None:
    convert = tool("convert", "Convert a time between zones.", {"from_zone": ZONE, "to_zone": ZONE, "time": TEXT},
                   ["from_zone", "to_zone", "time"], read_only=True)
    text = "When it is 09:00 in Lima, what time is it in Oslo?"
    model = FakeLlama({text: [("convert", {"from_zone": "America/Lima", "to_zone": "Asia/Seoul", "time": "09:00"})]})
    assert await decided(model, user(text), [convert]) == [
        ("convert", {"from_zone": "America/Lima", "to_zone": "Europe/Oslo", "time": "09:00"})]


HISTORY_BY_DATE = tool("log", "Commits between two dates.", {"since": {"type": "string", "description": "a date"}},
                       ["since"], source="mcp:vcs", read_only=True)


@pytest.mark.parametrize("text", ["¿Qué hora es ahora?", "Wie spät ist es?", "What's the date today?"])
async def test_a_question_of_the_time_now_reads_the_clocks_table_and_is_a_call_down_to_the_floor(text) -> None:
    local = {"type": "string", "description": "An IANA zone, e.g. 'Asia/Seoul'. Use 'Europe/Oslo' if none is given."}
    clock = tool("wall_clock", "The time now in a zone.", {"zone": local}, ["zone"], source="mcp:clock",
                 read_only=True)
    model = FakeLlama({text: [("wall_clock", {"zone": "Europe/Oslo"})]}, p_call=0.2)
    assert await decided(model, user(text), [HISTORY_BY_DATE, clock]) == [("wall_clock", {"zone": "Europe/Oslo"})]
    assert await decided(model, user(text), [HISTORY_BY_DATE, clock], shapes={"timezones": False}) == []


# --- calculator -----------------------------------------------------------------------------------------------


async def test_a_calculation_asked_is_written_as_a_call_of_a_tool_that_calculates_down_to_the_floor() -> None:
    for text, expression in (("what's 48 x 37", "48*37"), ("Combien font 7 fois 6 ?", "7*6"),
                             ("12 plus 30, please", "12+30")):
        model = FakeLlama({text: [("evaluate", {"expression": expression})]}, p_call=0.2)
        assert await decided(model, user(text), [EVALUATE, FORECAST]) == [("evaluate", {"expression": expression})]
    words = FakeLlama({"what's the weather": [("evaluate", {"expression": "1"})]}, p_call=0.2)
    assert await decided(words, user("what's the weather"), [EVALUATE, FORECAST]) == []  # no calculation asked
    off = FakeLlama({"what's 48 x 37": [("evaluate", {"expression": "48*37"})]}, p_call=0.2)
    assert await decided(off, user("what's 48 x 37"), [EVALUATE, FORECAST], shapes={"calculator": False}) == []


def calculated(first: str, result: str, text: str) -> list[dict[str, Any]]:
    call = {"id": "c1", "type": "function", "function": {"name": "evaluate", "arguments": '{"expression": "1"}'}}
    return [*user(first), {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": result}, {"role": "assistant", "content": result},
            *user(text)]


async def test_an_operation_on_one_number_right_after_a_calculation_is_that_operation_on_its_result() -> None:
    for text, copied, expression in (("and now divide that by 4", "96/4", "96 / 4"),
                                     ("Y eso, ¿por 3?", "12*3", "96 * 3"), ("et moins 6,5 ?", "12-6.5", "96 - 6.5"),
                                     ("Und wie viel sind 15 Prozent davon?", "15/100*1500", "96 * 15 / 100")):
        messages = calculated("what's 8 times 12", "96", text)
        model = FakeLlama({text: [("evaluate", {"expression": copied})]}, p_call=0.2)
        assert await decided(model, messages, [EVALUATE, FORECAST]) == [("evaluate", {"expression": expression})]
        off = FakeLlama({text: [("evaluate", {"expression": copied})]}, p_call=0.9)
        assert await decided(off, messages, [EVALUATE, FORECAST], shapes={"calculator": False}) == [
            ("evaluate", {"expression": copied})]
    other = "and the weather in 2 days?"  # a number, but no operation on it
    model = FakeLlama({other: [("evaluate", {"expression": "96+2"})]}, p_call=0.2)
    assert await decided(model, calculated("what's 8 times 12", "96", other), [EVALUATE, FORECAST]) == []


async def test_an_operation_on_an_exact_fraction_or_a_share_of_the_result_is_that_operation_on_it() -> None:
    """An exact calculator answers "4165/2": "Split that between 5 people" is the fraction over 5; a share among
    people, in French and English, is a division too."""
    for first, result, text, expression in (
            ("what's 2450 times 0.85", "4165/2", "Split that between 5 people: how much each?", "(4165/2) / 5"),
            ("what's 96 times 3", "288", "Partagez ça entre 4 personnes.", "288 / 4"),
            ("what's 7 times 9", "63", "Share it out among 3 of us.", "63 / 3")):
        model = FakeLlama({text: [("evaluate", {"expression": "5/2"})]}, p_call=0.2)
        assert await decided(model, calculated(first, result, text), [EVALUATE, FORECAST]) == [
            ("evaluate", {"expression": expression})], text


async def test_an_expression_written_without_a_number_of_the_operation_stated_is_the_operation_as_stated() -> None:
    """"What's 12.5% of 640?" written as "12.5%": the expression is the operation the message states, in four
    languages; one the model wrote with every number and the operation is kept as written; a sum, a product or a mean
    of all the numbers said is that of them all; a power is `pow`; a sum of products the model wrote whole is kept."""
    sum_up = tool("sum_up", "Sum a list of numbers.", {"numbers": {"type": "array", "items": {"type": "number"}}},
                  ["numbers"], source="mcp:calc", read_only=True)
    for text, wrote, expression in (
            ("What's 12.5% of 640?", "12.5%", "12.5 * 640 / 100"),
            ("Wie viel sind 20 Prozent von 45?", "20/100", "20 * 45 / 100"),
            ("¿Cuánto es 96 dividido por 8?", "96", "96 / 8"),
            ("Combien font 17 fois 23 ?", "23*17", "23*17"),
            ("How much is 3 plus 4 plus 5?", "3+4", "3 + 4 + 5"),
            ("Was ist der Durchschnitt von 12, 7 und 20?", "12+7+20", "(12 + 7 + 20) / 3"),
            ("¿Cuánto es 6 elevado a 4?", "6*4", "pow(6, 4)"),
            ("Three books at 4.50 and 2 pens at 1.25: what's the total?", "3*4.5 + 2*1.25", "3*4.5 + 2*1.25")):
        model = FakeLlama({text: [("evaluate", {"expression": wrote})]}, p_call=0.9)
        assert await decided(model, [{"role": "user", "content": text}], [EVALUATE, FORECAST, sum_up]) == [
            ("evaluate", {"expression": expression})], text


async def test_an_operation_on_a_json_result_is_that_operation_on_its_result_or_value_field() -> None:
    """A calculator that answers with an object (`{"expression": …, "value": "4165/2", "exact": true}`, `{"result":
    96}`): its result or value field is the number operated on; an object with no such field gives none."""
    for result, text, expression in (
            ('{"expression": "2450 * 0.85", "value": "4165/2", "exact": true, "note": ""}',
             "Split that between 5 people: how much each?", "(4165/2) / 5"),
            ('{"result": 96, "unit": null}', "Now divide that by 4.", "96 / 4"),
            ('{"answer": "96.5"}', "Multiply that by 3", "96.5 * 3")):
        model = FakeLlama({text: [("evaluate", {"expression": "5/2"})]}, p_call=0.2)
        assert await decided(model, calculated("what's 2450 times 0.85", result, text), [EVALUATE, FORECAST]) == [
            ("evaluate", {"expression": expression})], text
    text = "Now divide that by 4."
    model = FakeLlama({text: [("evaluate", {"expression": "12/4"})]}, p_call=0.2)
    assert await decided(model, calculated("what's 8 times 12", '{"exact": true, "count": 96}', text),
                         [EVALUATE, FORECAST]) == []


@pytest.mark.parametrize("result, expression", [("Result: 8 * 12 = 96", "96 / 4"),
                                                ('{"text": "**Answer** 8*12 = 96.0"}', "96.0 / 4"),
                                                ("8 * 12 = 96, and 96 = 2^5 * 3", None)])
async def test_a_result_shown_as_one_equation_is_the_number_after_its_equals_sign(result, expression) -> None:
    text = "and now divide that by 4"
    model = FakeLlama({text: [("evaluate", {"expression": "12/4"})]}, p_call=0.2)
    wanted = [("evaluate", {"expression": expression})] if expression else []
    assert await decided(model, calculated("what's 8 times 12", result, text), [EVALUATE, FORECAST]) == wanted


NUMBER = {"type": "number"}
NUMBERS = {"type": "array", "items": {"type": "number"}}
TIMES = tool("times", "Multiply x by y.", {"x": NUMBER, "y": NUMBER}, ["x", "y"], source="mcp:ops")
ROOT = tool("root", "The square root of a value.", {"value": NUMBER}, ["value"], source="mcp:ops")
ADD_ITEM = tool("add_item", "Add an item to the cart.", {"sku": TEXT, "count": NUMBER}, ["sku", "count"],
                source="mcp:ops")


def test_a_tool_that_says_an_operation_and_takes_numbers_only_calculates_and_shares_of_numbers_are_calculations():
    assert [calculates(t) for t in (TIMES, ROOT, ADD_ITEM, FORECAST)] == [True, True, False, False]
    search = tool("note_search", "Full-text search across notes. - query: a MATCH expression ('foo OR bar').",
                  {"query": TEXT}, ["query"])  # an expression said past its first sentence: not a calculator
    assert not calculates(search) and calculates(tool("calc", "Evaluate a math expression.", {"e": TEXT}, ["e"]))
    assert [asks_calculation(t) for t in ("How much is 15% of 80?", "square root of 1764", "page 15 of 80")] == [
        True, True, False]
    assert [asks_calculation(t) for t in ("Add Ana, who joined on 2025-06-02.", "Born 3.4.1990, right?",
                                          "What's 2025 - 6?")] == [False, False, True]  # a date is no subtraction


def test_a_calculation_reads_the_table_of_a_tool_taking_numbers_or_an_expression_not_one_of_dates() -> None:
    """Servers in no bench: a calendar whose tool says it calculates but takes dates (`days_between`), and one that
    adds a number of days to today (`shift_days`, no calculator: one number and an operation of two), beside an
    abacus evaluating an expression: "What's 312 times 0.4?" reads the abacus; a server of one tool per operation is
    read too, not a tip calculator, which names no multiplication; not a date parser of "a date expression"."""
    span = tool("days_between", "Calculate the days between two dates.", {"from": TEXT, "to": TEXT}, ["from", "to"],
                source="mcp:calendar")
    shift = tool("shift_days", "Add days to today's date.", {"days": NUMBER}, ["days"], source="mcp:calendar")
    words = {"type": "string", "description": "A date in words, e.g. 'next Friday'"}
    parse = tool("parse_date", "Parse a human-readable date expression.", {"description": words}, ["description"],
                 source="mcp:calendar")
    abacus = tool("evaluate", "Compute a formula exactly.", {"formula": TEXT}, ["formula"], source="mcp:abacus")
    tip = tool("tip", "Calculate a tip.", {"bill": NUMBER, "percent": NUMBER}, ["bill", "percent"], source="mcp:dine")
    text = "What's 312 times 0.4?"
    offered = [span, shift, parse, abacus, TIMES, ROOT, tip]
    decision = Decision(Talk(user(text)), offered, [Calculator()], text.lower())
    assert [Calculator().favours(decision, t) for t in ([span, shift, parse], [abacus], [TIMES, ROOT], [tip])] == [
        None, "calculator.asked", "calculator.asked", None]  # a date "expression" is no calculation's
    alone = Decision(Talk(user(text)), [span, shift], [Calculator()], text.lower())  # none takes numbers: as before
    assert Calculator().favours(alone, [span, shift]) == "calculator.asked" and not calculates(shift)


@pytest.mark.parametrize("text, asked", [
    ("We drove 420 km on 35 litres of fuel. How many km is that per litre?", True),
    ("Drei Freunde teilen sich eine Rechnung von 96 Euro. Wie viel zahlt jeder?", True),
    ("Si j'achète 3 cahiers à 2,40 € chacun, combien je paie en tout ?", True),
    ("Somos 5 y la cuenta es de 230 euros. ¿Cuánto paga cada uno?", True),
    ("Three receipts: 18.40, 7.15 and 32. What's the total?", True),
    ("Bilde die Summe aus 14, 9 und 27.", True),
    ("How many days from 2 May to 30 September?", False),  # a day of the calendar: date arithmetic
    ("Wie viele Tage sind es vom 3. Juni bis zum 1. August?", False),
    ("How many students joined in 2024?", False),  # one number
    ("How many rows are in sales-2024.xlsx?", False),  # a file's name holds no number said
    ("How many files are in my folder?", False),
])
def test_a_quantity_asked_of_two_numbers_said_in_digits_or_words_is_a_calculation(text, asked) -> None:
    assert asks_calculation(text) is asked


async def test_a_word_problem_reads_the_calculators_table_among_many_and_is_a_call_down_to_the_floor() -> None:
    """"Six of us share a taxi of 74.40: how much each?" shares no word with a tool that evaluates expressions; a
    server of many spreadsheet tools sharing "share" is passed over for it."""
    sheets = [tool(f"{verb}_{thing}", f"{verb.title()} the {thing} of a shared workbook.", {"path": TEXT}, ["path"],
                   source="mcp:sheets") for verb in ("read", "write", "share", "merge") for thing in ("range", "cells",
                                                                                                   "sheet")]
    text = "Six of us share a taxi of 74.40. How much does each of us pay?"
    model = FakeLlama({text: [("evaluate", {"expression": "74.40/6"})]}, p_call=0.2)
    assert await decided(model, user(text), [*sheets, EVALUATE]) == [("evaluate", {"expression": "74.40/6"})]
    assert await decided(model, user(text), [*sheets, EVALUATE], shapes={"calculator": False}) == []


async def test_a_calculation_on_a_server_of_one_tool_an_operation_is_named_among_the_tools_that_calculate() -> None:
    text = "what is 48 x 37"
    likes_the_cart = {"": [('add_item",', 0.6), ('times",', 0.3), ('root",', 0.1)]}
    model = FakeLlama({text: [("times", {"x": 48, "y": 37}), ("add_item", {"sku": "48", "count": 37})]},
                      name_tokens=likes_the_cart, p_call=0.2)
    assert await decided(model, user(text), [ADD_ITEM, TIMES, ROOT]) == [("times", {"x": 48, "y": 37})]


async def test_tools_taking_a_list_of_numbers_calculate_and_a_calculation_is_a_call_of_one_of_them() -> None:
    """A statistics server whose every tool takes one list of numbers (`total(values)`, `mean_of(values)`) beside a
    clock: each tool saying an operation calculates (a list is several numbers, so two-number operations count),
    one saying none, or taking a list of texts, does not; "What do 12, 7 and 20 come to altogether?" reads its table
    and is a call down to the floor, not the clock's."""
    values = {"type": "array", "items": {"type": "number"}, "description": "The values."}
    names = {"type": "array", "items": {"type": "string"}}
    total = tool("total", "Add up all the values.", {"values": values}, ["values"], source="mcp:stats")
    mean = tool("mean_of", "The arithmetic mean of the values.", {"values": values}, ["values"], source="mcp:stats")
    spread = tool("spread", "Largest minus smallest value.", {"values": values}, ["values"], source="mcp:stats")
    highest = tool("highest", "The maximum of the values.", {"values": values}, ["values"], source="mcp:stats")
    order = tool("in_order", "Sort the values.", {"values": values}, ["values"], source="mcp:stats")
    tags = tool("tag_sum", "Add tags to a sum.", {"tags": names}, ["tags"], source="mcp:stats")
    assert [calculates(t) for t in (total, mean, spread, highest, order, tags)] == [
        True, True, True, True, False, False]
    clock = tool("time_in", "The time now in a city.", {"city": TEXT}, ["city"], source="mcp:clock", read_only=True)
    stats = [total, mean, spread, highest, order, tags]
    filler = [tool(f"{v}_timer", f"{v.title()} a timer.", {"seconds": NUMBER}, ["seconds"], source="mcp:clock")
              for v in ("start", "stop", "pause", "reset", "name")]
    text = "What do 12, 7 and 20 come to altogether?"
    likes_the_clock = {"": [('time_in",', 0.7), ('total",', 0.2), ('mean_of",', 0.1)]}
    model = FakeLlama({text: [("total", {"values": [12, 7, 20]}), ("time_in", {"city": "12"})]},
                      name_tokens=likes_the_clock, p_call=0.2)
    assert await decided(model, user(text), [clock, *filler, *stats]) == [("total", {"values": [12, 7, 20]})]
    assert await decided(model, user(text), [clock, *filler, *stats], shapes={"calculator": False}) == []


@pytest.mark.parametrize("text, op", [
    ("Quanto fa 19 per 4?", None),  # Italian is not read: no operation
    ("How much is 250 multiplied by 3?", "*"), ("Teile 84 durch 6, bitte.", "/"), ("¿Cuánto es 90 dividido por 6?", "/"),
    ("Was ist 12 mal 9?", "*"), ("Calcule 7 puissance 4.", "^"), ("What's 30 squared?", "^"),
    ("Quelle est la moyenne de 3, 9 et 12 ?", "mean"), ("Raíz cuadrada de 144", "root"),
    ("Take away 45 from 300.", "-"), ("What do 4, 8 and 15 add up to?", "+"), ("What is 40% of 90?", "*"),
    ("Sag mal, was ist 12 plus 7?", None),  # "mal" as a filler reads as times too: two operations, none chosen
    ("The meaning of 42 and 7", None), ("Sometimes I get 3 and 4 mixed up", None),
    ("Move the meeting from 2025-06-02 to 2025-06-09", None),
])
def test_the_one_operation_a_message_states_is_read_in_four_languages(text, op) -> None:
    assert operation_stated(text) == op


SUITE = [tool(name, description, properties, list(properties), source="mcp:suite") for name, description, properties in (
    ("shape_tool", "Geometry calculation tool: areas and volumes.", {"shape": TEXT, "sizes": NUMBERS}),
    ("loan_tool", "Financial calculation tool: loans and interest.", {"principal": NUMBER, "rate": NUMBER}),
    ("arith_tool", "Arithmetic calculation tool.", {"op": {"type": "string", "description": (
        "The operation. Supports: 'plus', 'minus', 'multiply', 'divide', 'pow'")}, "values": NUMBERS}),
    ("stats_tool", "Statistics calculation tool: spread and correlation.", {"data": NUMBERS}),
    ("convert_tool", "Unit conversion calculation tool.", {"value": NUMBER, "unit": TEXT}),
    ("matrix_tool", "Matrix calculation tool.", {"rows": NUMBERS}),
    ("plot_tool", "Chart calculation tool.", {"points": NUMBERS}),
    ("prime_tool", "Number theory calculation tool.", {"n": NUMBER}),
    ("angle_tool", "Trigonometry calculation tool.", {"angle": NUMBER}),
    ("clean_tool", "Deletes the calculation files.", {}),
    ("roots_tool", "Equation solving calculation tool.", {"equation": TEXT}),
)]


async def test_of_many_tools_that_calculate_those_naming_the_operation_stated_are_offered_and_its_name_written() -> None:
    """A suite whose every tool "calculates" (one for geometry, one for loans…), one of them naming its operations
    as values of a parameter: "What is 348 times 27?" is a call of that one, not of the likeliest name, with the value
    naming a multiplication, even where its name is not among the model's likeliest (it writes the one it may); a
    question stating no operation leaves every calculator offered."""
    text = "What is 348 times 27?"
    likes_geometry = {"": [('shape_tool",', 0.6), ('loan_tool",', 0.4)]}
    model = FakeLlama({text: [("arith_tool", {"op": "plus", "values": [348, 27]}),
                              ("shape_tool", {"shape": "square", "sizes": [348, 27]})]},
                      name_tokens=likes_geometry, p_call=0.9)
    assert await decided(model, user(text), SUITE) == [("arith_tool", {"op": "multiply", "values": [348, 27]})]
    vague = "Work out 348 and 27 for me, whatever is handy."
    likes_stats = {"": [('stats_tool",', 0.6), ('arith_tool",', 0.1), ('loan_tool",', 0.3)]}
    model = FakeLlama({vague: [("stats_tool", {"data": [348, 27]})]}, name_tokens=likes_stats, p_call=0.9)
    assert await decided(model, user(vague), SUITE) == [("stats_tool", {"data": [348, 27]})]


def test_a_text_naming_one_of_listed_operations_is_a_choice_not_an_expression_to_evaluate() -> None:
    """A finance tool whose one text is "Calculation type: 'interest', 'payment', 'annuity'" takes no calculation's
    expression (it was written "348 * 27"); one whose text is "a math expression" does."""
    kinds = {"type": "string", "description": "Calculation type: 'interest', 'payment', 'annuity'"}
    finance = tool("finance", "Financial calculation tool.", {"operation": kinds}, ["operation"])
    enum = tool("units", "Unit calculation tool.", {"unit": {"type": "string", "enum": ["m", "km"]}}, ["unit"])
    expression = tool("calc", "Evaluate a math expression.", {"e": {"type": "string", "description": "An expression"}},
                      ["e"])
    assert [calculates(t, operands=True) for t in (finance, enum, expression)] == [False, False, True]


async def test_an_operation_no_tool_names_is_not_a_call_of_a_tool_naming_another() -> None:
    """A server of one tool per operation with no power: "Wie viel ist 17 hoch 3?" calls none (not `add`, which the
    model likes); with a tool for powers beside them, that one."""
    pair = {"a": NUMBER, "b": NUMBER}
    ops = [tool(name, f"{verb} two numbers.", pair, ["a", "b"], source="mcp:ops")
           for name, verb in (("plus", "Add"), ("times", "Multiply"), ("over", "Divide"))]
    text = "Wie viel ist 17 hoch 3?"
    model = FakeLlama({text: [("plus", {"a": 17, "b": 3}), ("raise", {"a": 17, "b": 3})]}, p_call=0.9)
    assert await decided(model, user(text), ops) == []
    raise_ = tool("raise", "Raise a to the power b.", pair, ["a", "b"], source="mcp:ops")
    assert await decided(model, user(text), [*ops, raise_]) == [("raise", {"a": 17, "b": 3})]


def turn_of(text: str, *calls: tuple[str, dict[str, Any], str]) -> list[dict[str, Any]]:
    """The person's message, then each call of this turn and its result."""
    messages = user(text)
    for number, (name, arguments, result) in enumerate(calls):
        call = {"id": f"c{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        messages += [{"role": "assistant", "content": "", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"c{number}", "content": result}]
    return messages


async def test_a_sum_or_mean_of_more_numbers_than_a_tool_of_two_takes_is_worked_out_a_pair_at_a_time() -> None:
    """A server of tools taking two numbers: after the first addition, the sum goes on with the last result and the
    next number said until every number is taken; a mean ends with the division by the count; a product the same
    way; not a result that is no number, nor a message of two numbers."""
    pair = {"a": NUMBER, "b": NUMBER}
    ops = [tool(name, f"{verb} two numbers.", pair, ["a", "b"], source="mcp:ops")
           for name, verb in (("plus", "Add"), ("times", "Multiply"), ("over", "Divide"))]
    quiet = FakeLlama({}, p_call=0.0)  # the model would call nothing more
    text = "Add up 120.50, 89.99 and 240."
    first = ("plus", {"a": 120.5, "b": 89.99}, "210.49")
    assert await decided(quiet, turn_of(text, first), ops) == [("plus", {"a": 210.49, "b": 240.0})]
    assert await decided(quiet, turn_of(text, first, ("plus", {"a": 210.49, "b": 240}, "450.49")), ops) == []
    other_pair = ("plus", {"a": 240, "b": 89.99}, "329.99")  # the model began with another pair: the one left
    assert await decided(quiet, turn_of(text, other_pair), ops) == [("plus", {"a": 329.99, "b": 120.5})]
    mean = "Quelle est la moyenne de 14, 18, 23 et 9 ?"
    steps = [("plus", {"a": 14, "b": 18}, "32"), ("plus", {"a": 32, "b": 23}, "55"), ("plus", {"a": 55, "b": 9}, "64")]
    assert await decided(quiet, turn_of(mean, *steps[:2]), ops) == [("plus", {"a": 55.0, "b": 9.0})]
    assert await decided(quiet, turn_of(mean, *steps), ops) == [("over", {"a": 64.0, "b": 4})]
    product = "Multiply 2, 3 and 7 please"
    assert await decided(quiet, turn_of(product, ("times", {"a": 2, "b": 3}, "6")), ops) == [
        ("times", {"a": 6.0, "b": 7.0})]
    assert await decided(quiet, turn_of(product, ("times", {"a": 2, "b": 3}, "six")), ops) == []
    assert await decided(quiet, turn_of("Add 4 and 5.", ("plus", {"a": 4, "b": 5}, "9")), ops) == []


@pytest.mark.parametrize("text, share", [("What is 40% of 90?", 0.4), ("Combien font 12,5 % de 2000 ?", 0.125),
                                         ("Wie viel sind 8 Prozent von 350?", 0.08)])
async def test_a_percentage_of_a_number_multiplied_by_a_tool_is_written_as_its_share(text, share) -> None:
    """A tool that multiplies two numbers is given the percentage said as its share; one that says it takes a
    percent keeps it as said."""
    number = float(text.split()[-1].rstrip("?")) if text[-2].isdigit() else None
    said = float(share * 100)
    other = 90 if "90" in text else 2000 if "2000" in text else 350
    model = FakeLlama({text: [("times", {"x": said, "y": other})]}, p_call=0.9)
    assert await decided(model, user(text), [TIMES, ROOT]) == [("times", {"x": share, "y": other})]
    percent_of = tool("percent_of", "Multiply a number by a percent.", {"percent": NUMBER, "of": NUMBER},
                      ["percent", "of"], source="mcp:ops")
    model = FakeLlama({text: [("percent_of", {"percent": said, "of": other})]}, p_call=0.9)
    assert await decided(model, user(text), [percent_of, ROOT]) == [("percent_of", {"percent": said, "of": other})]
    assert number is None or number == other


# --- memory ---------------------------------------------------------------------------------------------------


KEEP = tool("store_fact", "Save a fact about the user to long-term memory.", {"fact": TEXT}, ["fact"],
            source="mcp:recall")
FIND = tool("find_facts", "Look up saved memories matching a query.", {"query": TEXT}, ["query"],
            source="mcp:recall", read_only=True)
ERASE = tool("erase_fact", "Erase one saved memory.", {"fact": TEXT}, ["fact"], source="mcp:recall",
             destructive=True)
STORE = [KEEP, FIND, ERASE, FORECAST]


@pytest.mark.parametrize("text, asked", [
    ("Could you memorize my shoe size, 44?", "keep"), ("Don't forget that my passport expires in May", "keep"),
    ("Merk dir bitte, dass ich kein Gluten esse.", "keep"), ("Ricordati che il cane si chiama Bruno.", "keep"),
    ("Do you remember where I parked?", "recall"), ("¿Te acuerdas de mi color favorito?", "recall"),
    ("I told you my dentist's name last week, what was it?", "recall"), ("Forget my old address.", "forget"),
    ("Olvida lo que te dije sobre Pedro.", "forget"),
    ("How do I forget a wifi network on my Mac?", None), ("I can't remember the name of that movie", None),
    ("Please note: the gate code is 1234", None), ("Add a note: call mom", None),
    ("Guarda también que le gusta la lavanda.", "keep"), ("Enregistre que Paul boit son café sans sucre.", "keep"),
    ("Speichere bitte, dass Ada Tee mag.", "keep"), ("Save that file as notes.txt.", None),  # "save … that": a file
    ("Guarda el archivo en la carpeta.", None), ("Salva il documento.", None),
])
def test_a_message_asks_a_memory_to_keep_recall_or_forget_only_when_it_asks_the_assistant(text, asked) -> None:
    assert asks_memory(text) == asked


@pytest.mark.parametrize("text, asked", [
    ("Put in your long-term memory that my blood type is O+", "keep"),
    ("Check your knowledge base for the boiler's service date", "recall"),
    ("Which plumber did the knowledge graph have?", "recall"), ("Remove the old gate code from your memory", "forget"),
    ("What is a knowledge base?", None), ("How much memory does this laptop have?", None),
    ("What's the memory usage of the build?", None), ("Convert 300 KB to MB", None),
    ("Dis-moi ce que tu sais de ma voisine.", "recall"),
])
def test_a_message_that_addresses_a_store_asks_what_its_verb_does_or_recalls_if_a_question(text, asked) -> None:
    assert asks_memory(text) == asked


@pytest.mark.parametrize("text, recalled", [("Where is the spare key?", True), ("Under which pot was it?", True),
                                            ("Where is the nearest bakery?", False),
                                            ("Move the spare key to the shed.", False)])
async def test_a_question_about_what_the_conversation_gave_a_store_to_keep_recalls_it(text, recalled) -> None:
    """A question sharing a word with a keep call's values reads the store; another question, or a request, not."""
    kept = called("k1", "store_fact", '{"fact": "the spare key is under the blue pot"}', "Saved.")
    messages = [*user("Keep this for later: the spare key is under the blue pot."), *kept,
                {"role": "assistant", "content": "Saved."}, *user(text)]
    model = FakeLlama({text: [("find_facts", {"query": "spare key"}), ("forecast", {"city": "Lyon"})]},
                      p_call=0.01, name_tokens={"": [('find_facts",', 0.5), ('forecast",', 0.5)]})
    assert bool(await decided(model, messages, STORE)) == recalled


def test_a_knowledge_base_is_a_store_as_a_memory_or_a_knowledge_graph_is() -> None:
    entry = tool("save", "Create or update a KB entry.", {"title": TEXT}, ["title"], source="mcp:facts")
    base = tool("search", "Full-text search of the knowledge base.", {"query": TEXT}, ["query"], source="mcp:x")
    assert stores(entry) and stores(base) and not stores(FORECAST)


@pytest.mark.parametrize("text, wanted", [
    ("Could you memorize my shoe size, 44?", ("store_fact", {"fact": "shoe size 44"})),
    ("Do you remember where I parked?", ("find_facts", {"query": "parked"})),
    ("Forget my old address.", ("erase_fact", {"fact": "old address"})),
])
async def test_a_memory_asked_of_a_store_is_written_as_a_call_of_its_tools_whatever_the_chance(text, wanted) -> None:
    """The small model's chance of a call for "do you remember…" is near 0; the store's tools are the only way to
    keep or recall anything, and the tool is one that writes, reads or deletes, as the message asks."""
    others = [name for name in ("store_fact", "find_facts", "erase_fact") if name != wanted[0]]
    # the model leans to another tool (its chance of the one asked for is under the name floor) and says the one
    # asked for does not fit: the shape chose the kind of tool, so neither stops the call
    model = FakeLlama({text: [(others[0], wanted[1]), wanted]}, p_call=0.01, misfits=frozenset({wanted[0]}),
                      name_tokens={"": [(others[0] + '",', 0.9), (wanted[0] + '",', 0.02), (others[1] + '",', 0.08)]})
    assert await decided(model, user(text), STORE) == [wanted]
    assert await decided(model, user(text), STORE, shapes={"memory": False}) == []
    assert [s.id for s in shapes_for(STORE)] == ["memory"] and shapes_for([FORECAST]) == []


STASH = [tool("stash_put", "Save a memory under a key.", {"key": TEXT, "value": TEXT}, ["key", "value"],
              source="mcp:stash"),
         tool("stash_get", "Get the memory saved under a key.", {"key": TEXT}, ["key"], source="mcp:stash"),
         FORECAST]


@pytest.mark.parametrize("text, written, kept", [
    ("Remember that the gate code at my allotment is 4412.", {"key": "allotment", "value": "4412"},
     "the gate code at my allotment is 4412"),
    ("Recuerda que la llave del trastero está debajo de la maceta.", {"key": "llave", "value": "maceta"},
     "la llave del trastero está debajo de la maceta"),
    ("Remember that the gate code at my allotment is 4412.", {"key": "gate_code", "value": "allotment gate: 4412"},
     None),  # it holds what was asked to keep: as written
])
async def test_what_a_message_asks_a_store_to_keep_is_kept_in_its_words_where_the_call_loses_them(
        text, written, kept) -> None:
    """A small model keeps "Remember that the code for the practice room is 7731" as `music_school`: `7731`, and a
    later question finds nothing: the value is the words asked to keep, where the call's texts hold under two
    thirds of them."""
    model = FakeLlama({text: [("stash_put", written)]}, p_call=0.9)
    wanted = {**written, "value": kept} if kept else written
    assert await decided(model, user(text), STASH) == [("stash_put", wanted)]


PEOPLE = [tool("add_people", "Add people to the memory graph, with facts about each.", {"people": {
    "type": "array", "items": {"type": "object", "properties": {"name": TEXT, "facts": {
        "type": "array", "items": {"type": "string"}}}}}}, ["people"], source="mcp:graph"),
          tool("find_people", "Search the memory graph for people.", {"query": TEXT}, ["query"], source="mcp:graph")]


@pytest.mark.parametrize("text, written, kept", [
    ("Remember that Ines is allergic to peanuts.", {"people": [{"name": "Ines", "facts": ["I am Ines."]}]},
     {"people": [{"name": "Ines", "facts": ["Ines is allergic to peanuts"]}]}),
    ("Merk dir, dass Ines am 3. Juli Geburtstag hat.",
     {"people": [{"name": "Ines", "facts": ["Geburtstag am 3. Juli"]}]}, None),  # the facts hold the words kept
])
async def test_what_is_kept_in_a_store_of_objects_is_each_objects_value_in_its_words(text, written, kept) -> None:
    model = FakeLlama({text: [("add_people", written)]}, p_call=0.9)
    assert await decided(model, user(text), PEOPLE) == [("add_people", kept or written)]


@pytest.mark.parametrize("text, recalled", [("What was my saved locker code again?", True),
                                            ("¿Cuál es mi fact preferido para Lyon?", True),
                                            ("Where does my brother live?", True), ("Wie heißt mein Hund?", True),
                                            ("What is my forecast for Lyon tomorrow?", False)])
async def test_a_question_about_the_person_recalls_where_the_store_is_the_most_relevant(text, recalled) -> None:
    """Recalled where a store's tool ranks first, or where no tool shares a word with the question."""
    said = next(word for word in ("Lyon", "brother", "Hund", "locker") if word in text)
    model = FakeLlama({text: [("find_facts", {"query": said}),
                              ("forecast", {"city": "Lyon"})]}, p_call=0.01,
                      name_tokens={"": [('find_facts",', 0.5), ('forecast",', 0.5)]})
    assert bool(await decided(model, user(text), STORE)) == recalled


async def test_a_store_s_tool_that_reads_everything_is_called_with_nothing_said_where_the_shape_chose_the_store():
    """The meaning floor stops a call on the model's wish alone; a shape's rule chose this store for the message."""
    text = "What's my gym locker number?"
    dump = tool("dump_memory", "Return the whole knowledge graph.", {}, source="mcp:recall", read_only=True)
    model = FakeLlama({text: [("dump_memory", {})]}, p_call=0.9, name_tokens={"": [('dump_memory",', 0.9),
                                                                                   ('find_facts",', 0.1)]})
    assert await decided(model, user(text), [KEEP, FIND, dump, FORECAST], embedder=Embedder()) == [("dump_memory", {})]



@pytest.mark.parametrize("text, wanted", [("Remember that my locker is 77.", "save"),
                                          ("What do you know about my dentist?", "search"),
                                          ("Forget what you stored about my boiler.", "delete")])
async def test_a_store_without_annotations_is_asked_by_its_names_verbs(text, wanted) -> None:
    """A store whose tools carry no annotations: the tool that keeps, reads or deletes is told by its name's verb."""
    kb = [tool(name, f"{name.title()} a knowledge base entry.", {"query": TEXT}, ["query"], source="mcp:kb")
          for name in ("relate", "save", "search", "delete")]
    said = text.rstrip(".?").split()[-1]
    model = FakeLlama({text: [(name, {"query": said}) for name in ("relate", "save", "search", "delete")]},
                      p_call=0.01, name_tokens={"": [('relate",', 0.7), ('save",', 0.1), ('search",', 0.1),
                                                     ('delete",', 0.1)]})
    assert [name for name, _ in await decided(model, user(text), kb)] == [wanted]


async def test_a_store_that_deletes_by_id_finds_what_to_forget_first() -> None:
    """Forgetting in a store whose deleting tool takes an id: the id is not said, so its finding tool is called."""
    text = "Forget what you saved about the garage door."
    kb = [tool("remove_item", "Remove a memory item by its id.", {"item_id": {"type": "integer"}}, ["item_id"],
               source="mcp:memo"),
          tool("find_items", "Find memory items by keyword.", {"keyword": TEXT}, ["keyword"], source="mcp:memo"),
          tool("add_item", "Add a memory item.", {"text": TEXT}, ["text"], source="mcp:memo")]
    wanted = ("find_items", {"keyword": "garage door"})
    model = FakeLlama({text: [("remove_item", {"item_id": 7}), wanted]}, p_call=0.3,
                      name_tokens={"": [('remove_item",', 0.8), ('find_items",', 0.1), ('add_item",', 0.1)]})
    assert await decided(model, user(text), kb) == [wanted]


async def test_a_list_of_requests_for_files_holds_the_file_named_placed_in_the_servers_folder(tmp_path) -> None:
    """A batch reader whose requests are free objects: the model copies the description's first example (a cursor);
    the request is the file named, under the key the description's example gives it."""
    (tmp_path / "garden").mkdir()
    (tmp_path / "garden/beds.md").write_text("x")
    home = str(tmp_path)
    batch = tool("fetch_files", 'Read files. Each request is {"cursor": "<opaque>"} to go on, or '
                 '{"path": "/abs/file", "mode": "all"}.', {"requests": {"type": "array", "items": {"type": "object"}}},
                 ["requests"], source="mcp:ed", places=(home,), read_only=True)
    text = "What's in garden/beds.md?"
    for written in ([{"cursor": "0"}], [{"path": "beds.md", "mode": "all"}]):
        model = FakeLlama({text: [("fetch_files", {"requests": written})]}, p_call=0.9)
        kept = {"mode": "all"} if "mode" in written[0] else {}
        assert await decided(model, user(text), [batch, FORECAST]) == [
            ("fetch_files", {"requests": [{**kept, "path": f"{home}/garden/beds.md"}]})]


async def test_a_folder_named_is_listed_by_a_tool_of_several_actions_where_its_server_marks_none(tmp_path) -> None:
    (tmp_path / "garden").mkdir()
    text = "What files are in my garden folder?"
    home = str(tmp_path)
    plain = [tool("file_ops", 'File operations: write, append or delete.', {"action": TEXT, "file_path": TEXT},
                  ["action"], source="mcp:ed", places=(home,)),
             tool("dir_ops", 'Directory operations: create, list, or delete.', {"action": TEXT, "dir_path": TEXT},
                  ["action"], source="mcp:ed", places=(home,))]
    wanted = ("dir_ops", {"action": "list", "dir_path": f"{home}/garden"})
    model = FakeLlama({text: [("file_ops", {"action": "append", "file_path": f"{home}/garden"}), wanted]},
                      p_call=0.2, name_tokens={"": [('file_ops",', 0.8), ('dir_ops",', 0.2)]})
    assert await decided(model, user(text), plain) == [wanted]


def test_the_one_required_text_parameter_of_a_tool_named_for_files_is_not_taken_for_a_file() -> None:
    from sidespin.tooluse.shapes.folders import _takes_file
    ops = tool("file_ops", "File operations.", {"action": TEXT, "file_path": TEXT}, ["action"])
    reader = tool("read_files", "A reader.", {"requests": {"type": "array"}}, ["requests"])
    assert not _takes_file(ops, "action") and _takes_file(ops, "file_path") and _takes_file(reader, "requests")


async def test_a_servers_own_folder_given_where_the_message_names_one_inside_it_is_that_folder(tmp_path) -> None:
    (tmp_path / "receipts" / "2026").mkdir(parents=True)
    shelf = _shelf(str(tmp_path))
    for text in ("List my receipts folder, please.", "Qu'y a-t-il dans le dossier receipts ?"):
        model = FakeLlama({text: [("catalog", {"dir": str(tmp_path)})]})
        assert await decided(model, user(text), shelf) == [("catalog", {"dir": f"{tmp_path}/receipts"})], text
    text = "What does my documents folder hold?"  # no folder of the server's named: its own stays
    model = FakeLlama({text: [("catalog", {"dir": str(tmp_path)})]})
    assert await decided(model, user(text), shelf) == [("catalog", {"dir": str(tmp_path)})]


def test_of_a_servers_tables_a_shape_favours_one_with_a_tool_of_the_kind_of_change_asked_is_read_first(tmp_path):
    """A spreadsheet server in no bench, cut in two tables: "change the price…" in a file it holds ranks the table
    of tools that make new books first by its words; the one with a tool that changes cells is read instead, and a
    question reads a table with a tool that reads."""
    (tmp_path / "plan.xlsx").write_bytes(b"")
    home, path = (str(tmp_path),), {"path": TEXT}
    new = [tool(f"create_{kind}", f"Create a new price {kind}.", path, ["path"], source="mcp:grid", places=home)
           for kind in ("book", "tab", "chart")]
    cells = [tool("write_cells", "Write values into cells.", path, ["path"], source="mcp:grid", places=home),
             tool("read_cells", "Read values from cells.", path, ["path"], source="mcp:grid", places=home,
                  read_only=True)]
    for text in ("In plan.xlsx, change the price of tea to 4.", "What prices are in plan.xlsx?"):
        decision = Decision(Talk(user(text)), [*new, *cells], [Folders()], text.lower())
        decision.ranked = rank(decision.tools, text, None)
        assert decision.table_in([new, cells]) == (1, "a shape favours it"), text


async def test_a_folder_given_for_a_file_is_the_held_file_the_message_speaks_of(tmp_path) -> None:
    """`folders.held_file`: "When did we pick the first beans? It's in the harvest log." written with the server's
    folder as the workbook: the one file it holds that the message says a word of is the file. Two files of that
    word, or none, leave the folder as written (the call fails and says so)."""
    for name in ("harvest-log.xlsx", "harvest-plan.xlsx", "seed-order.xlsx"):
        (tmp_path / name).write_bytes(b"PK")
    folder = str(tmp_path)
    cells = dataclasses.replace(tool("search_cells", "Search the cells of a workbook for a value.",
                                     {"workbook_path": TEXT, "value": TEXT}, ["workbook_path", "value"],
                                     source="mcp:sheets", read_only=True, places=(folder,)),
                                holds=("harvest-log.xlsx", "seed-order.xlsx"))
    for text, value, wanted in (("When did we pick the first beans? It's in the harvest log.", "beans",
                                 "harvest-log.xlsx"), ("Did we order carrot seeds?", "carrot", "seed-order.xlsx"),
                                ("Where are the beans?", "beans", None)):
        model = FakeLlama({text: [("search_cells", {"workbook_path": folder, "value": value})]})
        calls = await decided(model, user(text), [cells, EVALUATE])
        assert calls and calls[0][1]["workbook_path"] == (f"{folder}/{wanted}" if wanted else folder), text
    both = dataclasses.replace(cells, holds=("harvest-log.xlsx", "harvest-plan.xlsx"))
    text = "When did we pick the first beans? It's in the harvest log."
    model = FakeLlama({text: [("search_cells", {"workbook_path": folder, "value": "beans"})]})
    assert (await decided(model, user(text), [both, EVALUATE]))[0][1]["workbook_path"] == folder


async def test_a_zone_tool_is_not_named_for_a_message_that_says_nothing_of_time() -> None:
    members = tool("find_members", "Find the club's members.", {"query": TEXT}, ["query"], source="mcp:club",
                   read_only=True)
    where = "Which members live in Oslo?"
    model = FakeLlama({where: [("wall_clock", {"zone": "Europe/Oslo"}), ("find_members", {"query": "Oslo"})]})
    assert (await decided(model, user(where), [WALL, members])) == [("find_members", {"query": "Oslo"})]
    model = FakeLlama({where: [("wall_clock", {"zone": "Europe/Oslo"})]})
    assert (await decided(model, user(where), [WALL, members], shapes={"timezones": False})) == [
        ("wall_clock", {"zone": "Europe/Oslo"})]  # the rule is what leaves the clock out
    for asked in ("How late is it in Oslo?", "Quelle heure est-il à Oslo ?", "Is it past 9:30 in Oslo?"):
        model = FakeLlama({asked: [("wall_clock", {"zone": "Europe/Oslo"})]})
        assert (await decided(model, user(asked), [WALL, members])) == [("wall_clock", {"zone": "Europe/Oslo"})]
    follow = [*user("What time is it in Oslo?"), *called("c1", "wall_clock", '{"zone": "Europe/Oslo"}', "09:12"),
              {"role": "assistant", "content": "It is 09:12."}, *user("And in Lima?")]
    model = FakeLlama({"And in Lima?": [("wall_clock", {"zone": "America/Lima"})]})
    assert (await decided(model, follow, [WALL, members])) == [("wall_clock", {"zone": "America/Lima"})]


# --- database -------------------------------------------------------------------------------------------------


GARDEN = ("plants(id, name, species, height)", "beds(id, label, soil)")
STATEMENT = dataclasses.replace(tool("run_statement", "Run one SQL statement on the garden's database.",
                                     {"sql": TEXT}, ["sql"], source="mcp:garden"), holds=GARDEN)
INSERT_ROW = dataclasses.replace(tool("insert_row", "Insert a row into a table.", {"table": TEXT, "values": {
    "type": "object"}}, ["table", "values"], source="mcp:garden"), holds=GARDEN)


async def test_a_new_rows_id_no_one_said_is_left_for_the_database_to_give() -> None:
    fern = "Add a fern called Fiddlehead to my plants, 30 cm tall."
    written = "INSERT INTO plants (id, name, species, height) VALUES (7, 'Fiddlehead', 'fern', 30);"
    model = FakeLlama({fern: [("run_statement", {"sql": written})]})
    assert (await decided(model, user(fern), [STATEMENT])) == [("run_statement", {
        "sql": "INSERT INTO plants (name, species, height) VALUES ('Fiddlehead', 'fern', 30);"})]
    numbered = "Add plant number 12: a fern called Fiddlehead."
    said = "INSERT INTO plants (id, name) VALUES (12, 'Fiddlehead')"
    model = FakeLlama({numbered: [("run_statement", {"sql": said})]})
    assert (await decided(model, user(numbered), [STATEMENT])) == [("run_statement", {"sql": said})]
    model = FakeLlama({fern: [("insert_row", {"table": "plants", "values": {"id": 4, "name": "Fiddlehead"}})]})
    assert (await decided(model, user(fern), [INSERT_ROW])) == [
        ("insert_row", {"table": "plants", "values": {"name": "Fiddlehead"}})]
    model = FakeLlama({fern: [("run_statement", {"sql": written})]})
    assert (await decided(model, user(fern), [STATEMENT], shapes={"database": False})) == [
        ("run_statement", {"sql": written})]


async def test_a_statement_naming_columns_its_table_lacks_is_on_the_one_held_table_that_has_them() -> None:
    soil = "Put loam in bed B2."
    model = FakeLlama({soil: [("run_statement", {"sql": "UPDATE plants SET soil = 'loam' WHERE label = 'B2'"})]})
    assert (await decided(model, user(soil), [STATEMENT])) == [
        ("run_statement", {"sql": "UPDATE beds SET soil = 'loam' WHERE label = 'B2'"})]
    tall = "Which plants are taller than 40?"  # its columns are its table's: as written
    model = FakeLlama({tall: [("run_statement", {"sql": "SELECT name FROM plants WHERE height > 40"})]})
    assert (await decided(model, user(tall), [STATEMENT])) == [
        ("run_statement", {"sql": "SELECT name FROM plants WHERE height > 40"})]
    for asked, sql in (("What grows in bed B2?", "SELECT id FROM beds WHERE name = 'B2'"),  # the table named
                       ("Which plants are Blue Moon?", "SELECT name FROM plants WHERE colour = 'Blue Moon'")):  # none has it
        model = FakeLlama({asked: [("run_statement", {"sql": sql})]})
        assert (await decided(model, user(asked), [STATEMENT])) == [("run_statement", {"sql": sql})]


async def test_an_object_written_again_with_no_new_word_the_message_says_is_not_one_more_call() -> None:
    fern = "Add a fern called Fiddlehead, 30 cm tall, to my plants."
    once, again = {"name": "Fiddlehead", "height": 30}, {"name": "Fiddlehead", "height": "30"}
    model = FakeLlama({fern: [("insert_row", {"table": "plants", "values": once}),
                              ("insert_row", {"table": "plants", "values": again})]})
    assert (await decided(model, user(fern), [INSERT_ROW])) == [("insert_row", {"table": "plants",
                                                                                     "values": once})]


async def test_a_row_looked_up_by_an_id_no_one_said_is_looked_up_by_the_name_the_message_gives() -> None:
    holds = ("plants(id, name, species, height)", "harvests(id, plant_id, kilos)")
    statement = dataclasses.replace(STATEMENT, holds=holds)
    updating = dataclasses.replace(tool("update_rows", "Update the rows of a table that match a condition.", {
        "table": TEXT, "values": {"type": "object"}, "where": {"type": "object"}}, ["table", "values", "where"],
        source="mcp:garden"), holds=holds)
    for asked, wrote, wanted in (
            ("Set Fiddlehead's height to 20 cm.", "UPDATE plants SET height = 20 WHERE id = 7",
             "UPDATE plants SET height = 20 WHERE name = 'Fiddlehead'"),
            ("Old Man Cactus is 20 cm tall now.", "UPDATE plants SET height = 20 WHERE id = 7",
             "UPDATE plants SET height = 20 WHERE name = 'Old Man Cactus'"),
            ("How many kilos did Sweet Basil give?", "SELECT sum(kilos) FROM harvests WHERE plant_id = 3",
             "SELECT sum(kilos) FROM harvests WHERE plant_id = (SELECT id FROM plants WHERE name = 'Sweet Basil')"),
            ("Cut plant 7 back to 20 cm.", "UPDATE plants SET height = 20 WHERE id = 7",  # the id said: kept
             "UPDATE plants SET height = 20 WHERE id = 7"),
            ("Cut both Fiddlehead and Maidenhair back to 20 cm.", "UPDATE plants SET height = 20 WHERE id = 7",
             "UPDATE plants SET height = 20 WHERE id = 7")):  # two names: which one is not known
        model = FakeLlama({asked: [("run_statement", {"sql": wrote})]})
        assert (await decided(model, user(asked), [statement])) == [("run_statement", {"sql": wanted})], asked
    asked = "Please update the height of Fiddlehead to 20 cm."
    for where in ({"id": 2}, {"plant_id": "Fiddlehead"}):  # an id made up; a name under an id the table lacks
        model = FakeLlama({asked: [("update_rows", {"table": "plants", "values": {"height": 20}, "where": where})]})
        assert (await decided(model, user(asked), [updating])) == [
            ("update_rows", {"table": "plants", "values": {"height": 20}, "where": {"name": "Fiddlehead"}})], where
    for asked, values in (("Please update Fiddlehead to 20 cm.", {"name": "Fiddlehead", "height": 20}),  # the name
                          ("Please update Fiddlehead: Royal Fern, 20 cm.",  # set again, or one in another column
                           {"species": "Royal Fern", "height": 20})):
        model = FakeLlama({asked: [("update_rows", {"table": "plants", "values": values, "where": {"id": 3}})]})
        assert (await decided(model, user(asked), [updating])) == [
            ("update_rows", {"table": "plants", "values": values, "where": {"name": "Fiddlehead"}})], values


LIBRARY = """CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE books (id INTEGER PRIMARY KEY,
title TEXT); CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER, member_id INTEGER, due TEXT);
INSERT INTO members VALUES (1, 'Rosa Díaz'), (2, 'Tom Berg'); INSERT INTO books VALUES (1, 'Dune'), (2, 'Emma');
INSERT INTO loans VALUES (1, 2, 1, '2026-12-01'), (2, 1, 2, '2026-12-03'), (3, 1, 1, '2026-12-09');"""


async def test_a_change_whose_condition_holds_only_values_the_person_did_not_say_goes_by_the_name_they_gave() -> None:
    """The class: after a listing, a change of "the loan of Rosa Díaz" written with ids and dates read (wrongly) off
    the listing; the person's name decides the rows, in whichever table holds it. Run on SQLite: Rosa's loans go,
    Tom's stays; a value the person said keeps the model's condition."""
    statement = dataclasses.replace(STATEMENT, holds=("members(id, name)", "books(id, title)",
                                                      "loans(id, book_id, member_id, due)"))
    listing = '[[1, 2, 1, "2026-12-01"], [2, 1, 2, "2026-12-03"], [3, 1, 1, "2026-12-09"]]'
    for asked, wrote, left in (
            ("Rosa Díaz brought her books back, delete her loans.",
             "DELETE FROM loans WHERE member_id = 2 AND due = '2026-12-03'", [(2,)]),
            ("Delete the loans of Emma.", "DELETE FROM loans WHERE book_id = 1", [(2,), (3,)]),
            ("Delete loan 3 of Rosa Díaz.", "DELETE FROM loans WHERE id = 3", [(1,), (2,)])):  # said: kept
        talk = [*user("Show me the loans."), *called("c1", "run_statement", '{"sql": "SELECT * FROM loans"}',
                                                      listing), {"role": "assistant", "content": listing},
                *user(asked)]
        model = FakeLlama({asked: [("run_statement", {"sql": wrote})]})
        calls = await decided(model, talk, [statement])
        with sqlite3.connect(":memory:") as db:
            db.executescript(LIBRARY)
            db.execute(calls[0][1]["sql"])
            assert db.execute("SELECT id FROM loans ORDER BY id").fetchall() == left, (asked, calls)


async def test_a_rows_name_its_server_holds_said_in_any_case_or_spoken_of_by_a_pronoun_after_is_the_name_given(
        ) -> None:
    """The class: a thing named in lower case ("dune"), a name that is no capitalised run, or a follow-up that speaks
    of the thing the message before named ("Delete its loan."): the row names the server holds (read from its
    database) give the name. Run on SQLite."""
    statement = dataclasses.replace(STATEMENT, holds=("members(id, name)", "books(id, title)",
                                                      "loans(id, book_id, member_id, due)", "Rosa Díaz", "Tom Berg",
                                                      "Dune", "Emma"))
    asked = "when is dune due back?"
    model = FakeLlama({asked: [("run_statement", {"sql": "SELECT due FROM loans WHERE book_id = 9"})]})
    calls = await decided(model, user(asked), [statement])
    with sqlite3.connect(":memory:") as db:
        db.executescript(LIBRARY)
        assert db.execute(calls[0][1]["sql"]).fetchall() == [("2026-12-03",), ("2026-12-09",)], calls
    talk = [*user("Who has borrowed emma?"), {"role": "assistant", "content": "Rosa Díaz has it."},
            *user("Delete its loan.")]
    model = FakeLlama({"Delete its loan.": [("run_statement", {"sql": "DELETE FROM loans WHERE id = 4"})]})
    calls = await decided(model, talk, [statement])
    with sqlite3.connect(":memory:") as db:
        db.executescript(LIBRARY)
        db.execute(calls[0][1]["sql"])
        assert db.execute("SELECT id FROM loans ORDER BY id").fetchall() == [(2,), (3,)], calls


async def test_a_question_of_a_named_row_asked_of_another_table_by_a_made_up_id_asks_the_rows_table_by_name() -> None:
    """The class: a column of one table asked with an id no one said on a table lacking that column ("How heavy is
    Zuri?" written `SELECT weight FROM feedings WHERE feeding_id = 12`): the table that has the column, the row by
    its name. A zoo's database in no bench, run on SQLite."""
    zoo = dataclasses.replace(STATEMENT, holds=("animals(id, name, species, weight)",
                                                "feedings(id, animal_id, food, grams)", "Zuri", "Bao"))
    for asked, wrote in (("How heavy is Zuri?", "SELECT weight FROM feedings WHERE feeding_id = 12"),
                         ("Wie schwer ist bao?", "SELECT weight FROM feedings WHERE id = 3 LIMIT 1")):
        calls = await decided(FakeLlama({asked: [("run_statement", {"sql": wrote})]}), user(asked), [zoo])
        with sqlite3.connect(":memory:") as db:
            db.executescript("CREATE TABLE animals (id INTEGER PRIMARY KEY, name TEXT, species TEXT, weight REAL);"
                             "CREATE TABLE feedings (id INTEGER PRIMARY KEY, animal_id INTEGER, food TEXT, grams INT);"
                             "INSERT INTO animals VALUES (1, 'Zuri', 'okapi', 230.5), (2, 'Bao', 'panda', 98.0);")
            assert db.execute(calls[0][1]["sql"]).fetchall() == [(230.5 if "Zuri" in asked else 98.0,)], calls


async def test_a_statements_placeholders_are_written_as_the_values_another_argument_lists_for_them() -> None:
    """The class: `?` placeholders with the values beside them in a form the server may not bind (an object by
    column, a copied schema's `values`, a list): written into the statement, texts quoted; a count that differs
    leaves the call as it was. A kennel's database in no bench, run on SQLite."""
    def kennel(kind: str) -> Tool:
        sql = {"query": TEXT, "params": {"type": kind}}
        return dataclasses.replace(tool("execute_sql", "Execute a SQL statement.", sql, ["query"], source="mcp:kennel"),
                                   holds=("dogs(id, name, breed, age)",))

    insert = "INSERT INTO dogs (name, breed, age) VALUES (?, ?, ?)"
    asked = "Add Pip, a beagle, aged 3, to the dogs."
    for params in ({"name": "Pip", "breed": "beagle", "age": 3}, {"type": "object", "values": ["Pip", "beagle", 3]},
                   ["Pip", "beagle", 3]):
        calls = await decided(FakeLlama({asked: [("execute_sql", {"query": insert, "params": params})]}), user(asked),
                              [kennel("array" if isinstance(params, list) else "object")])
        assert list(calls[0][1]) == ["query"], calls
        with sqlite3.connect(":memory:") as db:
            db.execute("CREATE TABLE dogs (id INTEGER PRIMARY KEY, name TEXT, breed TEXT, age INTEGER)")
            db.execute(calls[0][1]["query"])
            assert db.execute("SELECT name, breed, age FROM dogs").fetchall() == [("Pip", "beagle", 3)], calls
    two = {"query": insert, "params": ["Pip", "beagle"]}
    assert await decided(FakeLlama({asked: [("execute_sql", two)]}), user(asked), [kennel("array")]) == [
        ("execute_sql", two)]


async def test_a_change_by_an_amount_is_written_as_the_column_plus_or_minus_that_amount() -> None:
    """The class: a relative change ("by 3", "used two", "zwei mehr") written as the amount itself or as a factor;
    what it comes to ("to 12") and a percentage stay as written. A pantry in no bench, run on SQLite (jars: 10)."""
    pantry = dataclasses.replace(STATEMENT, holds=("jars(id, name, count)", "Honey", "Jam"))
    for asked, wrote, count in (
            ("We used two jars of Honey, update the count.", "UPDATE jars SET count = 2 WHERE name = 'Honey'", 8),
            ("Increase the Honey count by 3.", "UPDATE jars SET count = count * 1.03 WHERE name = 'Honey'", 13),
            ("Wir haben zwei mehr Honey gekauft.", "UPDATE jars SET count = 2 WHERE name = 'Honey'", 12),
            ("Lower the Honey count to 4.", "UPDATE jars SET count = 4 WHERE name = 'Honey'", 4),
            ("Set the Honey count to 12.", "UPDATE jars SET count = 12 WHERE name = 'Honey'", 12),
            ("Raise the Honey count by 50%.", "UPDATE jars SET count = count * 1.5 WHERE name = 'Honey'", 15)):
        calls = await decided(FakeLlama({asked: [("run_statement", {"sql": wrote})]}), user(asked), [pantry])
        with sqlite3.connect(":memory:") as db:
            db.executescript("CREATE TABLE jars (id INTEGER PRIMARY KEY, name TEXT, count INTEGER);"
                             "INSERT INTO jars VALUES (1, 'Honey', 10), (2, 'Jam', 5);")
            db.execute(calls[0][1]["sql"])
            assert db.execute("SELECT count FROM jars ORDER BY id").fetchall() == [(count,), (5,)], (asked, calls)


async def test_a_column_compared_with_a_text_in_lower_case_is_compared_in_lower_case() -> None:
    for asked, wrote, wanted in (
            ("How tall is the fiddlehead?", "SELECT height FROM plants WHERE name = 'fiddlehead'",
             "SELECT height FROM plants WHERE lower(name) = 'fiddlehead'"),
            ("Rename the fiddlehead to fern one.", "UPDATE plants SET name = 'fern one' WHERE name = 'fiddlehead'",
             "UPDATE plants SET name = 'fern one' WHERE lower(name) = 'fiddlehead'"),  # what it sets: as written
            ("How tall is Fiddlehead?", "SELECT height FROM plants WHERE name = 'Fiddlehead'",
             "SELECT height FROM plants WHERE name = 'Fiddlehead'")):  # a capital written: as written
        model = FakeLlama({asked: [("run_statement", {"sql": wrote})]})
        assert (await decided(model, user(asked), [STATEMENT])) == [("run_statement", {"sql": wanted})], asked


async def test_a_tool_changing_tables_is_not_named_for_a_message_that_speaks_of_no_table() -> None:
    sql = {"sql": TEXT}
    creating = dataclasses.replace(tool("create_table", "Create a new table with a SQL statement.", sql, ["sql"],
                                        source="mcp:garden"), holds=GARDEN)
    dropping = dataclasses.replace(tool("drop_table", "Remove a table.", {"table_name": TEXT}, ["table_name"],
                                        source="mcp:garden"), holds=GARDEN)
    deleting = dataclasses.replace(tool("delete_rows", "Delete the rows of a table matching a SQL condition.",
                                        {"table": TEXT, "where": TEXT}, ["table", "where"], source="mcp:garden"),
                                   holds=GARDEN)
    garden = [creating, dropping, deleting, INSERT_ROW]
    for asked, wanted in (
            ("Add a fern called Fiddlehead to my plants.", [("create_table", {"sql": "CREATE TABLE ferns (name)"}),
                                                           ("insert_row", {"table": "plants", "values": {
                                                               "name": "Fiddlehead"}})]),
            ("Delete the plant called Fiddlehead.", [("drop_table", {"table_name": "plants"}),
                                                    ("delete_rows", {"table": "plants",
                                                                     "where": "name = 'Fiddlehead'"})])):
        assert (await decided(FakeLlama({asked: wanted}), user(asked), garden)) == wanted[1:], asked
    asked = "Create a table for the seed packets."  # a table asked: the tool that makes one
    wanted = [("create_table", {"sql": "CREATE TABLE packets (name TEXT)"})]
    assert (await decided(FakeLlama({asked: wanted}), user(asked), garden)) == wanted


async def test_a_question_of_a_row_the_server_holds_by_name_is_not_given_to_a_tool_telling_the_tables_shape() -> None:
    """The class: a question about one held row ("How heavy is zuri?") read the schema (`describe_table`,
    `list_tables`, `db_info`), not the row; the structure asked for, or no held row named, keeps them. A zoo in no
    bench, in English and Spanish."""
    holds = ("animals(id, name, species, weight)", "Zuri", "Bao")
    zoo = [dataclasses.replace(t, holds=holds) for t in (
        tool("describe_table", "Describe a table's columns.", {"table_name": TEXT}, ["table_name"], source="mcp:zoo"),
        tool("list_tables", "List the tables.", {}, source="mcp:zoo"),
        tool("filter_table_names", "Table names containing a text.", {"q": TEXT}, ["q"], source="mcp:zoo"),
        tool("run_query", "Run a SQL query.", {"sql": TEXT}, ["sql"], source="mcp:zoo"))]
    query = ("run_query", {"sql": "SELECT weight FROM animals WHERE name = 'Zuri'"})
    for asked in ("How heavy is zuri?", "¿Cuánto pesa Zuri?"):
        wanted = [("describe_table", {"table_name": "animals"}), ("list_tables", {}), ("filter_table_names", {
            "q": "zuri"}), query]
        assert await decided(FakeLlama({asked: wanted}), user(asked), zoo) == [query], asked
    for asked in ("What columns does the animals table have?", "How heavy are the okapis?"):
        wanted = [("describe_table", {"table_name": "animals"})]
        assert await decided(FakeLlama({asked: wanted}), user(asked), zoo) == wanted, asked


async def test_a_tool_left_out_as_unasked_is_logged_but_is_no_shape_choosing_the_tools() -> None:
    """Leaving the clock out ("What is the capital of Peru?") must not switch off the checks a shape's own choice
    passes by (the change asked, the meaning floor): a note-taking tool the message does not ask for stays refused."""
    asked = "What is the capital of Peru?"
    model = FakeLlama({asked: [("add_note", {"title": "Peru", "body": "capital of Peru"})]})
    assert await decided(model, user(asked), [WALL, ADD_NOTE]) == []
    talk = Talk(user(asked))
    d = Decision(talk, [WALL, ADD_NOTE], shapes_for([WALL, ADD_NOTE]), asked.lower())
    d.table = [WALL, ADD_NOTE]
    assert list(d.choosable(set())) == ["add_note"] and d.unasked and not d.shaped
    assert d.summary()["rules"] == ["timezones.time_asked"]
