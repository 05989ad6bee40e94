"""A model per conversation: `models` in config.json, the conversation's choice in its transcript, each model
started the first time a turn needs it (the turn reporting the load), kept, and closed with the engine."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from sidespin.backends import _entry_backend, default_backend
from sidespin.config import Settings, load_settings
from sidespin.engine import Engine
from sidespin.errors import BackendError, ConfigError
from sidespin.llm import make_backend
from sidespin.events import ErrorNotice, ModelLoading, TextDelta, TurnDone
from sidespin.record import TurnRecord
from sidespin.web.live import TurnBoard
from tests.scripted import ScriptedBackend


class SlowStart(ScriptedBackend):
    """A scripted model that takes a while to load, counts its starts and closes, and may fail to start."""

    def __init__(self, turns, *, seconds: float = 0.0, fail: str | None = None) -> None:
        super().__init__(turns)
        self.seconds, self.fail = seconds, fail
        self.starts = self.closes = 0

    async def start(self) -> None:
        self.starts += 1
        await asyncio.sleep(self.seconds)
        if self.fail:
            raise BackendError(self.fail)

    async def aclose(self) -> None:
        self.closes += 1


def settings_in(tmp_path: Path, **overrides):
    return load_settings(data_dir=tmp_path, mcp_config=tmp_path / "none.json", tool_mode="xml", **overrides)


def config_file(tmp_path: Path, models: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"models": models}), encoding="utf-8")
    return path


def answer(events) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def pick(engine: Engine, cid: str, name: str) -> None:
    transcript = engine.store.load(cid)
    transcript.set_meta("model", name)
    engine.store.save(cid, transcript)


# ---------------------------------------------------------------- config.json

def test_models_in_config_are_read_in_order(tmp_path: Path) -> None:
    models = [{"name": "qwen-0.5b", "backend": "embedded"}, {"name": "llama3", "backend": "ollama:llama3.2"}]
    assert load_settings(config_file(tmp_path, models), environ={}).models == models


@pytest.mark.parametrize("models, says", [
    ({"name": "x"}, "config.json: models = {'name': 'x'} is not valid (should be a list)"),
    (["ollama:llama3.2"], "entry 1 must be an object"),
    ([{"backend": "embedded"}], "entry 1 needs a name"),
    ([{"name": "a[1]", "backend": "embedded"}], "entry 1 needs a name"),
    ([{"name": "a", "backend": "embedded"}, {"name": "a", "backend": "ollama"}], "'a' is used twice"),
    ([{"name": "a"}], "'a' needs a backend"),
    ([{"name": "a", "backend": "llama-pro:7b"}], "models: 'a': model 'llama-pro:7b' is not understood"),
    ([{"name": "a", "backend": "embedded", "temperature": 0}], "unknown keys temperature"),
    ([{"name": "a", "backend": "ollama", "vision": "yes"}], "entry 1: vision must be true or false, not 'yes'"),
])
def test_a_bad_models_list_is_a_config_error_that_says_what_is_wrong(tmp_path: Path, models, says) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_settings(config_file(tmp_path, models), environ={})


async def test_without_a_backend_given_the_first_of_models_is_the_default_under_its_name(tmp_path: Path) -> None:
    models = [{"name": "tiny", "backend": "ollama:tinyllama"}, {"name": "big", "backend": "anthropic"}]
    async with Engine.open(settings_in(tmp_path, models=models)) as engine:  # Ollama's client starts offline
        assert engine.backend.name == "ollama" and engine.backend.model == "tinyllama"
        assert engine.pool.names() == ["tiny", "big"]
        assert engine.model_name == "tiny"
        assert not engine.pool.ready("big")  # started on first use only


def test_each_model_entry_says_whether_its_model_sees_images(tmp_path: Path) -> None:
    models = [{"name": "eyes", "backend": "ollama:llava", "vision": True}, {"name": "text", "backend": "anthropic"}]
    settings = load_settings(config_file(tmp_path, models), environ={"SIDESPIN_VISION": "true"})
    assert default_backend(settings).supports_images
    assert not _entry_backend(settings.models[1], settings).supports_images  # the top-level vision is not inherited


def test_the_configured_model_sees_images_with_vision_and_the_embedded_one_never() -> None:
    for backend in ("openai", "ollama", "anthropic"):
        assert make_backend(Settings(backend=backend, vision=True)).supports_images
        assert not make_backend(Settings(backend=backend)).supports_images
    assert not make_backend(Settings(backend="embedded", vision=True)).supports_images  # no vision projector


# ---------------------------------------------------------------- the engine plays each conversation with its model

async def test_each_conversation_is_answered_by_the_model_it_picked(tmp_path: Path) -> None:
    default = ScriptedBackend([["from the default"]] * 2)
    other = SlowStart([["from the other"]] * 2)
    async with Engine.open(settings_in(tmp_path), backend=default, approval="auto") as engine:
        engine.pool.add("other", other)
        plain, picked = engine.conversation(), engine.conversation()
        pick(engine, picked.id, "other")
        assert other.starts == 0
        first = [event async for event in engine.events(picked, "hi")]
        second = [event async for event in engine.events(picked, "again")]
        unpicked = [event async for event in engine.events(plain, "hi")]
        picked_text = engine.store.read(picked.id)
        plain_text = engine.store.read(plain.id)
    assert answer(first) == answer(second) == "from the other"
    assert answer(unpicked) == "from the default"
    assert picked_text.count("🤖:[other]") == 2 and "🤖:[scripted]" in plain_text
    assert other.starts == 1 and other.closes == 1  # started once, on first use; closed with the engine
    assert [e.done for e in first if isinstance(e, ModelLoading)][-1] is True
    assert not any(isinstance(e, ModelLoading) for e in second)  # kept: no second load


async def test_a_model_no_longer_configured_falls_back_to_the_default(tmp_path: Path) -> None:
    async with Engine.open(settings_in(tmp_path), backend=ScriptedBackend([["default here"]]), approval="auto") as engine:
        conversation = engine.conversation()
        pick(engine, conversation.id, "gone")
        events = [event async for event in engine.events(conversation, "hi")]
    assert answer(events) == "default here"


async def test_a_slow_load_reports_its_seconds_and_the_page_record_shows_it_only_while_it_lasts(tmp_path: Path) -> None:
    other = SlowStart([["loaded."]], seconds=1.2)
    async with Engine.open(settings_in(tmp_path), backend=ScriptedBackend([]), approval="auto") as engine:
        engine.pool.add("other", other)
        conversation = engine.conversation()
        pick(engine, conversation.id, "other")
        record, seen = TurnRecord(), []
        async for event in engine.events(conversation, "hi"):
            record.apply(event)
            if isinstance(event, ModelLoading) and not event.done:
                seen.append(record.loading.seconds)
        text = engine.store.read(conversation.id)
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] >= 0.9  # elapsed time, reported as it goes on
    assert record.loading is None and record.done and record.answer.text == "loaded."
    assert "loading" not in text  # only while it lasts: the transcript keeps the answer


async def test_a_model_that_cannot_start_ends_the_turn_with_its_reason_and_is_tried_again(tmp_path: Path) -> None:
    broken = SlowStart([["never"]], fail="model file not found: /nowhere.gguf")
    async with Engine.open(settings_in(tmp_path), backend=ScriptedBackend([]), approval="auto") as engine:
        engine.pool.add("broken", broken)
        conversation = engine.conversation()
        pick(engine, conversation.id, "broken")
        events = [event async for event in engine.events(conversation, "hi")]
        [event async for event in engine.events(conversation, "hi again")]
        text = engine.store.read(conversation.id)
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert notices == ["the model 'broken' could not start: model file not found: /nowhere.gguf"]
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "error"
    assert broken.starts == 2  # a failed load is not kept: the next message tries again
    assert "could not start" in text


async def test_stop_while_a_model_loads_ends_the_turn_and_the_load_goes_on(tmp_path: Path) -> None:
    other = SlowStart([["ready now."]], seconds=1.0)
    async with Engine.open(settings_in(tmp_path), backend=ScriptedBackend([]), approval="auto") as engine:
        engine.pool.add("other", other)
        board = TurnBoard(engine)
        conversation = engine.conversation()
        pick(engine, conversation.id, "other")
        live = board.start(conversation, "hi")
        while live.record.loading is None:
            await asyncio.sleep(0.01)
        board.stop(conversation.id)
        await live.wait(timeout=5)
        assert live.record.reason == "stopped" and "stopped by you while 'other' was loading" in live.record.notices[0]
        after = board.start(conversation, "hi again")
        await after.wait(timeout=5)
    assert after.record.answer.text == "ready now." and other.starts == 1
