"""A path the route writes past a folder (`sidespin.route.Router._deeper`) never goes up and out of it: a tool result,
which a hostile page or file can fill, may name "../../etc/passwd", and what the route adds past a folder is kept
when the conversation, results included, says it."""

from __future__ import annotations

from sidespin.grounding import a_path_said, said_in
from sidespin.route import Router
from tests.route_fake import FakeLlama, GoesOn, file_tools, notes_listed


def test_a_way_up_is_no_path_said_even_when_a_result_says_it() -> None:
    said = said_in([{"role": "tool", "content": "[FILE] ../../etc/passwd 812\n[FILE] ideas.md 100"}])
    assert a_path_said("ideas.md", said)
    for up in ("../../etc/passwd", "../etc", "..", "notes/../../etc/passwd", "./ideas.md", "..ideas.md..ideas.md",
               "notes/..ideas.md"):
        assert not a_path_said(up, said), up


async def test_a_listing_that_names_a_way_up_does_not_take_the_read_out_of_the_folder() -> None:
    text = "List the files in the notes folder with their sizes, then read the largest one."
    turn = notes_listed(text, "[FILE] ../../etc/passwd 9999\n[FILE] ideas.md 812")
    model = GoesOn({}, p_call=0.99, after={text: [("read_file", {"path": "/home/me/files/notes"})]},
                   rest="../../etc/passwd", at="/home/me/files/notes/")
    calls = await Router(model).route(turn, list(file_tools()))
    assert [c.arguments["path"] for c in calls] == ["/home/me/files/notes"]  # not /home/me/files/notes/../../etc


async def test_a_path_said_with_a_way_up_puts_no_folder_back_into_the_path_written() -> None:
    """A path that leaves out the folders of a path said gets them back (`grounding.as_said`), but a way up said, by
    the person or by a result, is no path: "../../etc/passwd" never becomes part of what is read."""
    _, reading = file_tools()
    for text in ("It's in ../../etc/passwd, read it.", "It's in notes/../../etc/passwd, read it."):
        calls = await Router(FakeLlama({text: [("read_file", {"path": "/home/me/files/passwd"})]})).route(
            [{"role": "user", "content": text}], [reading])
        assert all(".." not in c.arguments["path"] for c in calls), text
