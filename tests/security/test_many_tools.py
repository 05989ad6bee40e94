"""5 (round three). A server listing 20,000 tools froze the app: the chat page and the Servers panel took about 15 s
to draw, on the event loop, and /health waited 14 s. Now one server offers at most `MAX_SERVER_TOOLS`, with a notice
of what was left out (the Servers panel, /health, the log), and its listing is read off the event loop: /health
answers while the listing is on its way. A real stdio server (tests/security/servers/hostile_server.py) lists them."""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

from sidespin.mcp.connection import MAX_SERVER_TOOLS
from tests.conftest import serve_app

HOSTILE = Path(__file__).resolve().parent / "servers" / "hostile_server.py"
LISTED = 20_000


def get(base: str, path: str) -> tuple[int, str]:
    with urllib.request.urlopen(base + path, timeout=60) as response:
        return response.status, response.read().decode()


def post(base: str, path: str, fields: dict[str, str]) -> int:
    data = "&".join(f"{key}={value}" for key, value in fields.items()).encode()
    request = urllib.request.Request(base + path, data=data, method="POST",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status


def many(base: str) -> dict[str, Any]:
    return json.loads(get(base, "/health")[1])["mcp_servers"]["many"]


def test_a_server_listing_20000_tools_offers_the_first_ones_and_says_what_was_left_out(echo_model, data_dir, tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(120)
    flag = tmp_path / "pause"
    env = {"PAUSE_PORT": str(listener.getsockname()[1]), "PAUSE_FLAG": str(flag)}
    data_dir.mkdir(parents=True)
    (data_dir / "mcp.json").write_text(json.dumps(
        {"servers": {"many": {"command": sys.executable, "args": [str(HOSTILE), "many", str(LISTED)], "env": env}}}))
    with serve_app(echo_model, data_dir) as base:
        state = many(base)
        assert state["status"] == "ready" and state["tools"] == MAX_SERVER_TOOLS
        (notice,) = state["notices"]
        assert f"{LISTED:,} tools" in notice and f"first {MAX_SERVER_TOOLS}" in notice
        assert f"{LISTED - MAX_SERVER_TOOLS:,} left out" in notice
        offered = [t for t in json.loads(get(base, "/tools")[1])["tools"] if t["source"] == "mcp:many"]
        assert len(offered) == MAX_SERVER_TOOLS and offered[-1]["name"] == f"tool_{MAX_SERVER_TOOLS - 1}"

        status, page = get(base, "/")  # the chat page, its Servers panel open on the card
        assert status == 200
        card = page[page.index('data-server="many"'):]
        card = card[:card.index('data-server="plugins"')]
        assert card.count('data-tool=') == MAX_SERVER_TOOLS and f"{LISTED:,} tools" in card
        cid = re.search(r'value="([^"]+)" name="cid"', page)[1]

        # while the server restarts and its listing is half sent, /health answers
        flag.touch()
        restarted: list[int] = []
        restarting = threading.Thread(target=lambda: restarted.append(post(base, "/servers/restart",
                                                                           {"server": "many", "cid": cid})))
        restarting.start()
        connection, _ = listener.accept()
        with connection:
            assert connection.makefile().readline().strip() == "half"
            answered = many(base)  # the listing is on its way
            assert answered["status"] in ("restarting", "starting")
            connection.sendall(b"go\n")
        restarting.join(timeout=120)
        assert restarted == [200]
        state = many(base)
        assert state["status"] == "ready" and state["tools"] == MAX_SERVER_TOOLS and state["notices"] == [notice]
    listener.close()
    logged = (data_dir / "logs" / "server.log").read_text()
    assert f"MCP_TOOLS_LEFT_OUT many {LISTED - MAX_SERVER_TOOLS}" in logged
