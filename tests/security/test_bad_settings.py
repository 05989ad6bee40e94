"""2 and 3 (round three). A setting that would open a door or break every turn stops sidespin at start, with the
reason: a blank or guessable access token (`SIDESPIN_TOKEN=' '` was the token: `?token=%20` got in), and a misspelt
per-tool approval (`"always"` started, then every turn crashed and `/mcp-tool-executor` answered 500)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sidespin.config import load_settings
from sidespin.errors import ConfigError
from tests.conftest import ROOT, app_for, free_port


@pytest.mark.parametrize("token, says", [
    (" ", "blank"),
    ("\t \n", "blank"),
    ("abc", "too easy to guess (3 characters"),
    ("hunter2", "too easy to guess"),
    ("a" * 40, "too easy to guess (40 characters, 1 different)"),
    ("0101010101010101", "too easy to guess"),
    ("correct horse battery staple", "spaces or control characters"),
    (" correct-horse-battery-staple", "spaces or control characters"),
])
def test_a_blank_or_guessable_token_is_refused_with_the_reason(token, says, data_dir):
    with pytest.raises(ConfigError, match="auth_token \\(SIDESPIN_TOKEN\\)") as refused:
        load_settings(environ={"SIDESPIN_TOKEN": token}, data_dir=data_dir, host="0.0.0.0")
    assert says in str(refused.value)
    with pytest.raises(ConfigError):  # the app is never built, so never serves with it
        app_for(None, data_dir, host="0.0.0.0", auth_token=token)


def test_an_empty_token_still_means_generate_one_and_a_strong_one_is_taken(data_dir):
    assert load_settings(environ={"SIDESPIN_TOKEN": ""}, data_dir=data_dir).auth_token == ""
    strong = "Zq3-v9Lx_T0kenOfTw3nty"
    assert load_settings(environ={"SIDESPIN_TOKEN": strong}, data_dir=data_dir).auth_token == strong


def test_server_py_refuses_to_start_with_a_blank_token_and_says_why(tmp_path):
    env = {**os.environ, "SIDESPIN_HOST": "0.0.0.0", "SIDESPIN_PORT": str(free_port()), "SIDESPIN_TOKEN": " ",
           "SIDESPIN_DATA_DIR": str(tmp_path / "data"), "SIDESPIN_MCP_CONFIG": str(tmp_path / "mcp.json")}
    ran = subprocess.run([sys.executable, "server.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2
    assert "cannot start" in ran.stderr and "SIDESPIN_TOKEN" in ran.stderr and "blank" in ran.stderr
    assert "Traceback" not in ran.stderr


@pytest.mark.parametrize("approval", ["always", "AUTO", "Ask", ["auto"], "", None, 1])
def test_a_misspelt_per_tool_approval_is_refused_at_start_with_the_reason(tmp_path, approval):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"tools": {"web_search": {"approval": approval}}}))
    with pytest.raises(ConfigError, match="tools: 'web_search': approval must be \"auto\", \"ask\" or \"deny\""):
        load_settings(config, environ={})


@pytest.mark.parametrize("tools, says", [
    ({"web_search": "auto"}, "tools: 'web_search' must be an object"),
    ({"web_search": {"aproval": "auto"}}, "unknown keys 'aproval'"),
    (["web_search"], "should be an object"),
])
def test_a_per_tool_option_of_the_wrong_shape_is_refused_too(tmp_path, tools, says):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"tools": tools}))
    with pytest.raises(ConfigError) as refused:
        load_settings(config, environ={})
    assert says in str(refused.value)


def test_the_command_refuses_to_serve_with_a_misspelt_approval_and_says_why(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_dir": str(tmp_path / "data"), "port": free_port(),
                                  "tools": {"web_search": {"approval": "always"}}}))
    ran = subprocess.run([sys.executable, "-m", "sidespin.cli", "--config", str(config), "serve"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2 and "'always'" in ran.stderr and "web_search" in ran.stderr
    assert "Traceback" not in ran.stderr
