"""Resources attached with `@` and prompts run with `/`: what the model receives, what the transcript keeps.

Real servers only: server-everything over stdio and Streamable HTTP (text resources, templates,
prompts) and our conformance fixture server over Streamable HTTP (`test://static-binary`, a PNG).
The model is the scripted backend, which records every message it was given.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mcp_harness import (
    EVERYTHING, NODE, RED_PIXEL_PNG, conformance_endpoint, endpoint_app, everything_stdio, requires_node,
    serve_in_thread,
)
from starlette.testclient import TestClient

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.errors import AttachmentRefused
from sidespin.formats import ATTACHMENTS, to_anthropic_messages, to_ollama_messages, to_openai_messages
from sidespin.mcp import MCPManager
from sidespin.mcp.attach import ResourceRef, compose, find_resource
from sidespin.terminal import read_line
from sidespin.transcript import TranscriptStore
from tests.conftest import in_process
from tests.scripted import ScriptedBackend
from tests.test_server import stream_events, turn_id

FEATURES = "demo://resource/static/document/features.md"
STDIO = {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]}


def write_mcp_json(folder: Path, servers: dict) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


async def play(engine: Engine, text: str, refs: list[ResourceRef]):
    """Send `text` with `refs` attached, as /send and the terminal do; the conversation's id."""
    conversation = engine.conversation()
    composed = await compose(engine.mcp, text, refs, max_chars=engine.settings.max_result_chars)
    async for _ in engine.events(conversation, composed.text, note=composed.note):
        pass
    return conversation.id


@pytest.mark.node
@requires_node
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_attached_text_resource_is_inline_in_what_the_model_receives_and_in_the_transcript(
    tmp_path: Path, transport: str, request: pytest.FixtureRequest
) -> None:
    server = STDIO if transport == "stdio" else {"url": request.getfixturevalue("everything_http")}
    settings = load_settings(data_dir=tmp_path, mcp_config=write_mcp_json(tmp_path, {"everything": server}),
                             tool_mode="xml")
    backend = ScriptedBackend([["It lists the features."]])
    async with Engine.open(settings, backend=backend) as engine:
        ref = find_resource(await engine.mcp.catalog(), FEATURES)
        assert ref.server == "everything"
        cid = await play(engine, "What does it say?", [ref])
        transcript = engine.store.load(cid)

    sent = backend.calls[0][-1]
    assert sent["role"] == "user"
    assert sent["content"].startswith("What does it say?\n\n📎 " + FEATURES + " (everything)\n```")
    assert "# Everything Server - Features" in sent["content"]  # the resource's own text
    assert transcript.turns[0].user == sent["content"]  # the file holds what the model read
    # the note says which lines are the resource's text: after the typed line, a blank one, its 📎 line and fence
    assert transcript.turns[0].user_note["attached"] == [{"server": "everything", "uri": FEATURES,
                                                          "name": "features.md",
                                                          "lines": [4, sent["content"].count("\n")]}]
    assert transcript.to_messages()[0] == sent  # a reload sends the model the same message


@pytest.mark.node
@requires_node
async def test_a_filled_in_template_is_read_from_the_server_that_lists_it() -> None:
    async with MCPManager([everything_stdio()]) as manager:
        ref = find_resource(await manager.catalog(), "demo://resource/dynamic/text/7")
        composed = await compose(manager, "", [ref], max_chars=10_000)
    assert ref.server == "everything"
    assert "Resource 7: This is a plaintext resource" in composed.text


async def test_an_image_resource_reaches_a_vision_model_as_an_image_and_others_as_a_placeholder(tmp_path: Path) -> None:
    (tmp_path / "served").mkdir()  # with conversations to serve, the endpoint declares resources
    with serve_in_thread(endpoint_app(conformance_endpoint(conversations=tmp_path / "served"))) as port:
        mcp_json = write_mcp_json(tmp_path, {"fixtures": {"url": f"http://127.0.0.1:{port}/mcp"}})
        settings = load_settings(data_dir=tmp_path, mcp_config=mcp_json, tool_mode="xml")
        backend = ScriptedBackend([["A red pixel."]])
        async with Engine.open(settings, backend=backend) as engine:
            ref = find_resource(await engine.mcp.catalog(), "test://static-binary")
            cid = await play(engine, "What colour is it?", [ref])
            reloaded = engine.store.load(cid).to_messages()

    sent = backend.calls[0]
    question = sent[-1]
    image = {"type": "image", "mimeType": "image/png", "data": RED_PIXEL_PNG, "uri": "test://static-binary"}
    assert question[ATTACHMENTS] == [image]
    assert "[image: image/png," in question["content"]  # what a model without vision reads
    assert reloaded[0][ATTACHMENTS] == [image]  # the transcript keeps it for the next turns

    openai = to_openai_messages(sent, images=True)[-1]
    assert openai["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{RED_PIXEL_PNG}"}}
    assert to_openai_messages(sent)[-1]["content"] == question["content"]  # no vision: text with the placeholder
    _, anthropic = to_anthropic_messages(sent, images=True)
    assert anthropic[-1]["content"][1]["source"]["data"] == RED_PIXEL_PNG
    assert to_ollama_messages(sent, images=True)[-1]["images"] == [RED_PIXEL_PNG]


