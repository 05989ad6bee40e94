"""What the page says about the tools the model is offered, in process with a scripted model and a real stdio
server: the empty conversation's summary by source, the Servers line with no server configured, the demo
plugins held back while a server is configured, and Poke picking among the tools offered."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

from bs4 import BeautifulSoup

from sidespin.protocol import format_block
from sidespin.tools import ToolCall
from tests.conftest import in_process, serve_app
from tests.scripted import ScriptedBackend
from tests.test_server import stream_events, turn_id

SHOUTER = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "tools_only_server.py"


def write_servers(data_dir: Path, **servers: dict) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "mcp.json").write_text(json.dumps({"servers": servers}))


def shouter(**more: object) -> dict:
    return {"command": sys.executable, "args": [str(SHOUTER)], **more}


def opened(client) -> tuple[str, BeautifulSoup]:
    response = client.get("/")
    return str(response.url).rsplit("/", 1)[1], BeautifulSoup(response.text, "html.parser")


def said(element) -> str:
    return " ".join(element.get_text(" ").split())


def test_with_no_server_the_empty_page_lists_the_demo_plugins_and_says_how_to_add_a_server(data_dir) -> None:
    with in_process(ScriptedBackend([["Hello."]]), data_dir) as client:
        cid, page = opened(client)
        offer = page.select_one("#chat #tool-offer")
        assert offer is not None and offer["data-offered"] == "6"
        assert said(offer.select_one(".offer-head")) == "The model can use 6 tools in this conversation:"
        (plugins,) = offer.select("li[data-source]")
        assert plugins["data-source"] == "plugins" and said(plugins) == "plugins · built in · 6 tools"
        assert "get_cat_fact" in plugins["title"]
        assert "list MCP servers in mcp.json" in said(offer)
        summary = said(page.select_one("#servers summary"))
        assert summary == "Servers: none configured · add one in mcp.json" and "0/0" not in page.text
        assert said(page.select_one("#tools-cost")).startswith("6 tools offered · tool list:")

        stream_events(client, turn_id(client.post("/send", data={"cid": cid, "msg": "hi"}).text))
        page = BeautifulSoup(client.get(f"/c/{cid}").text, "html.parser")
        assert page.select_one("#tool-offer") is None  # a conversation with a message shows it


def test_with_a_server_the_page_offers_its_tools_and_says_the_demo_plugins_are_held_back(data_dir) -> None:
    write_servers(data_dir, shouter=shouter(), later=shouter(disabled=True))
    script = [[format_block(ToolCall("shout", {"text": "ping"}))], ["It shouted."]]
    with in_process(ScriptedBackend(script), data_dir, tool_mode="xml", approval="auto") as client:
        cid, page = opened(client)
        offer = page.select_one("#tool-offer")
        assert offer["data-offered"] == "1"
        assert [said(li) for li in offer.select("li[data-source]")] == ["shouter · MCP server · 1 tool"]
        held = said(offer)
        assert "Demo plugins off because MCP servers are configured (shouter)" in held
        assert 'set "plugins": true in config.json to turn them on' in held
        assert said(page.select_one("#servers summary")) == "Servers 1/1 ready"
        assert [option["value"] for option in page.select("#poke-tool option")] == ["shout"]

        refused = client.post("/poke", data={"cid": cid, "tool": "get_cat_fact"})
        assert refused.status_code == 409
        assert "'get_cat_fact' is not offered to the model: demo plugins off" in html.unescape(refused.text)

        poked = client.post("/poke", data={"cid": cid})  # no tool named: the first the model is offered
        assert poked.status_code == 200 and "🏓 Poke: call shout" in poked.text
        stream_events(client, turn_id(poked.text))
        written = (data_dir / "conversations" / f"{cid}.md").read_text()
        assert "🛠️: [shout]" in written and "PING" in written


def test_switching_the_last_tool_off_says_so_on_the_empty_page(data_dir) -> None:
    write_servers(data_dir, shouter=shouter())
    with in_process(ScriptedBackend([]), data_dir) as client:
        cid, _ = opened(client)
        body = BeautifulSoup(client.post("/servers/tool", data={"cid": cid, "tool": "shout"}).text, "html.parser")
        offer = body.select_one("#tool-offer")
        assert offer is not None and offer["hx-swap-oob"] == "true"  # the summary follows the switch
        assert said(offer.select_one(".offer-head")) == ("The model is offered no tools: every tool is switched off "
                                                        "for this conversation; switch one on in the Servers panel.")
        assert said(body.select_one("#tools-cost")) == "no tools offered to the model"
        refused = client.post("/poke", data={"cid": cid})
        assert refused.status_code == 409 and "no tool is offered to the model" in refused.text


def test_an_mcp_json_of_disabled_servers_only_is_said_so_on_the_servers_line(data_dir) -> None:
    write_servers(data_dir, later=shouter(disabled=True))
    with in_process(ScriptedBackend([]), data_dir) as client:
        _, page = opened(client)
        assert said(page.select_one("#servers summary")) == "Servers: none on · 1 disabled in mcp.json"
        assert page.select_one("#tool-offer")["data-offered"] == "6"  # no server on: the demo plugins are offered


async def test_mcp_still_serves_the_plugins_held_back_from_the_model(data_dir) -> None:
    from mcp import Client

    write_servers(data_dir, shouter=shouter())
    with serve_app(ScriptedBackend([]), data_dir) as base:
        async with Client(base + "/mcp") as client:
            served = {tool.name for tool in (await client.list_tools()).tools}
    assert {"get_cat_fact", "say_hello"} <= served and "shout" not in served
