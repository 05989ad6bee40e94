"""mcp.json: both shapes, type inference, ${VAR}, and errors that name the file, the server and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidespin.errors import ConfigError
from sidespin.mcp.config import DEFAULT_CALL_TIMEOUT, ServerConfig, load_mcp_config


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_vs_code_shape_reads_every_transport(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "servers": {
                "time": {
                    "type": "stdio",
                    "command": "uvx",
                    "args": ["mcp-server-time"],
                    "env": {"TZ": "UTC"},
                    "cwd": "/tmp",
                },
                "docs": {"type": "http", "url": "http://127.0.0.1:8000/mcp", "headers": {"X-Key": "k"}, "timeout": 5},
                "old": {"type": "sse", "url": "http://127.0.0.1:8001/sse", "disabled": True},
            }
        },
    )
    time_server, docs, old = load_mcp_config(path)
    assert time_server == ServerConfig(
        name="time", transport="stdio", command="uvx", args=["mcp-server-time"], env={"TZ": "UTC"}, cwd="/tmp"
    )
    assert (docs.transport, docs.url, docs.headers, docs.timeout) == (
        "http",
        "http://127.0.0.1:8000/mcp",
        {"X-Key": "k"},
        5.0,
    )
    assert (old.transport, old.disabled) == ("sse", True)
    assert time_server.timeout == DEFAULT_CALL_TIMEOUT == 90.0


def test_claude_desktop_shape_infers_the_transport(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-filesystem"]},
                "web": {"url": "https://example.com/mcp"},
            }
        },
    )
    fs, web = load_mcp_config(path)
    assert (fs.transport, fs.command) == ("stdio", "npx")
    assert (web.transport, web.url) == ("http", "https://example.com/mcp")


def test_variables_are_expanded_in_every_string(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "servers": {
                "a": {"command": "${BIN}/server", "args": ["--key", "${env:KEY}"], "env": {"TOKEN": "${KEY}"}},
                "b": {"url": "http://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
            }
        },
    )
    a, b = load_mcp_config(path, environ={"BIN": "/opt/bin", "KEY": "s3cret", "HOST": "127.0.0.1:9"})
    assert (a.command, a.args, a.env) == ("/opt/bin/server", ["--key", "s3cret"], {"TOKEN": "s3cret"})
    assert (b.url, b.headers) == ("http://127.0.0.1:9/mcp", {"Authorization": "Bearer s3cret"})


def test_a_missing_variable_is_named(tmp_path: Path) -> None:
    path = write(
        tmp_path, {"servers": {"docs": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}
    )
    with pytest.raises(ConfigError) as caught:
        load_mcp_config(path, environ={})
    message = str(caught.value)
    assert str(path) in message and "'docs'" in message and "'headers'" in message and "DOCS_TOKEN" in message


def test_a_missing_file_means_no_servers(tmp_path: Path) -> None:
    assert load_mcp_config(tmp_path / "mcp.json") == []


@pytest.mark.parametrize(
    ("server", "field", "problem"),
    [
        ({"type": "stdio", "command": "x", "args": "--fast"}, "args", "must be a list of strings"),
        ({"type": "stdio", "command": "x", "args": [1, 2]}, "args", "must be a list of strings"),
        ({"type": "stdio"}, "command", "is required"),
        ({"type": "websocket", "url": "ws://x"}, "type", "must be stdio, http or sse"),
        ({"type": "http", "url": "ftp://x"}, "url", "must start with http://"),
        ({"command": "x", "env": {"A": 1}}, "env", "must be an object of strings"),
        ({"command": "x", "timeout": 0}, "timeout", "positive number"),
        ({"command": "x", "disabled": "yes"}, "disabled", "true or false"),
        ({"args": ["x"]}, "command", "or 'url' is needed"),
    ],
)
def test_a_bad_server_is_reported_with_file_server_and_field(
    tmp_path: Path, server: dict, field: str, problem: str
) -> None:
    path = write(tmp_path, {"servers": {"time": server}})
    with pytest.raises(ConfigError) as caught:
        load_mcp_config(path)
    assert str(caught.value).startswith(f"{path}: server 'time': '{field}' ")
    assert problem in str(caught.value)


def test_the_example_message_reads_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"servers": {"time": {"command": "uvx", "args": "mcp-server-time"}}})
    with pytest.raises(ConfigError, match=r"^mcp\.json: server 'time': 'args' must be a list of strings$"):
        load_mcp_config("mcp.json")


def test_a_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"servers": {\n  "a": {"command": "x",}\n}}', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not valid JSON \(line 2"):
        load_mcp_config(path)


def test_a_file_without_servers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'servers' \\(VS Code\\) or 'mcpServers'"):
        load_mcp_config(write(tmp_path, {"server": {}}))
    assert load_mcp_config(write(tmp_path, {})) == []


def test_the_example_file_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    example = Path(__file__).resolve().parents[2] / "mcp.example.json"
    configs = load_mcp_config(example, environ={"HOME": "/home/me"})
    assert {config.name for config in configs} >= {"everything", "time"}


def test_a_disabled_server_may_name_unset_variables(tmp_path: Path) -> None:
    path = write(tmp_path, {"servers": {"docs": {"url": "https://h/mcp", "headers": {"A": "${UNSET}"}, "disabled": True}}})
    (docs,) = load_mcp_config(path, environ={})
    assert docs.disabled and docs.headers == {"A": "${UNSET}"}
