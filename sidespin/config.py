"""Settings: `config.json` beside the program, overridden by environment variables.

| key (config.json)  | environment           | default                      |
|--------------------|-----------------------|------------------------------|
| backend            | SIDESPIN_BACKEND      | embedded                     |
| model              | SIDESPIN_MODEL        | (backend's default)          |
| second_model       | SIDESPIN_SECOND_MODEL | (none); embedded: a larger model for the route's arguments and unsure decisions, qwen2.5-coder-1.5b or a .gguf |
| ollama_host        | OLLAMA_HOST           | http://127.0.0.1:11434       |
| openai_base_url    | OPENAI_BASE_URL       | http://127.0.0.1:8080/v1     |
| openai_api_key     | OPENAI_API_KEY        | (none)                       |
| anthropic_base_url | ANTHROPIC_BASE_URL    | https://api.anthropic.com    |
| anthropic_api_key  | ANTHROPIC_API_KEY     | (none)                       |
| system_prompt      | SIDESPIN_SYSTEM_PROMPT| (none)                       |
| tool_mode          | SIDESPIN_TOOL_MODE    | auto  (native, route, xml)   |
| max_rounds         | SIDESPIN_MAX_ROUNDS   | 8                            |
| tool_timeout       | SIDESPIN_TOOL_TIMEOUT | 90                           |
| approval           | SIDESPIN_APPROVAL     | ask (web) / auto (terminal)  |
| host, port         | SIDESPIN_HOST/PORT    | 127.0.0.1, 5001              |
| apps_port          | SIDESPIN_APPS_PORT    | 0: any free port; the second origin MCP Apps run on |
| data_dir           | SIDESPIN_DATA_DIR     | data/ beside the program     |
| mcp_config         | SIDESPIN_MCP_CONFIG   | mcp.json beside the program  |
| max_tokens         | SIDESPIN_MAX_TOKENS   | 1024 per answer (0: no limit) |
| summarize_after    | SIDESPIN_SUMMARIZE_AFTER | 0 (off); N: older turns go as their 📝: summary |
| auth_token         | SIDESPIN_TOKEN        | (none; generated on a non-loopback bind); 16 characters or more |
| allowed_hosts      | SIDESPIN_ALLOWED_HOSTS| (loopback names, the bound host; comma-separated) |
| max_body_bytes     | SIDESPIN_MAX_BODY_BYTES | 1048576 per request body |
| max_message_chars  | SIDESPIN_MAX_MESSAGE_CHARS | 100000 per user message |
| max_result_chars   | SIDESPIN_MAX_RESULT_CHARS | 100000 per tool result (cut with a note) |
| turn_seconds       | SIDESPIN_TURN_SECONDS | 300 wall-clock seconds per turn |
| turn_tokens        | SIDESPIN_TURN_TOKENS  | 4096 streamed tokens per turn, all rounds |
| vision             | SIDESPIN_VISION       | false; true: the model sees images tools return (openai, ollama, anthropic) |
| models             | —                     | the configured backend alone; or [{"name", "backend", "vision"?}, …] |
| plugins            | SIDESPIN_PLUGINS      | auto: plugins/ beside the program, its demos offered only while mcp.json lists no server (`sidespin.offer`); true: all offered always; false: none; a folder instead (offered always) |
| shapes             | —                     | every shape on; e.g. {"editor": false} (docs/tool-use.md) |
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from sidespin.errors import ConfigError

__all__ = ["Settings", "ToolMode", "PROJECT_DIR", "LOOPBACK_HOSTS", "BACKENDS", "MIN_TOKEN_CHARS", "check_spec",
           "load_settings"]

# how a model is asked for tool calls: native calls, the constrained route, the <mcp-request> block, or found by a probe
ToolMode = Literal["auto", "native", "route", "xml"]

PROJECT_DIR = Path(__file__).resolve().parent.parent
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
BACKENDS = ("embedded", "openai", "ollama", "anthropic")  # what `backend` may name (sidespin.llm builds it)
_SPEC_KINDS = ("embedded", "ollama", "openai", "anthropic")
MIN_TOKEN_CHARS = 16  # an access token shorter than this is refused (a generated one has 32)
_MIN_TOKEN_KINDS = 8  # nor one of fewer different characters ("aaaaaaaaaaaaaaaa")
_TOOL_OPTIONS = ("approval",)  # what `tools` may say of a tool

_ENV = {
    "backend": "SIDESPIN_BACKEND",
    "model": "SIDESPIN_MODEL",
    "second_model": "SIDESPIN_SECOND_MODEL",
    "ollama_host": "OLLAMA_HOST",
    "openai_base_url": "OPENAI_BASE_URL",
    "openai_api_key": "OPENAI_API_KEY",
    "anthropic_base_url": "ANTHROPIC_BASE_URL",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "system_prompt": "SIDESPIN_SYSTEM_PROMPT",
    "tool_mode": "SIDESPIN_TOOL_MODE",
    "plugins": "SIDESPIN_PLUGINS",
    "max_rounds": "SIDESPIN_MAX_ROUNDS",
    "tool_timeout": "SIDESPIN_TOOL_TIMEOUT",
    "approval": "SIDESPIN_APPROVAL",
    "host": "SIDESPIN_HOST",
    "port": "SIDESPIN_PORT",
    "apps_port": "SIDESPIN_APPS_PORT",
    "data_dir": "SIDESPIN_DATA_DIR",
    "mcp_config": "SIDESPIN_MCP_CONFIG",
    "summarize_after": "SIDESPIN_SUMMARIZE_AFTER",
    "max_tokens": "SIDESPIN_MAX_TOKENS",
    "auth_token": "SIDESPIN_TOKEN",
    "allowed_hosts": "SIDESPIN_ALLOWED_HOSTS",
    "max_body_bytes": "SIDESPIN_MAX_BODY_BYTES",
    "max_message_chars": "SIDESPIN_MAX_MESSAGE_CHARS",
    "max_result_chars": "SIDESPIN_MAX_RESULT_CHARS",
    "turn_seconds": "SIDESPIN_TURN_SECONDS",
    "turn_tokens": "SIDESPIN_TURN_TOKENS",
    "vision": "SIDESPIN_VISION",
}


@dataclass
class Settings:
    backend: str = "embedded"
    model: str = ""
    # the embedded backend's second, larger model, which writes the calls' arguments and decides where the first is
    # unsure (`sidespin.tooluse`)
    second_model: str = ""
    ollama_host: str = "http://127.0.0.1:11434"
    openai_base_url: str = "http://127.0.0.1:8080/v1"
    openai_api_key: str = ""
    anthropic_base_url: str = "https://api.anthropic.com"
    anthropic_api_key: str = ""
    system_prompt: str = ""
    tool_mode: ToolMode = "auto"
    max_rounds: int = 8
    tool_timeout: float = 90.0
    approval: str = ""
    host: str = "127.0.0.1"
    port: int = 5001
    apps_port: int = 0  # the sandbox origin MCP Apps are drawn on (sidespin.web.sandbox); 0: a free port
    data_dir: Path = field(default_factory=lambda: PROJECT_DIR / "data")
    mcp_config: Path = field(default_factory=lambda: PROJECT_DIR / "mcp.json")
    max_tokens: int = 1024  # per answer of a local model: a small model can loop for minutes otherwise
    summarize_after: int = 0  # keep the last N turns whole; older ones with a 📝: summary are sent condensed
    tools: dict[str, Any] = field(default_factory=dict)  # per-tool options, e.g. {"web_search": {"approval": "ask"}}
    auth_token: str = ""  # required on a non-loopback bind; generated and printed when empty
    allowed_hosts: list[str] = field(default_factory=list)  # Host names accepted besides loopback and the bound host
    max_body_bytes: int = 1_048_576  # every request body; larger is refused with 413
    max_message_chars: int = 100_000  # one user message
    max_result_chars: int = 100_000  # one tool result as the model and the page get it; the rest is cut with a note
    turn_seconds: float = 300.0  # wall clock of one turn, every round and tool included
    turn_tokens: int = 4096  # streamed tokens (answer and thoughts) of one turn, every round included
    # the models a conversation may pick, e.g. [{"name": "llama3", "backend": "ollama:llama3.2"}]; the first is
    # the default; empty: the configured backend alone
    models: list[dict[str, Any]] = field(default_factory=list)
    # the configured model sees the images tools return (otherwise their placeholder text); a `models` entry
    # says it with its own "vision": true. The embedded backend has no vision projector and ignores it.
    vision: bool = False
    # the plugins: "auto" loads plugins/ beside the program and offers its demos only while mcp.json lists no
    # server, true offers them always, false loads none; or a folder loaded instead, offered always (`sidespin.offer`)
    plugins: bool | Path | str = "auto"
    # the tool-use rules for kinds of server (`sidespin.tooluse.shapes`), each on unless switched off here
    shapes: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tool_mode not in get_args(ToolMode):
            raise ConfigError(f"tool_mode must be auto, native, route or xml, not {self.tool_mode!r}")
        if self.approval not in ("", "auto", "ask", "deny"):
            raise ConfigError(f"approval must be auto, ask or deny, not {self.approval!r}")
        if isinstance(self.plugins, str) and self.plugins != "auto":
            raise ConfigError(f'plugins must be "auto", true, false or a folder, not {self.plugins!r}')
        if self.max_rounds < 1:
            raise ConfigError("max_rounds must be at least 1")
        for name in ("max_body_bytes", "max_message_chars", "max_result_chars", "turn_seconds", "turn_tokens"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be a positive number, not {getattr(self, name)!r}")
        _check_models(self.models)
        if not all(isinstance(on, bool) for on in self.shapes.values()):
            raise ConfigError(f"shapes: each shape is true or false, not {self.shapes!r}")
        _check_tools(self.tools)
        _check_token(self.auth_token)

    @property
    def public_bind(self) -> bool:
        """Bound to an address other machines can reach: then a secret token is required."""
        return self.host not in LOOPBACK_HOSTS

    @property
    def plugins_folder(self) -> Path | None:
        """The folder the Python plugins are loaded from, None when they are switched off."""
        if self.plugins is True or self.plugins == "auto":
            return PROJECT_DIR / "plugins"
        return Path(self.plugins) if self.plugins else None

    @property
    def conversations_dir(self) -> Path:
        return Path(self.data_dir) / "conversations"

    @property
    def logs_dir(self) -> Path:
        return Path(self.data_dir) / "logs"


def check_spec(spec: str) -> tuple[str, str]:
    """The (backend, model) a MODEL spec names, without building anything; `ConfigError` if it names nothing."""
    spec = spec.strip()
    if not spec:
        return "embedded", ""
    if spec.lower().endswith(".gguf") or spec.startswith("hf:"):
        return "embedded", spec
    kind, colon, name = spec.partition(":")
    if kind.lower() in _SPEC_KINDS:  # `ollama` alone: the backend's default model
        return kind.lower(), name
    raise ConfigError(
        f"model {spec!r} is not understood: use path/to/model.gguf, ollama:NAME, openai:NAME or anthropic:NAME "
        f"(backends: {', '.join(BACKENDS)})"
    )


def _check_models(models: Any) -> None:
    """`models`: a list of {"name": …, "backend": …}, each name unique and each backend a spec `sidespin chat` takes."""
    example = '[{"name": "qwen-0.5b", "backend": "embedded"}, {"name": "llama3", "backend": "ollama:llama3.2"}]'
    if not isinstance(models, list):
        raise ConfigError(f"models must be a list like {example}, not {type(models).__name__}")
    seen: set[str] = set()
    for number, entry in enumerate(models, 1):
        if not isinstance(entry, dict):
            raise ConfigError(f"models: entry {number} must be an object like {{\"name\": \"llama3\", "
                              f"\"backend\": \"ollama:llama3.2\"}}, not {entry!r}")
        unknown = set(entry) - {"name", "backend", "vision"}
        if unknown:
            raise ConfigError(f"models: entry {number} has unknown keys {', '.join(sorted(unknown))} "
                              "(known: name, backend, vision)")
        if not isinstance(entry.get("vision", False), bool):
            raise ConfigError(f"models: entry {number}: vision must be true or false, not {entry['vision']!r}")
        name, spec = entry.get("name"), entry.get("backend")
        if not isinstance(name, str) or not name.strip() or any(c in name for c in "[]\n\r"):
            raise ConfigError(f"models: entry {number} needs a name (text without brackets or line breaks), "
                              f"not {name!r}")
        if name in seen:
            raise ConfigError(f"models: the name {name!r} is used twice; each model needs its own")
        seen.add(name)
        if not isinstance(spec, str):
            raise ConfigError(f"models: {name!r} needs a backend such as \"embedded\", \"ollama:llama3.2\" or "
                              f"\"path/to/model.gguf\", not {spec!r}")
        try:
            check_spec(spec)
        except ConfigError as error:
            raise ConfigError(f"models: {name!r}: {error}") from None


def _check_tools(tools: Any) -> None:
    """`tools`: {NAME: {"approval": "auto" | "ask" | "deny"}}, spelt exactly so (a misspelt policy is refused
    here, not found at every turn)."""
    example = '{"web_search": {"approval": "auto"}}'
    if not isinstance(tools, dict):
        raise ConfigError(f"tools must be an object like {example}, not {type(tools).__name__}")
    for name, options in tools.items():
        if not isinstance(options, dict):
            raise ConfigError(f"tools: {name!r} must be an object like {example}, not {options!r}")
        unknown = set(options) - set(_TOOL_OPTIONS)
        if unknown:
            raise ConfigError(f"tools: {name!r} has unknown keys {', '.join(sorted(map(repr, unknown)))} "
                              f"(known: {', '.join(_TOOL_OPTIONS)})")
        if "approval" in options and options["approval"] not in ("auto", "ask", "deny"):
            raise ConfigError(f"tools: {name!r}: approval must be \"auto\", \"ask\" or \"deny\" (lower case), "
                              f"not {options['approval']!r}")


def _check_token(token: str) -> None:
    """`auth_token`: empty (one is generated when needed), or a secret hard to guess: at least `MIN_TOKEN_CHARS`
    characters, no spaces or control characters, not one character repeated."""
    if token == "":
        return
    if not token.strip():
        raise ConfigError("auth_token (SIDESPIN_TOKEN) is blank: leave it empty to have one generated, or set a "
                          f"secret of at least {MIN_TOKEN_CHARS} characters")
    if any(c.isspace() or not c.isprintable() for c in token):
        raise ConfigError("auth_token (SIDESPIN_TOKEN) holds spaces or control characters; use letters, digits and "
                          "punctuation")
    if len(token) < MIN_TOKEN_CHARS or len(set(token)) < _MIN_TOKEN_KINDS:
        raise ConfigError(f"auth_token (SIDESPIN_TOKEN) is too easy to guess ({len(token)} characters, "
                          f"{len(set(token))} different): use at least {MIN_TOKEN_CHARS} characters, e.g. the "
                          "output of `python -c 'import secrets; print(secrets.token_urlsafe(24))'`, or leave it "
                          "empty to have one generated")


def _plugins(raw: Any, source: str) -> bool | Path | str:
    """`plugins`: "auto", true, false, or a folder that exists (also the words on/off/yes/no/1/0)."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip() if isinstance(raw, str) else None
    if text is None or not text:
        raise ConfigError(f'{source}: plugins must be "auto", true, false or a folder, not {raw!r}')
    if text.lower() == "auto":
        return "auto"
    if text.lower() in ("true", "on", "yes", "1"):
        return True
    if text.lower() in ("false", "off", "no", "0"):
        return False
    folder = Path(text).expanduser()
    if not folder.is_dir():
        raise ConfigError(f'{source}: plugins = {raw!r} is no folder ("auto", true, false, or a folder of plugins)')
    return folder


