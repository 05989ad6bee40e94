"""`mcp.json`: the external MCP servers sidespin connects to.

Two shapes are accepted, VS Code's and Claude Desktop's:

    {"servers":    {"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}}}
    {"mcpServers": {"docs": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

A server without `type` is stdio when it has a `command` and Streamable HTTP when it has a `url`.
Fields: `command`, `args`, `env`, `cwd` (stdio); `url`, `headers` (http, sse); `timeout` (seconds
per tool call, default 90, extended by progress notifications), `disabled` and `trust_read_only` (any
transport; `false`: its tools' `readOnlyHint` does not let them run without asking, as MCP calls hints
untrusted; the Servers panel's switch writes it, `write_trust_read_only`);
`oauth` (http, sse) asks for sign-in and may pre-register a client:
`"oauth": {"client_id": ..., "client_secret": ..., "scopes": [...], "client_metadata_url": ...}`,
every field optional (`"oauth": {}` or `true`: register dynamically). A remote server without
`oauth` still signs in when it answers 401 (see `sidespin.mcp.auth`).
`${VAR}` (or VS Code's `${env:VAR}`) in any string is replaced from the environment; a variable
that is not set is an error naming it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loguru import logger

from sidespin.errors import ConfigError, NotSaved

__all__ = ["OAuthConfig", "ServerConfig", "load_mcp_config", "parse_mcp_config", "write_trust_read_only",
           "DEFAULT_CALL_TIMEOUT"]

DEFAULT_CALL_TIMEOUT = 90.0

Transport = Literal["stdio", "http", "sse"]

_TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_KNOWN_KEYS = {"type", "command", "args", "env", "cwd", "url", "headers", "timeout", "disabled", "oauth",
               "trust_read_only"}
_OAUTH_KEYS = {"client_id", "client_secret", "scopes", "client_metadata_url"}
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class OAuthConfig:
    """A server's `"oauth"` object in `mcp.json`; every field optional (none: register dynamically)."""

    client_id: str | None = None
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()
    client_metadata_url: str | None = None  # an https URL where a client ID metadata document is published


@dataclass(frozen=True)
class ServerConfig:
    """One external MCP server, as `mcp.json` describes it."""

    name: str
    transport: Transport
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_CALL_TIMEOUT
    disabled: bool = False
    oauth: OAuthConfig | None = None  # None: sign in only if the server answers 401
    trust_read_only: bool = True  # its tools' readOnlyHint lets them run without asking


class _Where:
    """Names the file, server and field in every error message."""

    def __init__(self, source: str, server: str, strict: bool = True) -> None:
        self.source = source
        self.server = server
        self.strict = strict  # a disabled server may name variables that are not set

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.source}: server {self.server!r}: {key!r} {problem}")


