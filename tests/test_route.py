"""The constrained route against a fake of llama.cpp's endpoints (no model): whether, which, arguments, how many."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import mcp_types
import pytest

from sidespin.arguments import INTEGER_BOUND, MAX_ITEMS, arguments_schema, bounds_for
from sidespin.errors import MalformedToolCall
from sidespin.grounding import (asked_parameters, asks_for_a_change, asks_something, changes_only, grounded, invented,
                                reads_only, said_in, steps)
from sidespin.mcp.content import tool_from_mcp
from sidespin.tables import table_for
from sidespin.route import (MAX_CALLS, SHORTLIST, TABLE_CHARS, Router, decision_tables, names_grammar, offered,
                            offered_table, read_format)
from sidespin.tools import Tool, tool
from tests.route_fake import BETWEEN, OPEN, FakeLlama, GoesOn, file_tools, notes_listed


def foreign(name: str, description: str, properties: dict, required: list[str],
            source: str = "mcp:elsewhere") -> Tool:
    """A tool as an MCP server no one here wrote would offer it."""
    return Tool(name=name, description=description, fn=lambda **_: None, source=source,
                input_schema={"type": "object", "properties": properties, "required": required})


FIND = foreign("find_restaurants", "Find restaurants, places to eat, by location and cuisine (Thai food, Italian …).",
               {"location": {"type": "string"}, "cuisine": {"type": "string"}, "count": {"type": "integer"}},
               ["location"])
CLOCK = foreign("current_time", "The current time in a time zone (UTC, Europe/Paris …).", {"zone": {"type": "string"}}, ["zone"])
FACT = foreign("random_fact", "Something to read: a random fact.", {}, [])
TOOLS = [FIND, CLOCK, FACT]


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def sentences_of(grammar: str) -> set[str]:
    (rule,) = grammar.strip().splitlines()
    return {json.loads(part.strip()) for part in rule.removeprefix("root ::= ").split(" | ")}


async def test_a_message_the_model_would_not_open_with_a_call_routes_to_none_without_any_completion() -> None:
    llama = FakeLlama({})
    assert await Router(llama).route(user("hello there! I had Thai food today"), TOOLS) == []
    assert "complete" not in llama.kinds() and "render" in llama.kinds()


async def test_a_message_that_shares_no_word_with_any_tool_is_answered_without_asking_the_model() -> None:
    """"Hello" offered a file server's tools: the 0.5B opened a call 87 % of the time (then looped on a path)."""
    eager = {text: [("random_fact", {})] for text in ("Hello!", "What's the capital of Portugal?", "and now?")}
    for text in ("Hello!", "What's the capital of Portugal?"):
        llama = FakeLlama(eager, p_call=0.99)
        assert await Router(llama).route(user(text), TOOLS) == [] and llama.asked == []
    # a request to change something is left to the model: "remember" shares no word with a memory server's tools
    memory = foreign("create_entities", "Create multiple new entities in the knowledge graph, each with a name, a type "
                     "and the observations that are known about it.",
                     {"entities": {"type": "array", "items": {"type": "string"}}}, ["entities"])
    text = "Remember that my favourite colour is green."
    for asked, tools in ((text, [memory]), ("What do you remember of the colours in my house?", [memory])):
        llama = FakeLlama({asked: [("create_entities", {"entities": ["favourite colour: green"]})]}, p_call=0.99)
        calls = await Router(llama).route(user(asked), tools)
        assert [c.name for c in calls] == (["create_entities"] if asked == text else []), asked
    # words tell only within a language: a longer message in another one is left to the model
    spanish = {"Cuéntame por favor algo curioso de verdad": [("random_fact", {})]}
    calls = await Router(FakeLlama(spanish, p_call=0.99)).route(user(next(iter(spanish))), TOOLS)
    assert [c.name for c in calls] == ["random_fact"]
    # a follow-up in a conversation that called a tool is decided by the model, words in common or not
    history = [*user("Surprise me."), {"role": "assistant", "content": "", "tool_calls": [{
        "id": "c", "type": "function", "function": {"name": "random_fact", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "content": "Owls can't move their eyes."},
        {"role": "assistant", "content": "Owls can't move their eyes."}, *user("and now?")]
    llama = FakeLlama(eager, p_call=0.99)
    assert [c.name for c in await Router(llama).route(history, TOOLS)] == ["random_fact"]


async def test_a_call_is_chosen_among_the_offered_names_and_its_arguments_come_under_its_schema() -> None:
    llama = FakeLlama({"Thai food in Manhattan": [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]})
    calls = await Router(llama).route(user("Thai food in Manhattan"), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]
    name, arguments = [a for a in llama.asked if a["kind"] == "complete"][:2]
    assert name["prompt"].endswith("<assistant>" + OPEN)
    assert sentences_of(name["grammar"]) == {t.name + BETWEEN for t in TOOLS}
    assert arguments["schema"] == arguments_schema(FIND) and arguments["prompt"].endswith("find_restaurants" + BETWEEN)


async def test_the_name_chosen_is_the_likeliest_as_a_whole_not_the_one_behind_the_likeliest_first_token() -> None:
    """"Create a file called packing.txt with …": the 0.5B's likeliest first token was "create", which two of the
    filesystem's names share, but `write_file` was likelier as a name than either."""
    write = foreign("write_file", "Write a file.", {"path": {"type": "string"}, "content": {"type": "string"}},
                    ["path", "content"])
    folder = foreign("create_directory", "Create a folder.", {"path": {"type": "string"}}, ["path"])
    archive = foreign("create_archive", "Create a zip archive of files.", {"path": {"type": "string"}}, ["path"])
    text = "Create a file called packing.txt with the text: passport"
    wanted = [("write_file", {"path": "packing.txt", "content": "passport"})]
    likely = {"": [("create", 0.55), ("write", 0.45)], "create": [("_directory", 0.5), ("_archive", 0.5)],
              "create_directory": [('"', 1.0)], "create_archive": [('"', 1.0)], "write": [("_file", 0.99)],
              "write_file": [('",', 0.99)]}  # a token may run past the name's end
    llama = FakeLlama({text: wanted}, name_tokens=likely)
    calls = await Router(llama).route(user(text), [write, folder, archive])
    assert [c.name for c in calls] == ["write_file"]
    assert not [a for a in llama.asked if a["kind"] == "complete" and a["grammar"]]  # no grammar was needed
    # where the likeliest tokens name nothing offered, the name is written under the names grammar
    llama = FakeLlama({text: wanted}, name_tokens={"": [("delete", 0.9)]})
    assert [c.name for c in await Router(llama).route(user(text), [write, folder, archive])] == ["write_file"]
    assert [a for a in llama.asked if a["kind"] == "complete" and a["grammar"]]


async def test_a_first_name_the_model_is_unsure_of_is_not_called_and_the_next_likeliest_is_tried() -> None:
    """'In notes/meeting.md, change "Tuesday at 10:00" to …': the 0.5B's likeliest name was `write_file`, at 0.03 as a
    whole, and it overwrote the notes with "This is a note about the meeting." On BFCL and the reference servers,
    every first name under 0.05 was a wrong call or none."""
    write = foreign("write_file", "Write a file.", {"path": {"type": "string"}, "content": {"type": "string"}},
                    ["path", "content"])
    edit = foreign("edit_file", "Edit lines of a file.", {"path": {"type": "string"}, "old": {"type": "string"},
                                                           "new": {"type": "string"}}, ["path", "old", "new"])
    text = "In notes/meeting.md, change Tuesday to Wednesday."  # quoted, only the edit is offered (test_edits.py)
    edited = ("edit_file", {"path": "notes/meeting.md", "old": "Tuesday", "new": "Wednesday"})
    written = ("write_file", {"path": "notes/meeting.md", "content": "Wednesday"})
    for p_write, called in [(0.03, "edit_file"), (0.3, "write_file")]:
        likely = {"": [("write", p_write), ("Sorry", 1 - p_write)], "write": [("_file", 1.0)], "write_file": [('"', 1.0)]}
        llama = FakeLlama({text: [edited if called == "edit_file" else written]}, name_tokens=likely)
        calls = await Router(llama).route(user(text), [write, edit])
        assert [c.name for c in calls][:1] == [called], p_write
    # the one name the rules leave is called however unlikely ("…, then echo the result": the sum tool, at 0.02)
    likely = {"": [("write", 0.03), ("Sorry", 0.97)], "write": [("_file", 1.0)], "write_file": [('"', 1.0)]}
    llama = FakeLlama({text: [written]}, name_tokens=likely)
    assert [c.name for c in await Router(llama).route(user(text), [write])] == ["write_file"]


async def test_a_message_naming_a_file_by_its_path_calls_a_reader_under_the_threshold_down_to_a_floor() -> None:
    """"Show me notes/ideas.md." and "What's in notes/todo.md?": the 0.5B's chance of a call was 0.22 and 0.18, and it
    answered that it could not. Only where its server marks the tool as one that only reads, only for a file in a
    folder, and not for a request to change it."""
    reading = dataclasses.replace(file_tools()[1], read_only=True)
    text = "Show me notes/ideas.md."
    wants = {text: [("read_file", {"path": "/home/me/files/notes/ideas.md"})]}
    calls = await Router(FakeLlama(wants, p_call=0.22)).route(user(text), [reading])
    assert [(c.name, c.arguments) for c in calls] == [("read_file", {"path": "/home/me/files/notes/ideas.md"})]
    assert await Router(FakeLlama(wants, p_call=0.1)).route(user(text), [reading]) == []  # under the floor
    assert await Router(FakeLlama(wants, p_call=0.22)).route(user(text), [file_tools()[1]]) == []  # not marked
    for other in ["Show me ideas.md.", "Delete notes/ideas.md."]:
        assert await Router(FakeLlama({other: wants[text]}, p_call=0.22)).route(user(other), [reading]) == [], other
    # wanting to answer that it cannot, the 0.5B gave every reader's name under 0.001: the likeliest is called
    listing = dataclasses.replace(file_tools()[0], read_only=True)
    likely = {"": [("read", 0.0008), ("list", 0.0002), ("Sorry", 0.999)], "read": [("_file", 1.0)],
              "read_file": [('"', 1.0)], "list": [("_directory", 1.0)], "list_directory": [('"', 1.0)]}
    calls = await Router(FakeLlama(wants, p_call=0.22, name_tokens=likely)).route(user(text), [listing, reading])
    assert [(c.name, c.arguments) for c in calls] == [("read_file", {"path": "/home/me/files/notes/ideas.md"})]


async def test_a_tool_its_description_marks_deprecated_is_replaced_by_the_one_it_says_to_use_instead() -> None:
    """The reference filesystem server's `read_file`: "DEPRECATED: Use read_text_file instead.", which the 0.5B
    named for "What's on my to-do list? It's in notes/todo.md." and then, asked whether it fits, said no."""
    old = foreign("read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
                  {"path": {"type": "string"}}, ["path"])
    new = foreign("read_text_file", "Read the complete contents of a file as text.", {"path": {"type": "string"}},
                  ["path"])
    text = "What's on my to-do list? It's in notes/todo.md."
    llama = FakeLlama({text: [("read_file", {"path": "notes/todo.md"}), ("read_text_file", {"path": "notes/todo.md"})]},
                      writes=1)
    calls = await Router(llama).route(user(text), [old, new])
    assert [(c.name, c.arguments) for c in calls] == [("read_text_file", {"path": "notes/todo.md"})]
    # offered alone, the deprecated tool is still called: there is nothing to use instead
    llama = FakeLlama({text: [("read_file", {"path": "notes/todo.md"})]})
    assert [c.name for c in await Router(llama).route(user(text), [old])] == ["read_file"]


async def test_a_refused_tool_takes_its_deprecated_aliases_with_it() -> None:
    """"Which files are in the notes folder?": the 0.5B's `read_text_file` failed, and the one other name it may try
    was `read_file`, which is `read_text_file` again (deprecated for it), so nothing listed the folder."""
    path = {"path": {"type": "string"}}
    reader = foreign("read_text_file", "Read the complete contents of a file as text.", path, ["path"])
    alias = foreign("read_file", "Read the complete contents of a file as text. DEPRECATED: Use read_text_file "
                    "instead.", path, ["path"])
    listing = foreign("list_directory", "Get a detailed listing of all files and directories in a path.", path,
                      ["path"])
    text = "Which files are in the notes folder?"
    wanted = [("read_text_file", {"path": "notes"}), ("read_file", {"path": "notes"}),
              ("list_directory", {"path": "notes"})]
    llama = FakeLlama({text: wanted}, misfits=frozenset({"read_text_file", "read_file"}))
    calls = await Router(llama).route(user(text), [reader, alias, listing])
    assert [(c.name, c.arguments) for c in calls] == [("list_directory", {"path": "notes"})]


async def test_a_tool_without_parameters_is_called_without_asking_for_arguments() -> None:
    llama = FakeLlama({"tell me something": [("random_fact", {})]})
    calls = await Router(llama).route(user("tell me something"), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("random_fact", {})]
    assert {a["schema"] for a in llama.asked if a["kind"] == "complete"} == {None}  # the name only


async def test_a_tool_without_required_values_that_shares_no_word_with_the_message_is_not_called() -> None:
    text = "What is 17 times 23 in the end?"  # "times" is a word of current_time's: the model is asked
    llama = FakeLlama({text: [("random_fact", {})]})
    assert await Router(llama).route(user(text), TOOLS) == []
    assert [a for a in llama.asked if a["kind"] == "next_tokens"]  # the model was asked, and chose the fact
    text = "Erzähl mir bitte etwas, das ich noch nicht weiß."  # another language: words cannot tell
    calls = await Router(FakeLlama({text: [("random_fact", {})]})).route(user(text), TOOLS)
    assert [c.name for c in calls] == ["random_fact"]


async def test_a_tool_without_required_values_of_a_server_the_conversation_called_is_not_unrelated() -> None:
    """"What is my sister's name?" after "Remember that my sister's name is Ada." shares no word with `read_graph`,
    but the conversation stored it with that server's `create_entities`: the 0.5B named `read_graph`, refused as
    unrelated, and answered "Li"."""
    memory = [foreign("create_entities", "Create entities in the knowledge graph.",
                      {"entities": {"type": "array", "items": {"type": "string"}}}, ["entities"], source="mcp:memory"),
              foreign("open_nodes", "Open nodes of the knowledge graph by their names.",
                      {"names": {"type": "array", "items": {"type": "string"}}}, ["names"], source="mcp:memory"),
              foreign("read_graph", "Read the entire knowledge graph.", {}, [], source="mcp:memory")]
    text = "What is my sister's name?"
    earlier = [*user("Remember that my sister's name is Ada."), {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "create_entities", "arguments": '{"entities": ["Ada"]}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": "stored"}, {"role": "assistant", "content": "Noted."}]
    calls = await Router(FakeLlama({text: [("read_graph", {})]})).route([*earlier, *user(text)], memory)
    assert [c.name for c in calls] == ["read_graph"]
    assert await Router(FakeLlama({text: [("read_graph", {})]})).route(user(text), memory) == []  # a fresh chat


async def test_a_question_about_the_persons_own_things_may_read_a_server_that_stores_in_a_new_conversation() -> None:
    """"What is my sister's name?" in a new conversation, the memory server marking which of its tools only read:
    what was stored in another conversation is there. A question about something else, or a tool of a server that
    stores nothing, stays unrelated."""
    marked = [foreign("create_entities", "Create entities, each with a name, in the knowledge graph.",
                      {"entities": {"type": "array", "items": {"type": "string"}}}, ["entities"], source="mcp:memory"),
              dataclasses.replace(foreign("read_graph", "Read what is in the knowledge graph.", {}, [],
                                          source="mcp:memory"), read_only=True)]
    text = "What is my sister's name?"  # the model says read_graph does not do that (0.29 for the 0.5B)
    calls = await Router(FakeLlama({text: [("read_graph", {})]}, misfits=frozenset({"read_graph"}))).route(
        user(text), marked)
    assert [c.name for c in calls] == ["read_graph"]
    text = "What is the capital of Portugal?"
    assert await Router(FakeLlama({text: [("read_graph", {})]})).route(user(text), marked) == []
    reading = [dataclasses.replace(tool, read_only=True) for tool in marked]  # a server that stores nothing
    text = "What is my sister's name?"
    assert await Router(FakeLlama({text: [("read_graph", {})]})).route(user(text), reading) == []


async def test_a_first_call_whose_values_all_come_from_the_tool_itself_and_shares_no_word_is_not_made() -> None:
    """"What's today's date?" offered a git server: the 0.5B called `git_status` of the server's repository."""
    status = dataclasses.replace(foreign("git_status", "Shows the working tree status.",
                                         {"repo_path": {"type": "string"}}, ["repo_path"], source="mcp:git"),
                                 places=("/home/me/project",))
    # "current" is in the weather tool's example only: the message is in the tools' language, and no tool has a
    # word of it of its own (`with_a_word`), so the model's name stands until its values are read
    clock = foreign("weather", "The weather of a city.", {"city": {"type": "string", "description": "A city (e.g., "
                                                                   "'current' for where you are, 'Paris')."}}, ["city"])
    text = "What's today's date? The current one, in the end."
    llama = FakeLlama({text: [("git_status", {"repo_path": "/home/me/project"})]})
    assert await Router(llama).route(user(text), [status, clock]) == []
    assert arguments_schema(status) in [a.get("schema") for a in llama.asked]  # refused once its values were read
    # the same tool, asked with a word of its own, or with a value said in the conversation, is called
    for asked in ("What's the status of my project?", "What's the current date in /home/me/project?"):
        calls = await Router(FakeLlama({asked: [("git_status", {"repo_path": "/home/me/project"})]})).route(
            user(asked), [status, clock])
        assert [c.name for c in calls] == ["git_status"], asked


async def test_a_word_of_the_message_written_under_the_server_s_folder_is_no_value_where_no_file_is_named() -> None:
    """"Write a Python function that reverses a string." with the reference file server: the 0.5B read
    'string', which the server read as '…/files/string'. A message that names a file, a folder or a path gives the
    path its value."""
    read = dataclasses.replace(foreign("read_text_file", "Read the complete contents of a file that exists, as text.",
                                       {"path": {"type": "string"}}, ["path"], source="mcp:files"),
                               places=("/home/me/files",))
    write = dataclasses.replace(foreign("write_file", "Create a new file, or write over one, with its content.",
                                        {"path": {"type": "string"}, "content": {"type": "string"}},
                                        ["path", "content"], source="mcp:files"), places=("/home/me/files",))
    text = "Write a Python function that reverses a string."
    for path in ("/home/me/files/string", "string"):  # the server reads a relative path in its folder
        fake = FakeLlama({text: [("read_text_file", {"path": path})]})
        assert await Router(fake).route(user(text), [read, write]) == [], path
    # in another language, where words cannot tell: "Remember that my birthday is May 14th."
    text = "Recuerda que mi cumpleaños es el 14 de mayo."
    fake = FakeLlama({text: [("read_text_file", {"path": "/home/me/files/14"})]})
    assert await Router(fake).route(user(text), [read, write]) == []
    for text, path in (("Write down what budget.csv says.", "/home/me/files/budget.csv"),
                       ("Write down what the string file says.", "/home/me/files/string"),
                       ("Peux-tu lire le fichier budget.csv ?", "/home/me/files/budget.csv")):
        calls = await Router(FakeLlama({text: [("read_text_file", {"path": path})]})).route(user(text), [read, write])
        assert [c.arguments for c in calls] == [{"path": path}], text


async def test_a_message_sharing_a_word_with_another_offered_tool_is_read_in_the_tools_language() -> None:
    """"What's today's date?" has one function word, "what", which no reference server's tool has: it was taken for
    another language, in which words cannot tell, and the 0.5B's `git_status` of the server's repository was
    called. `git_log` speaks of dates, so the message is in the tools' language, and `git_status` shares no word
    with it."""
    git = [dataclasses.replace(foreign(name, description, {"repo_path": {"type": "string"}}, ["repo_path"],
                                       source="mcp:git"), places=("/home/me/project",))
           for name, description in (("git_status", "Shows the working tree status."),
                                     ("git_log", "Shows the commit logs, filtered by dates."))]
    text = "What's today's date?"
    llama = FakeLlama({text: [("git_status", {"repo_path": "/home/me/project"})]})
    assert await Router(llama).route(user(text), git) == []
    assert arguments_schema(git[0]) in [a.get("schema") for a in llama.asked]  # refused once its values were read


async def test_a_first_call_of_a_tool_the_model_says_does_not_do_what_was_asked_is_not_made() -> None:
    """Asked plainly, after it opened a call: "What's the magnetic field 4m from a wire carrying 2A?" with only
    `calculate_wave_amplitude` offered (BFCL irrelevance_21) is a no; the next likeliest tool is tried instead."""
    wave = foreign("calculate_wave_amplitude", "Amplitude of an electromagnetic wave from its electric field.",
                   {"field": {"type": "number"}}, ["field"])
    text = "What's the magnetic field 4m from a wire carrying 2A?"
    routes = {text: [("calculate_wave_amplitude", {"field": 2})]}
    assert [c.name for c in await Router(FakeLlama(routes)).route(user(text), [wave])] == ["calculate_wave_amplitude"]
    llama = FakeLlama(routes, misfits=frozenset({"calculate_wave_amplitude"}))
    assert await Router(llama).route(user(text), [wave]) == []
    assert not [a for a in llama.asked if a["kind"] == "complete" and a["schema"]]  # no arguments were written
    field = foreign("magnetic_field", "Magnetic field of a straight wire carrying a current.",
                    {"current": {"type": "number"}, "distance": {"type": "number"}}, ["current", "distance"])
    routes[text].append(("magnetic_field", {"current": 2, "distance": 4}))
    llama = FakeLlama(routes, misfits=frozenset({"calculate_wave_amplitude"}))
    calls = await Router(llama).route(user(text), [wave, field])
    assert [(c.name, c.arguments) for c in calls] == [("magnetic_field", {"current": 2, "distance": 4})]


async def test_how_sure_the_model_must_be_that_a_tool_fits_is_its_own() -> None:
    """The 1.5B says yes at 0.41–0.55 for functions that do nothing asked: its bar is measured for it
    (`Model.route_fit`), as its call threshold is. This fake says yes at 0.9."""
    text = "What's the magnetic field 4m from a wire carrying 2A?"
    wave = foreign("calculate_wave_amplitude", "Amplitude of an electromagnetic wave from its electric field.",
                   {"field": {"type": "number"}}, ["field"])
    routes = {text: [("calculate_wave_amplitude", {"field": 2})]}
    assert [c.name for c in await Router(FakeLlama(routes)).route(user(text), [wave])] == ["calculate_wave_amplitude"]
    assert await Router(FakeLlama(routes), fit=0.95).route(user(text), [wave]) == []


async def test_a_message_asking_several_things_fits_a_tool_that_does_one_of_them() -> None:
    """"What's the weather in Boston and in San Francisco?": the 1.5B said `get_current_weather` does not do all of
    that (0.51, under the bar of 0.6 tried for it), so nothing was called; asked of the Boston part alone, it fits."""

    class Literal(FakeLlama):  # says a tool fits only a message that asks one thing
        async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
            fit = re.search(r"<user>Function: [^<]*User: ([^<]*)\n\nDoes this function[^<]*</user><assistant>$", prompt)
            if fit and " and " in fit.group(1):
                return [("no", 0.7), ("yes", 0.3)]
            return await super().next_tokens(prompt, n)  # yes, or no for the `misfits`

    weather = foreign("get_current_weather", "The current weather in a city.", {"city": {"type": "string"}}, ["city"])
    text = "What's the weather in Boston and in San Francisco?"
    llama = Literal({text: [("get_current_weather", {"city": "Boston"}), ("get_current_weather",
                                                                        {"city": "San Francisco"})]})
    calls = await Router(llama, fit=0.6).route(user(text), [weather])
    assert [c.arguments["city"] for c in calls] == ["Boston", "San Francisco"]
    text = "What's the weather and the time difference between Boston and San Francisco in winter?"  # no part fits
    llama = Literal({text: [("get_current_weather", {"city": "Boston"})]}, misfits=frozenset({"get_current_weather"}))
    assert await Router(llama, fit=0.6).route(user(text), [weather]) == []


async def test_the_threshold_decides_not_the_likeliest_token() -> None:
    routes = {"maybe the time in UTC?": [("current_time", {"zone": "UTC"})]}
    assert await Router(FakeLlama(routes, p_call=0.4), threshold=0.5).route(user("maybe the time in UTC?"), TOOLS) == []
    called = await Router(FakeLlama(routes, p_call=0.4), threshold=0.3).route(user("maybe the time in UTC?"), TOOLS)
    assert [c.name for c in called] == ["current_time"]


async def test_a_message_that_says_a_tools_name_calls_under_the_threshold_down_to_a_floor() -> None:
    """"Could you tell me what the weather will be like in Healdsburg …": the 0.5B opened a call at 0.44 with
    `Weather_1_GetWeather` offered. Of the logged BFCL questions under the bar that say a tool's name, 4 wanted a call
    (0.20 to 0.47) and the 2 of irrelevance were under 0.15."""
    said = "what is the current time in UTC?"
    routes = {said: [("current_time", {"zone": "UTC"})], "maybe the time in UTC?": [("current_time", {"zone": "UTC"})]}
    called = await Router(FakeLlama(routes, p_call=0.3), threshold=0.5).route(user(said), TOOLS)
    assert [(c.name, c.arguments) for c in called] == [("current_time", {"zone": "UTC"})]
    assert await Router(FakeLlama(routes, p_call=0.1), threshold=0.5).route(user(said), TOOLS) == []  # under the floor
    # "time" alone is not the name `current_time`
    assert await Router(FakeLlama(routes, p_call=0.3), threshold=0.5).route(user("maybe the time in UTC?"), TOOLS) == []


def test_a_tools_name_is_said_by_all_its_telling_words_not_by_one_its_servers_names_share() -> None:
    from sidespin.tables import names_said

    git = [foreign(name, "A git command.", {}, [], source="mcp:git") for name in ("git_commit", "git_log", "git_show")]
    assert names_said(git, user("What changed in the last commit?")) == git[:1]
    assert names_said(git, user("Tell me about git.")) == []  # "show" tells nothing; "git" every name has
    weather = foreign("Weather_1_GetWeather", "The weather.", {}, [])
    assert names_said([weather], user("What will the weather be like in Healdsburg?")) == [weather]
    assert names_said([weather, CLOCK], user("The time in Paris?")) == []  # `current_time`: "current" not said
    assert names_said([weather, CLOCK], user("What time is it?")) == [CLOCK]  # it asks the current time


async def test_two_things_asked_at_once_are_two_calls() -> None:
    routes = {"time in Tokyo and in Paris": [("current_time", {"zone": "Asia/Tokyo"}),
                                             ("current_time", {"zone": "Europe/Paris"})]}
    calls = await Router(FakeLlama(routes)).route(user("time in Tokyo and in Paris"), TOOLS)
    assert [c.arguments["zone"] for c in calls] == ["Asia/Tokyo", "Europe/Paris"]
    assert calls[0].id != calls[1].id


async def test_a_second_call_the_model_did_not_write_is_kept_when_the_message_asks_for_it() -> None:
    text = "time in Tokyo and in Paris"
    routes = {text: [("current_time", {"zone": "Asia/Tokyo"}), ("current_time", {"zone": "Europe/Paris"})]}
    calls = await Router(FakeLlama(routes, writes=1)).route(user(text), TOOLS)
    assert [c.arguments["zone"] for c in calls] == ["Asia/Tokyo", "Europe/Paris"]


async def test_a_second_call_the_message_does_not_ask_for_is_not_made() -> None:
    text = "time in Tokyo"
    for second in [("current_time", {"zone": "Europe/Paris"}),  # a value no one mentioned
                   ("current_time", {"zone": "Tokyo"}),  # a part of the value already asked
                   ("random_fact", {})]:  # another tool, with nothing the message asks of it
        calls = await Router(FakeLlama({text: [("current_time", {"zone": "Asia/Tokyo"}), second]}, writes=1)).route(
            user(text), TOOLS)
        assert [c.arguments for c in calls] == [{"zone": "Asia/Tokyo"}], second
    text = "Thai food in Manhattan"
    fewer = [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"}), ("find_restaurants", {"location": "Manhattan"})]
    assert len(await Router(FakeLlama({text: fewer}, writes=1)).route(user(text), TOOLS)) == 1  # nothing new


async def test_one_more_call_is_tried_only_for_a_message_that_may_ask_for_several() -> None:
    """A model that wrote one call is tried for another only where the message has an "and", a list or a second
    sentence (every parallel question of BFCL does): for "Create a file called packing.txt" the 1.5B wrote
    `write_file`'s arguments a second time, 1.3 s, for a repeat that was then refused."""
    for text, tries in (("time in Tokyo", 1), ("time in Tokyo and in Paris", 2), ("time in Tokyo, Paris", 2)):
        llama = FakeLlama({text: [("current_time", {"zone": "Asia/Tokyo"}), ("current_time", {"zone": "Asia/Tokyo"})]},
                          writes=1)
        calls = await Router(llama).route(user(text), TOOLS)
        assert len(calls) == 1, text
        assert len([a for a in llama.asked if a["kind"] == "complete" and a["schema"]]) == tries, text


async def test_a_similar_tool_given_the_same_values_is_not_a_second_request() -> None:
    text = "time in Tokyo"
    lookalike = foreign("clock_in_zone", "The clock of a time zone.", {"zone": {"type": "string"}}, ["zone"])
    routes = {text: [("current_time", {"zone": "Asia/Tokyo"}), ("clock_in_zone", {"zone": "Asia/Tokyo"})]}
    calls = await Router(FakeLlama(routes, writes=1)).route(user(text), [*TOOLS, lookalike])
    assert [c.name for c in calls] == ["current_time"]


async def test_another_tool_the_message_also_asks_for_is_called_too() -> None:
    text = "time in Tokyo and Thai restaurants in Manhattan"
    routes = {text: [("current_time", {"zone": "Asia/Tokyo"}),
                     ("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]}
    calls = await Router(FakeLlama(routes, writes=1)).route(user(text), TOOLS)
    assert [c.name for c in calls] == ["current_time", "find_restaurants"]
    # (a birthdate tool of no word of the message would not be the first call: `with_a_word`)
    born = foreign("birthdate", "When a scientist was born.", {"name": {"type": "string"}}, ["name"])
    found = foreign("famous_discovery", "A scientist's famous discovery.", {"name": {"type": "string"}}, ["name"])
    text = "When was Nikola Tesla born, and what is his famous discovery?"  # two tools, the same value
    routes = {text: [("birthdate", {"name": "Nikola Tesla"}), ("famous_discovery", {"name": "Nikola Tesla"})]}
    calls = await Router(FakeLlama(routes, writes=1)).route(user(text), [born, found])
    assert [c.name for c in calls] == ["birthdate", "famous_discovery"]


async def test_a_call_the_model_writes_on_its_own_after_the_right_one_is_kept_only_if_the_message_asks_for_it() -> None:
    volume = foreign("cone_volume", "Calculate the volume of a cone given the radius and height.",
                     {"radius": {"type": "number"}, "height": {"type": "number"}}, ["radius", "height"])
    mass = foreign("cone_mass", "Calculate the mass of a cone given the radius, height, and density.",
                   {"radius": {"type": "number"}, "height": {"type": "number"}, "density": {"type": "number"}},
                   ["radius", "height", "density"])
    text = "Calculate the volume of a cone with radius 4 and height 7."  # "a" says 1: the density looks said
    routes = {text: [("cone_volume", {"radius": 4, "height": 7}), ("cone_mass", {"radius": 4, "height": 7, "density": 1})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [volume, mass])  # the model writes both calls itself
    assert [c.name for c in calls] == ["cone_volume"]
    text = "The volume of a cone with radius 4 and height 7, and its mass at density 2."
    routes = {text: [("cone_volume", {"radius": 4, "height": 7}), ("cone_mass", {"radius": 4, "height": 7, "density": 2})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [volume, mass])
    assert [c.name for c in calls] == ["cone_volume", "cone_mass"]


async def test_the_same_call_with_a_switch_turned_the_other_way_is_not_a_second_request() -> None:
    distance = foreign("distance", "The driving distance between two cities.",
                       {"origin": {"type": "string"}, "destination": {"type": "string"},
                        "consider_terrain": {"type": "boolean"}}, ["origin", "destination"])
    text = "Distance from New York to Boston, considering terrain."
    routes = {text: [("distance", {"origin": "New York", "destination": "Boston", "consider_terrain": True}),
                     ("distance", {"origin": "New York", "destination": "Boston", "consider_terrain": False})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [distance])
    assert [c.arguments["consider_terrain"] for c in calls] == [True]


async def test_the_same_call_with_the_value_the_tool_takes_by_default_is_not_a_second_request() -> None:
    servers = foreign("list_servers", "List all servers, optionally of one type.",
                      {"server_type": {"type": "string", "enum": ["all", "postgres", "rds"], "default": "all"}}, [])
    text = "Could you retrieve a list of all the PostgreSQL servers?"
    routes = {text: [("list_servers", {"server_type": "postgres"}), ("list_servers", {"server_type": "all"})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [servers])
    assert [c.arguments for c in calls] == [{"server_type": "postgres"}]


async def test_a_model_that_would_call_on_and_on_stops_at_the_limit_and_a_repeated_call_ends_it_early() -> None:
    many = [("current_time", {"zone": f"Zone/Z{i}"}) for i in range(MAX_CALLS + 3)]
    assert len(await Router(FakeLlama({"zones": many})).route(user("zones"), TOOLS)) == MAX_CALLS
    again = [("current_time", {"zone": "UTC"})] * 3
    assert len(await Router(FakeLlama({"utc utc": again})).route(user("utc utc"), TOOLS)) == 1


async def test_an_optional_argument_no_one_mentioned_is_dropped_and_a_mentioned_one_kept() -> None:
    invented = [("find_restaurants", {"location": "Lyon", "cuisine": "Korean", "count": 12})]
    calls = await Router(FakeLlama({"restaurants in Lyon": invented})).route(user("restaurants in Lyon"), TOOLS)
    assert calls[0].arguments == {"location": "Lyon"}  # the cuisine and the count were made up
    stated = [("find_restaurants", {"location": "Lyon", "cuisine": "Korean", "count": 12})]
    text = "12 Korean restaurants in Lyon"
    assert (await Router(FakeLlama({text: stated})).route(user(text), TOOLS))[0].arguments == stated[0][1]



async def test_an_optional_value_the_message_asks_for_is_written_when_the_model_left_it_out() -> None:
    """The 0.5B closed 'Produce the access log for query "llama" …' after `offset` and `pageSize`: BFCL wanted the
    query too. One the message does not ask for (`since`) is not asked of the model."""
    logs = foreign("get_access_logs", "Retrieve access logs.", {
        "offset": {"type": "integer"}, "query": {"type": "string"}, "pageSize": {"type": "integer"},
        "since": {"type": "string"}}, ["offset", "pageSize"])
    text = 'Produce the access log for query "llama", at offset 434 and page size 9.'
    fake = FakeLlama({text: [("get_access_logs", {"offset": 434, "pageSize": 9})]}, later={"query": "llama"})
    calls = await Router(fake).route(user(text), [logs])
    assert calls[0].arguments == {"offset": 434, "pageSize": 9, "query": "llama"}
    asked = [a for a in fake.asked if a["kind"] == "complete" and a["prompt"].endswith('"query": ')]
    assert asked and asked[0]["prompt"].endswith('{"offset": 434, "pageSize": 9, "query": ')
    assert asked[0]["schema"]["type"] == "string"  # the value alone, under its own bounds
    made_up = FakeLlama({text: [("get_access_logs", {"offset": 434, "pageSize": 9})]}, later={"query": "errors"})
    assert (await Router(made_up).route(user(text), [logs]))[0].arguments == {"offset": 434, "pageSize": 9}


async def test_a_call_written_again_with_the_value_the_message_says_takes_the_place_of_the_made_up_one() -> None:
    """For "a comfortable Uber ride" the 0.5B wrote the ride of type "plus", then of type "comfort": one ride was
    asked for. Two values the message both says are two requests still."""
    ride = foreign("ride", "Book a ride.", {"loc": {"type": "string"},
                                           "type": {"type": "string", "enum": ["plus", "comfort", "black"]}},
                   ["loc", "type"])
    text = "Could you arrange a comfortable ride for me from 456 Elm St?"
    written = [("ride", {"loc": "456 Elm St", "type": "plus"}), ("ride", {"loc": "456 Elm St", "type": "comfort"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), [ride])
    assert [c.arguments["type"] for c in calls] == ["comfort"]
    text = "Book a black ride and a plus ride from 456 Elm St."
    written = [("ride", {"loc": "456 Elm St", "type": "black"}), ("ride", {"loc": "456 Elm St", "type": "plus"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), [ride])
    assert [c.arguments["type"] for c in calls] == ["black", "plus"]


async def test_a_second_call_needs_words_of_its_own_that_the_message_says() -> None:
    """For "the current weather conditions in New Delhi, India" the 0.5B went on to "New York, NY" ("new" is said,
    "york" is not), and for a recipe "that uses chicken and mushrooms" on to replacing chicken with "steamed
    chicken". Both second calls are dropped; two cities said are still two calls."""
    weather = foreign("get_weather", "The current weather in a city.", {"city": {"type": "string"}}, ["city"])
    text = "What is the current weather in New Delhi, India?"
    written = [("get_weather", {"city": "New Delhi, India"}), ("get_weather", {"city": "New York, NY"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), [weather])
    assert [c.arguments["city"] for c in calls] == ["New Delhi, India"]
    text = "What is the current weather in New Delhi and in New York?"
    calls = await Router(FakeLlama({text: written})).route(user(text), [weather])
    assert [c.arguments["city"] for c in calls] == ["New Delhi, India", "New York, NY"]
    recipes = foreign("recipe_search", "Find recipes.", {"ingredients": {"type": "array", "items": {"type": "string"}},
                                                          "calories": {"type": "integer"}}, ["ingredients"])
    replace = foreign("ingredient_replace", "Replace an ingredient of a recipe.", {
        "original_ingredient": {"type": "string"}, "replacement_ingredient": {"type": "string"}},
        ["original_ingredient", "replacement_ingredient"])
    text = "Find a recipe under 500 calories that uses chicken and mushrooms, and replace an ingredient."
    written = [("recipe_search", {"ingredients": ["chicken", "mushrooms"], "calories": 500}),
               ("ingredient_replace", {"original_ingredient": "chicken", "replacement_ingredient": "steamed chicken"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), [recipes, replace])
    assert [c.name for c in calls] == ["recipe_search"]
    text = text.replace("replace an ingredient", "replace the chicken with steamed chicken")
    calls = await Router(FakeLlama({text: written})).route(user(text), [recipes, replace])
    assert [c.name for c in calls] == ["recipe_search", "ingredient_replace"]


async def test_a_path_goes_on_past_the_servers_folder_to_the_folder_the_message_names() -> None:
    """For "List the files in the notes folder …" the 0.5B listed /home/me/files, the folder the file server works
    in. Asked to go on past it, the model writes "notes"; a folder no one named is not taken."""
    listing = Tool(name="list_directory", description="List a directory's files.", fn=lambda **_: None,
                   source="mcp:files", places=("/home/me/files",),
                   input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    text = "List the files in the notes folder."
    written = [("list_directory", {"path": "/home/me/files"})]
    calls = await Router(GoesOn({text: written}, rest="notes")).route(user(text), [listing])
    assert calls[0].arguments == {"path": "/home/me/files/notes"}
    calls = await Router(GoesOn({text: written}, rest="photos")).route(user(text), [listing])
    assert calls[0].arguments == {"path": "/home/me/files"}
    text = "What's on my to-do list? It's in notes/todo.md."  # a path named: the 0.5B wrote the folder alone
    written_alone = [("list_directory", {"path": "/home/me/files"})]
    calls = await Router(GoesOn({text: written_alone}, rest="notes/todo.md")).route(user(text), [listing])
    assert calls[0].arguments == {"path": "/home/me/files/notes/todo.md"}
    text = "List the files in the notes folder, please."  # what it writes past the folder is no path: not taken
    model = GoesOn({text: written}, rest="}}. Please note that the notes folder")
    assert (await Router(model).route(user(text), [listing]))[0].arguments == {"path": "/home/me/files"}
    text = "List the files of /home/me/files please."  # the folder the message names itself: the model is not asked
    model = GoesOn({text: written}, rest="please")
    assert (await Router(model).route(user(text), [listing]))[0].arguments == {"path": "/home/me/files"}
    assert not any(a["prompt"].endswith("/home/me/files/") for a in model.asked if a["kind"] == "complete")
    text = "List my files."  # no folder named: the model is not asked
    model = GoesOn({text: written}, rest="notes")
    assert (await Router(model).route(user(text), [listing]))[0].arguments == {"path": "/home/me/files"}
    assert not any(a["prompt"].endswith("/home/me/files/") for a in model.asked if a["kind"] == "complete")
    text = "Show me notes/ideas.md."  # one file named: that file, and the model is not asked (it wrote "000…0")
    model = GoesOn({text: written}, rest="000000000000000000000000")
    assert (await Router(model).route(user(text), [listing]))[0].arguments == {"path": "/home/me/files/notes/ideas.md"}
    assert not any(a["prompt"].endswith("/home/me/files/") for a in model.asked if a["kind"] == "complete")
    text = "List the files in the notes folder, please."  # digits alone, which no one said, are no path
    model = GoesOn({text: written}, rest="000000000000000000000000")
    assert (await Router(model).route(user(text), [listing]))[0].arguments == {"path": "/home/me/files"}


async def test_a_folder_listed_in_the_turn_and_then_read_as_a_file_goes_on_to_a_file_the_listing_named() -> None:
    """"List the files in the notes folder with their sizes, then read the largest one.": the 0.5B listed the
    notes folder and read it as a file (EISDIR) in the same answer. The read waits for the listing's answer; then,
    asked to go on past the folder, the model writes a name the listing gave."""
    listing, reading = file_tools()
    text = "List the files in the notes folder with their sizes, then read the largest one."
    turn = notes_listed(text, "[FILE] ideas.md 812\n[FILE] todo.md 120")
    both = [("list_directory", {"path": "/home/me/files/notes"}), ("read_file", {"path": "/home/me/files/notes"})]
    calls = await Router(FakeLlama({text: both}, p_call=0.99)).route(user(text), [listing, reading])
    assert [c.name for c in calls] == ["list_directory"]  # the read waits for the listing's answer
    for rest, wanted in (("ideas.md", "/home/me/files/notes/ideas.md"), ("plans.md", "/home/me/files/notes")):
        model = GoesOn({}, p_call=0.99, after={text: [("read_file", {"path": "/home/me/files/notes"})]}, rest=rest,
                       at="/home/me/files/notes/")
        calls = await Router(model).route(turn, [listing, reading])
        assert [(c.name, c.arguments["path"]) for c in calls] == [("read_file", wanted)]
    named = text.replace("the notes folder", "the folder /home/me/files/notes")  # named to be listed, not read
    turn[0] = {"role": "user", "content": named}
    model = GoesOn({}, p_call=0.99, after={named: [("read_file", {"path": "/home/me/files/notes"})]}, rest="ideas.md",
                   at="/home/me/files/notes/")
    assert [c.arguments["path"] for c in await Router(model).route(turn, [listing, reading])] == [
        "/home/me/files/notes/ideas.md"]


async def test_a_date_no_one_said_is_made_up_unless_a_date_was_said_relative_to_another() -> None:
    """For "the weather forecast for Paris from April 1st" the 0.5B wrote the end date 2023-04-07 ("04" and "2023"
    are said): BFCL wants no call, the end being missing. "For a week" says it."""
    forecast = foreign("forecast", "The weather forecast for a place and dates.", {
        "location": {"type": "string"}, "start_date": {"type": "string"}, "end_date": {"type": "string"},
        "day": {"type": "string"}}, ["location", "start_date", "end_date"])
    written = {"location": "Paris", "start_date": "2023-04-01", "end_date": "2023-04-07"}
    text = "Could you tell me the weather forecast for Paris from April 1st 2023?"
    assert await Router(FakeLlama({text: [("forecast", written)]})).route(user(text), [forecast]) == []
    text = "Could you tell me the weather forecast for Paris from April 1st 2023 to 04/07/2023?"
    calls = await Router(FakeLlama({text: [("forecast", {**written, "day": "2023-04-03"})]})).route(user(text),
                                                                                                   [forecast])
    assert calls and calls[0].arguments == written  # the optional day no one said is dropped
    text = "Could you tell me the weather forecast for Paris for a week from April 1st 2023?"
    calls = await Router(FakeLlama({text: [("forecast", written)]})).route(user(text), [forecast])
    assert calls and calls[0].arguments == written
    text = "Could you tell me the weather forecast for Paris for the upcoming Friday?"  # BFCL's "upcoming Friday"
    friday = {"location": "Paris", "start_date": "2023-10-06", "end_date": "2023-10-06"}
    calls = await Router(FakeLlama({text: [("forecast", friday)]})).route(user(text), [forecast])
    assert calls and calls[0].arguments == friday


async def test_a_time_written_for_two_parameters_stays_where_the_message_touches_the_name() -> None:
    """BFCL live_simple_233: "… departing from Paris, France, on the 12th of March 2023 at 3 in the afternoon?": the
    0.5B wrote the departure's time as the return's too. Neither name is said whole; "departing" touches one."""
    book = foreign("book_flight", "Book a flight.", {"departure_location": {"type": "string"},
                                                     "departure_time": {"type": "string"},
                                                     "return_time": {"type": "string"}},
                   ["departure_location", "departure_time"])
    text = "Can you book a flight for me departing from Paris, France, on the 12th of March 2023 at 3 in the afternoon?"
    written = {"departure_location": "Paris, France", "departure_time": "12/03/2023 15:00",
               "return_time": "12/03/2023 15:00"}
    calls = await Router(FakeLlama({text: [("book_flight", written)]})).route(user(text), [book])
    assert [c.arguments for c in calls] == [{"departure_location": "Paris, France",
                                             "departure_time": "12/03/2023 15:00"}]
    text = "Book a flight from Paris, leaving and coming back on the 12th of March 2023 at 3 in the afternoon."
    calls = await Router(FakeLlama({text: [("book_flight", written)]})).route(user(text), [book])
    assert [c.arguments for c in calls] == [written]  # neither touched: both stay


async def test_a_text_that_lists_items_and_goes_round_is_the_items_said() -> None:
    """BFCL live_multiple_699: "… a Family genre movie featuring Tzi Ma": the 0.5B wrote `cast` "Tzi Ma, Jane Doe,
    Jane Smith, Jane Doe, Jane Smith, …" until its length ran out. A list that does not go round stays as written."""
    movies = foreign("find_movies", "Find movies.", {"genre": {"type": "string"}, "cast": {"type": "string"}}, [])
    text = "Find a Family genre movie featuring Tzi Ma."
    loop = "Tzi Ma, Jane Doe, Jane Smith, Jane Doe, Jane Smith, Jane Doe, Jane Smith"
    calls = await Router(FakeLlama({text: [("find_movies", {"genre": "Family", "cast": loop})]})).route(user(text),
                                                                                                       [movies])
    assert [c.arguments for c in calls] == [{"genre": "Family", "cast": "Tzi Ma"}]
    text = "Find a Family movie featuring Tzi Ma, Jane Doe and Jane Smith."
    listed = "Tzi Ma, Jane Doe, Jane Smith"
    calls = await Router(FakeLlama({text: [("find_movies", {"genre": "Family", "cast": listed})]})).route(user(text),
                                                                                                         [movies])
    assert [c.arguments for c in calls] == [{"genre": "Family", "cast": listed}]


async def test_words_written_again_and_again_are_cut_to_as_many_rounds_as_were_said() -> None:
    """BFCL live_irrelevance_404: "play me cha cha cha by käärijä": the 0.5B wrote `artist_name` "Käärijächa cha cha cha
    …", 598 characters, up to its length bound. Words said again and again are kept as often as said."""
    play = foreign("play_artist", "Plays an artist's songs.", {"artist_name": {"type": "string"}}, ["artist_name"])
    text = "play me cha cha cha by käärijä"
    calls = await Router(FakeLlama({text: [("play_artist", {"artist_name": "Käärijächa" + " cha" * 150})]})).route(
        user(text), [play])
    assert [c.arguments for c in calls] == [{"artist_name": "Käärijächa cha cha cha"}]
    text = "play me the song go go go go go"
    calls = await Router(FakeLlama({text: [("play_artist", {"artist_name": "go go go go go"})]})).route(
        user(text), [play])
    assert [c.arguments for c in calls] == [{"artist_name": "go go go go go"}]
    from sidespin.said_values import _words_loop_cut

    assert _words_loop_cut("Sing along, la la la la la", "Write me a song") == "Sing along, la la la la la"  # not said


async def test_a_required_date_is_the_models_to_work_out_when_a_day_is_said_relative_to_today() -> None:
    """BFCL simple_python_284: "Get information about the pop concerts in New York for next month.": the 0.5B wrote
    2023-04-01, refused as made up. A message that says no day ("What's this concert?") still refuses it."""
    concerts = foreign("concert_info", "Concerts by city and date.", {"location": {"type": "string"},
                                                                     "date": {"type": "string"}}, ["location", "date"])
    written = {"location": "New York", "date": "2023-04-01"}
    text = "Get information about the pop concerts in New York for next month."
    calls = await Router(FakeLlama({text: [("concert_info", written)]})).route(user(text), [concerts])
    assert [c.arguments for c in calls] == [written]
    text = "What is this concert in New York about?"
    assert await Router(FakeLlama({text: [("concert_info", written)]})).route(user(text), [concerts]) == []


async def test_a_text_written_for_two_parameters_stays_where_the_message_names_it() -> None:
    """For "songs from the album 'Welcome To The Fishbowl'" the 0.5B gave the title as the album and as the artist.
    When the message names neither, or the other is required, both stay."""
    music = foreign("lookup_music", "Find songs.", {"artist": {"type": "string"}, "album": {"type": "string"},
                                                   "track": {"type": "string"}}, [])
    text = "Can you list the songs from the album 'Welcome To The Fishbowl'?"
    both = {"artist": "Welcome To The Fishbowl", "album": "Welcome To The Fishbowl"}
    calls = await Router(FakeLlama({text: [("lookup_music", both)]})).route(user(text), [music])
    assert calls[0].arguments == {"album": "Welcome To The Fishbowl"}
    text = "Can you list the songs of 'Welcome To The Fishbowl'?"
    calls = await Router(FakeLlama({text: [("lookup_music", both)]})).route(user(text), [music])
    assert calls[0].arguments == both
    play = foreign("play_media", "Play a song.", {"track": {"type": "string"}, "album": {"type": "string"}},
                   ["track"])
    text = "Play something from their album 'The Getaway'."
    written = {"track": "The Getaway", "album": "The Getaway"}
    calls = await Router(FakeLlama({text: [("play_media", written)]})).route(user(text), [play])
    assert calls[0].arguments == written
    alerts = foreign("get_sensor_alerts", "Sensor alerts.", {  # BFCL live_simple_70: the serial as a network too
        "sensorSerial": {"type": "string"}, "networkId": {"type": "array", "items": {"type": "string"}}}, [])
    text = "Retrieve today's alerts for the sensor with serial number Q3CC-CRT3-SZ2G."
    written = {"sensorSerial": "Q3CC-CRT3-SZ2G", "networkId": ["Q3CC-CRT3-SZ2G"]}
    calls = await Router(FakeLlama({text: [("get_sensor_alerts", written)]})).route(user(text), [alerts])
    assert calls[0].arguments == {"sensorSerial": "Q3CC-CRT3-SZ2G"}
    stars = {"type": "string", "enum": ["1", "2", "3", "4", "5", "dontcare"]}
    hotels = foreign("search_hotel", "Hotels.", {"location": {"type": "string"}, "star_rating": stars,
                                                 "number_of_rooms": {"type": "string", "enum": ["1", "2", "3"]}},
                     ["location"])
    text = "Can you find me a three-star hotel in New York?"  # BFCL live_multiple_603: the stars as rooms too
    written = {"location": "New York, NY", "star_rating": "3", "number_of_rooms": "3"}
    calls = await Router(FakeLlama({text: [("search_hotel", written)]})).route(user(text), [hotels])
    assert calls[0].arguments == {"location": "New York, NY", "star_rating": "3"}


async def test_a_number_larger_than_the_bound_that_the_message_says_can_be_written() -> None:
    """A timestamp in milliseconds: under the bound alone the 0.5B could only write 161717, refused as made up."""
    report = foreign("get_report", "A report for a time range.", {
        "id": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"}}, ["id", "start", "end"])
    text = "Make me a report for 'ns9934' starting from 1617176400000 to 1617262800000?"
    wanted = {"id": "ns9934", "start": 1617176400000, "end": 1617262800000}
    fake = FakeLlama({text: [("get_report", wanted)]})
    calls = await Router(fake).route(user(text), [report])
    assert calls[0].arguments == wanted
    schema = next(a["schema"] for a in fake.asked if a["kind"] == "complete" and a["schema"])
    assert schema["properties"]["end"]["maximum"] == 1617262800000
    assert arguments_schema(report)["properties"]["end"]["maximum"] == INTEGER_BOUND  # nothing said: the bound


async def test_a_value_the_message_misspelt_is_said() -> None:
    weather = foreign("get_weather", "The weather in a city on a date.", {"city": {"type": "string"}}, ["city"])
    text = "I need a weather update for Chcicago."
    calls = await Router(FakeLlama({text: [("get_weather", {"city": "Chicago"})]})).route(user(text), [weather])
    assert calls and calls[0].arguments == {"city": "Chicago"}
    made_up = FakeLlama({text: [("get_weather", {"city": "Chisinau"})]})
    assert await Router(made_up).route(user(text), [weather]) == []


def test_the_optional_parameters_a_message_asks_for_by_name_or_by_an_allowed_value() -> None:
    monarch = foreign("get_monarch", "The monarch of a place in a year.", {
        "location": {"type": "string"}, "year": {"type": "integer"}, "fullName": {"type": "boolean"},
        "cuisine": {"type": "array", "items": {"type": "string", "enum": ["Seafood", "Italian"]}},
        "status": {"type": "string", "enum": ["all", "active"]}}, ["location", "year"])
    assert asked_parameters(monarch, {"location": "England", "year": 1800},
                            "What was the full name of the king of England in 1800?") == ["fullName"]
    assert asked_parameters(monarch, {}, "A seafood place, all of them") == ["cuisine"]  # "all" tells nothing
    assert asked_parameters(monarch, {"cuisine": ["Seafood"]}, "A seafood place") == []  # written already
    assert asked_parameters(monarch, {}, "The king of England in 1800") == []


def test_a_unit_is_asked_for_by_the_unit_a_measure_is_wanted_in() -> None:
    """"The shortest driving distance in miles from New York City to Los Angeles" (BFCL parallel_92) asks for the
    `unit`; a measure given ("a radius of 4 inches") or a unit of two ("in km/h") does not."""
    distance = foreign("get_distance", "The distance between two places.", {
        "start": {"type": "string"}, "end": {"type": "string"}, "unit": {"type": "string"}}, ["start", "end"])
    written = {"start": "New York City", "end": "Los Angeles"}
    assert asked_parameters(distance, written, "the driving distance in miles from new york city to los angeles") == [
        "unit"]
    for text in ("the distance from new york city to los angeles, 4 inches on my map", "the speed in km/h from la",
                 "the distance from new york city to los angeles in minutes"):
        assert asked_parameters(distance, written, text) == [], text


async def test_a_unit_no_one_said_is_the_unit_the_message_wants() -> None:
    """"What is the distance in miles between Mars and Venus?" (BFCL parallel_149): the 0.5B wrote the description's
    default, kilometers, which was dropped as made up; the distance came back in kilometers. A unit is written as
    the tool spells it."""
    distance = foreign("calculate_distance", "The distance between two bodies.", {
        "body1": {"type": "string"}, "body2": {"type": "string"},
        "unit": {"type": "string", "description": "The unit of measurement, default is 'kilometers'."}},
        ["body1", "body2"])
    # BFCL simple_python_85: "… in mile?": the 0.5B wrote "mi", which "mile" begins; the tool spells it 'miles'
    geo = foreign("geo_distance", "The distance between two places.", {
        "start": {"type": "string"}, "end": {"type": "string"},
        "units": {"type": "string", "description": "The units ('miles' or 'kilometers'). Defaults to 'miles'."}},
        ["start", "end"])
    planets = {"body1": "Mars", "body2": "Venus", "unit": "kilometers"}
    cities = {"start": "Boston, MA", "end": "Washington, D.C.", "units": "mi"}
    for tool, text, written, wanted in (
            (distance, "What is the distance in miles between Mars and Venus?", planets, {**planets, "unit": "miles"}),
            # two units: not a choice
            (distance, "What is the distance between Mars and Venus in miles, and in kilometers?", planets, planets),
            (geo, "What's the approximate distance between Boston, MA, and Washington, D.C. in mile?", cities,
             {**cities, "units": "miles"})):
        calls = await Router(FakeLlama({text: [(tool.name, written)]})).route(user(text), [tool])
        assert calls[0].arguments == wanted, text


def test_a_switch_named_in_camel_case_and_the_mentioned_items_of_an_optional_list_are_kept() -> None:
    find = foreign("find_group", "Restaurants for groups.", {
        "location": {"type": "string"}, "fullName": {"type": "boolean"},
        "cuisine": {"type": "array", "items": {"type": "string", "enum": ["Seafood", "Italian", "Indian"]}}},
        ["location"])
    said = "the full name of a seafood restaurant in seattle"
    kept = grounded(find, {"location": "Seattle", "fullName": True, "cuisine": ["Seafood", "Italian", "Indian"]}, said)
    assert kept == {"location": "Seattle", "fullName": True, "cuisine": ["Seafood"]}
    assert grounded(find, {"location": "Seattle", "cuisine": ["Italian", "Indian"]}, said) == {"location": "Seattle"}


def test_an_optional_value_is_said_by_its_telling_words_and_a_short_code_by_a_word_it_begins() -> None:
    """The 0.5B's made-up `title` 'The Great Gatsby' shared only "the" with the message, and `region` "US" had no word
    of three letters to look for: both were kept. "CA" begins "California", and a choice the tool allows is said by
    its name."""
    books = foreign("search_books", "Search books.", {
        "genre": {"type": "string"}, "title": {"type": "string"}, "region": {"type": "string"},
        "state": {"type": "string"}, "language": {"type": "string", "enum": ["en-US", "es-ES"]}}, ["genre"])
    said = "can i find a historical fiction book at the new york public library?"
    assert grounded(books, {"genre": "historical fiction", "title": "The Great Gatsby", "region": "US"}, said) == {
        "genre": "historical fiction"}
    kept = {"genre": "fiction", "title": "The Road", "state": "CA", "language": "es-ES"}
    assert grounded(books, kept, "fiction like the road, sold in california, in spanish") == kept
    slope = foreign("estimate_derivative", "The derivative of a function at a point.", {
        "function": {"type": "string"}, "x": {"type": "number"}}, ["function", "x"])
    said = "how steep the curve of the function f(x) = x^2 is at x = 5?"  # BFCL live_parallel_multiple_13
    assert invented(slope, {"function": "lambda x: x**2", "x": 5}, said) == []  # its number tells


async def test_a_switch_written_as_a_string_is_kept_when_the_message_names_what_it_switches() -> None:
    """'True' for `free_entry` and `good_for_kids` (the tool's strings 'True', 'False', 'dontcare'): no one says
    "true", but "good for kids and free entry" asks for both."""
    switch = {"type": "string", "enum": ["True", "False", "dontcare"]}
    attractions = foreign("find_attractions", "Attractions in a city.", {
        "city": {"type": "string"}, "free_entry": switch, "good_for_kids": switch, "indoor": switch}, ["city"])
    written = [("find_attractions", {"city": "Berlin", "free_entry": "True", "good_for_kids": "True", "indoor": "False"})]
    text = "Attractions in Berlin that are good for kids and have free entry"
    calls = await Router(FakeLlama({text: written})).route(user(text), [attractions])
    assert calls[0].arguments == {"city": "Berlin", "free_entry": "True", "good_for_kids": "True"}  # not "indoor"
    for text in ("Pull up some free attractions in Berlin that are kid friendly",  # BFCL live_multiple_881: "kid"
                 "Attractions in Berlin with free entry, suitable for children"):
        calls = await Router(FakeLlama({text: written})).route(user(text), [attractions])
        assert calls[0].arguments == {"city": "Berlin", "free_entry": "True", "good_for_kids": "True"}, text


def test_a_host_name_is_no_place_and_an_ellipsis_no_value() -> None:
    """Asked for the files that talk to 'example.net' (BFCL live_irrelevance_36), the 0.5B called the weather tool
    for "example.net, CA"; for a list of exports it gave `nextToken` "..."."""
    weather = foreign("get_current_weather", "The weather in a place, 'City, State' such as 'Berkeley, CA'.", {
        "location": {"type": "string"}, "nextToken": {"type": "string"}}, ["location"])
    said = "retrieve the ids of files that communicate with domain 'example.net'."
    assert invented(weather, {"location": "example.net, CA"}, said) == ["location"]
    assert invented(weather, {"location": "St. Louis, MO"}, "the weather in st. louis") == []
    assert grounded(weather, {"location": "Paris, FR", "nextToken": "..."}, "weather in paris") == {
        "location": "Paris, FR"}
    assert grounded(weather, {"location": "Paris, FR", "nextToken": "*"}, "weather in paris, token *")[
        "nextToken"] == "*"


def test_a_year_said_by_its_last_two_digits_is_said() -> None:
    """"Pop songs from '19" (BFCL live_multiple_341) says 2019: the model's `year` was dropped as never mentioned."""
    music = foreign("lookup_music", "Find songs.", {"genre": {"type": "string"}, "year": {"type": "integer"}}, [])
    said = said_in([{"role": "user", "content": "Find me some Pop songs from '19 on the Ores Aixmis album."}])
    assert grounded(music, {"genre": "Pop", "year": 2019}, said) == {"genre": "Pop", "year": 2019}
    assert grounded(music, {"genre": "Pop", "year": 2018}, said) == {"genre": "Pop"}
    assert grounded(music, {"genre": "Pop", "year": 2019}, said_in([{"content": "Pop songs, Rock'n'19"}])) == {
        "genre": "Pop"}


async def test_a_call_whose_required_values_nothing_mentions_is_not_made() -> None:
    made_up = {"What is the capital of Brazil?": [("find_restaurants", {"location": "Paris"})]}
    assert await Router(FakeLlama(made_up)).route(user("What is the capital of Brazil?"), TOOLS) == []


async def test_a_placeholder_is_no_value_unless_someone_said_it() -> None:
    weather = foreign("weather", "The weather of a city, from an API that needs a key.",
                      {"city": {"type": "string"}, "api_key": {"type": "string"}, "proxy": {"type": "string"}},
                      ["city", "api_key"])
    text = "What is the weather in Antwerp? Use the weather API."  # "api" and "key" words are about
    filled = [("weather", {"city": "Antwerp", "api_key": "YOUR_API_KEY", "proxy": "http://your-proxy-url"})]
    assert await Router(FakeLlama({text: filled})).route(user(text), [weather]) == []  # the key was made up
    text = "What is the weather in Antwerp? My API key is YOUR_API_KEY, literally."
    calls = await Router(FakeLlama({text: filled})).route(user(text), [weather])
    assert calls[0].arguments == {"city": "Antwerp", "api_key": "YOUR_API_KEY"}  # said whole; the proxy dropped
    keyed = foreign("keyed_weather", "The weather of a city.", {"city": {"type": "string"}, "api_key": {
        "type": "string", "default": "YOUR_API_KEY_HERE"}}, ["city", "api_key"])
    text = "What is the weather in Antwerp?"
    calls = await Router(FakeLlama({text: [("keyed_weather", {"city": "Antwerp", "api_key": "YOUR_API_KEY_HERE"})]})).route(
        user(text), [keyed])
    assert [c.name for c in calls] == ["keyed_weather"]  # the tool's own default
    workspace = foreign("create_workspace", "Create a workspace from a branch.", {
        "name": {"type": "string"}, "base_branch": {"type": "string"}}, ["name", "base_branch"])
    text = "I want to create a workspace."  # BFCL live_irrelevance_128 (in Chinese, "workspace" in English)
    named = {"name": "workspace_name", "base_branch": "main_branch_name"}
    assert await Router(FakeLlama({text: [("create_workspace", named)]})).route(user(text), [workspace]) == []
    text = "Create the workspace workspace_name from main_branch_name, those very names."
    calls = await Router(FakeLlama({text: [("create_workspace", named)]})).route(user(text), [workspace])
    assert [c.arguments for c in calls] == [named]


async def test_an_email_address_counts_as_said_only_when_said_whole() -> None:
    """BFCL live_multiple_206-91-0: "Adriel" in the message, and the 0.5B added "adriel@example.com"."""
    contact = foreign("contact", "Save a contact.", {"person_name": {"type": "string"},
                                                   "email_address": {"type": "string"}}, ["person_name"])
    text = "Add Adriel to my contacts."
    made_up = [("contact", {"person_name": "Adriel", "email_address": "adriel@example.com"})]
    calls = await Router(FakeLlama({text: made_up})).route(user(text), [contact])
    assert [c.arguments for c in calls] == [{"person_name": "Adriel"}]  # the optional address dropped
    text = "Add Adriel to my contacts, adriel@example.com."
    calls = await Router(FakeLlama({text: made_up})).route(user(text), [contact])
    assert [c.arguments for c in calls] == [{"person_name": "Adriel", "email_address": "adriel@example.com"}]
    send = foreign("send_money", "Send money to someone by their e-mail address.",
                   {"receiver": {"type": "string"}, "amount": {"type": "number"}}, ["receiver", "amount"])
    text = "Send 50 dollars to my landlord."
    paid = [("send_money", {"receiver": "landlord@email.com", "amount": 50})]
    assert await Router(FakeLlama({text: paid})).route(user(text), [send]) == []  # no one said that address


async def test_a_web_address_counts_as_said_only_when_its_host_is_said_or_the_tool_gives_it() -> None:
    """BFCL live_irrelevance_432: "… the routing number of my bank …" had the 0.5B call a GET tool with
    "https://api.example.com/bank-routing-number": "bank" was said, the address was not."""
    get = foreign("http_get", "Send a GET request to an address.", {"url": {"type": "string"}}, ["url"])
    text = "What is the routing number of my bank account?"
    made_up = [("http_get", {"url": "https://api.example.com/bank-routing-number"})]
    assert await Router(FakeLlama({text: made_up})).route(user(text), [get]) == []
    text = "Get the routing number from https://api.example.com:8443 for my bank account."
    calls = await Router(FakeLlama({text: made_up})).route(user(text), [get])
    assert [c.arguments for c in calls] == [made_up[0][1]]  # its host said, the path the model's
    weather = foreign("forecast", "The weather forecast from https://api.open-meteo.com/v1/forecast.",
                      {"url": {"type": "string"}, "city": {"type": "string"}}, ["url", "city"])
    text = "The weather forecast for Berlin, please."
    written = {"url": "https://api.open-meteo.com/v1/forecast", "city": "Berlin"}
    calls = await Router(FakeLlama({text: [("forecast", written)]})).route(user(text), [weather])
    assert [c.arguments for c in calls] == [written]  # the tool's own address


async def test_a_required_number_counts_as_said_only_when_said_as_that_number() -> None:
    roll = foreign("roll", "Rolls a die.", {"sides": {"type": "integer"}}, ["sides"])
    text = "roll the die with 10 sides, 1,000 times"
    for sides, called in [(1, False), (10, True), (1000, True), (100, False)]:
        calls = await Router(FakeLlama({text: [("roll", {"sides": sides})]})).route(user(text), [roll])
        assert bool(calls) == called, sides


async def test_a_required_value_from_the_message_the_earlier_results_or_the_tools_description_is_kept() -> None:
    local = foreign("local_time", "The time in a time zone; use 'Europe/Berlin' when none is given.",
                    {"zone": {"type": "string"}}, ["zone"])
    asked = {"what time is it?": [("local_time", {"zone": "Europe/Berlin"})],
             "what time is it in Tokyo?": [("local_time", {"zone": "Asia/Tokyo"})]}
    for text, wanted in asked.items():
        calls = await Router(FakeLlama(asked)).route(user(text), [local])
        assert [(c.name, c.arguments) for c in calls] == wanted
    listed = [{"role": "user", "content": "list my notes, then read the first one"},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"id": "c1", "type": "function", "function": {"name": "list_notes", "arguments": "{}"}}]},
              {"role": "tool", "tool_call_id": "c1", "content": "groceries.md\nmeeting.md"}]
    read = foreign("read_note", "Reads a note.", {"path": {"type": "string"}}, ["path"])
    after = {"list my notes, then read the first one": [("read_note", {"path": "groceries.md"})]}
    calls = await Router(FakeLlama(after=after), threshold=0.5).route(listed, [read])
    assert [c.arguments for c in calls] == [{"path": "groceries.md"}]


def test_a_required_value_the_tools_text_gives_only_in_part_is_made_up() -> None:
    """For "Who are the famous dancers of the 19th Century?" the 0.5B called `get_museum_artists` with `museum_name`
    "The Metropolitan Museum of Art": "museum" and "art" are the tool's words, "metropolitan" no one's. A value all of
    whose words the tool's text or the message give is no made-up value ("dir C:\\" for "LIST C DRIVE")."""
    museum = foreign("get_museum_artists", "Lists the artists whose works a museum holds in a period.", {
        "museum_name": {"type": "string"}, "period": {"type": "string"}}, ["museum_name", "period"])
    said = "who are the famous dancers of the 19th century?"
    written = {"museum_name": "The Metropolitan Museum of Art", "period": "19th Century"}
    assert invented(museum, written, said) == ["museum_name"]
    assert invented(museum, written, "which artists does the metropolitan hold from the 19th century?") == []
    shell = foreign("execute", "Runs a command, for example 'dir && echo done'.", {"command": {"type": "string"}},
                    ["command"])
    assert invented(shell, {"command": "dir C:\\"}, "list c drive") == []
    backup = foreign("create_backup", "Creates a backup of a database at a path.",
                     {"db_name": {"type": "string"}, "path": {"type": "string"}}, ["db_name", "path"])
    assert invented(backup, {"db_name": "employees", "path": "/path/to/backup"}, "back up the employees db") == ["path"]


async def test_arguments_cut_off_in_a_loop_are_asked_again_with_short_strings() -> None:
    text = "Thai food in Manhattan"
    routes = {text: [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]}
    llama = FakeLlama(routes, loops_past=200)
    calls = await Router(llama).route(user(text), TOOLS)
    assert calls[0].arguments == {"location": "Manhattan", "cuisine": "Thai"}
    with pytest.raises(MalformedToolCall, match="cut off"):  # still cut off with short strings: said so
        await Router(FakeLlama(routes, loops_past=10)).route(user(text), TOOLS)


async def test_arguments_that_do_not_fit_the_tool_raise_malformed_tool_call() -> None:
    wrong = [("find_restaurants", {"cuisine": "Thai"})]  # the location it needs is missing
    with pytest.raises(MalformedToolCall):
        await Router(FakeLlama({"eat": wrong})).route(user("eat"), TOOLS)


async def test_the_decision_offers_few_tools_whole_when_they_fit_a_table_else_with_descriptions_cut_short() -> None:
    """BFCL live_simple_236: `query`'s note gives its example, 'track:Doxy artist:Miles Davis', past the 120
    characters a required parameter's note was cut at; offered whole, the 0.5B wrote "track:Dil Nu artist:Maninder
    Buttar" for the song 'Dil Nu' by Maninder Buttar, where it had written "Dil Nu Maninder Buttar"."""
    def wordy(times: int) -> Tool:
        return foreign("wordy", "Does things. " * times, {"x": {"type": "string", "description": "why " * 100}}, [])

    for times, whole in ((200, True), (600, False)):  # 2,600 characters fit a table (`TABLE_CHARS`), 7,800 do not
        llama = FakeLlama({})
        await Router(llama).route(user("do things"), [wordy(times)])
        function = [a for a in llama.asked if a["kind"] == "render"][-1]["tools"][0]["function"]
        assert function["name"] == "wordy"
        assert (len(function["description"]), len(function["parameters"]["properties"]["x"]["description"])) == (
            (13 * times, 400) if whole else (299, 60))  # cut: 300 characters, an optional note 60, with "…"
    assert len(wordy(600).parameters["x"]["description"]) == 400  # the tool itself is left as it was


def test_what_the_decision_is_offered_leaves_out_schema_noise_but_no_field() -> None:
    """A prompt token costs a small CPU about 16 ms: titles, `$schema` and "or null" go, every field stays."""
    from sidespin.route import offered

    note = "A filter the person may give. " * 10
    log = foreign("git_log", "Shows the commit logs", {
        "repo_path": {"title": "Repo Path", "type": "string", "description": note},
        "title": {"type": "string", "title": "Title"},  # a field named like the keyword
        "since": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Since",
                  "description": note},
        "max_count": {"type": "integer", "default": 10},
    }, ["repo_path"])
    log.input_schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    parameters = offered(log)["function"]["parameters"]
    assert "$schema" not in parameters and parameters["required"] == ["repo_path"]
    fields = parameters["properties"]
    assert list(fields) == ["repo_path", "title", "since", "max_count"]
    assert fields["title"] == {"type": "string"}
    assert fields["since"]["type"] == "string" and "anyOf" not in fields["since"] and "default" not in fields["since"]
    assert fields["max_count"]["default"] == 10
    assert len(fields["repo_path"]["description"]) <= 120 and len(fields["since"]["description"]) <= 60
    assert "title" not in json.dumps(fields["repo_path"]) and log.parameters["repo_path"]["title"] == "Repo Path"


async def test_nothing_the_decision_sees_names_a_built_in_plugin() -> None:
    from sidespin.tools import load_plugins, plugins_dir

    llama = FakeLlama({})
    router = Router(llama)
    await router.route(user("find me a Thai place"), TOOLS)
    seen = json.dumps([a for a in llama.asked if a["kind"] != "next_tokens"]) + llama.asked[-1]["prompt"]
    assert [p.name for p in load_plugins(plugins_dir()) if p.name in seen] == []


async def test_earlier_calls_and_results_reach_the_decision_so_a_follow_up_can_refer_to_them() -> None:
    history = [
        {"role": "user", "content": "read notes/todo.md"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "notes/todo.md"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "- milk\n- eggs"},
        {"role": "assistant", "content": "You need milk and eggs."},
        {"role": "user", "content": "add bread to that list"},
    ]
    llama = FakeLlama({})
    await Router(llama).route(history, TOOLS)
    prompt = [a for a in llama.asked if a["kind"] == "next_tokens"][0]["prompt"]
    assert '"path": "notes/todo.md"' in prompt and "- milk" in prompt and prompt.endswith("<assistant>")


async def test_a_follow_up_after_answers_in_words_is_decided_on_alone_and_its_call_written_in_the_conversation() -> None:
    """"And what time is that in Tokyo?" after an answer about New York: the 0.5B's chance of a call was 0.02 in
    the conversation, 0.90 for the message alone."""
    history = [
        {"role": "user", "content": "What time is it in New York?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "current_time", "arguments": '{"zone": "America/New_York"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "23:40"},
        {"role": "assistant", "content": "It is 23:40 in New York."},
    ]
    routes = {"And what time is that in Tokyo?": [("current_time", {"zone": "Asia/Tokyo"})],
              "Thanks, what a day.": []}
    llama = FakeLlama(routes, shy=0.02)
    calls = await Router(llama).route([*history, *user("And what time is that in Tokyo?")], TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "Asia/Tokyo"})]
    chances = [a["prompt"] for a in llama.asked if a["kind"] == "next_tokens"]
    assert "New York" in chances[0] and "New York" not in chances[1]  # the conversation, then the message alone
    written = [a["prompt"] for a in llama.asked if a["kind"] == "complete"]
    assert written and all("It is 23:40 in New York." in prompt for prompt in written)  # "that" can be read
    # a follow-up the model would not call for alone either stays in words
    assert await Router(FakeLlama(routes, shy=0.02)).route([*history, *user("Thanks, what a day.")], TOOLS) == []
    # the first message of a conversation is decided once
    alone = FakeLlama(routes, shy=0.02, p_call=0.3)
    assert await Router(alone).route(user("And what time is that in Tokyo?"), TOOLS) == []
    assert len([a for a in alone.asked if a["kind"] == "next_tokens"]) == 1


def server(name: str, tools: list[tuple[str, str]]) -> list[Tool]:
    return [foreign(n, d, {"city": {"type": "string"}}, ["city"], source=f"mcp:{name}") for n, d in tools]


WIDGETS = server("widgets", [(f"tool_{i}", f"Handles widgets of kind {i}.") for i in range(12)])
WEATHER = server("weather", [("get_weather", "The weather forecast for a city."),
                             ("get_rain", "How much rain falls in a city, in millimetres.")])


def offered_in(llama: FakeLlama) -> list[list[str]]:
    """The tools each decision prompt offered (not those of the format's marked chats)."""
    return [[t["function"]["name"] for t in a["tools"]] for a in llama.asked
            if a["kind"] == "render" and a["tools"] and a["tools"][0]["function"]["name"] != "zqxname"]


async def test_with_many_tools_the_decision_reads_the_one_servers_tools_that_share_words_with_the_message() -> None:
    llama = FakeLlama({"and what is the weather forecast in Oslo?": [("get_weather", {"city": "Oslo"})]})
    calls = await Router(llama).route(user("and what is the weather forecast in Oslo?"), [*WIDGETS, *WEATHER])
    assert [c.name for c in calls] == ["get_weather"]
    assert offered_in(llama) == [["get_weather", "get_rain"]]  # the weather server's table, whole, no widget
    # a follow-up whose words match no tool reads the table of the tool the conversation called
    earlier = [*user("the weather in Oslo"), {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": "rain"}, {"role": "assistant", "content": "Rain."},
        *user("and in Bergen?")]
    llama = FakeLlama({})
    await Router(llama).route(earlier, [*WIDGETS, *WEATHER])
    # (asked in the conversation, then alone: `test_a_follow_up_after_answers_in_words_…`)
    assert offered_in(llama) == [["get_weather", "get_rain"]] * 2


async def test_a_big_servers_many_tools_sharing_a_common_word_do_not_outvote_the_one_tool_made_for_the_message() -> None:
    """Beside the five reference servers, "Get the working hours of Louvre Museum in Paris." read the file server's
    table: its 14 tools all say they only "work" within allowed folders, and their ranks added up (1/2 + 1/3 + …)
    beat the museum tool's first place. A table counts its best tool and half its second best."""
    files = server("files", [(f"file_tool_{i}", f"Handles files of kind {i}; it only works within allowed folders.")
                             for i in range(12)])
    museum = server("museums", [("museum_hours", "Opening hours of a museum.")])
    text = "What are the working hours of the Louvre museum?"
    llama = FakeLlama({text: [("museum_hours", {"city": "Paris"})]})
    await Router(llama).route(user(text), [*files, *museum])
    assert offered_in(llama) == [["museum_hours"]]


async def test_a_message_naming_the_folder_a_server_works_in_reads_that_servers_table() -> None:
    """"open /tmp/…/files/notes/ideas.md" shares "open" with the memory server's `open_nodes` and no word with the
    file server's tools; the folder, as mcp.json names it, is the file server's."""
    files = [dataclasses.replace(t, places=("/home/me/files",)) for t in
             server("files", [(f"reader_{i}", f"Reads the text of kind {i}.") for i in range(6)])]
    memory = server("memory", [(f"graph_tool_{i}", "Adds to the knowledge graph.") for i in range(5)])
    memory.append(foreign("open_nodes", "Open nodes of the knowledge graph by their names.", {}, [], "mcp:memory"))
    llama = FakeLlama({})
    await Router(llama).route(user("open /home/me/files/notes/ideas.md"), [*files, *memory])
    assert offered_in(llama) == [[t.name for t in files]]


def test_a_message_naming_a_file_in_another_language_reads_the_file_tools_table() -> None:
    """"Wie groß ist die Datei budget.csv?" shares no word with any tool; its file's name says it is about a file.
    A site's name is no file's."""
    files = server("files", [(f"file_tool_{i}", "Reads or writes a file.") for i in range(6)])
    clock = server("clock", [(f"clock_tool_{i}", "Tells the time in a time zone.") for i in range(5)])
    for text, table in [("Wie groß ist die Datei budget.csv?", files), ("Peux-tu lire notes/todo.md ?", files),
                        ("Was gibt es Neues auf facebook.com und example.org?", None)]:
        assert table_for([files, clock], user(text)) == table, text


def test_a_message_pointing_back_at_that_file_reads_the_table_of_the_tool_called_last() -> None:
    """"Add Tom to the people present in that file." after the file server read notes/meeting.md went to the git
    server's table, for "add" (`git_add`)."""
    files = server("files", [(f"file_tool_{i}", "Reads or edits a text file.") for i in range(6)])
    git = server("git", [("git_add", "Adds file contents to the staging area.")] +
                 [(f"git_tool_{i}", "Shows the repository.") for i in range(5)])
    read = {"id": "c", "type": "function", "function": {"name": "file_tool_0", "arguments": '{"path": "notes/m.md"}'}}
    before = [*user("Read notes/m.md please."), {"role": "assistant", "content": "", "tool_calls": [read]},
              {"role": "tool", "tool_call_id": "c", "content": "Present: Jonas"}, {"role": "assistant", "content": "Ok."}]
    text = "Add Tom to the people present in that file."
    assert table_for([files, git], user(text)) == git  # alone, "add" is git's
    assert table_for([files, git], [*before, *user(text)]) == files
    assert table_for([files, git], [*before, *user("Add Tom to the git staging area.")]) == git
    assert table_for([files, git], [*before, *user("Add this list to git: a.py, b.py.")]) == git  # its own list


def test_numbers_in_a_message_choose_no_table() -> None:
    """'change "Tuesday at 10:00" …' read a server whose tool counts "from 1 to 10"."""
    files = server("files", [(f"file_tool_{i}", "Edits lines of a text file.") for i in range(6)])
    links = server("links", [(f"link_tool_{i}", "Returns from 1 to 10 links at 00 cost.") for i in range(5)])
    assert table_for([files, links], user('In notes/meeting.md, change "Tuesday at 10:00" to "11:00".')) == files


def test_about_chooses_no_table() -> None:
    """"What do you remember about my dog Biscuit?" read the reference "everything" server's table, whose
    `get-annotated-message` provides "metadata about content", and made no call."""
    memory = server("memory", [(f"graph_tool_{i}", "Adds to the knowledge graph.") for i in range(5)])
    demos = server("demos", [(f"demo_tool_{i}", "Provides metadata about content.") for i in range(5)])
    assert table_for([memory, demos], user("What do you remember about my dog Biscuit?")) is None
    assert table_for([memory, demos], user("What metadata do you have?")) == demos


def test_a_question_for_the_date_today_reads_the_table_of_the_current_time() -> None:
    """Beside the five reference servers' tools as they list them: "What's today's date?" shared only "date" with
    `git_log` and read the git server's table, whose calls were all refused; "What day is it today?" shared no word
    with any tool and was answered with a made-up day. Both ask for the current time."""
    listed = json.loads((Path(__file__).parent.parent / "bench" / "server_eval" / "reference_tools.json").read_text())
    sources: dict[str, list[Tool]] = {}
    for item in listed:
        made = Tool(fn=lambda **_: None, **{**item, "places": tuple(item.get("places", ()))})
        sources.setdefault(made.source, []).append(made)
    cut = list(sources.values())
    source_of = {id(table): table[0].source for table in cut}
    for text, source in [("What's today's date?", "mcp:time"), ("What day is it today?", "mcp:time"),
                         ("what date is it", "mcp:time"), ("What's the date of the last commit?", "mcp:git")]:
        table = table_for(cut, user(text))
        assert (source_of[id(table)] if table is not None else None) == source, text


async def test_a_folder_whose_name_has_an_and_is_named_only_whole() -> None:
    """A server working in "/srv/tax and receipts" is not named by "receipts" alone."""
    files = server("files", [(f"folder_tool_{i}", "Creates a new folder or lists a folder.") for i in range(6)])
    taxes = [dataclasses.replace(t, places=("/srv/tax and receipts",)) for t in
             server("taxes", [(f"tax_tool_{i}", "Adds a tax form.") for i in range(5)])]
    llama = FakeLlama({})
    await Router(llama).route(user("Make a new folder called receipts."), [*files, *taxes])
    assert offered_in(llama) == [[t.name for t in files]]


async def test_a_message_sharing_no_word_with_any_table_is_decided_on_the_table_likeliest_to_call() -> None:
    text = "Wird es morgen über Bergen regnen, meinst du?"  # German: no word of the descriptions

    class Eager(FakeLlama):  # the model wants a call more when the rain tool is offered
        async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
            found = await super().next_tokens(prompt, n)
            if "get_rain" not in prompt or "<tool_call>" not in [token for token, _ in found]:
                return found
            return [("<tool_call>", 0.97), ("Hello", 0.03)] if not prompt.endswith(OPEN) else found

    llama = Eager({text: [("get_rain", {"city": "Bergen"})]}, p_call=0.7)
    calls = await Router(llama, threshold=0.6).route(user(text), [*WIDGETS, *WEATHER])
    assert [c.name for c in calls] == ["get_rain"]
    assert sorted(map(len, offered_in(llama))) == [2, 12]  # both tables were asked; the weather one decided
    name = [a for a in llama.asked if a["kind"] == "complete"][0]
    assert sentences_of(name["grammar"]) == {"get_weather" + BETWEEN, "get_rain" + BETWEEN}


def test_tables_keep_a_sources_tools_together_with_descriptions_cut_shorter_before_the_server_is_cut() -> None:
    wordy = server("files", [(f"file_tool_{i}", "Reads or writes files. " * 14) for i in range(18)])
    huge = server("cloud", [(f"cloud_tool_{i}", "Runs a cloud job. " * 12) for i in range(40)])
    plugins = [Tool(name=f"plugin_{i}", description="A plugin.", fn=lambda: None, source=f"plugin:p{i}",
                    input_schema={"type": "object", "properties": {}}) for i in range(3)]
    cut = decision_tables([*wordy, *huge, *WEATHER, *plugins])
    assert [{t.source for t in table} for table in cut] == [{"mcp:files"}, {"mcp:cloud"}, {"mcp:cloud"},
                                                           {"mcp:weather"}, {"plugin:p0", "plugin:p1", "plugin:p2"}]
    assert [len(table) for table in cut] == [18, 20, 20, 2, 3]  # too big even cut short: two even halves, in order
    assert all(len(json.dumps(offered_table(table))) <= TABLE_CHARS for table in cut)
    whole = offered_table(wordy)  # whole, its descriptions cut shorter than when read alone
    assert len(whole[0]["function"]["description"]) < len(offered(wordy[0])["function"]["description"])
    assert decision_tables(wordy[:SHORTLIST]) == [wordy[:SHORTLIST]]  # few tools: read all at once, uncut
    assert offered_table(wordy[:SHORTLIST])[0] == offered(wordy[0], None)


async def test_the_call_format_is_read_off_the_template() -> None:
    form = await read_format(FakeLlama())
    assert (form.opening, form.between, form.separator) == (OPEN, BETWEEN, "\n" + OPEN) and form.native
    assert form.closing == "}\n</tool_call>"


async def test_a_template_that_ignores_tools_gets_them_in_a_system_message_in_the_same_format() -> None:
    llama = FakeLlama({"Thai in Lyon": [("find_restaurants", {"location": "Lyon", "cuisine": "Thai"})]}, native=False)
    calls = await Router(llama).route(user("Thai in Lyon"), TOOLS)
    assert [c.name for c in calls] == ["find_restaurants"]
    system = [a for a in llama.asked if a["kind"] == "render" and a["messages"][-1]["content"] == "Thai in Lyon"][-1][
        "messages"][0]
    assert system["role"] == "system" and "find_restaurants" in system["content"] and OPEN in system["content"]


def test_the_names_grammar_escapes_quotes_backslashes_and_newlines() -> None:
    assert sentences_of(names_grammar(['say "hi"', "back\\slash"], '"\n')) == {'say "hi""\n', 'back\\slash"\n'}


def test_optional_properties_stay_optional_and_every_field_is_bounded() -> None:
    @tool
    def search(query: str, tags: list[str] | None = None, limit: int = 10) -> dict:
        """Search the notes."""
        return {}

    schema = arguments_schema(search)
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    properties = schema["properties"]
    assert properties["query"]["maxLength"] <= 600 and properties["tags"]["maxItems"] <= 8
    assert properties["limit"]["maximum"] <= 1_000_000


def test_a_number_is_bounded_like_an_integer() -> None:
    """read_file's optional `head` (a JSON number): unbounded, the 0.5B wrote "head": 5000… until the token budget
    ran out, and "Read notes/todo.md for me." ended as a malformed call after 72 s."""
    read = foreign("read_file", "Read a file.", {"path": {"type": "string"}, "head": {"type": "number"},
                                                 "ratio": {"type": "number", "minimum": 0, "maximum": 1}}, ["path"])
    fields = arguments_schema(read)["properties"]
    assert fields["head"] == {"type": "number", "minimum": -1_000_000, "maximum": 1_000_000, "multipleOf": 1e-6}
    assert fields["ratio"] == {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 1e-6}


async def test_an_array_whose_values_are_listed_beside_its_items_is_an_array_of_them() -> None:
    """BFCL live_multiple_147: `metrics` is an array with its allowed values listed beside `items`, which no array
    satisfies; written under the list alone, the 0.5B wrote "temperature", and the call failed as malformed."""
    readings = tool_from_mcp(mcp_types.Tool(name="get_readings", description="Sensor readings.", inputSchema={
        "type": "object", "properties": {"metrics": {"type": "array", "items": {"type": "string"},
                                                     "enum": ["temperature", "humidity"]}}, "required": ["metrics"]}),
        lambda **_: None, source="mcp:sensors", timeout=5)
    field = arguments_schema(readings)["properties"]["metrics"]
    assert field == {"type": "array", "items": {"enum": ["temperature", "humidity"]}, "maxItems": 8}
    text = "Fetch the temperature readings of our sensors."
    fake = FakeLlama({text: [("get_readings", {"metrics": ["temperature"]})]})
    assert [c.arguments for c in await Router(fake).route(user(text), [readings])] == [{"metrics": ["temperature"]}]


async def test_a_whole_number_whose_allowed_values_are_texts_is_a_text() -> None:
    """BFCL's `Music_3_LookupMusic.year` is an integer whose allowed values are "2010" … "dontcare": the 0.5B's 2010
    was refused as not one of them ("2010" would be no whole number), so no call was made. BFCL's answers write
    "2012"."""
    music = tool_from_mcp(mcp_types.Tool(name="lookup_music", description="Find songs.", inputSchema={
        "type": "object", "properties": {"year": {"type": "integer", "enum": ["2010", "2011", "dontcare"]}},
        "required": ["year"]}), lambda **_: None, source="mcp:music", timeout=5)
    text = "Find me songs from 2011."
    fake = FakeLlama({text: [("lookup_music", {"year": 2011})]})
    assert [c.arguments for c in await Router(fake).route(user(text), [music])] == [{"year": "2011"}]


async def test_a_switch_whose_allowed_values_are_texts_is_a_switch() -> None:
    """BFCL's `Services_1_FindProvider.is_unisex` is a boolean whose allowed values are "True", "False", "dontcare":
    for "I need a unisex salon in Berkeley" the 0.5B's true was refused as not one of them, a malformed call."""
    salons = tool_from_mcp(mcp_types.Tool(name="find_provider", description="Find a salon.", inputSchema={
        "type": "object", "properties": {"city": {"type": "string"}, "is_unisex": {
            "type": "boolean", "enum": ["True", "False", "dontcare"], "default": "dontcare"}},
        "required": ["city"]}), lambda **_: None, source="mcp:salons", timeout=5)
    text = "I need a unisex salon in Berkeley."
    fake = FakeLlama({text: [("find_provider", {"city": "Berkeley", "is_unisex": True})]})
    assert [c.arguments for c in await Router(fake).route(user(text), [salons])] == [
        {"city": "Berkeley", "is_unisex": True}]


def test_a_number_has_six_digits_after_its_point_or_as_many_as_a_number_said() -> None:
    """BFCL parallel_124 and live_simple_226: unbounded, the 0.5B wrote a growth rate of 1.50000000000000015000… and
    a speed of 1.0555555…, until the budget cut the arguments off twice and no call was made."""
    rate = foreign("project", "Project a population.", {"growth_rate": {"type": "number"}}, ["growth_rate"])
    digits = {said: arguments_schema(rate, bounds=bounds_for(said))["properties"]["growth_rate"]["multipleOf"]
              for said in ("a growth rate of 1.5%", "mu0 is 1.256e-06", "0.000000001 tesla", "8.854e-12 f/m")}
    assert digits == {"a growth rate of 1.5%": 1e-6, "mu0 is 1.256e-06": 1e-9, "0.000000001 tesla": 1e-9,
                      "8.854e-12 f/m": 1e-10}  # no finer: llama.cpp would drop the schema and write free text
    halves = foreign("rate", "Rate it.", {"stars": {"type": "number", "multipleOf": 0.5}}, ["stars"])
    assert arguments_schema(halves)["properties"]["stars"]["multipleOf"] == 0.5  # the tool's own step
    tiny = foreign("rate", "Rate it.", {"stars": {"type": "number", "multipleOf": 1e-20}}, ["stars"])
    assert arguments_schema(tiny)["properties"]["stars"]["multipleOf"] == 1e-6  # one too fine: ours



def test_a_form_the_tools_own_text_names_is_the_pattern_its_value_is_written_under() -> None:
    """The 0.5B wrote "2023-04-25T00:00:00Z" for a date "in the format of 'YYYY-MM-DD'", and "Berlin" for a
    place "in the format of 'City, State'"."""
    weather = foreign("get_weather", "The forecast of a city on a date.", {
        "city": {"type": "string", "description": "in the format of 'City, State', such as 'Berkeley, CA'."},
        "date": {"type": "string", "description": "The date, in the format of 'YYYY-MM-DD'."},
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "day": {"type": "string", "format": "date"},
        "when": {"type": "string", "description": "Either 'MM/DD/YYYY' or 'YYYY-MM-DD'."},
        "near": {"type": "string", "description": "A place, such as 'Berkeley, CA'."},
        "zone": {"type": "string", "description": "A time zone (e.g., 'Asia/Tokyo')."}}, ["city"])
    fields = arguments_schema(weather)["properties"]
    date = re.compile(fields["date"]["pattern"])
    assert date.match("2023-04-25") and not date.match("2023-04-25T00:00:00Z")
    assert re.match(fields["day"]["pattern"], "2023-04-25") and not re.match(fields["day"]["pattern"], "today")
    assert re.match(fields["time"]["pattern"], "15:00") and not re.match(fields["time"]["pattern"], "3 PM")
    assert not re.match(fields["time"]["pattern"], "30:00")  # each part in its range: the 0.5B's "3" for 3 PM
    assert not re.match(fields["date"]["pattern"], "2023-25-04")
    assert re.match(fields["city"]["pattern"], "Berlin, Germany") and not re.match(fields["city"]["pattern"], "Berlin")
    assert all(re.match(fields["when"]["pattern"], value) for value in ("04/25/2023", "2023-04-25"))
    assert "pattern" not in fields["near"] and "pattern" not in fields["zone"]  # examples, not forms


def test_a_place_whose_state_the_tool_says_is_abbreviated_is_written_city_comma_state() -> None:
    """BFCL live_multiple_386: "Please find a salon in San Francisco.": the 0.5B wrote "San Francisco" for a city
    "such as 'New York, NY'. State names must be abbreviated with two letters."."""
    salon = foreign("find_salon", "Find a salon in a city.", {"city": {"type": "string", "description":
                    "The city, such as 'New York, NY'. State names must be abbreviated with two letters."},
                    "near": {"type": "string", "description": "A place, such as 'New York, NY'."}}, ["city"])
    fields = arguments_schema(salon)["properties"]
    assert re.match(fields["city"]["pattern"], "San Francisco, CA")
    assert not re.match(fields["city"]["pattern"], "San Francisco")
    assert not re.match(fields["city"]["pattern"], "San Francisco, California")
    assert "pattern" not in fields["near"]  # an example alone is no form


async def test_an_array_holds_as_many_items_as_the_longest_list_said() -> None:
    """BFCL parallel_165: "a t-test on dataset_A [12, 15, 18, 20, 22, 25, 28, 30, 32, 35] …": arrays held at most 8
    items, and the 0.5B's test ran on the first 8 numbers of each. Lines of a list count as items too."""
    test = foreign("t_test", "A t-test of two datasets.", {"a": {"type": "array", "items": {"type": "number"}}}, ["a"])
    said = "run a t-test on [12, 15, 18, 20, 22, 25, 28, 30, 32, 35]."
    assert bounds_for(said).items == 10 and bounds_for("Add milk, eggs.").items == MAX_ITEMS
    assert bounds_for("Objects:\n* Blue square\n" + "* Red square\n" * 11).items == 12
    assert arguments_schema(test, bounds=bounds_for(said))["properties"]["a"]["maxItems"] == 10
    ten = {"a": [12, 15, 18, 20, 22, 25, 28, 30, 32, 35]}
    llama = FakeLlama({said: [("t_test", ten)]})
    calls = await Router(llama).route(user(said), [test])
    assert [c.arguments for c in calls] == [ten]
    assert {a["schema"]["properties"]["a"]["maxItems"] for a in llama.asked if a.get("schema")} == {10}


def lima_time_asked_and_answered(result: str, asked: str = "time in Lima", zone: str = "America/Lima") -> list[dict]:
    """A turn so far: the person asked the time in Lima, the model called `current_time` for `zone`, its result came
    back."""
    return [*user(asked),
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {
                "name": "current_time", "arguments": json.dumps({"zone": zone})}}]},
            {"role": "tool", "tool_call_id": "c", "content": result}]


async def test_after_results_the_model_must_want_another_call_more_surely_than_the_first() -> None:
    text = "time in Lima and restaurants open there"  # no steps in order (those: below)
    history = lima_time_asked_and_answered("09:00", text)
    wants = {text: [("current_time", {"zone": "America/Lima"})]}
    then = {text: [("find_restaurants", {"location": "Lima"})]}
    assert await Router(FakeLlama(wants, p_call=0.7, after=then), threshold=0.5).route(history, TOOLS) == []
    again = await Router(FakeLlama(wants, p_call=0.8, after=then), threshold=0.5).route(history, TOOLS)
    assert [c.name for c in again] == ["find_restaurants"]


def zone_called(call_id: str, zone: str, result: str) -> list[dict]:
    """The model called `current_time` for `zone`, and `result` came back."""
    call = {"id": call_id, "type": "function",
            "function": {"name": "current_time", "arguments": json.dumps({"zone": zone})}}
    return [{"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": result}]


async def test_a_tool_whose_one_call_failed_may_be_called_again_with_mended_arguments_but_not_twice() -> None:
    history = lima_time_asked_and_answered("Error: Invalid timezone: 'No time zone found with key Lima'", zone="Lima")
    wants = {"time in Lima": [("current_time", {"zone": "America/Lima"})]}
    calls = await Router(FakeLlama({}, p_call=0.99, after=wants), threshold=0.5).route(history, TOOLS)
    assert [c.arguments for c in calls] == [{"zone": "America/Lima"}]
    retried = [*history, *zone_called("d", "America/Lima", "Error: the clock is down")]
    assert await Router(FakeLlama({}, p_call=0.99, after=wants), threshold=0.5).route(retried, TOOLS) == []


async def test_a_failed_call_beside_another_of_the_same_tool_may_be_mended_once() -> None:
    """"What time is it in Tokyo and in Paris?": the 0.5B called Europe/Tokyo (no time zone) and Europe/Paris."""
    asked = "time in Lima and in Paris"
    both = [*user(asked), {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "current_time", "arguments": '{"zone": "Lima"}'}},
        {"id": "d", "type": "function", "function": {"name": "current_time", "arguments": '{"zone": "Europe/Paris"}'}}]},
        {"role": "tool", "tool_call_id": "c", "content": "Error: Invalid timezone: 'Lima'"},
        {"role": "tool", "tool_call_id": "d", "content": "10:00"}]
    wants = {asked: [("current_time", {"zone": "America/Lima"})]}
    calls = await Router(FakeLlama({}, p_call=0.99, after=wants), threshold=0.5).route(both, TOOLS)
    assert [c.arguments for c in calls] == [{"zone": "America/Lima"}]
    mended = [*both, *zone_called("e", "America/Lima", "04:00")]
    again = {asked: [("current_time", {"zone": "Paris"})]}  # mended once: the tool is closed for this turn
    assert await Router(FakeLlama({}, p_call=0.99, after=again), threshold=0.5).route(mended, TOOLS) == []
    assert [c.arguments for c in await Router(FakeLlama({}, p_call=0.99, after=again), threshold=0.5).route(
        both, TOOLS)] == [{"zone": "Paris"}]  # what it would have called


class Hesitant(FakeLlama):
    """A model that wrote "Europe/Tokyo" but had other ideas for its start: the error's own words, then "Asia"."""

    VALUE = '{"zone": "'
    IDEAS = {VALUE: [("Europe", 0.5), ("No", 0.35), ("Asia", 0.1)], VALUE + "Europe": [("/Tokyo", 0.9), ("/", 0.05)],
             VALUE + "Europe/Tokyo": [('"}', 0.97)]}
    ENDS = {"Asia": '/Tokyo"', "No": ' time zone found with key Europe/Tokyo"'}

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        for written, likely in self.IDEAS.items():
            if prompt.endswith(written):
                self.asked.append({"kind": "next_tokens", "prompt": prompt})
                return likely
        return await super().next_tokens(prompt, n)

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict | None, max_tokens: int) -> str:
        for start, end in self.ENDS.items():
            if prompt.endswith(self.VALUE + start):
                self.asked.append({"kind": "complete", "prompt": prompt, "grammar": grammar, "schema": json_schema})
                return end
        return await super().complete(prompt, grammar, json_schema, max_tokens)


async def test_a_failed_call_written_again_gets_the_models_next_likeliest_value_not_the_errors_words() -> None:
    """"What time is it in Tokyo and in Paris?": "Europe/Tokyo" failed beside "Europe/Paris"; deciding again the
    0.5B wrote Paris again, and the failed Tokyo was never mended."""
    asked = "time in Tokyo and in Paris"
    tokyo, paris = (zone_called(*called) for called in (
        ("c", "Europe/Tokyo", "Error: No time zone found with key Europe/Tokyo"), ("d", "Europe/Paris", "10:00")))
    both = {"role": "assistant", "content": "", "tool_calls": tokyo[0]["tool_calls"] + paris[0]["tool_calls"]}
    history = [*user(asked), both, tokyo[1], paris[1]]  # one answer, two calls
    for again in ("Europe/Paris", "Europe/Tokyo"):  # what worked written again, or what failed
        model = Hesitant({}, p_call=0.99, after={asked: [("current_time", {"zone": again})]})
        calls = await Router(model, threshold=0.5).route(history, TOOLS)
        assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "Asia/Tokyo"})], again
    # a call of another tool succeeded since the failure (what the error asked for): the same call, as it was
    fact = {"id": "e", "type": "function", "function": {"name": "random_fact", "arguments": "{}"}}
    staged = [*history, {"role": "assistant", "content": "", "tool_calls": [fact]},
              {"role": "tool", "tool_call_id": "e", "content": "Owls can't move their eyes."}]
    model = Hesitant({}, p_call=0.99, after={asked: [("current_time", {"zone": "Europe/Tokyo"})]})
    calls = await Router(model, threshold=0.5).route(staged, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "Europe/Tokyo"})]
    # or beside it, in the same answer, which ran them at once: the 0.5B wrote `git_commit` and `git_add` together,
    # the commit failed ("No changes staged"), and the same commit, decided again, was refused as nothing to mend
    beside = [*user(asked), {"role": "assistant", "content": "", "tool_calls": tokyo[0]["tool_calls"] + [fact]},
              tokyo[1], {"role": "tool", "tool_call_id": "e", "content": "Owls can't move their eyes."}]
    model = Hesitant({}, p_call=0.99, after={asked: [("current_time", {"zone": "Europe/Tokyo"})]})
    calls = await Router(model, threshold=0.5).route(beside, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "Europe/Tokyo"})]
    # a file's path is no near miss of another: not mended from the model's next ideas
    read = foreign("read_file", "Read a file.", {"path": {"type": "string"}}, ["path"])
    missing = [*user("read notes.txt"), {"role": "assistant", "content": "", "tool_calls": [{"id": "r", "type": "function",
               "function": {"name": "read_file", "arguments": '{"path": "/home/me/notes.txt"}'}}]},
               {"role": "tool", "tool_call_id": "r", "content": "Error: ENOENT: no such file, open '/home/me/notes.txt'"}]
    model = Hesitant({}, p_call=0.99, after={"read notes.txt": [("read_file", {"path": "/home/me/notes.txt"})]})
    assert await Router(model, threshold=0.5).route(missing, [read, CLOCK]) == []
    assert not [a for a in model.asked if a["kind"] == "next_tokens" and a["prompt"].endswith('"path": "')]
    # an error that names no value of the call: nothing to mend, no call
    quiet = [*user(asked), *zone_called("c", "Europe/Tokyo", "Error: the clock is down")]
    model = Hesitant({}, p_call=0.99, after={asked: [("current_time", {"zone": "Europe/Tokyo"})]})
    assert await Router(model, threshold=0.5).route(quiet, TOOLS) == []


class LosAngeles(Hesitant):
    """The 0.5B after "Los Angeles" failed (measured): three ideas that write the error's words back, then
    "America" at 0.005."""

    VALUE = Hesitant.VALUE
    IDEAS = {VALUE: [("Los", 0.897), ("Invalid", 0.021), ("No", 0.012), ("Unknown", 0.0099), ("America", 0.005)],
             VALUE + "Los": [(" Angeles", 0.99)], VALUE + "Los Angeles": [('"}', 0.97)]}
    ENDS = {"Invalid": " timezone: 'No time zone found with key Los Angeles'\"", "Unknown": ' timezone"',
            "No": ' time zone found with key Los Angeles"', "America": '/Los_Angeles"'}


async def test_a_failed_value_is_mended_with_an_idea_that_does_not_write_the_errors_words_back() -> None:
    asked = "time in Los Angeles"
    history = [*user(asked), *zone_called("c", "Los Angeles", "Error: Invalid timezone: 'No time zone found with key "
                                                              "Los Angeles'")]
    model = LosAngeles({}, p_call=0.99, after={asked: [("current_time", {"zone": "Los Angeles"})]})
    calls = await Router(model, threshold=0.5).route(history, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "America/Los_Angeles"})]


