"""The web app with a scripted model: pages, streaming, endpoints, guards. Called in process; fifty concurrent chats,
the MCP SDK's client and the live log stream keep a real uvicorn server."""

from __future__ import annotations

import asyncio
import html
import re
import time
from typing import TYPE_CHECKING

import aiohttp
import pytest
from bs4 import BeautifulSoup

from tests.conftest import in_process, serve_app
from tests.live_page import page_of
from tests.scripted import ScriptedBackend

if TYPE_CHECKING:
    from starlette.testclient import TestClient

BLOCK = '<mcp-request>\n  <tool name="get_cat_fact" />\n</mcp-request>'


class SseEvents:
    """The (event, data) pairs of one turn's SSE stream, folded line by line up to its `done` event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self._name, self._data = "message", []

    def feed(self, line: str) -> bool:
        """Take one line, without its newline; true once the `done` event is complete."""
        if line.startswith("event: "):
            self._name = line[7:]
        elif line.startswith("data: "):
            self._data.append(line[6:])
        elif line == "":
            self.events.append((self._name, "\n".join(self._data)))
            if self._name == "done":
                return True
            self._name, self._data = "message", []
        return False


async def read_stream(session: aiohttp.ClientSession, base: str, tid: str) -> list[tuple[str, str]]:
    """Read one turn's SSE stream over a socket to its `done` event; return (event, data) pairs."""
    fold = SseEvents()
    async with session.get(f"{base}/stream", params={"tid": tid}, timeout=aiohttp.ClientTimeout(total=60)) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for raw in response.content:
            if fold.feed(raw.decode().rstrip("\n")):
                break
    return fold.events


STREAM_DEADLINE = 60


