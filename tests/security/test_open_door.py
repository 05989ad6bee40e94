"""2. Not an open door: a non-loopback bind needs the access token on every route; the Host check stays on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request

from tests.conftest import ROOT, free_port, in_process
from tests.security.conftest import app_request, json_of, raw_request

TOKEN = "correct-horse-battery-staple"
ROUTES = [("GET", "/"), ("GET", "/health"), ("GET", "/tools"), ("GET", "/static/app.css"), ("GET", "/logs"),
          ("POST", "/mcp"), ("POST", "/mcp-tool-executor"), ("POST", "/new"), ("GET", "/stream?tid=t0")]


def test_on_a_public_bind_every_route_answers_401_without_the_token(echo_model, data_dir):
    with in_process(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as client:
        for method, path in ROUTES:
            status, headers, body = app_request(client, method, path, b"" if method == "POST" else None)
            assert status == 401, f"{method} {path} answered {status}"
            assert "token" in json_of(body)["error"] and headers["www-authenticate"] == "Bearer"
        status, _, _ = app_request(client, "GET", "/health", headers={"Authorization": "Bearer wrong-token"})
        assert status == 401
        status, _, _ = app_request(client, "GET", "/health", headers={"Cookie": "sidespin_token_1=" + TOKEN})
        assert status == 401  # another server's cookie name


def test_the_token_opens_every_route_by_header_and_the_first_visit_sets_a_cookie(echo_model, data_dir):
    with in_process(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as client:
        status, _, body = app_request(client, "GET", "/health", headers={"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and json_of(body)["status"] == "ok"
        status, headers, _ = app_request(client, "GET", f"/?token={TOKEN}")
        assert status == 303 and headers["location"] == "/"  # the token leaves the address bar
        cookie = headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        pair = cookie.split(";")[0]
        status, _, body = app_request(client, "GET", "/tools", headers={"Cookie": pair})
        assert status == 200 and json_of(body)["count"] >= 1
        status, _, body = app_request(
            client, "POST", "/mcp-tool-executor", b'{"tool": "say_hello", "params": {"name": "Ada"}}',
            {"Cookie": pair, "Content-Type": "application/json"})
        assert status == 200 and json_of(body)["result"] == "Hello, Ada!"


def test_a_rebinding_page_with_its_own_name_is_refused_even_with_origin_equal_to_host(echo_model, data_dir):
    with in_process(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as client:
        port = client.base_url.port
        hostile = {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}",
                   "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
        status, _, body = app_request(client, "POST", "/mcp-tool-executor",
                                      b'{"tool": "say_hello", "params": {"name": "x"}}', hostile)
        assert status == 403 and "attacker.example" in json_of(body)["error"]
        status, _, _ = app_request(client, "POST", "/approve", b"cid=x&call_id=y&choice=yA",
                                   {**hostile, "Content-Type": "application/x-www-form-urlencoded"})
        assert status == 403


def test_allowed_hosts_names_the_server_explicitly(echo_model, data_dir):
    with in_process(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN, allowed_hosts=["chat.home.arpa"]) as client:
        port = client.base_url.port
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert app_request(client, "GET", "/health", headers={**auth, "Host": f"chat.home.arpa:{port}"})[0] == 200
        assert app_request(client, "GET", "/health", headers={**auth, "Host": f"other.home.arpa:{port}"})[0] == 403


def test_loopback_stays_token_free_and_still_refuses_foreign_hosts(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        assert app_request(client, "GET", "/health")[0] == 200
        assert app_request(client, "GET", "/health", headers={"Host": "attacker.example"})[0] == 403


def test_a_public_bind_without_a_configured_token_prints_one_and_requires_it(tmp_path):
    """The server started as `python server.py` starts it (tests/scripted_server.py) on 0.0.0.0: a generated token,
    printed as a URL, as Jupyter does."""
    port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "SIDESPIN_HOST": "0.0.0.0", "SIDESPIN_PORT": str(port), "SIDESPIN_DATA_DIR": str(data),
           "SIDESPIN_MCP_CONFIG": str(data / "mcp.json")}
    env.pop("SIDESPIN_TOKEN", None)
    log = tmp_path / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-m", "tests.scripted_server"], cwd=ROOT, env=env, stdout=output,
                                   stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        match = None
        while match is None and time.monotonic() < deadline and process.poll() is None:
            match = re.search(r"http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]+)", log.read_text())
            time.sleep(0.1)
        assert match, "no access URL was printed:\n" + log.read_text()[-3000:]
        base = f"http://127.0.0.1:{port}"
        status = None
        while status is None and time.monotonic() < deadline:  # printed while starting: wait for it to listen
            try:
                status = raw_request(base, "GET", "/health")[0]
            except ConnectionRefusedError:
                time.sleep(0.1)
        assert status == 401
        token = match.group(1)
        request = urllib.request.Request(base + "/health", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        assert "PUBLIC_BIND" in log.read_text() and token not in log.read_text().split("?token=")[0]
    finally:
        process.terminate()
        process.wait(timeout=20)