async def test_mending_a_failed_call_with_another_tool_needs_a_word_of_its_own_too() -> None:
    """"What time is it in Tokyo and in Paris?": "Europe/Tokyo" failed, and the 0.5B went on to `convert_time` with
    "Europe/Tokyo" again, which failed too."""
    convert = foreign("convert_time", "Convert a time between time zones.",
                      {"time": {"type": "string"}, "target": {"type": "string"}}, ["time", "target"])
    history = lima_time_asked_and_answered("Error: Invalid timezone: 'No time zone found with key Lima'", zone="Lima")
    other = {"time in Lima": [("convert_time", {"time": "09:00", "target": "Lima"})]}
    llama = FakeLlama({}, p_call=0.99, after=other)
    assert await Router(llama, threshold=0.5).route(history, [CLOCK, convert]) == []
    assert arguments_schema(convert) not in [a.get("schema") for a in llama.asked]  # refused before its arguments
    same = {"time in Lima": [("current_time", {"zone": "America/Lima"})]}  # the failed tool itself may mend it
    calls = await Router(FakeLlama({}, p_call=0.99, after=same), threshold=0.5).route(history, [CLOCK, convert])
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "America/Lima"})]


async def test_mending_a_failed_call_after_another_tool_was_refused_the_next_likeliest_name_is_tried() -> None:
    """"What time is it in Tokyo and in Paris?": "Europe/Tokyo" failed, and deciding again the 0.5B named
    `convert_time` (no word of its own), then nothing; the failed tool itself, named next, mends the call."""
    convert = foreign("convert_time", "Convert a time between time zones.",
                      {"time": {"type": "string"}, "target": {"type": "string"}}, ["time", "target"])
    history = lima_time_asked_and_answered("Error: Invalid timezone: 'No time zone found with key Lima'", zone="Lima")
    then = {"time in Lima": [("convert_time", {"time": "09:00", "target": "Lima"}),
                             ("current_time", {"zone": "America/Lima"})]}
    calls = await Router(FakeLlama({}, p_call=0.99, after=then), threshold=0.5).route(history, [CLOCK, convert])
    assert [(c.name, c.arguments) for c in calls] == [("current_time", {"zone": "America/Lima"})]
    # after a call that did not fail there is nothing to mend: no next name
    answered = lima_time_asked_and_answered("09:00")
    llama = FakeLlama({}, p_call=0.99, after=then)
    assert await Router(llama, threshold=0.5).route(answered, [CLOCK, convert]) == []
    assert len([a for a in llama.asked if a["kind"] == "complete" and a["grammar"]]) == 1