def _convert(name: str, raw: Any, source: str) -> Any:
    if name == "plugins":
        return _plugins(raw, source)
    kinds = {f.name: f.type for f in fields(Settings)}
    kind = kinds[name]
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "bool":
            return raw if isinstance(raw, bool) else str(raw).strip().lower() in ("1", "true", "yes", "on")
        if kind == "Path":
            return Path(raw).expanduser()
        if kind.startswith("list[dict"):
            if not isinstance(raw, list):
                raise ValueError("should be a list")
            return raw
        if kind.startswith("list"):
            items = raw.split(",") if isinstance(raw, str) else raw
            if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                raise ValueError("should be a list of names")
            return [item.strip() for item in items if item.strip()]
        if kind.startswith("dict"):
            if not isinstance(raw, dict):
                raise ValueError("should be an object")
            return raw
        return str(raw)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: {name} = {raw!r} is not valid ({error})") from None


def load_settings(config_path: Path | None = None, environ: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Read `config.json` (if present), then the environment, then explicit overrides."""
    environ = os.environ if environ is None else environ
    path = Path(config_path) if config_path else PROJECT_DIR / "config.json"
    values: dict[str, Any] = {}
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: should hold a JSON object")
        known = {f.name for f in fields(Settings)}
        for key, raw in data.items():
            if key not in known:
                raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(sorted(known))})")
            values[key] = _convert(key, raw, str(path))
    elif config_path:
        raise ConfigError(f"{path}: no such file")
    for key, variable in _ENV.items():
        if environ.get(variable):
            values[key] = _convert(key, environ[variable], variable)
    for key, raw in overrides.items():
        if raw is not None:
            values[key] = raw
    return Settings(**values)
