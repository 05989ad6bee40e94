"""MCP Apps without a browser: what a tool's `_meta.ui` says, the shelf apps are kept on, the manager against a
real stdio server with an app, the sandbox origin's headers, and the terminal's word about an app."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import mcp_types as types
import pytest
from rich.console import Console

from sidespin.errors import MCPServerError
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.mcp.apps import (
    AppShelf, AppView, clean_csp, context_prompt, context_text, for_app, for_model, resource_uri, sandbox_csp,
)
from sidespin.terminal.chat import TerminalChat
from sidespin.tools import ToolCall, ToolRegistry, ToolResult
from tests.conftest import serve_app
from tests.scripted import ScriptedBackend
from tests.security.conftest import raw_request

HOSTILE = Path(__file__).resolve().parent.parent / "security" / "servers" / "hostile_app_server.py"


def tool(meta: dict | None) -> types.Tool:
    return types.Tool.model_validate({"name": "t", "inputSchema": {"type": "object"}, "_meta": meta})


def test_a_tool_names_its_app_and_who_may_call_it() -> None:
    assert resource_uri(tool({"ui": {"resourceUri": "ui://a/b.html"}})) == "ui://a/b.html"
    assert resource_uri(tool({"ui/resourceUri": "ui://old/flat"})) == "ui://old/flat"  # the deprecated form
    assert resource_uri(tool({"ui": {"resourceUri": "https://elsewhere/x"}})) is None  # only ui://
    assert resource_uri(tool(None)) is None
    both = tool({"ui": {"resourceUri": "ui://a"}})
    assert for_model(both) and for_app(both)  # nothing said: both
    app_only = tool({"ui": {"visibility": ["app"]}})
    assert not for_model(app_only) and for_app(app_only)
    model_only = tool({"ui": {"visibility": ["model"]}})
    assert for_model(model_only) and not for_app(model_only)


def test_only_plain_origins_reach_the_apps_csp() -> None:
    declared = {"connectDomains": ["https://api.example.com", "https://x.com; script-src *", "'unsafe-eval'"],
                "resourceDomains": ["https://*.cdn.example", 42], "frameDomains": "https://not-a-list"}
    assert clean_csp(declared) == {"connectDomains": ["https://api.example.com"],
                                   "resourceDomains": ["https://*.cdn.example"]}
    policy = sandbox_csp({}, "http://127.0.0.1:5001")
    assert "connect-src 'none'" in policy and "frame-src 'none'" in policy and "default-src 'none'" in policy
    assert "form-action 'none'" in policy and "frame-ancestors 'self' http://127.0.0.1:5001" in policy
    declared_policy = sandbox_csp(clean_csp(declared), "http://127.0.0.1:5001")
    assert "connect-src https://api.example.com" in declared_policy
    assert "script-src 'self' 'unsafe-inline' https://*.cdn.example" in declared_policy


def test_the_shelf_keeps_an_app_once_under_the_sha_of_what_it_holds(tmp_path) -> None:
    shelf = AppShelf(tmp_path / "apps")
    kept = shelf.keep(AppView("srv", "tool", "ui://srv/app", "<p>hi</p>", {"connectDomains": ["https://a.b"]}))
    assert re.fullmatch(r"[0-9a-f]{64}", kept.sha)
    again = shelf.get(kept.sha)
    assert again is not None and again.html == "<p>hi</p>" and again.server == "srv"
    assert again.csp == {"connectDomains": ["https://a.b"]}
    assert shelf.keep(AppView("srv", "tool", "ui://srv/app", "<p>hi</p>", {"connectDomains": ["https://a.b"]})).sha \
        == kept.sha
    assert shelf.get("../../etc/passwd") is None and shelf.get("0" * 64) is None


def test_what_an_app_tells_the_model_follows_the_system_prompt() -> None:
    text = context_text([{"type": "text", "text": "count: 3"}, {"type": "image", "data": "…"}], {"n": 3})
    assert text == 'count: 3\n[image left out]\n{"n": 3}'
    assert len(context_text([{"type": "text", "text": "x" * 10_000}], None)) < 4100
    prompt = context_prompt("Be brief.", {"call_1": {"server": "s", "tool": "t", "text": "count: 3"}})
    assert prompt.startswith("Be brief.\n\n") and "count: 3" in prompt and "call call_1" in prompt
    assert context_prompt("Be brief.", None) == "Be brief." and context_prompt("", {}) == ""


def hostile_servers(record: Path) -> list[ServerConfig]:
    return [ServerConfig(name="hostile", transport="stdio", command=sys.executable, args=[str(HOSTILE), str(record)]),
            ServerConfig(name="victim", transport="stdio", command=sys.executable,
                         args=[str(HOSTILE), str(record), "victim"])]


async def test_a_result_carries_its_app_and_an_app_calls_only_its_own_servers_tools(tmp_path) -> None:
    record = tmp_path / "ran.txt"
    async with MCPManager(hostile_servers(record), apps=AppShelf(tmp_path / "apps")) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        assert "app_only" not in registry.names()  # for apps only: never offered to the model
        assert {"open_app", "wipe", "victim_tool"} <= set(registry.names())
        result = await registry.execute(ToolCall("open_app", {"attack": "none"}))
        app = next(item for item in result.attachments if item["type"] == "app")
        assert app["server"] == "hostile" and app["uri"] == "ui://hostile/app.html"
        kept = manager.apps.get(app["sha"])
        assert kept is not None and "hostile app" in kept.html
        assert (await manager.call_for_app("hostile", "app_only", {})).content[0].text == "app_only ran"
        with pytest.raises(MCPServerError, match="no tool 'victim_tool'"):
            await manager.call_for_app("hostile", "victim_tool", {})
        victim = await registry.execute(ToolCall("victim_tool", {}))
        assert not any(item["type"] == "app" for item in victim.attachments)  # a tool with no app: none
    assert record.read_text().split() == ["open_app", "app_only", "victim_tool"]


def test_the_terminal_says_a_result_has_an_app_and_where_to_open_it() -> None:
    out = io.StringIO()
    chat = TerminalChat(Console(file=out, width=200, color_system=None))
    chat.page = "http://127.0.0.1:5001/c/20261128-1"
    result = ToolResult(ToolCall("get-time", {}), output="2026-11-28T10:00:00Z",
                        attachments=[{"type": "app", "server": "basic", "tool": "get-time",
                                      "uri": "ui://get-time/mcp-app.html", "sha": "0" * 64}])
    chat.console.print(chat.tool_panel(result))
    shown = out.getvalue()
    assert "this result has an app (ui://get-time/mcp-app.html)" in shown
    assert "open http://127.0.0.1:5001/c/20261128-1" in shown
    out.truncate(0)
    chat.console.print(chat.tool_panel(ToolResult(ToolCall("get_time", {}), output="noon")))
    assert "app" not in out.getvalue().replace("get_time", "")


def test_without_mcp_servers_there_is_no_second_origin_and_the_page_frames_nothing(tmp_path) -> None:
    with serve_app(ScriptedBackend([]), tmp_path, tool_mode="xml") as url:
        status, headers, _ = raw_request(url, "GET", "/")
        page_csp = raw_request(url, "GET", headers.get("location", "/"))[1]["content-security-policy"]
        assert "frame-src" not in page_csp and "frame-ancestors 'none'" in page_csp


def test_the_sandbox_origin_serves_its_page_under_the_apps_csp_and_nothing_else(tmp_path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {}}))
    with serve_app(ScriptedBackend([]), tmp_path, tool_mode="xml") as url:
        status, headers, _ = raw_request(url, "GET", "/")
        page_csp = raw_request(url, "GET", headers.get("location", "/"))[1]["content-security-policy"]
        port = int(re.search(r"frame-src http://127\.0\.0\.1:(\d+)", page_csp).group(1))
        sandbox = f"http://127.0.0.1:{port}"
        assert port != int(url.rsplit(":", 1)[1])  # another origin
        declared = json.dumps({"connectDomains": ["https://api.example.com", "x; script-src *"]})
        status, headers, body = raw_request(sandbox, "GET", "/sandbox?csp=" + declared.replace(" ", "%20"))
        assert status == 200 and b"/sandbox.js" in body
        csp = headers["content-security-policy"]
        assert "connect-src https://api.example.com;" in csp and "script-src *" not in csp
        assert f"frame-ancestors 'self' {url}" in csp and b'data-host-origin="' + url.encode() + b'"' in body
        assert "x-frame-options" not in headers
        assert raw_request(sandbox, "GET", "/sandbox.js")[0] == 200
        assert raw_request(sandbox, "GET", "/health")[0] == 404  # only the sandbox: no route of the chat server
        assert raw_request(sandbox, "GET", "/sandbox", headers={"Host": f"evil.example:{port}"})[0] == 403


def test_a_card_draws_a_place_for_its_app_and_none_for_an_imported_result_or_a_result_without_one() -> None:
    from fasthtml.common import to_xml

    from sidespin.record import CallRecord
    from sidespin.web.page import ToolCard

    app = {"type": "app", "server": "basic", "tool": "get-time", "uri": "ui://get-time/mcp-app.html", "sha": "0" * 64}
    card = CallRecord(ToolCall("get-time", {}, "call_1"), status="done", result="noon", attachments=[app])
    drawn = to_xml(ToolCard(card))
    assert 'class="app-view"' in drawn and 'data-call-id="call_1"' in drawn and 'data-view="/apps/view"' in drawn
    assert "arguments and result" in drawn and "noon" in drawn  # the text is kept, folded under the app
    card.imported = True
    imported = to_xml(ToolCard(card))
    assert "not drawn: this result came with an imported file" in imported and "data-view" not in imported
    plain = to_xml(ToolCard(CallRecord(ToolCall("get_time", {}, "call_2"), status="done", result="noon")))
    assert "app-view" not in plain and "arguments and result" not in plain