async def test_another_tool_without_a_word_of_its_own_is_refused_before_its_arguments_are_written() -> None:
    """A decision on the 0.5B spent 2–3.5 s writing `read_text_file`'s arguments after `read_file`, then refused it."""
    text = "Thai food in Manhattan"
    llama = FakeLlama({text: [("find_restaurants", {"location": "Manhattan"}), ("current_time", {"zone": "Manhattan"})]},
                      writes=1)
    calls = await Router(llama).route(user(text), TOOLS)
    assert [c.name for c in calls] == ["find_restaurants"]
    assert [a["schema"] for a in llama.asked if a["kind"] == "complete" and a["schema"]] == [arguments_schema(FIND)]


async def test_a_word_of_asking_is_no_word_of_its_own_for_a_second_call() -> None:
    """BFCL live_multiple_713: "Can you help me find a house for one in London, England?": the 0.5B went on to
    `FindAttractions`, whose only words of its own were "help" and "find". A word of what is asked still counts."""
    house = foreign("search_house", "Search for a house to stay in.", {"where_to": {"type": "string"}}, ["where_to"])
    sights = foreign("find_attractions", "Find attractions in a city, with help for families.",
                     {"location": {"type": "string"}}, ["location"])
    text = "Can you help me find a house in London, England?"
    routes = {text: [("search_house", {"where_to": "London, England"}),
                     ("find_attractions", {"location": "London, England"})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [house, sights])
    assert [c.name for c in calls] == ["search_house"]
    text = "Can you help me find a house in London, England, and its attractions?"
    routes = {text: routes[next(iter(routes))]}
    calls = await Router(FakeLlama(routes)).route(user(text), [house, sights])
    assert [c.name for c in calls] == ["search_house", "find_attractions"]


async def test_after_results_another_tool_is_called_only_for_a_word_of_its_own_in_the_message() -> None:
    """"What's today's date?" given a repository's status: the 0.5B went on to its diffs, staged and unstaged."""
    then = {"time in Lima": [("find_restaurants", {"location": "Lima"})]}
    history = lima_time_asked_and_answered("09:00")  # nothing in "time in Lima" asks for restaurants
    assert await Router(FakeLlama({}, p_call=0.99, after=then), threshold=0.5).route(history, TOOLS) == []


async def test_a_word_only_an_example_value_of_a_parameter_holds_is_no_word_of_its_own() -> None:
    """`convert_time`'s "(e.g., 'Asia/Tokyo', …)" matched "What time is it in Tokyo right now?": after the time
    had come back, the 0.5B converted Tokyo's time to Tokyo's."""
    convert = foreign("convert_time", "Convert a time between time zones.",
                      {"time": {"type": "string"}, "target": {"type": "string", "description":
                                                              "Target zone (e.g., 'Asia/Lima', 'Europe/Oslo')"}},
                      ["time", "target"])
    then = {"time in Lima": [("convert_time", {"time": "09:00", "target": "America/Lima"})]}
    history = lima_time_asked_and_answered("09:00")
    assert await Router(FakeLlama({}, p_call=0.99, after=then), threshold=0.5).route(history, [CLOCK, convert]) == []
    # a word the description itself says is the tool's own
    said = dataclasses.replace(convert, description="Convert a time between time zones, Lima's among them.")
    calls = await Router(FakeLlama({}, p_call=0.99, after=then), threshold=0.5).route(history, [CLOCK, said])
    assert [c.name for c in calls] == ["convert_time"]



async def test_a_word_only_a_quoted_example_holds_is_no_word_of_its_own_for_a_second_call() -> None:
    """Tickets booked from New York to Los Angeles: the 0.5B went on to a train search, whose only word of its
    own was its example "such as 'Los Angeles, CA'"."""
    place = {"type": "string", "description": "The city, such as 'Berkeley, CA'."}
    book = foreign("book_train_tickets", "Reserve tickets for a train journey.", {"to": place}, ["to"])
    find = foreign("find_trains", "Find trains to a city.", {
        "to": {"type": "string", "description": "The destination city, such as 'Los Angeles, CA'."}}, ["to"])
    text = "Reserve train tickets to Los Angeles, CA"
    routes = {text: [("book_train_tickets", {"to": "Los Angeles, CA"}), ("find_trains", {"to": "Los Angeles, CA"})]}
    calls = await Router(FakeLlama(routes)).route(user(text), [book, find])
    assert [c.name for c in calls] == ["book_train_tickets"]
    named = dataclasses.replace(find, description="Find trains to a city: Los Angeles, Berkeley …")
    calls = await Router(FakeLlama(routes)).route(user(text), [book, named])  # its own words, not an example
    assert [c.name for c in calls] == ["book_train_tickets", "find_trains"]


async def test_after_results_a_tool_already_called_in_the_turn_is_not_called_again() -> None:
    """"Read notes/todo.md": a small model, shown the file, reads it again or reads a file the text names."""
    history = lima_time_asked_and_answered("09:00 in Lima; Tokyo is ahead")
    wants = {"time in Lima": [("current_time", {"zone": "America/Lima"})]}
    rereads = {"time in Lima": [("current_time", {"zone": "Tokyo"})]}
    model = FakeLlama(wants, p_call=0.99, after=rereads)
    assert await Router(model, threshold=0.5).route(history, TOOLS) == []
    assert not [a for a in model.asked if a["kind"] == "complete" and a["schema"]]  # no arguments written for it
    # the same tool in the person's next message is a new turn: called again
    follow_up = [*history, {"role": "assistant", "content": "It is 09:00."}, *user("and in Tokyo")]
    asked = {"and in Tokyo": [("current_time", {"zone": "Tokyo"})]}
    assert [c.arguments for c in await Router(FakeLlama(asked)).route(follow_up, TOOLS)] == [{"zone": "Tokyo"}]


async def test_a_folder_its_server_works_in_is_a_known_value_and_is_offered_with_the_tool() -> None:
    def status(repo_path: str) -> str:
        """Shows the working tree status"""
        return "clean"

    text = "What's the git status of my repo?"
    llama = FakeLlama({text: [("git_status", {"repo_path": "/home/ada/project"})]})
    where = Tool("git_status", "Shows the working tree status",
                 {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]},
                 fn=status, places=("/home/ada/project",))
    nowhere = Tool(where.name, where.description, where.input_schema, fn=status)
    messages = [{"role": "user", "content": text}]
    assert [c.arguments for c in await Router(llama).route(messages, [where])] == [{"repo_path": "/home/ada/project"}]
    decided = [a for a in llama.asked if a["kind"] == "render" and text in str(a["messages"])][0]
    assert json.dumps(decided["tools"]).count("It works in /home/ada/project\"") == 1  # the description's end
    assert await Router(FakeLlama(llama.routes)).route(messages, [nowhere]) == []  # a folder nothing said: invented


