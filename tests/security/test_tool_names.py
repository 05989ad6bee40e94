"""6 (round three). A server's tool names are taken only as MCP allows them (`[A-Za-z0-9_.-]{1,128}`), and never look
like a plugin's or another server's tool: a Cyrillic `wеb_search` (its card looked like the plugin's), zero-width
and bidi characters, a line break, HTML and 3,000 characters were all offered to the model. Now they are left out
with a notice that shows each escaped; a name that is, or could be taken for, a plugin's or another server's tool
is offered as `server__name`, and the Servers panel says so. Real stdio servers
(tests/security/servers/hostile_server.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sidespin.mcp.connection import TOOL_NAME
from tests.conftest import in_process
from tests.security.conftest import app_request, json_of

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_server.py"
RENAMED = {"web_search": "hostile__web_search", "Web-Search": "hostile__Web-Search",
           "web_5earch": "hostile__web_5earch", "say.hello": "hostile__say.hello",
           "files__read_text_file": "hostile__files__read_text_file"}


def servers(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "mcp.json").write_text(json.dumps({"servers": {
        "hostile": {"command": sys.executable, "args": [str(HOSTILE), "names"]},
        "files": {"command": sys.executable, "args": [str(HOSTILE), "plain", "read_text_file"]},
    }}))


def test_names_outside_mcp_s_alphabet_are_left_out_with_a_notice(echo_model, data_dir):
    servers(data_dir)
    with in_process(echo_model, data_dir, plugins=True) as client:
        registry = client.app.state.engine.registry
        assert all(TOOL_NAME.fullmatch(name) for name in registry.names() if registry.get(name).source == "mcp:hostile")
        assert not any(("\u0435" in name or "\u200b" in name or "\u202e" in name or "\n" in name or "<" in name)
                       for name in registry.names())
        state = json_of(app_request(client, "GET", "/health")[2])["mcp_servers"]["hostile"]
        refused = next(n for n in state["notices"] if "left out" in n and "MCP allows" in n)
        assert refused.startswith("8 tools left out")
        for shown in ("'w\\u0435b_search'", "'web\\u200bsearch'", "'read\\u202efile'", "'line\\u000abreak'"):
            assert shown in refused
        page = app_request(client, "GET", _location(client))[2].decode()
        assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page  # shown, never drawn
        assert "w\u0435b_search" not in page and "web\u200bsearch" not in page


def test_a_name_like_a_plugin_s_or_another_server_s_is_offered_under_its_server_s_name(echo_model, data_dir):
    servers(data_dir)
    with in_process(echo_model, data_dir, plugins=True) as client:
        registry = client.app.state.engine.registry
        assert registry.get("web_search").source == "plugin:web_search"
        assert registry.get("say_hello").source == "plugin:say_hello"
        assert registry.get("read_text_file").source == "mcp:files"
        for listed, offered in RENAMED.items():
            assert registry.get(offered).source == "mcp:hostile", offered
            assert listed not in registry or registry.get(listed).source != "mcp:hostile", listed
        assert registry.get("lookup").source == registry.get("ok.tool-1").source == "mcp:hostile"
        notices = json_of(app_request(client, "GET", "/health")[2])["mcp_servers"]["hostile"]["notices"]
        assert "web_5earch is offered as hostile__web_5earch: its name could be taken for web_search of " \
               "plugin:web_search" in notices
        assert "files__read_text_file is offered as hostile__files__read_text_file: its name could be taken for a " \
               "tool of files" in notices
        cid = _location(client).rsplit("/", 1)[1]
        status, _, body = app_request(client, "GET", f"/servers/panel?cid={cid}")
        assert status == 200 and b"offered as hostile__web_search" in body
        # the call a model makes by the plugin's name reaches the plugin, never the server's tool
        status, _, body = app_request(client, "POST", "/mcp-tool-executor", b'{"tool": "say_hello", "params": '
                                      b'{"name": "Ada"}}', {"Content-Type": "application/json"})
        assert status == 200 and json_of(body)["result"] == "Hello, Ada!"


def _location(client) -> str:
    _, headers, _ = app_request(client, "GET", "/")
    return headers["location"]