def stream_events(client: TestClient, tid: str) -> list[tuple[str, str]]:
    """Read one turn's SSE stream from the app in process to its `done` event; return (event, data) pairs.

    The turn is waited for first, for at most `STREAM_DEADLINE` seconds: a turn that never ends fails the test
    (a stream read in process cannot be given a timeout); once it ended, its stream sends everything at once."""
    deadline = time.monotonic() + STREAM_DEADLINE
    board = client.app.state.board
    while (turn := board.get(tid)) is not None and not turn.done:
        assert time.monotonic() < deadline, f"the turn {tid} did not end within {STREAM_DEADLINE} s"
        time.sleep(0.02)
    fold = SseEvents()
    with client.stream("GET", "/stream", params={"tid": tid}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if fold.feed(line):
                break
    return fold.events


def turn_id(fragment: str) -> str:
    return re.search(r'sse-connect="/stream\?tid=(t[0-9a-f]+)"', fragment).group(1)


def last_body(events: list[tuple[str, str]]) -> str:
    """The answer as the page shows it once every update is applied."""
    return page_of(events).body()


@pytest.fixture
def scripted():
    def reply(messages):
        last = messages[-1]["content"]
        if "get_cat_fact" in last and "call" in last.lower():
            return [BLOCK]
        return [f"You said: {last[-40:]}", " — thanks."]

    return ScriptedBackend([reply] * 500)


def test_page_serves_every_asset_from_the_app(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        response = client.get("/")
        page = response.text
        assert response.status_code == 200
        assert 'id="chat"' in page and 'id="poke"' in page
        sources = re.findall(r'(?:src|href)="([^"]+)"', page)
        assert sources and not [s for s in sources if s.startswith(("http:", "https:", "//"))]
        for asset in [s for s in sources if s.startswith("/static/")]:
            assert client.get(asset).status_code == 200, asset


def test_a_message_streams_a_reply_and_stays_after_reload(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        chat_url = str(client.get("/").url)
        cid = chat_url.rsplit("/", 1)[1]
        fragment = client.post("/send", data={"cid": cid, "msg": "hello <b>world</b>"}).text
        assert "hello &lt;b&gt;world&lt;/b&gt;" in fragment  # user text is escaped, never markup
        tid = turn_id(fragment)
        events = stream_events(client, tid)
        assert len([e for e in events if e[0] == "update"]) >= 1
        assert "You said: hello &lt;b&gt;world&lt;/b&gt; — thanks." in last_body(events)
        page = client.get(chat_url).text
        assert "You said: hello" in page and "thanks." in page


def test_poke_shows_a_done_card_and_the_formatted_fact(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        cid = str(client.get("/").url).rsplit("/", 1)[1]
        facts = set()
        for _ in range(3):
            response = client.post("/poke", data={"cid": cid})
            assert response.status_code == 200
            tid = turn_id(response.text)
            events = stream_events(client, tid)
            final = page_of(events).html()
            assert 'data-tool="get_cat_fact"' in final and 'data-status="done"' in final
            assert "<mcp-request" not in html.unescape(" ".join(d for _, d in events))
            body = last_body(events)
            assert "Cat Fact Alert" in body
            facts.add(body)
        assert len(facts) == 3  # every Poke runs and brings a different fact
        page = html.unescape(client.get(f"/c/{cid}").text)  # after a reload: the same, no XML
        assert page.count("🏓 Poke: call get_cat_fact") == 3 and page.count("Cat Fact Alert") == 3
        assert "<mcp-request" not in page


def test_a_poke_has_the_same_message_and_buttons_live_as_after_a_reload(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        cid = str(client.get("/").url).rsplit("/", 1)[1]
        live = BeautifulSoup(client.post("/poke", data={"cid": cid}).text, "html.parser")
        stream_events(client, turn_id(str(live)))
        reloaded = BeautifulSoup(client.get(f"/c/{cid}").text, "html.parser").find(id="chat")

    def actions(message) -> list[tuple[str, str | None]]:
        return [(item.get_text(strip=True), item.get("hx-post")) for item in message.select(".msg-tools button, "
                                                                                            ".msg-tools summary")]

    live_user, reloaded_user = live.select_one(".msg.user"), reloaded.select_one(".msg.user")
    assert actions(live_user) == actions(reloaded_user) == [("⎇ Fork", "/fork")]  # a Poke has no ✎ Edit
    assert live_user.decode() == reloaded_user.decode()  # the same message, id and buttons included
    assert actions(live.select_one(".msg.assistant")) == actions(reloaded.select_one(".msg.assistant"))


def test_tool_executor_runs_tools_and_refuses_bad_input_with_reasons(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        url = "/mcp-tool-executor"
        r = client.post(url, json={"tool": "say_hello", "params": {"name": "World"}})
        assert r.status_code == 200
        assert r.json()["result"] == "Hello, World!"
        r = client.post(url, json={"tool": "roll_dice", "params": {"sides": "20", "count": "2"}})
        assert r.status_code == 200 and len(r.json()["result"]["rolls"]) == 2
        cases = [
            (dict(json={"tool": "nope", "params": {}}), 404, "no tool named 'nope'"),
            (dict(content="{not json", headers={"content-type": "application/json"}), 400, "Invalid JSON body"),
            (dict(json=["tool"]), 400, "JSON body must be an object"),
            (dict(content="{not json", headers={"content-type": "text/plain"}), 400, "not valid JSON"),
            (dict(json={"params": {}}), 400, "expected a JSON object like"),
            (dict(json={"tool": "say_hello", "params": {}}), 400, "missing required argument"),
            (dict(json={"tool": "roll_dice", "params": {"sides": "many"}}), 400, "whole number"),
            (dict(json={"tool": "say_hello", "params": {"name": "x", "extra": 1}}), 400, "unknown argument"),
            (dict(json={"tool": "say_hello", "params": "name"}), 400, "should be an object"),
        ]
        for kwargs, status, reason in cases:
            r = client.post(url, **kwargs)
            assert r.status_code == status, (kwargs, r.text)
            assert reason in r.json()["error"]
        body = client.post(url, json={"tool": "roll_dice", "params": {"sides": 1}}).json()
        assert body["status"] == "error" and "between 2 and 1000" in body["error"]
        r = client.get("/health")
        assert r.status_code == 200 and r.json()["tools"] >= 4  # still serving


def test_tools_and_health_describe_the_server(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        listing = client.get("/tools").json()
        names = {t["name"]: t for t in listing["tools"]}
        assert {"say_hello", "get_cat_fact", "get_time", "roll_dice"} <= set(names)
        assert names["roll_dice"]["input_schema"]["properties"]["sides"]["type"] == "integer"
        assert names["say_hello"]["source"] == "plugin:say_hello"
        health = client.get("/health").json()
        assert health["backend"] == "scripted" and health["tools"] == listing["count"]
        assert "mcp_servers" in health


def test_requests_from_other_sites_are_refused(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        base = str(client.base_url).rstrip("/")
        payload = {"tool": "say_hello", "params": {"name": "x"}}
        r = client.post("/mcp-tool-executor", json=payload, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403 and "evil.example" in r.json()["error"]
        assert client.get("/health", headers={"Host": "rebound.example:5001"}).status_code == 403
        assert client.post("/mcp-tool-executor", json=payload, headers={"Origin": base}).status_code == 200


def test_bad_form_requests_get_4xx_and_the_server_keeps_serving(scripted, data_dir):
    with in_process(scripted, data_dir) as client:
        for path, data in [("/send", {}), ("/send", {"cid": "x", "msg": "   "}), ("/poke", {}), ("/approve", {"cid": "x"})]:
            r = client.post(path, data=data)
            assert 400 <= r.status_code < 500, (path, r.status_code, r.text)
        assert client.get("/stream", params={"tid": "t-nope"}).status_code == 404
        assert client.get("/health").status_code == 200


async def test_fifty_concurrent_chats_each_get_their_own_complete_reply(scripted, data_dir):
    # fifty connections at once to one server: this one keeps a real server
    with serve_app(scripted, data_dir) as base:
        async with aiohttp.ClientSession() as session:

            async def one(n: int) -> tuple[int, str]:
                async with session.post(base + "/new", allow_redirects=True) as response:
                    cid = str(response.url).rsplit("/", 1)[1]
                async with session.post(base + "/send", data={"cid": cid, "msg": f"token-{n:03d}"}) as response:
                    tid = turn_id(await response.text())
                events = await read_stream(session, base, tid)
                return n, last_body(events)

            results = await asyncio.gather(*(one(n) for n in range(50)))
            for n, body in results:
                assert f"token-{n:03d}" in body and body.count("token-") == 1 and "thanks." in body


@pytest.fixture
def searching():
    def reply(messages):
        last = messages[-1]["content"]
        if "mcp-response" in last:
            return ["GOOGL is $911 (offline sample data)."]
        return [f'Let me search. <mcp-request><tool name="web_search"/><param name="query">{last}</param></mcp-request>']

    return ScriptedBackend([reply] * 50)


def test_a_tool_needing_approval_waits_and_yO_remembers_it(searching, data_dir):
    with in_process(searching, data_dir) as client:
        chat_url = str(client.get("/").url)
        cid = chat_url.rsplit("/", 1)[1]
        tid = turn_id(client.post("/send", data={"cid": cid, "msg": "google stock price"}).text)
        final = page_of(stream_events(client, tid)).html()
        assert 'data-tool="web_search"' in final and 'data-status="waiting"' in final
        call_id = re.search(r'data-call-id="(call_[0-9a-f]+)"', final).group(1)
        assert 'value="yO"' in final

        assert 'value="yO"' in client.get(chat_url).text  # a reload still offers the choice

        r = client.post("/approve", data={"cid": cid, "call_id": call_id, "choice": "bogus"})
        assert r.status_code == 400 and "yO" in r.json()["error"]
        fragment = client.post("/approve", data={"cid": cid, "call_id": call_id, "choice": "yO"}).text
        assert 'data-status="approved"' in fragment
        tid = turn_id(fragment)
        final = page_of(stream_events(client, tid)).html()
        assert 'data-status="done"' in final and "GOOGL is $911" in final

        # the same tool runs without asking for the rest of this conversation
        tid = turn_id(client.post("/send", data={"cid": cid, "msg": "microsoft stock price"}).text)
        final = page_of(stream_events(client, tid)).html()
        assert 'data-status="waiting"' not in final and 'data-status="done"' in final

        transcript = next((data_dir / "conversations").glob(f"{cid}.md")).read_text()
        assert "❓:[yO]" in transcript and "🛠️: [web_search]" in transcript
        page = client.get(chat_url).text
        assert 'value="yO"' not in page and page.count('data-status="done"') == 2


async def test_the_app_serves_its_plugins_at_mcp_to_a_separate_sdk_client(scripted, data_dir):
    from mcp import Client

    with serve_app(scripted, data_dir) as base:  # the MCP SDK's client speaks HTTP over a socket
        async with Client(base + "/mcp") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"say_hello", "get_cat_fact", "get_time", "roll_dice", "query_database"} <= names
            hello = await client.call_tool("say_hello", {"name": "Inspector"})
            assert not hello.is_error and hello.content[0].text == "Hello, Inspector!"
        async with aiohttp.ClientSession() as session:  # another site's page may not drive it
            async with session.post(base + "/mcp", json={}, headers={"Origin": "http://evil.example"}) as r:
                assert r.status == 403


async def test_the_logs_page_shows_the_log_and_streams_new_lines(scripted, data_dir):
    # an endless stream read while another request writes to it: this one keeps a real server
    with serve_app(scripted, data_dir) as base:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/logs") as r:
                assert "ENGINE_READY" in await r.text()
            async with session.get(base + "/logs-stream", timeout=aiohttp.ClientTimeout(total=30)) as stream:
                async with session.post(base + "/mcp-tool-executor", json={"tool": "say_hello", "params": {"name": "Log"}}):
                    pass
                lines = []
                async for raw in stream.content:
                    lines.append(raw.decode())
                    if "TOOL_CALL_DONE say_hello" in raw.decode():
                        break
            assert any("TOOL_CALL_START say_hello" in line for line in lines)