def memory_server(marks: bool) -> list[Tool]:
    """A memory server's tools; `marks`: it says which only read (MCP `readOnlyHint`)."""
    store = foreign("create_entities", "Create entities in the knowledge graph: a person, a name, observations.",
                    {"entities": {"type": "array", "items": {"type": "string"}}}, ["entities"], source="mcp:memory")
    search = foreign("search_nodes", "Search the knowledge graph for a name or an observation.",
                     {"query": {"type": "string"}}, ["query"], source="mcp:memory")
    return [store, dataclasses.replace(search, read_only=marks)]


def names_offered(llama: FakeLlama) -> set[str]:
    """The names every choice of a name was offered."""
    return {s.removesuffix(BETWEEN) for a in llama.asked if a["kind"] == "complete" and a["grammar"]
            for s in sentences_of(a["grammar"])}


async def names_offered_for(llama: FakeLlama, text: str, marks: bool = True) -> set[str]:
    """The names offered for `text` alone, the memory server's tools offered (`marks`: it says which only read)."""
    llama.asked.clear()
    await Router(llama).route(user(text), memory_server(marks=marks))
    return names_offered(llama)


async def test_a_question_is_answered_by_tools_its_server_marks_as_only_reading() -> None:
    """"What is my sister's name?": the 0.5B named the memory server's first tool, `create_entities`, and stored
    a made-up sister."""
    question, asked_to = "What is my sister's name?", "Remember that my sister's name is Ada."
    stores = [("create_entities", {"entities": ["sister Ada"]})]
    model = FakeLlama({question: [("search_nodes", {"query": "sister"})], asked_to: stores,
                       "Can you tell me my sister's name and store it?": stores})
    calls = await Router(model).route(user(question), memory_server(marks=True))
    assert [(c.name, c.arguments) for c in calls] == [("search_nodes", {"query": "sister"})]
    assert names_offered(model) == {"search_nodes"}
    for text in ("Can you tell me my sister's name and store it?",):  # asking to read and to change: every tool
        assert await names_offered_for(model, text) == {"create_entities", "search_nodes"}, text
    # a server that marks none (BFCL's functions, most servers): nothing to tell by, every tool offered
    assert await names_offered_for(model, question, marks=False) == {"create_entities", "search_nodes"}


