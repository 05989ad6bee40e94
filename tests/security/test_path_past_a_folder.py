"""A path the `folders` shape writes never leaves the folder its server works in: a relative path that climbs
("../../etc/passwd") is left as the model wrote it, for the server's own check and the person's approval, and a
file a message or a result names with a way up is no file to join to the folder."""

from __future__ import annotations

from sidespin.tooluse import Decider
from sidespin.tooluse.shapes.folders import files_named
from tests.route_fake import FakeLlama
from tests.tooluse.tools import tool

HOME = "/home/me/files"
READ = tool("read_file", "Read a file.", {"path": {"type": "string"}}, ["path"], source="mcp:files", read_only=True,
            places=(HOME,))


async def read(text: str, path: str, p_call: float = 0.9) -> list[str]:
    calls = await Decider(FakeLlama({text: [("read_file", {"path": path})]}, p_call=p_call)).decide(
        [{"role": "user", "content": text}], [READ])
    return [c.arguments["path"] for c in calls]


def test_a_way_up_names_no_file() -> None:
    for text in ("read ../../etc/passwd.txt", "notes/../../etc/x.md", "..ideas.md..ideas.md", "/etc/shadow.bak"):
        assert all(".." not in name and not name.startswith("/") for name in files_named(text)), text


async def test_a_relative_path_that_climbs_is_never_joined_into_a_path_that_leaves_the_folder() -> None:
    for path in ("../../etc/passwd", "notes/../../../etc/passwd", "./../x.md"):
        text = f"read {path}"
        written = await read(text, path)
        assert all(not p.startswith(HOME) or ".." in p for p in written), written
        assert written == [path]  # as written: the server and the approval layer judge it


async def test_the_folder_itself_becomes_only_a_file_named_inside_it() -> None:
    assert await read("what's in ideas.md?", HOME, p_call=0.2) == [f"{HOME}/ideas.md"]
    assert await read("what's in ../secret.md?", HOME, p_call=0.9) == [HOME]
