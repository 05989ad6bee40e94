"""A path the route writes past a folder (`sidespin.route.Router._deeper`) never goes up and out of it: a tool result,
which a hostile page or file can fill, may name "../../etc/passwd", and what the route adds past a folder is kept
when the conversation, results included, says it."""

from __future__ import annotations

from typing import Any

from sidespin.grounding import a_path_said, said_in
from sidespin.route import Router
from sidespin.tools import Tool
from tests.route_fake import FakeLlama


class GoesUp(FakeLlama):
    """A model that, asked to go on with the path past the listed folder, writes `rest`."""

    def __init__(self, *args: Any, rest: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rest = rest

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict | None, max_tokens: int) -> str:
        if prompt.endswith("/home/me/files/notes/"):
            return self.rest + '"'
        return await super().complete(prompt, grammar, json_schema, max_tokens)


def test_a_way_up_is_no_path_said_even_when_a_result_says_it() -> None:
    said = said_in([{"role": "tool", "content": "[FILE] ../../etc/passwd 812\n[FILE] ideas.md 100"}])
    assert a_path_said("ideas.md", said)
    for up in ("../../etc/passwd", "../etc", "..", "notes/../../etc/passwd", "./ideas.md"):
        assert not a_path_said(up, said), up


async def test_a_listing_that_names_a_way_up_does_not_take_the_read_out_of_the_folder() -> None:
    source = {"source": "mcp:files", "places": ("/home/me/files",), "fn": lambda **_: None}
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    listing = Tool(name="list_directory", description="List a directory's files.", input_schema=path, **source)
    reading = Tool(name="read_file", description="Read a file.", input_schema=path, **source)
    text = "List the files in the notes folder with their sizes, then read the largest one."
    call = {"id": "c1", "type": "function",
            "function": {"name": "list_directory", "arguments": '{"path": "/home/me/files/notes"}'}}
    turn = [{"role": "user", "content": text}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "[FILE] ../../etc/passwd 9999\n[FILE] ideas.md 812"}]
    model = GoesUp({}, p_call=0.99, after={text: [("read_file", {"path": "/home/me/files/notes"})]},
                   rest="../../etc/passwd")
    calls = await Router(model).route(turn, [listing, reading])
    assert [c.arguments["path"] for c in calls] == ["/home/me/files/notes"]  # not /home/me/files/notes/../../etc