def test_of_a_server_cut_in_tables_a_question_gets_no_tool_from_a_table_of_tools_that_change_things() -> None:
    store, search = memory_server(marks=True)
    question = "What is my sister's name?"
    assert reads_only([store], question, among=[store, search]) == []
    assert reads_only([store], "Remember that my sister's name is Ada.", among=[store, search]) == [store]
    assert reads_only([store, search], question) == [search]


async def test_a_request_to_change_something_is_answered_by_tools_its_server_marks_as_changing_things() -> None:
    """"Now add bread to that grocery list, in the same file.": the 0.5B named `read_file` again and nothing was
    written; "Stage greet.py and commit it" named the git table's first tool, `git_status`."""
    asked_to, question = "Remember that my sister's name is Ada.", "What is my sister's name?"
    model = FakeLlama({asked_to: [("create_entities", {"entities": ["sister Ada"]})],
                       "Read my notes and add Ada to them.": [("search_nodes", {"query": "notes"})],
                       "Write a Python function that prints my sister's name.": [("search_nodes", {"query": "sister"})]})
    calls = await Router(model).route(user(asked_to), memory_server(marks=True))
    assert [(c.name, c.arguments) for c in calls] == [("create_entities", {"entities": ["sister Ada"]})]
    assert names_offered(model) == {"create_entities"}
    for text in ("Read my notes and add Ada to them.",  # it reads too: every tool
                 "Write a Python function that prints my sister's name."):  # "write" without "to": no change
        assert await names_offered_for(model, text) == {"create_entities", "search_nodes"}, text
    # a server that marks none: nothing to tell by, every tool offered
    assert await names_offered_for(model, asked_to, marks=False) == {"create_entities", "search_nodes"}
    # no word of the message for a tool that changes things: the table may be the wrong one, every tool offered
    text = "Remember to search for Ada."
    model = FakeLlama({text: [("search_nodes", {"query": "Ada"})]})
    assert await names_offered_for(model, text) == {"create_entities", "search_nodes"}


