"""Language model backends: the factory that builds the one the settings name.

The base types (`Backend`, `Delta`, `Grammar`) live in `sidespin.llm.base` and are
re-exported here; backends import them from `sidespin.llm.base`, so this module can
import the backends (lazily, each only when chosen) without a cycle. What a backend
name or a MODEL spec may say (`BACKENDS`, `check_spec`) is the settings' to check:
it lives in `sidespin.config` and is re-exported here.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sidespin.config import BACKENDS, Settings, check_spec
from sidespin.errors import ConfigError
from sidespin.llm.base import Backend, Delta, Grammar, TokenUsage

__all__ = ["TokenUsage", "Delta", "Grammar", "Backend", "BACKENDS", "make_backend", "backend_from_spec", "check_spec"]


def make_backend(settings: "Settings") -> Backend:
    """The backend `settings.backend` names, configured from the settings (not started yet).

    `settings.model` is the model name for openai, ollama and anthropic, and a GGUF
    path for embedded (empty: the default Qwen2.5-Coder-0.5B-Instruct, see `sidespin.models`).
    `settings.vision` says the model sees images (not the embedded one: it has no vision projector).
    """
    backend = _build(settings)
    if backend.name in ("openai", "ollama", "anthropic"):
        backend.supports_images = settings.vision
    return backend


def _build(settings: "Settings") -> Backend:
    # Imported here: each backend loads only when chosen (embedded pulls in llama.cpp's server).
    kind = (settings.backend or "embedded").strip().lower()
    if kind == "embedded":
        from sidespin.llm.embedded import EmbeddedBackend

        return EmbeddedBackend(model_path=settings.model or None, options=_limit(settings),
                               second_model=settings.second_model or None, shapes=settings.shapes)
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
    raise ConfigError(f"unknown backend {settings.backend!r} (valid: {', '.join(BACKENDS)})")


def _limit(settings: "Settings") -> dict[str, Any]:
    """`max_tokens` for OpenAI-shaped requests (0: no limit); Ollama's is `num_predict`."""
    return {"max_tokens": settings.max_tokens} if settings.max_tokens > 0 else {}


def backend_from_spec(spec: str, settings: "Settings") -> Backend:
    """The backend a command-line MODEL names: `path/to/x.gguf`, `hf:owner/repo/x.gguf`, `ollama[:NAME]`,
    `openai[:NAME]`, `anthropic[:NAME]`, `embedded[:PATH]`, or "" for the bundled embedded model.

    Hosts, URLs and keys still come from `settings`.
    """
    kind, model = check_spec(spec)
    return make_backend(replace(settings, backend=kind, model=model))
