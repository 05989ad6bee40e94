"""8–10. The access token of a public bind: the one in the URL wins over an old cookie, its redirect stays on this
server, and it is never written to a log (uvicorn's access log on stdout, the server's log file)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, in_process, serve_app
from tests.security.conftest import app_request, json_of, raw_request

TOKEN = "correct-horse-battery-staple"


def cookie_name(port: int) -> str:
    return f"sidespin_token_{port}"


def test_a_correct_token_in_the_url_wins_over_a_stale_cookie_and_replaces_it(echo_model, data_dir):
    with in_process(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as client:
        port = client.base_url.port
        stale = {"Cookie": f"{cookie_name(port)}=the-token-of-last-week"}
        assert app_request(client, "GET", "/health", headers=stale)[0] == 401
        status, headers, _ = app_request(client, "GET", f"/?token={TOKEN}", headers=stale)
        assert status == 303 and headers["location"] == "/"
        fresh = headers["set-cookie"].split(";")[0]
        assert fresh == f"{cookie_name(port)}={TOKEN}"
        status, _, body = app_request(client, "GET", "/health", headers={"Cookie": fresh})
        assert status == 200 and json_of(body)["status"] == "ok"
        # a wrong token in the URL is not rescued by a good cookie: what the URL says is what is checked
        assert app_request(client, "GET", "/health?token=wrong", headers={"Cookie": fresh})[0] == 401


@pytest.mark.parametrize("path, location", [
    ("//evil.example/", "/evil.example/"),
    ("//evil.example/c/x?a=1", "/evil.example/c/x?a=1"),
    ("/\\evil.example/", "/evil.example/"),
    ("/%2F%2Fevil.example/", "/evil.example/"),
    ("/%5Cevil.example", "/evil.example"),
    ("/%09/evil.example", "/%09/evil.example"),  # a browser drops a raw tab: "/\t/x" would become "//x"
    ("/c/abc", "/c/abc"),
])
def test_the_redirect_that_drops_the_token_stays_on_this_server(echo_model, data_dir, path, location):
    # these paths must reach the server as written (httpx would read "//evil.example/" as a host): a real server
    with serve_app(echo_model, data_dir, host="0.0.0.0", auth_token=TOKEN) as base:
        joiner = "&" if "?" in path else "?"
        status, headers, _ = raw_request(base, "GET", f"{path}{joiner}token={TOKEN}")
        assert status == 303
        assert headers["location"] == location
        assert headers["location"].startswith("/") and not headers["location"].startswith(("//", "/\\"))


def test_the_token_is_never_written_to_a_log(tmp_path):
    """The server started as `python server.py` starts it (tests/scripted_server.py): uvicorn's access log (stdout)
    and the log file see the visits."""
    port = free_port()
    data = tmp_path / "data"
    data.mkdir()
    env = {**os.environ, "SIDESPIN_HOST": "0.0.0.0", "SIDESPIN_PORT": str(port), "SIDESPIN_DATA_DIR": str(data),
           "SIDESPIN_MCP_CONFIG": str(data / "mcp.json"), "SIDESPIN_TOKEN": TOKEN,
           "SIDESPIN_LOG_LEVEL": "DEBUG"}
    output = tmp_path / "output.log"
    with output.open("w") as sink:
        process = subprocess.Popen([sys.executable, "-m", "tests.scripted_server"], cwd=ROOT, env=env, stdout=sink,
                                   stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving_with_token(process, base, output)
        for path in (f"/?token={TOKEN}", f"/health?token={TOKEN}&x=1", f"//evil.example/?token={TOKEN}",
                     f"/nope?token={TOKEN}"):
            raw_request(base, "GET", path)
        raw_request(base, "POST", f"/new?token={TOKEN}", b"", {"Content-Type": "application/x-www-form-urlencoded"})
    finally:
        process.terminate()
        process.wait(timeout=20)
    printed = output.read_text()
    assert "GET /?token=[hidden]" in printed and "GET /health?token=[hidden]&x=1" in printed  # logged ...
    assert TOKEN not in printed  # ... without the token
    logged = "\n".join(path.read_text() for path in data.rglob("*.log"))
    assert "AUTH_COOKIE_SET" in logged and TOKEN not in logged


def wait_until_serving_with_token(process: subprocess.Popen, base: str, output: Path) -> None:
    """`wait_until_serving`, with the token /health now needs."""
    request = urllib.request.Request(base + "/health", headers={"Authorization": f"Bearer {TOKEN}"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("the server exited:\n" + output.read_text()[-4000:])
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)  # polling a starting process's socket: there is no event to wait on from outside
    raise AssertionError("the server did not answer /health in time:\n" + output.read_text()[-4000:])
