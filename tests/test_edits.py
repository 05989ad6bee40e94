"""Edits of a file (`sidespin.edits`): a request to add to a file the conversation read keeps what was there, a
change between quoted texts goes from one to the other. Through the route against a fake of llama.cpp's endpoints
(tests/route_fake.py)."""

from __future__ import annotations

import json
from typing import Any

from sidespin.edits import for_editing, replacing_pair
from sidespin.route import Router
from sidespin.tools import Tool
from tests.route_fake import FakeLlama, WritesAnEdit

FILE = "# To do\n\n## Groceries\n- milk\n- eggs\n- spinach\n\n## This week\n- call the plumber\n"
TODO = "/home/me/files/notes/todo.md"
SERVER = {"source": "mcp:files", "places": ("/home/me/files",), "fn": lambda **_: None}
PATH = {"path": {"type": "string"}}
READ = Tool(name="read_text_file", description="Read a file's text.", read_only=True, **SERVER,
            input_schema={"type": "object", "properties": PATH, "required": ["path"]})
EDIT = Tool(name="edit_file", description="Make line-based edits to a text file.", **SERVER, input_schema={
    "type": "object", "required": ["path", "edits"], "properties": {**PATH, "edits": {"type": "array", "items": {
        "type": "object", "required": ["oldText", "newText"],
        "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}})
WRITE = Tool(name="write_file", description="Write a whole file, replacing it.", **SERVER, input_schema={
    "type": "object", "properties": {**PATH, "content": {"type": "string"}}, "required": ["path", "content"]})
TOOLS = [READ, EDIT, WRITE]


def read_then(text: str, content: str = FILE) -> list[dict[str, Any]]:
    """The file read in an earlier turn, answered, then `text`."""
    call = {"id": "c1", "type": "function", "function": {"name": "read_text_file", "arguments": json.dumps(
        {"path": "notes/todo.md"})}}
    return [{"role": "user", "content": "Read notes/todo.md for me."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": content},
            {"role": "assistant", "content": "Here it is."},
            {"role": "user", "content": text}]


def edit(old: str, new: str, path: str = TODO) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new}]}


ADD = "Now add bread to that grocery list, in the same file."


async def test_an_edit_that_replaces_a_line_to_add_one_is_written_again_after_a_line_of_the_list() -> None:
    llama = WritesAnEdit({ADD: [("edit_file", edit("spinach", "bread"))]}, line="- eggs", adds="- bread\n- milk")
    calls = await Router(llama).route(read_then(ADD), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit("- eggs", "- eggs\n- bread"))]
    assert llama.offered == ["- milk", "- eggs", "- spinach", "- call the plumber"]  # the list's items, not titles


async def test_an_edit_that_already_adds_after_a_line_is_made_as_written_without_asking_again() -> None:
    llama = WritesAnEdit({ADD: [("edit_file", edit("- spinach", "- spinach\n- bread"))]}, line="", adds="")
    calls = await Router(llama).route(read_then(ADD), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit("- spinach", "- spinach\n- bread"))]
    assert llama.offered == []


async def test_an_edit_that_adds_nothing_the_message_says_is_not_made() -> None:
    llama = WritesAnEdit({ADD: [("edit_file", edit("spinach", "bread"))]}, line="- eggs", adds="- eggs\n- milk")
    assert await Router(llama).route(read_then(ADD), TOOLS) == []


async def test_a_request_to_replace_is_written_as_the_model_wrote_it() -> None:
    replace = "Replace spinach with bread in that list."
    llama = WritesAnEdit({replace: [("edit_file", edit("spinach", "bread"))]}, line="- eggs", adds="- bread")
    calls = await Router(llama).route(read_then(replace), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit("spinach", "bread"))]
    assert llama.offered == []


async def test_a_file_not_read_in_the_conversation_is_edited_as_the_model_wrote_it() -> None:
    message = "Add bread to notes/todo.md."
    llama = WritesAnEdit({message: [("edit_file", edit("- milk", "bread"))]}, line="- eggs", adds="- bread")
    calls = await Router(llama).route([{"role": "user", "content": message}], TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit("- milk", "bread"))]


async def test_a_request_to_add_to_a_file_read_is_not_offered_the_tool_that_writes_the_whole_file() -> None:
    # it wants the whole file written; offered only the editor, it writes an edit
    wants = [("write_file", {"path": TODO, "content": "bread\nmilk\neggs"}), ("edit_file", edit("spinach", "bread"))]
    llama = WritesAnEdit({ADD: wants}, line="- spinach", adds="- bread")
    calls = await Router(llama).route(read_then(ADD), TOOLS)
    assert [c.name for c in calls] == ["edit_file"]
    assert [t.name for t in for_editing(TOOLS, read_then(ADD))] == ["edit_file"]
    assert [t.name for t in for_editing(TOOLS, read_then("Now write a poem to poem.md."))] == [t.name for t in TOOLS]


