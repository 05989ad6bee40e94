"""Choosing a backend from settings or from a command-line MODEL spec."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sidespin.config import Settings, load_settings
from sidespin.errors import ConfigError
from sidespin.llm import backend_from_spec, make_backend
from sidespin.llm.anthropic import AnthropicBackend
from sidespin.llm.embedded import EmbeddedBackend
from sidespin.llm.ollama import OllamaBackend
from sidespin.llm.openai import OpenAIBackend


def test_default_settings_give_the_embedded_model() -> None:
    backend = make_backend(Settings())
    assert isinstance(backend, EmbeddedBackend) and backend.model_path is None
    assert backend.supports_grammar and not backend.supports_tools


def test_the_embedded_model_takes_its_second_model_from_settings_and_refuses_one_that_names_nothing(tmp_path) -> None:
    (tmp_path / "config.json").write_text("{}")
    settings = load_settings(tmp_path / "config.json", environ={"SIDESPIN_SECOND_MODEL": "qwen2.5-coder-1.5b"})
    backend = make_backend(settings)
    assert isinstance(backend, EmbeddedBackend) and backend.second_model == "qwen2.5-coder-1.5b"
    assert backend.describe()["second_model"] == "qwen2.5-coder-1.5b"
    assert backend.describe()["second_model_state"] == "not started"
    assert "second_model" not in make_backend(Settings()).describe()
    with pytest.raises(ConfigError, match="second_model 'bigger' is neither"):
        make_backend(Settings(second_model="bigger"))


def test_each_backend_takes_its_host_model_and_key_from_settings() -> None:
    settings = Settings(
        model="m",
        ollama_host="http://ollama:11434",
        openai_base_url="http://llm:8080/v1",
        openai_api_key="sk-o",
        anthropic_base_url="http://claude",
        anthropic_api_key="sk-a",
    )
    ollama = make_backend(replace(settings, backend="ollama"))
    openai = make_backend(replace(settings, backend="openai"))
    anthropic = make_backend(replace(settings, backend="anthropic"))
    assert isinstance(ollama, OllamaBackend) and (ollama.host, ollama.model) == ("http://ollama:11434", "m")
    assert isinstance(openai, OpenAIBackend) and (openai.base_url, openai.model, openai.api_key) == ("http://llm:8080/v1", "m", "sk-o")
    assert isinstance(anthropic, AnthropicBackend) and (anthropic.base_url, anthropic.model, anthropic.api_key) == ("http://claude", "m", "sk-a")


def test_embedded_model_setting_is_a_gguf_path() -> None:
    backend = make_backend(Settings(backend="embedded", model="/models/qwen.gguf"))
    assert isinstance(backend, EmbeddedBackend) and str(backend.model_path) == "/models/qwen.gguf"


def test_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(ConfigError, match="unknown backend 'llamafile' .*embedded, openai, ollama, anthropic\\)"):
        make_backend(Settings(backend="llamafile"))


def test_the_scripted_test_model_is_no_backend_a_setting_can_name() -> None:
    """The tests' fake model is handed to what they build; SIDESPIN_BACKEND=scripted starts nothing."""
    with pytest.raises(ConfigError, match="unknown backend 'scripted' \\(valid: embedded, openai, ollama, anthropic\\)"):
        make_backend(Settings(backend="scripted"))


@pytest.mark.parametrize(
    ("spec", "kind", "model"),
    [
        ("", EmbeddedBackend, "qwen2.5-coder-0.5b-instruct-q4_k_m"),
        ("models/tiny.gguf", EmbeddedBackend, "tiny"),
        ("ollama:llama3.2:3b", OllamaBackend, "llama3.2:3b"),
        ("openai:gpt-4o-mini", OpenAIBackend, "gpt-4o-mini"),
        ("anthropic:claude-sonnet-4-5", AnthropicBackend, "claude-sonnet-4-5"),
    ],
)
def test_model_specs_name_backend_and_model(spec: str, kind: type, model: str) -> None:
    backend = backend_from_spec(spec, Settings(backend="ollama"))
    assert isinstance(backend, kind) and backend.model == model


def test_a_spec_that_names_nothing_known_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ollama:NAME"):
        backend_from_spec("llama3.2", Settings())
