"""Attached resources followed on their servers, and the composer's cached catalog.

Real servers only: server-everything (it takes `resources/subscribe`, and its tool
`toggle-subscriber-updates` sends `notifications/resources/updated` every 5 s for each subscribed
URI) over stdio and Streamable HTTP, and our conformance fixture server (resources without
subscriptions). The model is the scripted backend, which records every message it was given.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
import pytest
from mcp_harness import SERVERS, conformance_endpoint, endpoint_app, requires_node, serve_in_thread
from test_mcp_attach import FEATURES, STDIO, write_mcp_json

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.mcp.attach import CHANGED, ResourceRef, compose, find_resource
from sidespin.rally import Conversation
from tests.conftest import log_lines, serve_app
from tests.scripted import ScriptedBackend

UPDATE_WAIT = 15.0  # server-everything sends its updates every 5 s


async def send(engine: Engine, conversation: Conversation, text: str, refs: list[ResourceRef]) -> None:
    """Send `text` with `refs` attached in `conversation`, as /send and the terminal do."""
    composed = await compose(engine.mcp, text, refs, max_chars=engine.settings.max_result_chars,
                             conversation=conversation.id)
    async for _ in engine.events(conversation, composed.text, note=composed.note):
        pass


async def wait_until(engine: Engine, done, seconds: float) -> None:
    """Wait (on the manager's changes, never a sleep) until `done()` holds; fail after `seconds`."""
    async def watch() -> None:
        seen = engine.mcp.version
        while not done():
            seen = await engine.mcp.wait_for_change(seen)

    await asyncio.wait_for(watch(), seconds)


async def polled(done, seconds: float) -> None:
    """Wait until `done()` holds (a log line: no change of the manager's to wait on); fail after `seconds`."""
    async with asyncio.timeout(seconds):
        while not done():
            await asyncio.sleep(0.02)


@pytest.mark.node
@requires_node
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_changed_attached_resource_goes_again_with_the_next_message_and_stays_in_the_transcript(
    tmp_path: Path, transport: str, request: pytest.FixtureRequest
) -> None:
    server = STDIO if transport == "stdio" else {"url": request.getfixturevalue("everything_http")}
    settings = load_settings(data_dir=tmp_path, mcp_config=write_mcp_json(tmp_path, {"everything": server}),
                             tool_mode="xml")
    backend = ScriptedBackend([["It lists the features."], ["Nothing new."], ["Still nothing."]])
    with log_lines("MCP_SUBSCRIBED") as subscribed:
        async with Engine.open(settings, backend=backend) as engine:
            conversation = engine.conversation()
            ref = find_resource(await engine.mcp.catalog(), FEATURES)
            await send(engine, conversation, "What does it say?", [ref])
            await engine.mcp.call_tool("everything", "toggle-subscriber-updates", {})
            await wait_until(engine, lambda: engine.mcp.subscriptions.changed(conversation.id), UPDATE_WAIT)
            other = engine.conversation()  # a conversation that did not attach it is not told
            assert engine.mcp.subscriptions.changed(other.id) == []

            await send(engine, conversation, "Anything new?", [])
            assert engine.mcp.subscriptions.changed(conversation.id) == []  # sent: no longer marked
            await send(engine, conversation, "And now?", [])
            transcript = engine.store.load(conversation.id)

    assert subscribed == [f"MCP_SUBSCRIBED everything {FEATURES}"]  # once, though attached and sent again
    again = backend.calls[1][-1]["content"]
    assert again.startswith(f"Anything new?\n\n📎 {FEATURES} (everything){CHANGED}\n```")
    assert "# Everything Server - Features" in again  # read again from the server
    assert transcript.turns[1].user == again
    assert transcript.turns[1].user_note["attached"] == [
        {"server": "everything", "uri": FEATURES, "name": "features.md", "changed": True,
         "lines": [4, again.count("\n")]}
    ]
    assert transcript.to_messages()[2] == backend.calls[1][-1]  # a reload sends the model the same message
    assert backend.calls[2][-1]["content"] == "And now?"  # once sent, not sent again until it changes again


async def test_a_2026_server_follows_attached_resources_on_a_listen_stream_and_again_after_a_restart(
    tmp_path: Path,
) -> None:
    notes = {"command": sys.executable, "args": [str(SERVERS / "notes_server.py")]}
    settings = load_settings(data_dir=tmp_path, mcp_config=write_mcp_json(tmp_path, {"notes": notes}), tool_mode="xml")
    backend = ScriptedBackend([["A first draft."], ["It says second."], ["It says third."]])
    with log_lines("MCP_LISTENING") as listening:
        async with Engine.open(settings, backend=backend) as engine:
            assert engine.mcp.connection("notes").client.protocol_version == "2026-07-28"
            conversation = engine.conversation()
            ref = find_resource(await engine.mcp.catalog(), "notes://today")
            await send(engine, conversation, "What is today's note?", [ref])
            await polled(lambda: listening, 10)  # the stream is open before the note changes
            await engine.mcp.call_tool("notes", "write_note", {"text": "second version"})
            await wait_until(engine, lambda: engine.mcp.subscriptions.changed(conversation.id), 10)
            await send(engine, conversation, "And now?", [])

            await engine.mcp.restart_server("notes")  # a new process, a new session: followed again
            await polled(lambda: len(listening) == 2, 10)
            await engine.mcp.call_tool("notes", "write_note", {"text": "third version"})
            await wait_until(engine, lambda: engine.mcp.subscriptions.changed(conversation.id), 10)
            await send(engine, conversation, "Again?", [])

    assert listening == ["MCP_LISTENING notes 1 resource(s): notes://today"] * 2
    assert "first draft" in backend.calls[0][-1]["content"]
    again = backend.calls[1][-1]["content"]
    assert again.startswith("And now?\n\n📎 notes://today (notes)" + CHANGED) and "second version" in again
    assert "third version" in backend.calls[2][-1]["content"]


async def test_a_server_without_subscriptions_is_asked_none_and_its_resources_attach_as_before(
    tmp_path: Path,
) -> None:
    (tmp_path / "served").mkdir()  # with conversations to serve, the endpoint declares resources
    with serve_in_thread(endpoint_app(conformance_endpoint(conversations=tmp_path / "served"))) as port:
        mcp_json = write_mcp_json(tmp_path, {"fixtures": {"url": f"http://127.0.0.1:{port}/mcp"}})
        settings = load_settings(data_dir=tmp_path, mcp_config=mcp_json, tool_mode="xml")
        backend = ScriptedBackend([["Static."], ["Fine."]])
        with log_lines("MCP_SUBSCRIBE") as subscribing:
            async with Engine.open(settings, backend=backend) as engine:
                conversation = engine.conversation()
                ref = find_resource(await engine.mcp.catalog(), "test://static-text")
                await send(engine, conversation, "Read it", [ref])
                await send(engine, conversation, "Again?", [])
    assert subscribing == []  # neither a subscription nor a refused one
    assert "test://static-text" in backend.calls[0][-1]["content"]
    assert backend.calls[1][-1]["content"] == "Again?"


@pytest.mark.node
@requires_node
def test_the_composer_asks_the_servers_for_their_catalog_once_for_many_keystrokes_and_again_after_a_restart(
    tmp_path: Path,
) -> None:
    write_mcp_json(tmp_path, {"everything": STDIO})
    # the app sets up its own logging on start: the counting sink goes in after
    with serve_app(ScriptedBackend([]), tmp_path, tool_mode="xml") as url, log_lines("MCP_CATALOG_FETCHED") as fetched:

        async def keystrokes(queries: str) -> list[str]:
            async with aiohttp.ClientSession() as session:
                async def ask(q: str) -> str:
                    async with session.get(url + "/composer/resources", params={"q": q}) as answer:
                        assert answer.status == 200
                        return await answer.text()

                return await asyncio.gather(*(ask(queries[:n]) for n in range(1, len(queries) + 1)))

        async def restart() -> None:
            async with aiohttp.ClientSession() as session:
                async with session.post(url + "/new") as page:
                    cid = str(page.url).rsplit("/", 1)[-1]
                async with session.post(url + "/servers/restart", data={"server": "everything", "cid": cid}) as answer:
                    assert answer.status == 200, await answer.text()

        started = len(fetched)
        menus = asyncio.run(keystrokes("features"))
        menus += asyncio.run(keystrokes("feat"))
        assert all("features.md" in menu for menu in menus)
        assert len(fetched) == started + 1  # twelve requests, one fetch
        before = len(fetched)
        asyncio.run(restart())
        assert "features.md" in asyncio.run(keystrokes("f"))[0]
        assert len(fetched) == before + 1  # the restarted server is asked afresh