async def test_an_editor_with_its_old_and_new_texts_at_the_top_level_keeps_the_file_too() -> None:
    editor = Tool(name="str_replace", description="Replace text in a file.", **SERVER, input_schema={
        "type": "object", "required": ["path", "old_str", "new_str"],
        "properties": {**PATH, "old_str": {"type": "string"}, "new_str": {"type": "string"}}})
    assert replacing_pair(editor) == (None, "old_str", "new_str") and replacing_pair(WRITE) is None
    llama = WritesAnEdit({ADD: [("str_replace", {"path": TODO, "old_str": "milk", "new_str": "bread"})]},
                         line="- milk", adds="- bread")
    calls = await Router(llama).route(read_then(ADD), [READ, editor])
    assert [(c.name, c.arguments) for c in calls] == [
        ("str_replace", {"path": TODO, "old_str": "- milk", "new_str": "- milk\n- bread"})]


MEETING = "/home/me/files/notes/meeting.md"
CHANGE = 'In notes/meeting.md, change "Tuesday at 10:00" to "Wednesday at 11:00".'


async def test_an_edit_for_a_change_between_two_quoted_texts_replaces_one_with_the_other() -> None:
    """The 0.5B wrote "old content" for "new content", which failed."""
    llama = FakeLlama({CHANGE: [("edit_file", edit("old content", "new content", MEETING))]})
    calls = await Router(llama).route([{"role": "user", "content": CHANGE}], TOOLS)
    meant = edit("Tuesday at 10:00", "Wednesday at 11:00", MEETING)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", meant)]
    grammar = [a["grammar"] for a in llama.asked if a["kind"] == "complete" and a["grammar"]][-1]
    assert "old content" not in grammar and grammar.count("|") == 1  # the two quoted texts, either way round


async def test_an_edit_already_between_the_quoted_texts_or_a_message_quoting_one_is_made_as_written() -> None:
    right = FakeLlama({CHANGE: [("edit_file", edit("Tuesday at 10:00", "Wednesday at 11:00", MEETING))]})
    calls = await Router(right).route([{"role": "user", "content": CHANGE}], TOOLS)
    assert [c.arguments for c in calls] == [edit("Tuesday at 10:00", "Wednesday at 11:00", MEETING)]
    assert not [a for a in right.asked if a["kind"] == "complete" and a["grammar"] and "oldText" in a["grammar"]]
    one = 'In notes/meeting.md, change "Tuesday at 10:00" to Wednesday.'
    llama = FakeLlama({one: [("edit_file", edit("Tuesday at 10:00", "Wednesday", MEETING))]})
    calls = await Router(llama).route([{"role": "user", "content": one}], TOOLS)
    assert [c.arguments for c in calls] == [edit("Tuesday at 10:00", "Wednesday", MEETING)]


async def test_a_change_between_quoted_texts_is_offered_the_replacing_tool_not_the_whole_file_writer() -> None:
    """For 'In notes/ideas.md, replace "plant tomatoes" with "plant peppers".' the 0.5B wrote `write_file` on the
    folder, "plant peppers" over and over. A rename quotes two texts too, and is no edit of a text."""
    replace = 'In notes/ideas.md, replace "plant tomatoes" with "plant peppers".'
    ideas = "/home/me/files/notes/ideas.md"
    wants = [("write_file", {"path": "/home/me/files", "content": "plant peppers"}),
             ("edit_file", edit("plant tomatoes", "plant peppers", ideas))]
    calls = await Router(FakeLlama({replace: wants})).route([{"role": "user", "content": replace}], TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit("plant tomatoes", "plant peppers", ideas))]
    rename = 'Rename "notes/ideas.md" to "notes/plans.md".'
    assert for_editing(TOOLS, [{"role": "user", "content": rename}]) == TOOLS


async def test_an_item_added_to_a_line_that_lists_goes_at_its_end() -> None:
    """"Add Tom to the people present in that file.": offered only lines to add after, the 0.5B added none, then
    answered with the file as it would be, Tom at the end of "Present: Jonas, Priya, Mei"."""
    meeting = "# Team meeting, 12 March\n\nPresent: Jonas, Priya, Mei\n\n- The release moves to 4 April.\n"
    text = "Add Tom to the people present in that file."
    present = "Present: Jonas, Priya, Mei"
    llama = WritesAnEdit({text: [("edit_file", edit("Tom", "Tom"))]}, line=present, adds="Tom, Priya")
    calls = await Router(llama).route(read_then(text, meeting), TOOLS)
    assert [(c.name, c.arguments) for c in calls] == [("edit_file", edit(present, present + ", Tom"))]
    assert llama.offered == ["- The release moves to 4 April.", present]  # "12 March" after a comma is no list
