"""Our /mcp beyond tools: the conversations as read-only resources, the poke prompt, and progress over SSE."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_harness import ROOT, endpoint_app, free_socket, serve_in_thread

from sidespin.mcp import build_mcp_server
from sidespin.mcp.server import report_progress
from sidespin.protocol import poke_target
from sidespin.tools import ToolRegistry, load_plugins, plugins_dir, tool
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend

PARIS = "20260101-090000-abc123"
PARIS_TEXT = "💬: What time is it in Paris?\n\n🤖:[scripted] Let me look.\n"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory with one conversation, and a secret file beside its conversations folder."""
    monkeypatch.setenv("SIDESPIN_DATA_DIR", str(tmp_path))
    conversations = tmp_path / "conversations"
    conversations.mkdir()
    (conversations / f"{PARIS}.md").write_text(PARIS_TEXT, encoding="utf-8")
    (tmp_path / "secret.md").write_text("not for MCP clients", encoding="utf-8")
    return tmp_path


@pytest.fixture
def app_url(data_dir: Path) -> Iterator[str]:
    """The real web app (create_app, a scripted model) on a free port; yields its /mcp URL."""
    with serve_app(ScriptedBackend([]), data_dir) as base:
        yield f"{base}/mcp"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_lists_and_reads_the_apps_conversations(app_url: str, mode: str) -> None:
    async with Client(app_url, mode=mode) as client:
        listed = (await client.list_resources()).resources
        assert [(item.uri, item.name, item.mime_type) for item in listed] == [
            (f"sidespin://conversations/{PARIS}", "What time is it in Paris?", "text/markdown")
        ]
        templates = (await client.list_resource_templates()).resource_templates
        assert [item.uri_template for item in templates] == ["sidespin://conversations/{id}"]

        read = await client.read_resource(f"sidespin://conversations/{PARIS}")
        assert [(item.uri, item.mime_type, item.text) for item in read.contents] == [
            (f"sidespin://conversations/{PARIS}", "text/markdown", PARIS_TEXT)
        ]


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("sidespin://conversations/20990101-000000-ffffff", "no readable conversation '20990101-000000-ffffff'"),
        ("sidespin://conversations/../secret", "'../secret' is not a conversation id"),
        ("sidespin://conversations/..%2Fsecret", "is not a conversation id"),
        ("sidespin://conversations/", "'' is not a conversation id"),
        ("file:///etc/passwd", "file:///etc/passwd is not a sidespin conversation"),
    ],
)
async def test_an_unknown_or_malformed_conversation_is_a_clear_error(
    app_url: str, data_dir: Path, uri: str, says: str
) -> None:
    async with Client(app_url) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri)
    assert raised.value.error.code == types.INVALID_PARAMS
    assert raised.value.error.data == {"uri": uri}  # SEP-2164
    assert says in raised.value.error.message and "Resource not found" in raised.value.error.message
    assert str(data_dir) not in raised.value.error.message  # no path on this machine in the answer


async def test_the_poke_prompt_asks_for_one_tool_call(app_url: str) -> None:
    async with Client(app_url) as client:
        prompts = {item.name: item for item in (await client.list_prompts()).prompts}
        assert [(argument.name, argument.required) for argument in prompts["poke"].arguments] == [
            ("tool", True),
            ("arguments", False),
        ]
        poke = await client.get_prompt("poke", {"tool": "get_time", "arguments": '{"timezone": "Europe/Paris"}'})
        again = await client.get_prompt("poke", {"tool": "get_time"})

    [message] = poke.messages
    assert message.role == "user"
    assert poke_target(message.content.text) == "get_time"  # what the chat page shows as a Poke
    assert 'Now call the get_time tool with timezone="Europe/Paris".' in message.content.text
    assert "query_database" not in message.content.text  # only the asked-for tool is taught
    assert again.messages[0].content.text != message.content.text  # salted: never the same prompt twice


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"tool": "no_such_tool"}, "Unknown tool: no_such_tool"),
        ({}, "needs its `tool` argument"),
        ({"tool": "get_time", "arguments": "[1, 2]"}, "must be a JSON object"),
        ({"tool": "get_time", "arguments": "{not json"}, "must be a JSON object"),
    ],
)
async def test_a_poke_for_an_unknown_tool_or_bad_arguments_is_a_clear_error(
    app_url: str, arguments: dict[str, str], says: str
) -> None:
    async with Client(app_url) as client:
        with pytest.raises(MCPError, match=says) as raised:
            await client.get_prompt("poke", arguments)
        with pytest.raises(MCPError, match="Unknown prompt: nudge"):
            await client.get_prompt("nudge", {})
    assert raised.value.error.code == types.INVALID_PARAMS