def test_a_regenerate_keeps_the_attachments_and_an_edit_keeps_those_whose_block_it_kept(tmp_path: Path) -> None:
    (tmp_path / "served").mkdir()
    store = TranscriptStore(tmp_path / "conversations")
    backend = ScriptedBackend([["A red pixel."], ["Red, again."], ["Only text now."]])

    def answered(client: TestClient, route: str, data: dict, answer: str) -> None:
        response = client.post(route, data=data)
        assert response.status_code == 200, response.text
        for _ in range(600):  # the turn plays in the background: wait for its answer in the file
            if answer in store.read(cid):
                return
            time.sleep(0.05)
        raise AssertionError(f"{route} gave no answer")

    with serve_in_thread(endpoint_app(conformance_endpoint(conversations=tmp_path / "served"))) as port:
        write_mcp_json(tmp_path, {"fixtures": {"url": f"http://127.0.0.1:{port}/mcp"}})
        with in_process(backend, tmp_path, tool_mode="xml") as client:
            cid = str(client.post("/new").url).rsplit("/", 1)[-1]
            attach = [json.dumps({"server": "fixtures", "uri": uri}) for uri in ("test://static-text",
                                                                                 "test://static-binary")]
            response = client.post("/send", data={"cid": cid, "msg": "What is in these?", "attach": attach})
            assert response.status_code == 200, response.text
            stream_events(client, turn_id(response.text))
            sent = store.load(cid).turns[0]
            assert [row["uri"] for row in sent.user_note["attached"]] == ["test://static-text", "test://static-binary"]

            answered(client, "/regenerate", {"cid": cid, "turn": "0"}, "Red, again.")
            again = store.load(cid).turns[0]
            assert again.user == sent.user and again.user_note == sent.user_note
            assert backend.calls[1][-1][ATTACHMENTS] == backend.calls[0][-1][ATTACHMENTS] != []  # the image, again

            # the person takes the image's block out of the message: its row and its image go with it
            typed = again.user.split("\n\n📎 test://static-binary")[0]
            answered(client, "/edit_message", {"cid": cid, "turn": "0", "text": typed}, "Only text now.")
            edited = store.load(cid).turns[0]
            assert "static-text" in edited.user and "static-binary" not in edited.user
            assert edited.user_note == {"attached": [sent.user_note["attached"][0]]}
            assert ATTACHMENTS not in backend.calls[2][-1]
            page = client.get(f"/c/{cid}").text
    assert 'data-uri="test://static-text"' in page and "attached-list" in page  # still drawn as an attachment


@pytest.mark.node
@requires_node
async def test_an_unknown_or_unreadable_resource_is_refused_by_name() -> None:
    async with MCPManager([everything_stdio()]) as manager:
        catalog = await manager.catalog()
        with pytest.raises(AttachmentRefused, match="no MCP server lists the resource demo://nowhere/x"):
            find_resource(catalog, "demo://nowhere/x")
        unlisted = ResourceRef("everything", "demo://resource/static/document/missing.md")
        with pytest.raises(AttachmentRefused, match="does not list the resource demo://resource/static/document/"):
            await compose(manager, "hi", [unlisted], max_chars=10_000)
        missing = ResourceRef("everything", "demo://resource/dynamic/text/abc")  # its template's, but no such one
        with pytest.raises(AttachmentRefused, match="demo://resource/dynamic/text/abc.*cannot be read"):
            await compose(manager, "hi", [missing], max_chars=10_000)
        with pytest.raises(AttachmentRefused, match="the limit is 100 "):
            await compose(manager, "hi", [find_resource(catalog, FEATURES)], max_chars=100)


@pytest.mark.node
@requires_node
def test_send_with_an_unreadable_resource_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    write_mcp_json(tmp_path, {"everything": STDIO})
    with in_process(ScriptedBackend([]), tmp_path, tool_mode="xml") as client:
        cid = str(client.post("/new").url).rsplit("/", 1)[-1]
        attach = json.dumps({"server": "everything", "uri": "demo://resource/dynamic/text/abc"})
        answer = client.post("/send", data={"cid": cid, "msg": "read this", "attach": attach})
        assert answer.status_code == 422
        error = answer.json()["error"]
    assert "demo://resource/dynamic/text/abc" in error and "cannot be read" in error and "nothing was sent" in error
    saved = tmp_path / "conversations" / f"{cid}.md"
    assert not saved.exists() or "read this" not in saved.read_text(encoding="utf-8")


@pytest.mark.node
@requires_node
async def test_terminal_lines_attach_with_at_and_render_prompts_with_slash() -> None:
    async with MCPManager([everything_stdio()]) as manager:
        line = await read_line(manager, f"Summarise @{FEATURES} briefly", max_chars=100_000)
        assert line.message.text.startswith("Summarise briefly\n\n📎 " + FEATURES)
        assert line.message.note["attached"][0]["uri"] == FEATURES

        line = await read_line(manager, "/args-prompt city='New York' state=NY", max_chars=100_000)
        assert line.message.text.startswith("What's weather in New York, NY?")
        assert line.message.note == {}

        listing = await read_line(manager, "/", max_chars=100_000)
        assert listing.message is None and "/args-prompt city=… [state=…]" in listing.show
        listing = await read_line(manager, "@", max_chars=100_000)
        assert listing.message is None and f"@{FEATURES}" in listing.show

        with pytest.raises(AttachmentRefused, match="needs city"):
            await read_line(manager, "/args-prompt", max_chars=100_000)
        with pytest.raises(AttachmentRefused, match="no prompt named 'nope'"):
            await read_line(manager, "/nope", max_chars=100_000)
        with pytest.raises(AttachmentRefused, match="demo://nowhere"):
            await read_line(manager, "look at @demo://nowhere", max_chars=100_000)
        plain = await read_line(manager, "mail me@example.com", max_chars=100_000)  # not a resource
        assert plain.message.text == "mail me@example.com"