def _expand(value: str, key: str, where: _Where, environ: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in environ:
            return environ[name]
        if where.strict:
            raise where.error(key, f"uses ${{{name}}} but the environment variable {name} is not set")
        return match.group(0)

    return _VARIABLE.sub(replace, value)


def _string(raw: dict[str, Any], key: str, where: _Where, environ: Mapping[str, str]) -> str | None:
    if key not in raw:
        return None
    value = raw[key]
    if not isinstance(value, str) or not value:
        raise where.error(key, "must be a non-empty string")
    return _expand(value, key, where, environ)


def _string_list(raw: dict[str, Any], key: str, where: _Where, environ: Mapping[str, str]) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise where.error(key, "must be a list of strings")
    return [_expand(item, key, where, environ) for item in value]


def _string_map(raw: dict[str, Any], key: str, where: _Where, environ: Mapping[str, str]) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise where.error(key, "must be an object of strings")
    return {name: _expand(item, key, where, environ) for name, item in value.items()}


def _oauth(raw: dict[str, Any], where: _Where, environ: Mapping[str, str]) -> OAuthConfig | None:
    value = raw.get("oauth")
    if value is None or value is False:
        return None
    if value is True:
        return OAuthConfig()
    if not isinstance(value, dict):
        raise where.error("oauth", "must be true or an object with client_id, client_secret, scopes")
    unknown = sorted(value.keys() - _OAUTH_KEYS)
    if unknown:
        raise where.error("oauth", f"has unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_OAUTH_KEYS))})")
    client_id = _string(value, "client_id", where, environ)
    client_secret = _string(value, "client_secret", where, environ)
    if client_secret is not None and client_id is None:
        raise where.error("oauth", "has a client_secret but no client_id")
    metadata_url = _string(value, "client_metadata_url", where, environ)
    if metadata_url is not None and not metadata_url.startswith("https://"):
        raise where.error("oauth", f"client_metadata_url must be an https:// URL, not {metadata_url!r}")
    scopes = _string_list(value, "scopes", where, environ)
    if any(not scope or " " in scope for scope in scopes):
        raise where.error("oauth", "scopes must be non-empty words without spaces")
    return OAuthConfig(client_id, client_secret, tuple(scopes), metadata_url)


def _server(name: str, raw: Any, source: str, environ: Mapping[str, str]) -> ServerConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: server {name!r} must be an object")
    where = _Where(source, name, strict=raw.get("disabled") is not True)
    for key in raw.keys() - _KNOWN_KEYS:
        logger.warning("MCP_CONFIG_UNKNOWN_KEY {}: server {!r}: ignoring {!r}", source, name, key)
    kind = raw.get("type")
    if kind is None:
        if "command" in raw:
            kind = "stdio"
        elif "url" in raw:
            kind = "http"
        else:
            raise where.error("command", "or 'url' is needed (a stdio command or an HTTP url)")
    if kind not in _TRANSPORT_ALIASES:
        raise where.error("type", f"must be stdio, http or sse, not {kind!r}")
    transport = _TRANSPORT_ALIASES[kind]
    timeout = raw.get("timeout", DEFAULT_CALL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise where.error("timeout", "must be a positive number of seconds")
    disabled = raw.get("disabled", False)
    if not isinstance(disabled, bool):
        raise where.error("disabled", "must be true or false")
    trust_read_only = raw.get("trust_read_only", True)
    if not isinstance(trust_read_only, bool):
        raise where.error("trust_read_only", "must be true or false")
    if transport == "stdio":
        if raw.get("oauth") not in (None, False):
            raise where.error("oauth", "is for http and sse servers (a stdio server is trusted by running it)")
        command = _string(raw, "command", where, environ)
        if command is None:
            raise where.error("command", "is required for a stdio server")
        return ServerConfig(
            name=name,
            transport="stdio",
            command=command,
            args=_string_list(raw, "args", where, environ),
            env=_string_map(raw, "env", where, environ),
            cwd=_string(raw, "cwd", where, environ),
            timeout=float(timeout),
            disabled=disabled,
            trust_read_only=trust_read_only,
        )
    url = _string(raw, "url", where, environ)
    if url is None:
        raise where.error("url", f"is required for an {transport} server")
    if not url.startswith(("http://", "https://")):
        raise where.error("url", f"must start with http:// or https://, not {url!r}")
    return ServerConfig(
        name=name,
        transport=transport,
        url=url,
        headers=_string_map(raw, "headers", where, environ),
        timeout=float(timeout),
        disabled=disabled,
        oauth=_oauth(raw, where, environ),
        trust_read_only=trust_read_only,
    )


def parse_mcp_config(
    data: Any, source: str = "mcp.json", environ: Mapping[str, str] | None = None
) -> list[ServerConfig]:
    """Turn the decoded JSON of an `mcp.json` into server configs (disabled ones included)."""
    environ = os.environ if environ is None else environ
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: should hold a JSON object with a 'servers' or 'mcpServers' object")
    sections = [key for key in ("servers", "mcpServers") if key in data]
    if not sections:
        if data:
            raise ConfigError(f"{source}: expected a 'servers' (VS Code) or 'mcpServers' (Claude Desktop) object")
        return []
    configs: list[ServerConfig] = []
    for section in sections:
        servers = data[section]
        if not isinstance(servers, dict):
            raise ConfigError(f"{source}: {section!r} must be an object of servers by name")
        for name, raw in servers.items():
            if not name:
                raise ConfigError(f"{source}: a server in {section!r} has an empty name")
            if any(config.name == name for config in configs):
                raise ConfigError(f"{source}: server {name!r} is defined twice")
            configs.append(_server(name, raw, source, environ))
    return configs


def load_mcp_config(path: Path | str, environ: Mapping[str, str] | None = None) -> list[ServerConfig]:
    """Read `mcp.json`; a missing file means no servers, a bad one a `ConfigError` naming file, server and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
    return parse_mcp_config(data, str(path), environ)


def write_trust_read_only(path: Path | str, server: str, trusted: bool) -> None:
    """Write a server's `trust_read_only` into `mcp.json` (the key goes when it is true, the default), leaving
    everything else of the file as it was but its layout (two-space indentation). The file is replaced whole or
    not at all; `ConfigError` when it cannot be read or has no such server, `NotSaved` when it cannot be written."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path}: cannot be read to change {server!r} ({error})") from None
    sections = [data.get(key) for key in ("servers", "mcpServers")] if isinstance(data, dict) else []
    entry = next((section[server] for section in sections
                  if isinstance(section, dict) and isinstance(section.get(server), dict)), None)
    if entry is None:
        raise ConfigError(f"{path}: no server {server!r} to change")
    if trusted:
        entry.pop("trust_read_only", None)
    else:
        entry["trust_read_only"] = False
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise NotSaved(str(path), error.strerror or str(error)) from None
    logger.info("MCP_CONFIG_WRITTEN {} {} trust_read_only={}", path, server, trusted)
