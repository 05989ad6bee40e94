"""The seed's mock web search answers its example from offline data, and says so."""

from __future__ import annotations

from sidespin.tools import ToolCall, ToolRegistry, load_plugins, plugins_dir


def registry() -> ToolRegistry:
    return ToolRegistry([t for t in load_plugins(plugins_dir()) if t.name == "web_search"])


async def search(query: str) -> dict:
    result = await registry().execute(ToolCall("web_search", {"query": query}, "call_1"))
    assert result.ok, result.error
    return result.output


async def test_the_seed_example_finds_both_quotes() -> None:
    google = await search("google stock price")
    microsoft = await search("microsoft stock price")
    assert "$911" in google["matches"][0]["snippet"] and "GOOGL" in google["matches"][0]["title"]
    assert "$544" in microsoft["matches"][0]["snippet"] and "MSFT" in microsoft["matches"][0]["title"]
    assert len(google["matches"]) == 1  # the other quotes do not crowd the answer
    both = await search("latest stock price of google and microsoft")
    assert {m["title"].split("(")[1][:4] for m in both["matches"]} == {"GOOG", "MSFT"}


async def test_every_answer_says_it_is_offline_sample_data() -> None:
    for query in ("google stock price", "capital of australia", "xyzzy frobnicate"):
        answer = await search(query)
        assert answer["source"] == "offline sample data, not live"
    assert "not a live price" in (await search("GOOGL"))["matches"][0]["snippet"]


async def test_no_match_gives_an_empty_list_and_a_note() -> None:
    answer = await search("xyzzy frobnicate")
    assert answer["matches"] == []
    assert "offline sample" in answer["note"]


async def test_general_topics_and_plurals_are_found() -> None:
    assert (await search("capital of Australia"))["matches"][0]["title"].startswith("Canberra")
    assert (await search("how many hours do cats sleep"))["matches"][0]["title"].startswith("Cats")
    assert "Model Context Protocol" in (await search("what is MCP?"))["matches"][0]["title"]


def test_the_web_asks_before_searching() -> None:
    tool = registry().get("web_search")
    assert not tool.read_only and not tool.destructive
    assert tool.input_schema["required"] == ["query"]
    assert "offline" in tool.description
