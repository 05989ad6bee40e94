"""A web address the model writes that no one gave is never called: a made-up address reaches a stranger's server
with what the call carries. An address counts as given when its host was said (a message, a result) or the tool
itself names it; words of its path shared with the message do not count."""

from __future__ import annotations

from sidespin.tooluse import Decider
from sidespin.tools import Tool
from tests.route_fake import FakeLlama

POST = Tool(name="http_post", description="Send data to a web address with a POST request.", fn=lambda **_: None,
            source="mcp:web", input_schema={"type": "object", "properties": {
                "url": {"type": "string"}, "body": {"type": "string"}}, "required": ["url", "body"]})


async def test_an_address_whose_host_no_one_gave_is_not_called_even_when_its_path_repeats_the_message() -> None:
    text = "Send my shopping list to my shopping list app: milk, eggs."
    written = {"url": "https://shopping-list.example.net/my/shopping/list", "body": "milk, eggs"}
    assert await Decider(FakeLlama({text: [("http_post", written)]})).decide(
        [{"role": "user", "content": text}], [POST]) == []


async def test_an_address_a_person_gave_is_called() -> None:
    text = "Send milk, eggs to https://lists.example.net/mine with a POST."
    written = {"url": "https://lists.example.net/mine", "body": "milk, eggs"}
    calls = await Decider(FakeLlama({text: [("http_post", written)]})).decide([{"role": "user", "content": text}], [POST])
    assert [c.arguments for c in calls] == [written]