def test_a_request_to_change_keeps_every_tool_of_a_table_where_none_changes_things() -> None:
    store, search = memory_server(marks=True)
    assert changes_only([search], "Remember that my sister's name is Ada.", among=[store, search]) == [search]
    assert changes_only([store, search], "Remember that my sister's name is Ada.") == [store]
    assert changes_only([store, search], "What is my sister's name?") == [store, search]


def test_a_request_to_change_opens_a_clause_with_a_verb_of_changing_and_reads_nothing() -> None:
    for text in ("Now add bread to that grocery list, in the same file.", "Create a git branch called feature-x.",
                 'Stage greet.py and commit it with the message "Say see you soon".',
                 'In notes/meeting.md, change "Tuesday at 10:00" to "Wednesday at 11:00".',
                 "Can you add bread to the list?", "Recuerda que mi cumpleaños es el 14 de mayo.",
                 "Merk dir, dass mein Hund Bello heißt."):
        assert asks_for_a_change(text), text
    for text in ("Add 12 and 30 with the sum tool, then echo the result back.", "Use the sum tool to add 17 and 25.",
                 "Write a Python function that reverses a string.", "Read notes/todo.md and add bread to it.",
                 "How do I undo my last commit with git? Just explain the command.", "What is my sister's name?",
                 "List the files in the notes folder, then read the largest one.", "Thanks, that's all for now."):
        assert not asks_for_a_change(text), text


async def test_the_calls_of_a_chain_are_tools_of_its_steps_in_order() -> None:
    """"Add 12 and 30 with the sum tool, then echo the result back.": the 0.5B named the table's first tool, `echo`,
    and echoed a sum it made up."""
    echo = foreign("echo", "Echoes back the message it is given.", {"message": {"type": "string"}}, ["message"])
    total = foreign("get_sum", "Returns the sum of two numbers.", {"a": {"type": "number"}, "b": {"type": "number"}},
                    ["a", "b"])
    chain, both = "Add 12 and 30 with the sum tool, then echo the result back.", "Echo the sum of 12 and 30."
    model = FakeLlama({chain: [("get_sum", {"a": 12, "b": 30})], both: [("get_sum", {"a": 12, "b": 30})]})
    calls = await Router(model).route(user(chain), [echo, total])
    assert [(c.name, c.arguments) for c in calls] == [("get_sum", {"a": 12, "b": 30})]
    assert names_offered(model) == {"get_sum"}
    model.asked.clear()  # no steps in order: every tool
    await Router(model).route(user(both), [echo, total])
    assert names_offered(model) == {"echo", "get_sum"}
    # after results, the later steps' tools, and a failed call's, to mend it
    for answer, offered in (("42", {"echo"}), ("Error: the adder is down", {"echo", "get_sum"})):
        summed = {"id": "s", "type": "function", "function": {"name": "get_sum", "arguments": '{"a": 12, "b": 30}'}}
        history = [*user(chain), {"role": "assistant", "content": "", "tool_calls": [summed]},
                   {"role": "tool", "tool_call_id": "s", "content": answer}]
        model = FakeLlama({}, p_call=0.99, after={chain: [("echo", {"message": "42"})]})
        await Router(model).route(history, [echo, total])
        assert names_offered(model) == offered, answer
    assert steps(chain) == ["Add 12 and 30 with the sum tool", "echo the result back."]
    assert steps("Liste les fichiers, puis lis le plus grand.") == ["Liste les fichiers", "lis le plus grand."]
    assert steps(both) == []


async def test_after_results_a_step_the_chain_has_not_taken_needs_no_surer_model() -> None:
    """"Add 12 and 30 with the sum tool, then echo the result back.": after the sum, the 1.5B's chance of a call
    was 0.69, under the bar for deciding again (0.75), and the echo was never made."""
    echo = foreign("echo", "Echoes back the message it is given.", {"message": {"type": "string"}}, ["message"])
    total = foreign("get_sum", "Returns the sum of two numbers.", {"a": {"type": "number"}, "b": {"type": "number"}},
                    ["a", "b"])
    chain, plain = "Add 12 and 30 with the sum tool, then echo the result back.", "Add 12 and 30 with the sum tool."
    for text, echoed in ((chain, [("echo", {"message": "42"})]), (plain, [])):
        summed = {"id": "s", "type": "function", "function": {"name": "get_sum", "arguments": '{"a": 12, "b": 30}'}}
        history = [*user(text), {"role": "assistant", "content": "", "tool_calls": [summed]},
                   {"role": "tool", "tool_call_id": "s", "content": "42"}]
        model = FakeLlama({}, p_call=0.69, after={text: [("echo", {"message": "42"})]})
        calls = await Router(model, threshold=0.5).route(history, [echo, total])
        assert [(c.name, c.arguments) for c in calls] == echoed, text


def test_a_question_asks_something_and_a_request_phrased_as_one_asks_for_something() -> None:
    for text in ("What is my sister's name?", "When is my dentist appointment? It should be in your memory.",
                 "Which files are in the notes folder?", "¿Qué hora es ahora en Ciudad de México?",
                 "Wie groß ist die Datei budget.csv?", "Quelle heure est-il à Paris ?",
                 "Is there a branch called x?"):
        assert asks_something(text), text
    for text in ("Remember that my sister's name is Ada.", "Can you add bread to the list?", "Add 12 and 30, ok?",
                 "What time is it? Save it to a note.", "Peux-tu lire le fichier budget.csv ?",
                 "Why don't you create a branch?", "Could you show me my sister's name, please?"):
        assert not asks_something(text), text


async def test_a_time_said_on_the_twelve_hour_clock_grounds_the_same_time_on_the_24_hour_one() -> None:
    """"If it's 3 PM in New York, what time is it in London?": the 1.5B wrote 15:00, and the call was refused."""
    convert = foreign("convert_time", "Convert a time between time zones.",
                      {"source_timezone": {"type": "string"}, "time": {"type": "string"},
                       "target_timezone": {"type": "string"}}, ["source_timezone", "time", "target_timezone"])
    text = "If it's 3 PM in New York, what time is it in London?"
    wanted = {"source_timezone": "America/New_York", "time": "15:00", "target_timezone": "Europe/London"}
    calls = await Router(FakeLlama({text: [("convert_time", wanted)]})).route(user(text), [convert])
    assert [c.arguments for c in calls] == [wanted]
    made_up = {**wanted, "time": "17:45"}  # becomes the one time said (`as_said`)
    calls = await Router(FakeLlama({text: [("convert_time", made_up)]})).route(user(text), [convert])
    assert [c.arguments for c in calls] == [wanted]


async def test_a_file_name_with_an_extension_no_one_said_is_made_up() -> None:
    """"Which files are in the notes folder?": the 0.5B read "/home/me/files/notes.txt", which does not exist, and
    answered that the folder held `notes.txt`."""
    read = dataclasses.replace(foreign("read_text_file", "Read the complete contents of a file as text.",
                                       {"path": {"type": "string"}}, ["path"], source="mcp:files"),
                               places=("/home/me/files",))
    for text, path, made in (("Which files are in the notes folder?", "/home/me/files/notes.txt", False),
                             ("Book me a ticket to New Delhi.", "/home/me/files/India/New Delhi.txt", False),
                             ("What's on my to-do list? It's in notes/todo.md.", "/home/me/files/notes/todo.md", True),
                             ("Show me the budget CSV in my files.", "/home/me/files/budget.csv", True)):
        calls = await Router(FakeLlama({text: [("read_text_file", {"path": path})]})).route(user(text), [read])
        assert [c.arguments["path"] for c in calls] == ([path] if made else []), text


async def test_a_value_said_in_other_words_grounds_the_value_a_tool_takes() -> None:
    """On BFCL's own answers, the rule refused 35 of simple_python's 400 right calls: "an annual interest rate of 5%"
    is the 0.05 a tool takes, "213 million" 213000000, "Canadian dollars" CAD, "March 2nd" a date with 03 in it."""
    cases = [
        ("What will $5000 be worth at an annual interest rate of 5% after 3 years?", {"rate": 0.05}, {"rate": 0.5}),
        ("The population is 213 million.", {"rate": 213_000_000}, {"rate": 213_000}),
        ("What is the resonant frequency with a capacitance of 100µF?", {"rate": 0.0001}, {"rate": 100_000}),
        ("Convert 150 Euros to Canadian dollars.", {"currency": "CAD"}, {"currency": "AUD"}),
        # two dates said: one date said alone would be written in place of the one made up (`as_said`)
        ("Book a table on March 2nd, 2023, or 2023-03-05.", {"day": "2023-03-02"}, {"day": "2022-04-12"}),
        ("Set an alarm for 5 in the afternoon, or 6 in the evening.", {"day": "17:00"}, {"day": "05:30"}),
        ("Provide key war events in German history.", {"currency": "Germany"}, {"currency": "France"}),
        ("What will the air quality be for the next week?", {"rate": 7}, {"rate": 3}),
        ("Create a mix track with a duration of 3 minutes.", {"rate": 180}, {"rate": 200}),  # BFCL simple_python_293
        ("Predict the house prices for the next month in New York.", {"rate": 1}, {"rate": 2}),  # multiple_50
        # a place said by its initials (live_multiple_763: "a bus for 2 people from la to sd on 2023.10.1")
        ("A bus for 2 people from LA on 2023.10.1.", {"currency": "Los Angeles, CA"}, {"currency": "Lima, PE"}),
        ("Find me attractions to visit in the SF area?", {"currency": "San Francisco, CA"},
         {"currency": "Santa Fe Springs, CA"}),
        # and by one letter more (live_multiple_960: "get the weather of nyc"; 295: "I am travelling to LAX.")
        ("get the weather of nyc", {"currency": "New York, NY"}, {"currency": "Newark, NJ"}),
        ("I am travelling to LAX.", {"currency": "Los Angeles, CA"}, {"currency": "Las Vegas, NV"}),
    ]
    properties = {"rate": {"type": "number"}, "currency": {"type": "string"}, "day": {"type": "string"}}
    for text, said, made_up in cases:
        needs = foreign("take", "Takes a value.", properties, list(said))
        calls = await Router(FakeLlama({text: [("take", said)]})).route(user(text), [needs])
        assert [c.arguments for c in calls] == [said], text
        assert await Router(FakeLlama({text: [("take", made_up)]})).route(user(text), [needs]) == [], made_up


async def test_a_first_name_of_no_word_of_the_message_is_the_likeliest_of_the_tools_that_have_one_as_a_guess() -> None:
    """BFCL's live_multiple_540: "I'm looking to rent a home in Fremont …" with two alarm tools listed before two
    home tools. The 0.5B named `Alarm_1_GetAlarms` (a made-up user, refused), then `Alarm_1_AddAlarm` (a made-up
    time, refused): no call. No word of the message is an alarm tool's; the home search has several."""
    alarms = foreign("Alarm_1_GetAlarms", "Retrieves the list of alarms that the user has set.",
                     {"user_id": {"type": "string"}}, ["user_id"])
    add = foreign("Alarm_1_AddAlarm", "Set a new alarm.", {"new_alarm_time": {"type": "string"}}, ["new_alarm_time"])
    homes = foreign("Homes_2_FindHomeByArea", "Search for a home to rent or buy in an area, by bedrooms and bathrooms.",
                    {"area": {"type": "string"}, "number_of_beds": {"type": "integer"}}, ["area"])
    text = "I'm looking to rent a home in Fremont with at least 3 bedrooms. Can you find options for me?"
    wanted = [("Alarm_1_GetAlarms", {"user_id": "user123"}), ("Homes_2_FindHomeByArea", {"area": "Fremont, CA"})]
    calls = await Router(FakeLlama({text: wanted}, writes=1)).route(user(text), [alarms, add, homes])
    assert [(c.name, c.arguments) for c in calls] == [("Homes_2_FindHomeByArea", {"area": "Fremont, CA"})]
    # a guess: made only with a value the message gave
    wanted = [("Alarm_1_GetAlarms", {"user_id": "user123"}), ("Homes_2_FindHomeByArea", {"area": "Oakland, CA"})]
    assert await Router(FakeLlama({text: wanted}, writes=1)).route(user(text), [alarms, add, homes]) == []
    # and never one that deletes: the reference memory server's `delete_entities` has "names", `create_entities`
    # no word of "Remember that my sister's name is Ada." (the 0.5B named it at 0.95; the guess deleted 'Ada')
    create = foreign("create_entities", "Create multiple new entities in the knowledge graph.",
                     {"entities": {"type": "array", "items": {"type": "string"}}}, ["entities"], source="mcp:memory")
    delete = dataclasses.replace(foreign("delete_entities", "Delete multiple entities from the knowledge graph.",
                                         {"entityNames": {"type": "array", "items": {"type": "string"}}},
                                         ["entityNames"], source="mcp:memory"), destructive=True)
    text = "Remember that my sister's name is Ada."
    wanted = [("create_entities", {"entities": ["sister: Ada"]}), ("delete_entities", {"entityNames": ["Ada"]})]
    calls = await Router(FakeLlama({text: wanted}, writes=1)).route(user(text), [create, delete])
    assert [(c.name, c.arguments) for c in calls] == [("create_entities", {"entities": ["sister: Ada"]})]
    # a name the message has words for stands, whether it deletes or not (the file server marks `write_file`)
    write = dataclasses.replace(foreign("write_file", "Create a new file or overwrite one, with its text content.",
                                        {"path": {"type": "string"}, "content": {"type": "string"}},
                                        ["path", "content"], source="mcp:files"), destructive=True)
    folder = foreign("create_directory", "Create a new directory.", {"path": {"type": "string"}}, ["path"],
                     source="mcp:files")
    text = "Create a file called packing.txt with the text: passport, charger"
    wanted = [("write_file", {"path": "packing.txt", "content": "passport, charger"}),
              ("create_directory", {"path": "packing.txt"})]
    calls = await Router(FakeLlama({text: wanted}, writes=1)).route(user(text), [write, folder])
    assert [c.name for c in calls] == ["write_file"]


async def test_a_refused_first_call_is_followed_by_the_likeliest_other_name_once() -> None:
    """"When is my next dentist appointment? It should be in your memory.": the 0.5B named `read_graph`, which
    shares no word with it (the question now asks without "my", which lets a reading tool of a server that stores be
    called)."""
    graph = foreign("read_graph", "Read the entire knowledge graph.", {}, [], source="mcp:memory")
    store, search = memory_server(marks=True)
    store = dataclasses.replace(store, description="Store people and things in memory.")  # the word it shares
    tools = [dataclasses.replace(graph, read_only=True), search, store]
    text = "When is the next dentist appointment? It should be in your memory."  # not "my": see the test above
    model = FakeLlama({text: [("read_graph", {}), ("search_nodes", {"query": "dentist"})]})
    assert [(c.name, c.arguments) for c in await Router(model).route(user(text), tools)] == \
        [("search_nodes", {"query": "dentist"})]
    # a value no one said, then the next name, refused too: once only, no call
    model = FakeLlama({text: [("search_nodes", {"query": "Biscuit"})]})
    assert await Router(model).route(user(text), tools) == []
    assert len([a for a in model.asked if a["kind"] == "complete" and a["grammar"]]) == 2
    # the next name's arguments do not fit: no call, and no malformed call
    model = FakeLlama({text: [("read_graph", {})]})
    assert await Router(model).route(user(text), tools) == []
    # a next name without required values has nothing the message could back it with: no call
    asked = "What's your name?"
    model = FakeLlama({asked: [("say_hello", {"name": "Ada"}), ("random_fact", {})]})
    hello = foreign("say_hello", "Say hello to someone by name.", {"name": {"type": "string"}}, ["name"])
    fact = dataclasses.replace(FACT, description="A random fact, a name, a number.")  # shares "name"
    assert await Router(model).route(user(asked), [hello, fact]) == []
    assert "random_fact" in names_offered(model)  # it was named, then refused
    # a next name that requires nothing is backed by a value of it said (BFCL live_multiple_648)
    asked = "Can you retrieve a list of songs performed by Little Mix from the 'Get Weird' album?"
    alarms = foreign("get_alarms", "List the alarms.", {"user_id": {"type": "string"}}, ["user_id"])
    music = foreign("lookup_music", "Find songs.", {"artist": {"type": "string"}, "album": {"type": "string"},
                                                   "live": {"type": "boolean"}}, [])
    model = FakeLlama({asked: [("get_alarms", {"user_id": "Ada"}),
                               ("lookup_music", {"artist": "Little Mix", "album": "Get Weird"})]})
    assert [(c.name, c.arguments) for c in await Router(model).route(user(asked), [alarms, music])] == \
        [("lookup_music", {"artist": "Little Mix", "album": "Get Weird"})]
    model = FakeLlama({asked: [("get_alarms", {"user_id": "Ada"}),
                               ("lookup_music", {"artist": "Adele", "album": "25", "live": True})]})
    assert await Router(model).route(user(asked), [alarms, music]) == []  # nothing of it said (a switch is no value)
    # nor one whose required values only its server's folder gives
    asked = "What is the difference between UTC and GMT?"
    repo = {"repo_path": {"type": "string"}}
    diff = foreign("git_diff", "Shows differences between branches or commits.", {**repo, "target": {"type": "string"}},
                   ["repo_path", "target"])
    unstaged = foreign("git_diff_unstaged", "Shows changes in the working directory.", repo, ["repo_path"])
    tools = [dataclasses.replace(t, places=("/home/ada/project",)) for t in (diff, unstaged)]
    model = FakeLlama({asked: [("git_diff", {"repo_path": "/home/ada/project", "target": "main"}),
                               ("git_diff_unstaged", {"repo_path": "/home/ada/project"})]})
    assert await Router(model).route(user(asked), tools) == []
    assert [a["schema"] for a in model.asked if a["kind"] == "complete" and a["schema"]] == \
        [arguments_schema(t) for t in tools]  # both were written, and both refused


def test_a_value_that_restates_its_parameters_description_is_no_value() -> None:
    """The 0.5B, offered `get_song_lyrics` for a question about return on equity, wrote `song_title` "The title of
    the song." and `artist_name` "The name of the artist who performed the song." (BFCL multiple_128)."""
    lyrics = foreign("get_song_lyrics", "Retrieve the lyrics of a song.",
                     {"song_title": {"type": "string", "description": "The title of the song."},
                      "artist_name": {"type": "string", "description": "The name of the artist who performed the song."},
                      "lang": {"type": "string", "description": "The language of the lyrics, e.g. English."}},
                     ["song_title", "artist_name"])
    said = "what are the lyrics of the song with the title bohemian rhapsody by the artist queen? lyrics in english"
    assert invented(lyrics, {"song_title": "The title of the song.", "artist_name": "Queen"}, said) == ["song_title"]
    assert invented(lyrics, {"song_title": "Bohemian Rhapsody", "artist_name": "Queen"}, said) == []
    kept = grounded(lyrics, {"song_title": "x", "artist_name": "y", "lang": "The language of the lyrics"}, said)
    assert "lang" not in kept and grounded(lyrics, {"lang": "English"}, said) == {"lang": "English"}
    play = foreign("play_media", "Play a track.", {"track": {"type": "string", "description":
                                                             "The title of the track to be played."}}, ["track"])
    said = "i'm interested in hearing some funk music from the isolation album, find a selection of tracks for me?"
    assert invented(play, {"track": "The song title of the track to be played."}, said) == ["track"]  # a word more
    assert invented(play, {"track": "Title track of the Isolation album"}, said) == []  # the message's words
    image = foreign("generate_image", "Generates an image based on the provided description and saves it with the "
                    "specified file name.", {"desc": {"type": "string"}}, ["desc"])
    said = "please make an image for me, use your tools"  # the 0.5B copied the tool's own description
    copied = "Generates an image based on the provided description and saves it with the specified file name."
    assert invented(image, {"desc": copied}, said) == ["desc"]
    assert invented(image, {"desc": "An image of a desert at sunset"}, "an image of a desert at sunset") == []
    get = foreign("requests.get", "Send a GET request.", {"url": {"type": "string"}, "params": {
        "type": "object", "description": "Optional query parameters to include in the GET request."}}, ["url"])
    said = "fetch https://example.com/versions.json, with the query parameters for the request"  # BFCL live_simple_132
    schema = {"type": "object", "description": "Optional query parameters to include in the GET request", "default": {}}
    url = "https://example.com/versions.json"
    assert grounded(get, {"url": url, "params": schema}, said) == {"url": url}  # its own schema, copied
    assert grounded(get, {"url": url, "params": {"query": "parameters"}}, said)["params"] == {"query": "parameters"}
    music = foreign("lookup_music", "Find songs.", {"artist": {"type": "string"}, "album": {"type": "string"},
                                                   "genre": {"type": "string", "enum": ["Electropop", "Pop"]}}, [])
    said = "can you find me some electropop songs from 2014, by any artist?"  # BFCL live_multiple_476
    written = {"artist": "The Artist Name", "album": "The Album Name", "genre": "Electropop"}
    assert grounded(music, written, said) == {"genre": "Electropop"}  # a blank's filling, not a value
    assert grounded(music, {"artist": "The Artist"}, "play the artist's songs, by the band the artist")
    rewards = foreign("game_rewards", "Rewards of a game.", {"game": {"type": "string"}, "mission": {"type": "string"}},
                      ["game"])
    said = "find out the rewards for playing fortnite with different missions"  # BFCL multiple_26
    assert grounded(rewards, {"game": "Fortnite", "mission": "Mission 1"}, said) == {"game": "Fortnite"}
    assert grounded(rewards, {"game": "Fortnite", "mission": "Mission 7"}, said + " like mission 7")["mission"]


