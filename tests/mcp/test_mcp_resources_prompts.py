"""Resources, resource templates and prompts of the configured servers: the manager and `sidespin resources|prompts`.

The real server is @modelcontextprotocol/server-everything over stdio; beside it runs a tools-only
server (tests/mcp/servers/tools_only_server.py) that declares neither resources nor prompts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp_harness import EVERYTHING, NODE, ROOT, SERVERS, everything_stdio, requires_node

from sidespin.errors import MCPServerError
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.mcp.content import render_resource_contents

# Runs the CLI as a user would, then fails if anything that plays the model was imported on the way.
_CLI = (
    "import sys\n"
    "from sidespin.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "loaded = [m for m in ('sidespin.engine', 'sidespin.backends', 'sidespin.llm.embedded') if m in sys.modules]\n"
    "sys.exit(f'model code loaded: {loaded}' if loaded else code)\n"
)


def tools_only(name: str = "plain") -> ServerConfig:
    return ServerConfig(
        name=name, transport="stdio", command=sys.executable, args=[str(SERVERS / "tools_only_server.py")]
    )


@pytest.fixture
def mcp_json(tmp_path: Path) -> Path:
    """An mcp.json with server-everything and the tools-only server."""
    path = tmp_path / "mcp.json"
    servers = {
        "everything": {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]},
        "plain": {"command": sys.executable, "args": [str(SERVERS / "tools_only_server.py")]},
    }
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def sidespin(mcp_json: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "SIDESPIN_DATA_DIR": str(mcp_json.parent / "data")}
    return subprocess.run(
        [sys.executable, "-c", _CLI, "--mcp-config", str(mcp_json), *args],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60,
    )


@pytest.mark.node
@requires_node
def test_resources_json_lists_everythings_resources_and_templates_without_the_model(mcp_json: Path) -> None:
    listed = sidespin(mcp_json, "resources", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "warning" not in listed.stderr  # the tools-only server is skipped, not reported
    rows = json.loads(listed.stdout)
    assert {row["server"] for row in rows} == {"everything"}

    assert all(set(row) >= {"server", "uri", "name", "mimeType"} for row in rows)  # the same keys on every row
    resources = [row for row in rows if row["uri"] is not None]
    architecture = next(row for row in resources if row["name"] == "architecture.md")
    assert architecture == {
        "server": "everything",
        "uri": "demo://resource/static/document/architecture.md",
        "name": "architecture.md",
        "mimeType": "text/markdown",
        "description": architecture["description"],
    }
    assert all("uriTemplate" not in row for row in resources)

    templates = {row["uriTemplate"]: row for row in rows if "uriTemplate" in row}
    assert templates["demo://resource/dynamic/text/{resourceId}"]["mimeType"] == "text/plain"
    assert all(row["uri"] is None for row in templates.values())
    assert len(resources) + len(templates) == len(rows)


@pytest.mark.node
@requires_node
def test_prompts_json_lists_each_prompt_with_its_arguments(mcp_json: Path) -> None:
    listed = sidespin(mcp_json, "prompts", "--json")
    assert listed.returncode == 0, listed.stderr
    prompts = {row["name"]: row for row in json.loads(listed.stdout)}
    assert {"simple-prompt", "args-prompt", "resource-prompt"} <= set(prompts)
    assert prompts["simple-prompt"]["arguments"] == []
    assert prompts["args-prompt"]["server"] == "everything"
    assert prompts["args-prompt"]["arguments"] == [
        {"name": "city", "description": "Name of the city", "required": True},
        {"name": "state", "description": None, "required": False},
    ]


@pytest.mark.node
@requires_node
def test_the_text_tables_show_templates_and_optional_arguments(mcp_json: Path) -> None:
    resources = sidespin(mcp_json, "resources")
    assert resources.returncode == 0, resources.stderr
    line = next(line for line in resources.stdout.splitlines() if "dynamic/text" in line)
    assert line.split()[:3] == ["everything", "demo://resource/dynamic/text/{resourceId}", "text/plain"]

    prompts = sidespin(mcp_json, "prompts")
    line = next(line for line in prompts.stdout.splitlines() if line.split()[1:2] == ["args-prompt"])
    assert "city, state?" in line


@pytest.mark.node
@requires_node
def test_reading_a_resource_and_getting_a_prompt_from_the_command_line(mcp_json: Path) -> None:
    read = sidespin(mcp_json, "resources", "--read", "demo://resource/static/document/architecture.md")
    assert read.returncode == 0, read.stderr
    assert read.stdout.startswith("# Everything Server")

    got = sidespin(mcp_json, "prompts", "--get", "args-prompt", "--arg", "city=Paris", "--arg", "state=TX", "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == {
        "server": "everything",
        "name": "args-prompt",
        "messages": [{"role": "user", "text": "What's weather in Paris, TX?", "attachments": []}],
    }

    wrong = sidespin(mcp_json, "resources", "--read", "demo://nowhere")
    assert wrong.returncode == 2
    assert "MCP server 'everything'" in wrong.stderr and "demo://nowhere" in wrong.stderr


@pytest.mark.node
@requires_node
async def test_reading_a_resource_gives_its_text() -> None:
    async with MCPManager([everything_stdio()], strict=True) as manager:
        static = await manager.read_resource("everything", "demo://resource/static/document/extension.md")
        assert static.text.startswith("# Everything Server - Extension Points")
        assert static.attachments == []

        # A URI made from a listed template, not itself listed.
        dynamic = await manager.read_resource("everything", "demo://resource/dynamic/text/7")
        assert dynamic.text.startswith("Resource 7: This is a plaintext resource")

        # Binary contents become a placeholder a person or a model can read.
        blob = await manager.read_resource("everything", "demo://resource/dynamic/blob/7")
        assert blob.text.startswith("[resource demo://resource/dynamic/blob/7: ")


@pytest.mark.node
@requires_node
async def test_getting_a_prompt_with_arguments_gives_its_messages() -> None:
    async with MCPManager([everything_stdio()], strict=True) as manager:
        (message,) = await manager.get_prompt("everything", "args-prompt", {"city": "Lyon"})
        assert (message.role, message.text) == ("user", "What's weather in Lyon?")

        # The second message embeds a resource: its text comes through.
        intro, embedded = await manager.get_prompt(
            "everything", "resource-prompt", {"resourceType": "Text", "resourceId": "3"}
        )
        assert "resource with id: 3" in intro.text
        assert embedded.text.startswith("Resource 3: ")

        with pytest.raises(MCPServerError, match="'everything'.*Must be Text or Blob"):
            await manager.get_prompt("everything", "resource-prompt", {"resourceType": "Video", "resourceId": "3"})


@pytest.mark.node
@requires_node
async def test_a_server_without_resources_or_prompts_is_skipped() -> None:
    broken = ServerConfig(name="broken", transport="stdio", command=sys.executable, args=["-c", "raise SystemExit(3)"])
    async with MCPManager([everything_stdio(), tools_only(), broken], startup_timeout=5) as manager:
        assert manager.tools("plain")  # it works, for its tools
        catalog = await manager.catalog()
        assert {row["server"] for row in catalog.resources + catalog.templates + catalog.prompts} == {"everything"}
        # Only the server that could not start is a problem, and it is named.
        (problem,) = catalog.problems
        assert problem.startswith("MCP server 'broken' failed to start")

        with pytest.raises(MCPServerError, match="'plain' offers no resources"):
            await manager.read_resource("plain", "demo://resource/dynamic/text/1")
        with pytest.raises(MCPServerError, match="'plain' offers no prompts"):
            await manager.get_prompt("plain", "simple-prompt")


def test_an_image_resource_becomes_an_attachment_like_a_tools_image() -> None:
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    texts, attachments = render_resource_contents(
        [
            types.TextResourceContents(uri="demo://a", mime_type="text/plain", text="a caption"),
            types.BlobResourceContents(uri="demo://b", mime_type="image/png", blob=pixel),
            types.BlobResourceContents(uri="demo://c", mime_type="application/zip", blob="UEsDBA=="),
        ]
    )
    assert attachments == [{"type": "image", "mimeType": "image/png", "data": pixel}]
    assert texts[0] == "a caption"
    assert texts[1].startswith("[image: image/png, ")
    assert texts[2] == "[resource demo://c: application/zip, 6 bytes]"