async def test_the_conversations_are_read_only(app_url: str, data_dir: Path) -> None:
    path = data_dir / "conversations" / f"{PARIS}.md"
    before = path.stat().st_mtime_ns
    async with Client(app_url, mode="legacy") as client:
        await client.read_resource(f"sidespin://conversations/{PARIS}")
        with warnings.catch_warnings():  # subscriptions are gone in 2026-07-28; a 2025-11-25 client may still ask
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            with pytest.raises(MCPError, match="Method not found"):
                await client.subscribe_resource(f"sidespin://conversations/{PARIS}")
        tools = {item.name for item in (await client.list_tools()).tools}
    assert not any("conversation" in name for name in tools)
    assert (path.read_text(encoding="utf-8"), path.stat().st_mtime_ns) == (PARIS_TEXT, before)


async def test_mcp_serve_serves_the_conversations_its_config_names(tmp_path: Path) -> None:
    """`sidespin --config FILE mcp-serve` over stdio: the data directory comes from the settings."""
    (tmp_path / "conversations").mkdir()
    (tmp_path / "conversations" / f"{PARIS}.md").write_text(PARIS_TEXT, encoding="utf-8")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_dir": str(tmp_path)}), encoding="utf-8")
    command = StdioServerParameters(
        command=sys.executable,
        args=["-c", "import sys; from sidespin.cli import main; sys.exit(main(sys.argv[1:]))",
              "--config", str(config), "mcp-serve"],
        cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT)},  # the SDK passes only a safe part of this environment on, no SIDESPIN_*
    )
    async with Client(command) as client:
        listed = (await client.list_resources()).resources
        read = await client.read_resource(f"sidespin://conversations/{PARIS}")
        poke = await client.get_prompt("poke", {"tool": "say_hello"})
    assert [item.name for item in listed] == ["What time is it in Paris?"]
    assert read.contents[0].text == PARIS_TEXT
    assert poke_target(poke.messages[0].content.text) == "say_hello"


@tool
async def count_up(steps: int) -> str:
    """Count, reporting each step."""
    for step in range(1, steps + 1):
        await report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@pytest.fixture
def counting_url() -> Iterator[str]:
    sock = free_socket()
    port = sock.getsockname()[1]
    endpoint = build_mcp_server(ToolRegistry([count_up, *load_plugins(plugins_dir())]), port=port)
    with serve_in_thread(endpoint_app(endpoint), sock):
        yield f"http://127.0.0.1:{port}/mcp"


def _call(accept: str) -> tuple[dict[str, str], dict]:
    headers = {"Accept": accept, "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "count_up", "arguments": {"steps": 2}, "_meta": {"progressToken": "p1"}},
    }
    return headers, body


async def test_progress_reaches_a_client_that_accepts_sse_and_json_clients_get_json(counting_url: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        headers, body = _call("application/json, text/event-stream")
        streamed = await http.post(counting_url, headers=headers, json=body)
        headers, body = _call("application/json")
        plain = await http.post(counting_url, headers=headers, json=body)

    assert streamed.headers["content-type"].startswith("text/event-stream")
    data = [line.removeprefix("data:") for line in streamed.text.splitlines() if line.startswith("data:")]
    messages = [json.loads(item) for item in data if item.strip()]
    progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"], p["total"], p["message"]) for p in progress] == [
        ("p1", 1, 2, "step 1"),
        ("p1", 2, 2, "step 2"),
    ]
    assert messages[-1]["result"]["content"][0]["text"] == "counted to 2"

    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["content"][0]["text"] == "counted to 2"