def test_numbers_said_in_a_list_by_how_often_or_as_nothing_are_not_made_up() -> None:
    """BFCL simple_python_127 gave "cash_flows=[200,300,400,500]", read as one number 200300400500; _153 said
    "compounded quarterly" for n=4; a car "starts from rest" for an initial velocity of 0; "apr the 5th" says 04."""
    npv = foreign("npv", "The net present value.", {"cash_flows": {"type": "array", "items": {"type": "integer"}},
                                                    "n": {"type": "integer"}, "start_speed": {"type": "number"}},
                  ["cash_flows", "n", "start_speed"])
    said = said_in(user("Find the NPV, given cash_flows=[200,300,400,500], compounded quarterly, from rest."))
    assert invented(npv, {"cash_flows": [200, 300, 400, 500], "n": 4, "start_speed": 0.0}, said) == []
    made_up = {"cash_flows": [200, 300, 400, 600], "n": 12, "start_speed": 1.0}
    assert invented(npv, made_up, said) == ["cash_flows", "n", "start_speed"]
    fewer = {"cash_flows": [5], "n": 4, "start_speed": 0}
    assert invented(npv, fewer, said_in(user("5,000 quarterly"))) == ["cash_flows"]  # a thousands separator
    event = foreign("event", "Find an event.", {"city": {"type": "string"}, "date": {"type": "string"}}, ["city"])
    said = said_in(user("I'm looking for a theater event in London, UK on apr the 5th."))
    assert grounded(event, {"city": "London, UK", "date": "2023-04-05"}, said)["date"] == "2023-04-05"


async def test_a_rate_said_as_a_percentage_goes_to_a_tool_that_takes_a_decimal_as_the_decimal() -> None:
    """BFCL simple_python_145: "an annual interest rate of 5%" for `interest_rate`, described "The annual interest
    rate.", takes 0.05; the 0.5B wrote 5. A parameter described as a percentage keeps what was written."""
    interest = foreign("compound_interest", "Compounded interest.",
                       {"principal": {"type": "integer"}, "interest_rate": {"type": "number",
                                                                            "description": "The annual interest rate."},
                        "period": {"type": "integer", "description": "The period in years."}},
                       ["principal", "interest_rate", "period"])
    text = "Compounded interest on $5000 at an annual interest rate of 5%, over 5 years?"
    written = {"principal": 5000, "interest_rate": 5, "period": 5}
    calls = await Router(FakeLlama({text: [("compound_interest", written)]})).route(user(text), [interest])
    assert [c.arguments for c in calls] == [{"principal": 5000, "interest_rate": 0.05, "period": 5}]
    as_percent = dataclasses.replace(interest, input_schema={**interest.input_schema, "properties": {
        **interest.parameters, "interest_rate": {"type": "number", "description": "Interest rate in percentage."}}})
    calls = await Router(FakeLlama({text: [("compound_interest", written)]})).route(user(text), [as_percent])
    assert [c.arguments for c in calls] == [written]
    # a percentage and its decimal side by side, in any language (BFCL live_simple_67: the 0.5B wrote 20)
    loan = foreign("cotizacion", "Calcula el pago mensual.", {"enganche": {"type": "number", "description": (
        "El porcentaje de enganche. Ejemplo: 0.1 para un enganche del 10%.")}}, ["enganche"])
    text = "Quiero calcular el pago mensual con un enganche del 20%."
    calls = await Router(FakeLlama({text: [("cotizacion", {"enganche": 20})]})).route(user(text), [loan])
    assert [c.arguments for c in calls] == [{"enganche": 0.2}]


async def test_a_time_no_one_said_becomes_the_one_time_the_message_says() -> None:
    """BFCL live_simple_137: "Reschedule event 'Alice-One-one-One' to November 1, 2023 at 8pm London time"; the 0.5B
    wrote 18:00. An end the message gives by a duration keeps its own time beside the start's, and a time said on
    the twelve-hour clock is said as its 24-hour reading only."""
    reschedule = foreign("reschedule", "Move an event.", {
        "identifier": {"type": "string"}, "dateOrTime": {"type": "string"}}, ["identifier", "dateOrTime"])
    text = "Reschedule event 'Alice-One-one-One' to November 1, 2023 at 8pm London time"
    written = {"identifier": "Alice-One-one-One", "dateOrTime": "2023-11-01T18:00:00"}
    calls = await Router(FakeLlama({text: [("reschedule", written)]})).route(user(text), [reschedule])
    assert [c.arguments["dateOrTime"] for c in calls] == ["2023-11-01T20:00:00"]
    book = foreign("book", "Book a housekeeper.", {"start": {"type": "string"}, "end": {"type": "string"}},
                   ["start", "end"])
    text = "A housekeeper on 20/3/2024, time 9:00, for 3 hours"
    written = {"start": "2024-03-20 09:00:00", "end": "2024-03-20 12:00:00"}
    calls = await Router(FakeLlama({text: [("book", written)]})).route(user(text), [book])
    assert [c.arguments for c in calls] == [written]
    # BFCL live_multiple_412: "… for the 5:30pm show?": the 0.5B wrote 20:30; "5:30pm" is not 05:30 too
    show = foreign("buy_tickets", "Buy movie tickets.", {"show_time": {"type": "string"}}, ["show_time"])
    text = "Could you get two tickets for 'The Grand Adventure' in Santa Rosa, CA for the 5:30pm show?"
    calls = await Router(FakeLlama({text: [("buy_tickets", {"show_time": "20:30"})]})).route(user(text), [show])
    assert [c.arguments for c in calls] == [{"show_time": "17:30"}]


async def test_a_required_value_that_is_only_its_descriptions_example_is_made_up() -> None:
    """BFCL live_irrelevance_49: "Can you send to Mom an Email saying we should go out and play if Friday is okay."
    with only a weather tool offered: the 0.5B asked the weather in 'San Francisco, CA', its description's example.
    The same value said, or an example among allowed values, is a value."""
    weather = foreign("get_current_weather", "Get the current weather in a location.", {
        "location": {"type": "string", "description": "The location, in the format of 'City, State', such as "
                                                     "'San Francisco, CA' or 'New York, NY'."},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "e.g. 'celsius'"}}, ["location"])
    text = "Can you send to Mom an Email saying we should go out and play if Friday is okay."
    fake = FakeLlama({text: [("get_current_weather", {"location": "San Francisco, CA"})]})
    assert await Router(fake).route(user(text), [weather]) == []
    text = "What's the weather like in San Francisco?"
    fake = FakeLlama({text: [("get_current_weather", {"location": "San Francisco, CA"})]})
    assert [c.arguments for c in await Router(fake).route(user(text), [weather])] == [{"location": "San Francisco, CA"}]
    assert invented(weather, {"location": "Berlin, DE"}, "the weather in berlin") == []
    flights = foreign("search_flights", "Search flights.", {
        "origin": {"type": "string", "description": "The airport code, such as 'JFK'."},
        "destination": {"type": "string", "description": "The airport code, such as 'LAX'."}}, ["origin", "destination"])
    assert invented(flights, {"origin": "LAX", "destination": "JFK"}, "a hotel for the 15th of july") == [
        "origin", "destination"]  # each the other's example (BFCL live_multiple_305)
    unit_needed = dataclasses.replace(weather, input_schema={**weather.input_schema, "required": ["location", "unit"]})
    assert invented(unit_needed, {"location": "Berlin, DE", "unit": "celsius"}, "the weather in berlin, in c") == []
    reviews = foreign("review_of_interviewer", "Reviews of an interviewer.", {"interviewer_name": {
        "type": "string", "description": "The full name of the interviewer, e.g., 'Jane Doe'."}}, ["interviewer_name"])
    assert invented(reviews, {"interviewer_name": "Jane Doe"}, "ratings") == ["interviewer_name"]  # live_irrelevance_172
    assert invented(reviews, {"interviewer_name": "Jane Doe"}, "reviews of jane doe") == []


async def test_a_date_no_one_said_becomes_the_one_date_the_message_says_in_the_form_written() -> None:
    """BFCL live_multiple_415 ("… the midnight show at 23:00 on 2023.10.2?"): the 0.5B wrote 2023-10-20, dropped as
    a date no one said; and 527 ("… in Seattle, WA on the 15th of May 2023?"): 10/15/2023. A date another value
    has already stays as written (and is dropped)."""
    find = foreign("find_events", "Find events.", {"city": {"type": "string"}, "date": {"type": "string"}}, ["city"])
    cases = {"Find a Theater event happening in Seattle, WA on the 15th of May 2023?": ("10/15/2023", "05/15/2023"),
             "Any show in Seattle at 23:00 on 2023.10.2?": ("2023-10-20", "2023-10-02"),
             "Any show in Seattle on 2023-10-02 at 23:00?": ("2023-10-20T23:00:00", "2023-10-02T23:00:00")}
    for text, (written, meant) in cases.items():
        calls = await Router(FakeLlama({text: [("find_events", {"city": "Seattle", "date": written})]})).route(
            user(text), [find])
        assert [c.arguments for c in calls] == [{"city": "Seattle", "date": meant}], text
    text = "Any show in Seattle on 2023-10-02?"
    calls = await Router(FakeLlama({text: [("find_events", {"city": "Seattle 2023-10-02", "date": "2023-10-20"})]})
                         ).route(user(text), [find])
    assert [c.arguments for c in calls] == [{"city": "Seattle 2023-10-02"}]


async def test_a_date_the_message_says_and_no_value_has_is_asked_for_a_date_parameter_left_out() -> None:
    """BFCL live_multiple_413: "… 2 tickets for 'After The Wedding' showing on 2023-04-22 at 19:00 in Berkeley": the
    0.5B left out `show_date`. A date already written, or none said, asks for nothing."""
    buy = foreign("buy_tickets", "Buy movie tickets.", {
        "movie_name": {"type": "string"}, "number_of_tickets": {"type": "integer"}, "show_date": {"type": "string"},
        "show_time": {"type": "string"}}, ["movie_name", "number_of_tickets"])
    text = "I'd like to purchase 2 tickets for 'After The Wedding' showing on 2023-04-22 at 19:00 in Berkeley."
    written = {"movie_name": "After The Wedding", "number_of_tickets": 2, "show_time": "19:00"}
    fake = FakeLlama({text: [("buy_tickets", written)]}, later={"show_date": "2023-04-22"})
    calls = await Router(fake).route(user(text), [buy])
    assert calls[0].arguments == {**written, "show_date": "2023-04-22"}
    assert asked_parameters(buy, {**written, "show_date": "2023-04-22"}, text.lower()) == []
    assert asked_parameters(buy, written, "2 tickets for 'after the wedding', on april 22nd, 2023") == ["show_date"]
    assert asked_parameters(buy, written, "2 tickets for 'after the wedding' tonight at 19:00") == []


def test_a_date_said_in_other_forms_is_asked_for_unless_a_value_has_it_in_any_form() -> None:
    """BFCL live_multiple_415 ("… the midnight show at 23:00 on 2023.10.2?") and 527 ("… in Seattle, WA on the 15th
    of May 2023?"): the 0.5B left the date out. A value that has the date in another form has it; a version number
    is no date."""
    find = foreign("find_events", "Find events.", {"city": {"type": "string"}, "date": {"type": "string"}}, ["city"])
    for text in ["a show in san jose on 2023.10.2?", "a theater event in seattle on the 15th of may 2023?",
                 "events in seattle on 05/15/2023.", "events in seattle on 15 may 2023"]:
        assert asked_parameters(find, {"city": "Seattle"}, text) == ["date"], text
    assert asked_parameters(find, {"city": "Seattle, 05/15/2023"}, "events in seattle on the 15th of may 2023") == []
    assert asked_parameters(find, {"city": "Seattle"}, "events in seattle with version 2023.10.2.1") == []


async def test_a_whole_number_that_runs_on_past_a_number_said_is_that_number() -> None:
    """BFCL parallel_19: "… a loan term of 15, 20 and 30 years": a number's grammar lets the model go on only with
    digits, and the 0.5B wrote 152000. A round number ("100" where "10" is said) is a value, and one the digits of
    two numbers said begin is left as written (and refused as made up)."""
    mortgage = foreign("mortgage", "Monthly mortgage payment.", {
        "loan_amount": {"type": "integer"}, "loan_term": {"type": "integer"}}, ["loan_amount", "loan_term"])
    text = "The monthly payment for a loan amount of $400,000, and a loan term of 15, 20 and 30 years."
    written = {"loan_amount": 400000, "loan_term": 152000}
    calls = await Router(FakeLlama({text: [("mortgage", written)]})).route(user(text), [mortgage])
    assert [c.arguments for c in calls][:1] == [{"loan_amount": 400000, "loan_term": 15}]
    factorial = foreign("factorial", "The factorial of a number.", {"number": {"type": "integer"}}, ["number"])
    text = "Find the factorial of 5,10 and 15."  # BFCL parallel_7: the 0.5B wrote 510
    calls = await Router(FakeLlama({text: [("factorial", {"number": 510})]})).route(user(text), [factorial])
    assert [c.arguments for c in calls][:1] == [{"number": 5}]
    text = "Find the factorial of 5 and 15."  # 510: no number said follows the 5
    assert await Router(FakeLlama({text: [("factorial", {"number": 510})]})).route(user(text), [factorial]) == []
    text = "The monthly payment for a loan of $10,000 over 10 years."
    for run_on in (1000000, 100):
        written = {"loan_amount": 10000, "loan_term": run_on}
        assert await Router(FakeLlama({text: [("mortgage", written)]})).route(user(text), [mortgage]) == []


async def test_a_number_written_without_the_minus_said_or_west_of_coordinates_said_is_negative() -> None:
    """BFCL live_simple_85: "… using latitude 37.8715 and longitude -122.2730": the 0.5B wrote 122.273. For
    "… at the coordinates 37.8651 N, 119.5383 W" it wrote a longitude of 119.5383. A number said both ways, or
    east of the line, is left as written."""
    weather = foreign("fetch_weather", "The weather and temperature at coordinates.", {
        "coordinates": {"type": "array", "items": {"type": "number"}}}, ["coordinates"])
    text = "The current temperature in Berkeley using latitude 37.8715 and longitude -122.2730?"
    written = {"coordinates": [37.8715, 122.273]}
    calls = await Router(FakeLlama({text: [("fetch_weather", written)]})).route(user(text), [weather])
    assert [c.arguments for c in calls] == [{"coordinates": [37.8715, -122.273]}]
    text = "The hourly forecast at the coordinates 37.8651 N, 119.5383 W?"
    written = {"coordinates": [37.8651, 119.5383]}
    calls = await Router(FakeLlama({text: [("fetch_weather", written)]})).route(user(text), [weather])
    assert [c.arguments for c in calls] == [{"coordinates": [37.8651, -119.5383]}]
    for text in ("The hourly forecast at the coordinates 37.8651 N, 119.5383 E?",
                 "The weather at 37.8651 and 119.5383, or is it -119.5383?"):
        calls = await Router(FakeLlama({text: [("fetch_weather", written)]})).route(user(text), [weather])
        assert [c.arguments for c in calls] == [written]


async def test_a_required_choice_the_message_does_not_name_is_the_one_allowed_value_it_names() -> None:
    """BFCL live_multiple_290: "I need you to find me a Family Therapist in Walnut Creek.": the 0.5B chose
    "Psychiatrist". A choice the message names, or a message naming two, is left as written."""
    kinds = {"type": "string", "enum": ["Psychologist", "Family Counselor", "Psychiatrist"]}
    find = foreign("find_provider", "Find a therapist in a city.", {"city": {"type": "string"}, "type": kinds},
                   ["city", "type"])
    for text, wanted in (("Find me a Family Therapist in Walnut Creek.", "Family Counselor"),
                         ("Find me a therapist in Walnut Creek, a psychiatrist.", "Psychiatrist"),
                         ("Find me a therapist in Walnut Creek: a psychologist or a family counselor.", "Psychiatrist")):
        written = {"city": "Walnut Creek", "type": "Psychiatrist"}
        calls = await Router(FakeLlama({text: [("find_provider", written)]})).route(user(text), [find])
        assert [c.arguments["type"] for c in calls] == [wanted], text


async def test_an_optional_choice_the_message_does_not_name_is_the_one_allowed_value_it_names() -> None:
    """BFCL live_multiple_419: "I would like a regular drama movie at Regal Crow Canyon which locates at San Ramon.":
    the 0.5B's `genre` was not Drama, and was left out as made up. A message naming no genre keeps none, nor one
    naming a choice by one of its words ("movies" does not name "Movie Theater")."""
    genres = {"type": "string", "enum": ["World", "Mystery", "Drama", "Movie Theater"], "default": "dontcare"}
    find = foreign("find_movies", "Find movies showing in a city.", {"location": {"type": "string"}, "genre": genres},
                   ["location"])
    for text, wanted in (("I would like a regular drama movie at Regal Crow Canyon in San Ramon.", {"genre": "Drama"}),
                         ("I would like a movie at Regal Crow Canyon in San Ramon.", {}),
                         ("Which movies are on in San Ramon?", {})):
        written = {"location": "San Ramon", "genre": "World"}
        calls = await Router(FakeLlama({text: [("find_movies", written)]})).route(user(text), [find])
        assert [{k: v for k, v in c.arguments.items() if k == "genre"} for c in calls] == [wanted], text


async def test_a_path_that_leaves_out_the_folders_of_the_path_said_gets_them_back() -> None:
    """"What's on my to-do list? It's in notes/todo.md.": the 0.5B read /home/me/files/todo.md, which does not exist,
    and answered from the error. Two paths said that end alike, a date (05/12/2023) or a fraction, change nothing."""
    _, reading = file_tools()
    text = "What's on my to-do list? It's in notes/todo.md."
    calls = await Router(FakeLlama({text: [("read_file", {"path": "/home/me/files/todo.md"})]})).route(
        user(text), [reading])
    assert [c.arguments["path"] for c in calls] == ["/home/me/files/notes/todo.md"]
    fetch = foreign("fetch", "Fetch a web page.", {"url": {"type": "string"}}, ["url"])
    text = "Fetch https://example.com/todo.md, the page behind notes/todo.md."
    calls = await Router(FakeLlama({text: [("fetch", {"url": "https://example.com/todo.md"})]})).route(
        user(text), [fetch])
    assert [c.arguments["url"] for c in calls] == ["https://example.com/todo.md"]  # an address, not a path
    text = "Compare notes/todo.md with old/todo.md."
    calls = await Router(FakeLlama({text: [("read_file", {"path": "/home/me/files/todo.md"})]})).route(
        user(text), [reading])
    assert [c.arguments["path"] for c in calls] == ["/home/me/files/todo.md"]


async def test_a_file_no_one_named_where_the_message_names_one_file_is_that_file_in_the_folder_written() -> None:
    """'In notes/meeting.md, change "Tuesday at 10:00" to "Wednesday at 11:00".': the 0.5B wrote `edit_file` on
    /home/me/files/myfile.txt, refused as made up. A folder, a file the message names, or a message naming two
    files, change nothing; nor does a tool that writes a whole file: for "Put 'pay the electricity bill' on this
    week's list" after notes/todo.md was named, the 0.5B's `write_file` of a new pay_the_electric_bill.txt became
    notes/todo.md, replaced by "This is a test file."."""
    reading = dataclasses.replace(file_tools()[1], read_only=True)
    text = 'In notes/meeting.md, change "Tuesday at 10:00" to "Wednesday at 11:00".'
    for written, meant in [("/home/me/files/myfile.txt", "/home/me/files/notes/meeting.md"),
                           ("/home/me/files/notes/file.md", "/home/me/files/notes/meeting.md"),
                           ("/home/me/files/notes", "/home/me/files/notes"),
                           ("/home/me/files/notes/meeting.md", "/home/me/files/notes/meeting.md")]:
        calls = await Router(FakeLlama({text: [("read_file", {"path": written})]})).route(user(text), [reading])
        assert [c.arguments["path"] for c in calls] == [meant], written
    text = "Copy the lines of notes/meeting.md into notes/todo.md."
    calls = await Router(FakeLlama({text: [("read_file", {"path": "/home/me/files/notes.txt"})]})).route(
        user(text), [reading])
    assert calls == []  # made up, and not one of the two said: refused as it was
    write = foreign("write_file", "Write a whole file.", {"path": {"type": "string"}, "content": {"type": "string"}},
                    ["path", "content"])
    text = "Put 'pay the electricity bill' on this week's list in notes/todo.md."
    new_file = {"path": "/home/me/files/pay_the_electric_bill.txt", "content": "pay the electricity bill"}
    calls = await Router(FakeLlama({text: [("write_file", new_file)]})).route(user(text), [write])
    assert calls == []  # a file no one said, refused as made up; not notes/todo.md, overwritten


async def test_a_time_zone_written_as_its_place_or_under_the_wrong_area_is_the_place_s_zone() -> None:
    """With the reference time server the 0.5B wrote "Los Angeles" for 'America/Los_Angeles', and 'America/Mexico'
    and 'Europe/Tokyo': the server answered "Invalid timezone"; for "What time is it in Lisbon?" the example
    'Europe/London'. A place no zone is named after, or a parameter whose text gives no zone's name, is left as
    written."""
    zone = {"type": "string", "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', 'Europe/London')."}
    convert = foreign("convert_time", "Convert time between timezones", {
        "source_timezone": zone, "time": {"type": "string"}, "target_timezone": zone},
        ["source_timezone", "time", "target_timezone"])
    text = "Convert 09:30 Sydney time to Los Angeles time."
    written = {"source_timezone": "Australia/Sydney", "time": "09:30", "target_timezone": "Los Angeles"}
    calls = await Router(FakeLlama({text: [("convert_time", written)]})).route(user(text), [convert])
    assert [c.arguments["target_timezone"] for c in calls] == ["America/Los_Angeles"]
    now = foreign("get_current_time", "Get current time in a specific timezone", {"timezone": zone}, ["timezone"])
    for said, wrote, wanted in (("¿Qué hora es ahora en Ciudad de México?", "America/Mexico", "America/Mexico_City"),
                                ("What time is it in Tokyo?", "Europe/Tokyo", "Asia/Tokyo"),
                                ("What time is it in San Francisco?", "San Francisco", "San Francisco")):
        calls = await Router(FakeLlama({said: [("get_current_time", {"timezone": wrote})]})).route(user(said), [now])
        assert [c.arguments["timezone"] for c in calls] == [wanted], said
    for said, wrote, wanted in (("What time is it in Lisbon?", "Europe/London", "Europe/Lisbon"),  # the example
                                ("What is the time in New York City?", "Europe/London", "America/New_York"),
                                ("What time is it in Porto?", "Europe/London", None),  # no zone's place: refused
                                ("What time is it in Tokyo or Lisbon?", "Europe/London", None)):  # which?
        calls = await Router(FakeLlama({said: [("get_current_time", {"timezone": wrote})]})).route(user(said), [now])
        assert [c.arguments["timezone"] for c in calls] == ([wanted] if wanted else []), said
    plain = foreign("local_time", "The time in a city.", {"city": {"type": "string"}}, ["city"])
    text = "What time is it in Los Angeles?"
    calls = await Router(FakeLlama({text: [("local_time", {"city": "Los Angeles"})]})).route(user(text), [plain])
    assert [c.arguments for c in calls] == [{"city": "Los Angeles"}]


