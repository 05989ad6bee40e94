"""Language model backends: each streams `Delta`s from a list of chat messages.

Messages are OpenAI-shaped dicts (`role`, `content`, `tool_calls`, `tool_call_id`);
each backend converts them to its own wire format.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, AsyncIterator

from sidespin.errors import BackendError, ConfigError
from sidespin.tools import Tool, ToolCall

if TYPE_CHECKING:
    from sidespin.config import Settings

__all__ = ["Delta", "Grammar", "Backend", "BACKENDS", "make_backend", "backend_from_spec"]

BACKENDS = ("embedded", "openai", "ollama", "anthropic", "scripted")


@dataclass
class Delta:
    """A piece of a streamed answer: text, and native tool calls once each is complete."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""
    finish_reason: str | None = None


@dataclass
class Grammar:
    """A GBNF grammar; with `trigger` set it applies only once the model writes that text."""

    text: str
    trigger: str | None = None


class Backend:
    """Base of all backends. Subclasses implement `stream`; `start`/`aclose` manage resources."""

    name: str = "base"
    model: str = ""
    supports_tools: bool = False
    supports_grammar: bool = False
    supports_routing: bool = False  # llama.cpp's own /completion: the constrained route (see `router`)

    async def start(self) -> None:
        """Open connections or load the model; raise `BackendError` with a readable reason."""

    async def aclose(self) -> None:
        """Release everything `start` opened."""

    async def __aenter__(self) -> "Backend":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        raise NotImplementedError

    async def router(self, tools: list[Tool]) -> Any:
        """A `sidespin.route.Router` over this model, for backends with `supports_routing`."""
        raise BackendError(f"the {self.name} backend has no constrained route; use tool_mode native or xml")

    def not_started(self) -> BackendError:
        """The error for a backend used before `start()` (or after `aclose()`)."""
        return BackendError(f"the {self.name} backend is not started: use `async with backend:` or call start()")

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": self.model, "native_tools": self.supports_tools}


def make_backend(settings: "Settings") -> Backend:
    """The backend `settings.backend` names, configured from the settings (not started yet).

    `settings.model` is the model name for openai, ollama and anthropic, and a GGUF
    path for embedded (empty: the default Qwen2.5-Coder-0.5B-Instruct, see `sidespin.models`).
    """
    # Imported here: the backends import this module for Delta, Grammar and Backend.
    kind = (settings.backend or "embedded").strip().lower()
    if kind == "embedded":
        from sidespin.llm.embedded import EmbeddedBackend

        return EmbeddedBackend(model_path=settings.model or None, options=_limit(settings))
    if kind == "openai":
        from sidespin.llm.openai import OpenAIBackend

        return OpenAIBackend(
            settings.openai_base_url, settings.model, settings.openai_api_key or None, options=_limit(settings)
        )
    if kind == "ollama":
        from sidespin.llm.ollama import OllamaBackend

        limit = {"num_predict": settings.max_tokens} if settings.max_tokens > 0 else {}
        return OllamaBackend(settings.ollama_host, settings.model, options=limit)
    if kind == "anthropic":
        from sidespin.llm.anthropic import AnthropicBackend

        # Anthropic requires a max_tokens; "no limit" is its own large default
        limit = {"max_tokens": settings.max_tokens} if settings.max_tokens > 0 else {}
        return AnthropicBackend(settings.anthropic_base_url, settings.model, settings.anthropic_api_key, **limit)
    if kind == "scripted":
        from sidespin.llm.scripted import ScriptedBackend

        return ScriptedBackend([])  # an empty script: only tests build useful ones
    raise ConfigError(f"unknown backend {settings.backend!r} (valid: {', '.join(BACKENDS)})")


def _limit(settings: "Settings") -> dict[str, Any]:
    """`max_tokens` for OpenAI-shaped requests (0: no limit); Ollama's is `num_predict`."""
    return {"max_tokens": settings.max_tokens} if settings.max_tokens > 0 else {}


def backend_from_spec(spec: str, settings: "Settings") -> Backend:
    """The backend a command-line MODEL names: `path/to/x.gguf`, `hf:owner/repo/x.gguf`, `ollama:NAME`, `openai:NAME`,
    `anthropic:NAME`, `embedded[:PATH]`, or "" for the bundled embedded model.

    Hosts, URLs and keys still come from `settings`.
    """
    spec = spec.strip()
    if not spec:
        return make_backend(replace(settings, backend="embedded", model=""))
    if spec.lower().endswith(".gguf") or spec.startswith("hf:"):
        return make_backend(replace(settings, backend="embedded", model=spec))
    kind, colon, name = spec.partition(":")
    if colon and kind.lower() in ("embedded", "ollama", "openai", "anthropic"):
        return make_backend(replace(settings, backend=kind.lower(), model=name))
    raise ConfigError(
        f"model {spec!r} is not understood: use path/to/model.gguf, ollama:NAME, openai:NAME or anthropic:NAME "
        f"(backends: {', '.join(BACKENDS)})"
    )
