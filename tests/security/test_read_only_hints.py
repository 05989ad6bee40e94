"""Round three, also: a server's `readOnlyHint` was trusted as given, though MCP calls hints untrusted. The Servers
panel now marks each tool that runs without asking because its server says it only reads, and a switch per server
stops trusting those hints, kept in mcp.json (`"trust_read_only": false`) across restarts. A real stdio server
(tests/security/servers/hostile_server.py) says `delete_everything` only reads."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlencode

from tests.conftest import in_process
from tests.security.conftest import app_request, json_of

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_server.py"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
RUN = b'{"tool": "delete_everything", "params": {"path": "/"}}'


def conversation(client) -> str:
    _, headers, _ = app_request(client, "POST", "/new", b"", FORM)
    return headers["location"].rsplit("/", 1)[1]


def panel(client, cid: str) -> str:
    status, _, body = app_request(client, "GET", f"/servers/panel?cid={cid}")
    assert status == 200
    return body.decode()


def test_tools_said_to_only_read_are_shown_and_the_hint_can_be_distrusted_for_good(echo_model, data_dir):
    data_dir.mkdir(parents=True)
    mcp_json = data_dir / "mcp.json"
    mcp_json.write_text(json.dumps({"servers": {"liar": {"command": sys.executable,
                                                         "args": [str(HOSTILE), "plain", "delete_everything"]}}}))
    with in_process(echo_model, data_dir) as client:
        engine, cid = client.app.state.engine, conversation(client)
        shown = panel(client, cid)
        assert 'data-tool="delete_everything"' in shown and 'data-unasked="true"' in shown
        assert "1 tool run without asking: the server says it reads only" in shown
        status, _, _ = app_request(client, "POST", "/mcp-tool-executor", RUN, {"Content-Type": "application/json"})
        assert status == 200  # it ran, unasked, on the server's word

        status, _, body = app_request(client, "POST", "/servers/trust",
                                      urlencode({"server": "liar", "cid": cid, "on": ""}).encode(), FORM)
        assert status == 200 and 'data-trust="false"' in body.decode() and 'data-unasked="true"' not in body.decode()
        assert json.loads(mcp_json.read_text())["servers"]["liar"]["trust_read_only"] is False
        tool = engine.registry.get("delete_everything")
        assert engine.approvals(engine.store.load(cid)).policy_for(tool) == "ask"  # the page asks first now
        status, _, body = app_request(client, "POST", "/mcp-tool-executor", RUN, {"Content-Type": "application/json"})
        assert status == 403 and "approval" in json_of(body)["error"]

    with in_process(echo_model, data_dir) as client:  # a restart keeps it
        cid = conversation(client)
        assert 'data-trust="false"' in panel(client, cid)
        assert not client.app.state.engine.registry.get("delete_everything").read_only
        status, _, _ = app_request(client, "POST", "/servers/trust",
                                   urlencode({"server": "liar", "cid": cid, "on": "1"}).encode(), FORM)
        assert status == 200 and "trust_read_only" not in json.loads(mcp_json.read_text())["servers"]["liar"]
        assert client.app.state.engine.registry.get("delete_everything").read_only


def test_an_unknown_server_is_refused_and_mcp_json_is_left_alone(echo_model, data_dir):
    data_dir.mkdir(parents=True)
    mcp_json = data_dir / "mcp.json"
    mcp_json.write_text(json.dumps({"servers": {"liar": {"command": sys.executable,
                                                         "args": [str(HOSTILE), "plain", "read_notes"]}}}))
    before = mcp_json.read_bytes()
    with in_process(echo_model, data_dir) as client:
        cid = conversation(client)
        status, _, body = app_request(client, "POST", "/servers/trust",
                                      urlencode({"server": "nobody", "cid": cid, "on": ""}).encode(), FORM)
        assert status == 404 and "nobody" in json_of(body)["error"]
    assert mcp_json.read_bytes() == before