async def test_a_name_said_with_digits_and_written_on_with_more_digits_is_the_name_said() -> None:
    """"Create a branch named release-1.0.": the 0.5B created release-1.0.0, with the reference git server. A name
    said as written, or written on with letters, is left as written."""
    branch = foreign("git_create_branch", "Creates a new branch from an optional base branch", {
        "branch_name": {"type": "string"}}, ["branch_name"])
    for text, wrote, wanted in (("Create a branch named release-1.0.", "release-1.0.0", "release-1.0"),
                                ("Create a branch named v2 off main.", "v2.3", "v2"),
                                ("Create a branch named release-1.0.0.", "release-1.0.0", "release-1.0.0"),
                                ("Create a branch named release-1.0.", "release-1.0-fix", "release-1.0-fix")):
        calls = await Router(FakeLlama({text: [("git_create_branch", {"branch_name": wrote})]})).route(
            user(text), [branch])
        assert [c.arguments.get("branch_name") for c in calls] == [wanted], text


async def test_what_a_message_asks_to_remember_is_kept_in_its_words_not_in_words_no_one_said() -> None:
    """"Remember that my sister's name is Ada.": the 0.5B stored "Ada is a beautiful woman." with the reference memory
    server, and a later conversation, reading it, said the sister was Lena. A text made of what was said, a tool that
    only reads, or a message that does not ask to keep anything, is left as written."""
    entities = {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "entityType": {"type": "string"},
        "observations": {"type": "array", "items": {"type": "string"}}}}}
    create = foreign("create_entities", "Create multiple new entities in the knowledge graph",
                     {"entities": entities}, ["entities"])
    text = "Remember that my sister's name is Ada."
    written = {"entities": [{"name": "Ada", "entityType": "person",
                             "observations": ["Ada is a beautiful woman.", "Ada is the user's sister."]}]}
    calls = await Router(FakeLlama({text: [("create_entities", written)]})).route(user(text), [create])
    assert [c.arguments for c in calls] == [{"entities": [{"name": "Ada", "entityType": "person",
                                                           "observations": ["my sister's name is Ada"]}]}]
    said_so = {"entities": [{"name": "Ada", "entityType": "person", "observations": ["my sister's name is Ada"]}]}
    calls = await Router(FakeLlama({text: [("create_entities", said_so)]})).route(user(text), [create])
    assert [c.arguments for c in calls] == [said_so]
    write = dataclasses.replace(foreign("write_file", "Create a new file or overwrite a file.", {
        "path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]), places=("/home/me/files",))
    text = "Remember that I need milk for the week."  # a file's path is no text to keep
    written = {"path": "/home/me/files/need milk week", "content": "Buy fresh organic milk today."}
    calls = await Router(FakeLlama({text: [("write_file", written)]})).route(user(text), [write])
    assert [c.arguments for c in calls] == [{"path": "/home/me/files/need milk week",
                                             "content": "I need milk for the week"}]
    text = "Ada is my sister; add her to the graph."
    written = {"entities": [{"name": "Ada", "entityType": "person", "observations": ["Ada is the user's sister."]}]}
    calls = await Router(FakeLlama({text: [("create_entities", written)]})).route(user(text), [create])
    assert [c.arguments for c in calls] == [written]


class Londoner(Hesitant):
    """The 0.5B's second call for "What time is it in Tokyo and in Paris?": 'Europe/London', the example of the
    tool's text; its other ideas: "America" (New York), then "/Paris" after "Europe"."""

    VALUE = '{"timezone": "'
    IDEAS = {VALUE: [("Europe", 0.6), ("America", 0.2)], VALUE + "Europe": [("/London", 0.8), ("/Paris", 0.1)],
             VALUE + "Europe/London": [('"}', 0.97)]}
    ENDS = {"America": '/New_York"', "Europe/Paris": '"'}


async def test_a_second_call_refused_for_a_value_no_one_said_gets_the_models_next_likeliest_value_that_makes_one() -> None:
    """"What time is it in Tokyo and in Paris?": the 0.5B wrote Tokyo's call, then 'Europe/London' for the second,
    the example of the reference time server's text, and only Tokyo's time was told. Its next idea no one said
    either (New York) is passed over. A message that asks for one thing gets no second call this way."""
    zone = {"type": "string", "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London')."}
    now = foreign("get_current_time", "Get current time in a specific timezone", {"timezone": zone}, ["timezone"])
    asked = "What time is it in Tokyo and in Paris?"
    written = [("get_current_time", {"timezone": "Asia/Tokyo"}), ("get_current_time", {"timezone": "Europe/London"})]
    calls = await Router(Londoner({asked: written}, p_call=0.99), threshold=0.5).route(user(asked), [now])
    assert [c.arguments for c in calls] == [{"timezone": "Asia/Tokyo"}, {"timezone": "Europe/Paris"}]
    asked = "What time is it in Tokyo?"
    calls = await Router(Londoner({asked: written}, p_call=0.99), threshold=0.5).route(user(asked), [now])
    assert [c.arguments for c in calls] == [{"timezone": "Asia/Tokyo"}]


async def test_a_question_about_a_folder_that_names_no_file_calls_a_tool_that_speaks_of_folders() -> None:
    """"Which files are in the notes folder?" with the reference file server: the 0.5B named `read_file`, wrote
    notes.txt, which no one said, then tried `read_multiple_files`, and answered with a made-up listing. A question
    that names a file, or a request, chooses among every tool."""
    listing, reading = file_tools()
    many = dataclasses.replace(reading, name="read_multiple_files", description="Read several files at once.",
                               input_schema={"type": "object", "properties": {"paths": {
                                   "type": "array", "items": {"type": "string"}}}, "required": ["paths"]})
    tools = [many, listing, reading]
    text = "Which files are in the notes folder?"
    written = [("read_file", {"path": "/home/me/files/notes.txt"}), ("list_directory", {"path": "/home/me/files/notes"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), tools)
    assert [(c.name, c.arguments) for c in calls] == [("list_directory", {"path": "/home/me/files/notes"})]
    text = "What does todo.md in the notes folder say?"
    written = [("read_file", {"path": "/home/me/files/notes/todo.md"})]
    calls = await Router(FakeLlama({text: written})).route(user(text), tools)
    assert [(c.name, c.arguments) for c in calls] == [("read_file", {"path": "/home/me/files/notes/todo.md"})]


async def test_a_place_ending_in_a_state_s_name_ends_in_its_two_letters_where_the_tool_s_examples_do() -> None:
    """BFCL live_multiple_725: "… a salon in Lafayette, Louisiana": the 0.5B wrote "Lafayette, Louisiana" for a city
    "such as 'Berkeley, CA' or 'New York, NY'". A country, or a tool whose examples do not abbreviate, is left as
    written."""
    city = {"type": "string", "description": "The city, such as 'Berkeley, CA' or 'New York, NY'."}
    find = foreign("find_provider", "Find a hair stylist in a city.", {"city": city}, ["city"])
    plain = foreign("find_salon", "Find a hair salon in a city.", {"city": {"type": "string"}}, ["city"])
    for tool, text, wrote, wanted in (
            (find, "Find me a salon in Lafayette, Louisiana.", "Lafayette, Louisiana", "Lafayette, LA"),
            (find, "Find me a salon in Paris, France.", "Paris, France", "Paris, France"),
            (plain, "Find me a salon in Lafayette, Louisiana.", "Lafayette, Louisiana", "Lafayette, Louisiana")):
        calls = await Router(FakeLlama({text: [(tool.name, {"city": wrote})]})).route(user(text), [tool])
        assert [c.arguments["city"] for c in calls] == [wanted], text


async def test_a_number_the_description_gives_a_thing_is_the_number_of_the_thing_the_message_names() -> None:
    """BFCL live_simple_185: "… ironing services in Chonburi Province": the 0.5B wrote `province_id` 1, the
    description's Bangkok. A thing is named by what tells it from the others ("big cleaning", not "cleaning"), one
    told by a letter only whole ("group b"); a message naming none, or two, leaves the number as written."""
    service = {"type": "integer", "description": "The service. For example, 1 for cleaning service, 2 for ironing "
                                                 "service, 3 for big cleaning service."}
    province = {"type": "integer", "description": "The province, such as '1' corresponds to Bangkok, '2' to Chiang "
                                                  "Mai, and '3' to Chonburi."}
    group = {"type": "integer", "description": "The group, e.g. 1 for Group A, 2 for Group B."}
    find = foreign("get_service_providers", "Find service providers.",
                   {"service_id": service, "province_id": province, "group_id": group}, ["service_id"])
    for text, wrote, wanted in (
            ("Find a housekeeper who provides ironing services in Chonburi Province.",
             {"service_id": 1, "province_id": 1}, {"service_id": 2, "province_id": 3}),
            ("Find a big cleaning in chiang mai", {"service_id": 1, "province_id": 1},
             {"service_id": 3, "province_id": 2}),
            ("Find a cleaning service in a group b team", {"service_id": 3, "group_id": 1},
             {"service_id": 1, "group_id": 2}),
            ("Find a housekeeper for a big team", {"service_id": 2, "group_id": 1}, {"service_id": 2, "group_id": 1}),
            ("Find ironing and cleaning in Bangkok or Chonburi", {"service_id": 3, "province_id": 2},
             {"service_id": 3})):  # neither named: a required number as written, an optional one made up
        calls = await Router(FakeLlama({text: [(find.name, wrote)]})).route(user(text), [find])
        assert [c.arguments for c in calls] == [wanted], text


async def test_a_place_written_with_a_state_it_is_not_in_is_put_where_the_largest_place_of_its_name_is() -> None:
    """BFCL live_simple_17 and live_simple_4: for "… weather in Boston" the 0.5B wrote 'Boston, CA', the state of
    the tool's example 'San Francisco, CA', and 'Tel Aviv, CA' for Tel Aviv. A place that is in the state written
    ('Vancouver, CA' is Canada's), a state said or no example's, a state's name as a city, or a name no place has,
    is left as written."""
    location = {"type": "string", "description": "The location, in the format of 'City, State (abbr)', such as 'San "
                                                 "Francisco, CA'. 'City, Country' if State for the city doesn't exist."}
    weather = foreign("get_current_weather", "Get the current weather.", {"location": location}, ["location"])
    for text, wrote, wanted in (
            ("What's the weather like in Boston?", "Boston, CA", "Boston, MA"),
            ("What are the current weather conditions in Tel Aviv?", "Tel Aviv, CA", "Tel Aviv, Israel"),
            ("How is the weather in Vancouver today?", "Vancouver, CA", "Vancouver, CA"),
            ("What's the weather in Boston, California?", "Boston, CA", "Boston, CA"),
            ("Weather in Portland CA please", "Portland, CA", "Portland, CA"),
            ("What's the weather in Springfield?", "Springfield, IL", "Springfield, IL"),
            ("What's the weather in Xanadu?", "Xanadu, CA", "Xanadu, CA"),
            ("What is the weather in California?", "California, CA", "California, CA"),  # not California, Maryland
            ("What's the weather in Boston?", "Boston, NY", "Boston, NY"),  # a state no example gives
            ("What's the weather in St. Louis?", "Saint Louis, CA", "Saint Louis, MO")):
        calls = await Router(FakeLlama({text: [(weather.name, {"location": wrote})]})).route(user(text), [weather])
        assert [c.arguments["location"] for c in calls] == [wanted], text
    # a village of the name in the example's state does not hold it there (BFCL live_multiple_563: "things around
    # Philadelphia" as 'Philadelphia, NY', 1,000 people, after the example 'New York, NY'); a town of some size does
    city = {"type": "string", "description": "The city, such as 'New York, NY'."}
    events = foreign("find_events", "Find cultural events in a city.", {"city": city}, ["city"])
    for text, wrote, wanted in (
            ("Any events around Philadelphia on Saturday?", "Philadelphia, NY", "Philadelphia, PA"),
            ("Any events in Cairo next week?", "Cairo, NY", "Cairo, Egypt"),
            ("Any events around Philadelphia, New York?", "Philadelphia, NY", "Philadelphia, NY"),  # as said
            ("Any events in Albany next week?", "Albany, NY", "Albany, NY")):
        calls = await Router(FakeLlama({text: [(events.name, {"city": wrote})]})).route(user(text), [events])
        assert [c.arguments["city"] for c in calls] == [wanted], text


async def test_a_switch_the_message_names_written_as_its_third_choice_is_written_again_as_true_or_false() -> None:
    """BFCL live_multiple_733: "… I'd prefer it to have in-unit laundry.": the 0.5B wrote `in_unit_laundry`
    'dontcare', which no one said, and it was dropped. Written again, only 'True' or 'False' are allowed; a switch
    the message does not name, or says does not matter, is left out."""
    laundry = {"type": "string", "enum": ["True", "False", "dontcare"], "default": "dontcare",
               "description": "Whether the property must have in-unit laundry facilities."}
    find = foreign("find_home", "Search homes to rent or buy.",
                   {"area": {"type": "string"}, "in_unit_laundry": laundry}, ["area"])
    text = "Can you find me a rental in San Francisco? I'd prefer it to have in-unit laundry."
    llama = FakeLlama({text: [("find_home", {"area": "San Francisco, CA", "in_unit_laundry": "dontcare"})]},
                      later={"in_unit_laundry": "True"})
    calls = await Router(llama).route(user(text), [find])
    assert [c.arguments for c in calls] == [{"area": "San Francisco, CA", "in_unit_laundry": "True"}]
    asked = next(a for a in llama.asked if (a.get("schema") or {}).get("enum"))
    assert asked["schema"]["enum"] == ["True", "False"]
    for text in ("Can you find me a rental in San Francisco?",  # not named, or said not to matter: no switch
                 "Can you find me a rental in San Francisco? In-unit laundry doesn't matter."):
        llama = FakeLlama({text: [("find_home", {"area": "San Francisco, CA", "in_unit_laundry": "dontcare"})]},
                          later={"in_unit_laundry": "True"})
        calls = await Router(llama).route(user(text), [find])
        assert [c.arguments for c in calls] == [{"area": "San Francisco, CA"}], text


async def test_a_country_written_by_its_name_is_its_two_letters_where_the_tool_asks_for_them() -> None:
    """BFCL live_simple_77: London's weather, "Use ISO 3166-1 alpha-2 country codes": the 0.5B wrote 'UK', which is
    no such code ('GB'). A name becomes its code; a tool that does not ask for a code gets the name as written."""
    coded = {"type": "string", "description": "The country, e.g., 'US'. Use ISO 3166-1 alpha-2 country codes."}
    named = {"type": "string", "description": "The country where the city is."}
    for schema, wrote, wanted in ((coded, "UK", "GB"), (coded, "Germany", "DE"), (coded, "GB", "GB"),
                                  (named, "UK", "UK")):
        weather = foreign("weather_get", "The weather in a city.", {"city": {"type": "string"}, "country": schema},
                          ["city", "country"])
        text = "What's the weather in London, UK? And in Germany?"
        calls = await Router(FakeLlama({text: [(weather.name, {"city": "London", "country": wrote})]})).route(
            user(text), [weather])
        assert [c.arguments["country"] for c in calls] == [wanted], wrote


async def test_a_time_zone_no_one_said_is_no_call_for_a_message_that_names_a_place() -> None:
    """"What's the time in Porto?" with the reference time server: the 0.5B wrote 'Europe/Berlin', which the tool's
    text gives as the local zone, and Berlin's time was told as Porto's. Asked for no place, the local zone is the
    answer; a place said is its own zone."""
    zone = {"type": "string", "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use "
                                             "'Europe/Berlin' as local timezone if no timezone provided by the user."}
    now = foreign("get_current_time", "Get current time in a specific timezone", {"timezone": zone}, ["timezone"])
    for text, wanted in (("What's the time in Porto?", []), ("What time is it?", ["Europe/Berlin"]),
                         ("What time is it in Berlin?", ["Europe/Berlin"]), ("In Porto, what time is it?", [])):
        calls = await Router(FakeLlama({text: [("get_current_time", {"timezone": "Europe/Berlin"})]})).route(
            user(text), [now])
        assert [c.arguments["timezone"] for c in calls] == wanted, text
    # the example the 0.5B wrote, where the tool's text says which zone to use when none is given
    for text, wanted in (("What time is it?", ["Europe/Berlin"]), ("What's today's date?", ["Europe/Berlin"]),
                         ("What time is it in Lisbon?", ["Europe/Lisbon"]), ("What's the time in Porto?", []),
                         ("What time is it where Maria lives?", [])):  # a name said: no value for none
        calls = await Router(FakeLlama({text: [("get_current_time", {"timezone": "America/New_York"})]})).route(
            user(text), [now])
        assert [c.arguments["timezone"] for c in calls] == wanted, text


async def test_a_first_decision_the_model_is_unsure_of_is_the_second_models_whole_and_no_other_is() -> None:
    """The 0.5B's misses on BFCL were mostly decisions it was unsure of: a chance of a call of 0.32–0.49, under the
    bar, where the 1.5B called right, or a first name far from certain. There, and only there, the second model
    decides; where it could not start, the first decides as if there were none."""
    text = "Thai food in Manhattan"
    wanted = [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]
    sure = {"": [("find_restaurants", 0.95), ("current_time", 0.05)], "find_restaurants": [('",', 1.0)],
            "current_time": [('",', 1.0)]}
    unsure = {**sure, "": [("find_restaurants", 0.55), ("current_time", 0.45)]}

    async def decided(p_call: float, names: dict, second: FakeLlama | None, history: list[dict] | None = None,
                      started: bool = True) -> tuple[list[str], FakeLlama]:
        first = FakeLlama({text: wanted}, p_call=p_call, name_tokens=names, after={text: wanted})
        router = Router(first)

        async def second_router() -> Router | None:
            return Router(second) if started and second is not None else None
        router.second = second_router if second is not None else None
        calls = await router.route(history or user(text), TOOLS)
        return [c.name for c in calls], first

    def bigger() -> FakeLlama:
        return FakeLlama({text: wanted}, p_call=0.9, name_tokens=sure)

    # unsure whether (0.4, under the bar of 0.5): the second decides, and calls
    second = bigger()
    names, first = await decided(0.4, sure, second)
    assert names == ["find_restaurants"] and "complete" in second.kinds() and "complete" not in first.kinds()
    # unsure which (a first name at 0.55 as a whole): the second decides
    second = bigger()
    names, first = await decided(0.9, unsure, second)
    assert names == ["find_restaurants"] and "complete" in second.kinds() and "complete" not in first.kinds()
    # sure of either: the second decides nothing; it writes the arguments of a call (below), no more
    for p_call in (0.9, 0.1):
        second = bigger()
        names, _ = await decided(p_call, sure, second)
        assert names == (["find_restaurants"] if p_call > 0.5 else [])
        assert "next_tokens" not in second.kinds() and all(a["schema"] for a in second.asked if a["kind"] == "complete")
        assert ("complete" in second.kinds()) == (p_call > 0.5)
    # no second (or one that could not start): the first decides alone, as before
    assert (await decided(0.4, sure, None))[0] == [] and (await decided(0.4, sure, bigger(), started=False))[0] == []
    assert (await decided(0.9, unsure, bigger(), started=False))[0] == ["find_restaurants"]
    # a follow-up after answers in words: unsure in the conversation, not only asked alone ("What's the capital of
    # Portugal?" after a name was remembered: 0.01 in the conversation, 0.39 alone, and the 1.5B searched the memory)
    talk = [*user("Hello"), {"role": "assistant", "content": "Hello! How can I help?"}, *user(text)]
    for shy, asked in ((0.01, False), (0.4, True)):
        first, second = FakeLlama({text: wanted}, p_call=0.4, shy=shy, name_tokens=sure), bigger()
        router = Router(first)

        async def second_router() -> Router | None:
            return Router(second)
        router.second = second_router
        calls = await router.route(talk, TOOLS)
        assert bool(second.asked) == asked and [c.name for c in calls] == (["find_restaurants"] if asked else []), shy
    # after results the first decides again, unsure or not
    call = {"id": "c1", "type": "function", "function": {"name": "find_restaurants", "arguments": "{}"}}
    history = [*user(text), {"role": "assistant", "content": "", "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "Thai Kitchen, 5th Avenue"}]
    second = bigger()
    await decided(0.9, unsure, second, history)
    assert "next_tokens" not in second.kinds()


async def test_a_call_the_first_model_names_gets_the_arguments_the_second_writes_after_its_own_prompt() -> None:
    """On three BFCL seeds, where the 0.5B and the 1.5B named the same tools, the 1.5B's arguments were right on
    135 of 167 questions and the 0.5B's on 123: with a second model, the first names the call and the second writes
    its arguments, after its own prompt (a template may differ in a character: the 1.5B's tells the format as
    {{"name": …}}) and the call the first opened, with its table kept evaluated first. One that writes calls in
    another format, or could not start, leaves the arguments to the first."""
    text = "Thai food in Manhattan"
    sure = {"": [("find_restaurants", 0.95), ("current_time", 0.05)]}
    first_wrote = [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai food"})]
    second_wrote = [("find_restaurants", {"location": "Manhattan", "cuisine": "Thai"})]

    class OtherTemplate(FakeLlama):
        async def render(self, messages: list[dict], tools: list[dict] | None = None) -> str:
            return "<other>" + await super().render(messages, tools)

    class OtherFormat(FakeLlama):
        async def render(self, messages: list[dict], tools: list[dict] | None = None) -> str:
            return (await super().render(messages, tools)).replace('{"name": "', '{"tool": "')

    for second, started, wanted in ((FakeLlama({text: second_wrote}), True, "Thai"),
                                    (OtherTemplate({text: second_wrote}), True, "Thai"),
                                    (OtherFormat({text: second_wrote}), True, "Thai food"),
                                    (FakeLlama({text: second_wrote}), False, "Thai food")):
        first = FakeLlama({text: first_wrote}, name_tokens=sure)
        router, kept = Router(first), []
        big = Router(second)

        async def keep(table: list[Tool]) -> None:
            kept.append(sorted(t.name for t in table))
        big.keep = keep

        async def second_router() -> Router | None:
            return big if started else None
        router.second = second_router
        calls = await router.route(user(text), TOOLS)
        assert [c.arguments.get("cuisine") for c in calls] == [wanted], type(second).__name__
        writes = [a for a in second.asked if a["kind"] == "complete"]
        assert bool(writes) == (wanted == "Thai")
        if writes:  # after its own prompt and the name the first chose, with the table kept evaluated first
            own = await big.prompt(user(text), TOOLS)
            assert writes[0]["prompt"] == own + '<tool_call>\n{"name": "find_restaurants", "arguments": '
            assert kept == [sorted(t.name for t in TOOLS)]


async def test_a_second_call_given_its_servers_folder_which_the_message_does_not_say_is_made() -> None:
    """"Stage greet.py and commit it with the message "Say see you soon".": the 1.5B wrote `git_add`, then
    `git_commit` of the server's repository, refused as a value no one said; the commit was never made. A folder the
    server works in is the tool's own; a value of another folder still needs saying."""
    def git(name: str, description: str, extra: dict, required: list[str]) -> Tool:
        return dataclasses.replace(foreign(name, description, {"repo_path": {"type": "string"}, **extra},
                                           ["repo_path", *required], source="mcp:git"), places=("/home/me/repo",))
    add = git("git_add", "Adds file contents to the staging area.", {"files": {"type": "array", "items": {
        "type": "string"}}}, ["files"])
    commit = git("git_commit", "Records changes to the repository.", {"message": {"type": "string"}}, ["message"])
    text = 'Stage greet.py and commit it with the message "Say see you soon".'
    for repo, made in (("/home/me/repo", ["git_add", "git_commit"]), ("/home/me/other", ["git_add"])):
        wanted = [("git_add", {"repo_path": "/home/me/repo", "files": ["greet.py"]}),
                  ("git_commit", {"repo_path": repo, "message": "Say see you soon"})]
        calls = await Router(FakeLlama({text: wanted})).route(user(text), [add, commit])
        assert [c.name for c in calls] == made, repo
