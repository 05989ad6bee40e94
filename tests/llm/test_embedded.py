"""The embedded llama.cpp backend: lifecycle, a free event loop while loading, readable failures."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sidespin.errors import BackendError, ConfigError
from sidespin.llm import Grammar
from sidespin.llm.embedded import EmbeddedBackend, default_model_path
from sidespin.models import DEFAULT_MODEL, MODELS, verified
from tests.conftest import log_lines

HI = [{"role": "user", "content": "Say hi"}]


def port_is_open(url: str) -> bool:
    parts = urlsplit(url)
    with socket.socket() as probe:
        return probe.connect_ex((parts.hostname, parts.port)) == 0


@pytest.mark.model
async def test_start_stream_and_close_without_blocking_the_loop() -> None:
    backend = EmbeddedBackend(n_ctx=2048, options={"seed": 1, "temperature": 0, "max_tokens": 16})
    ticks = 0
    loading = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not loading.is_set():
            ticks += 1
            await asyncio.sleep(0.01)  # measures that the loop runs; nothing waits on it

    beat = asyncio.create_task(ticker())
    started = asyncio.get_running_loop().time()
    await backend.start()
    seconds = asyncio.get_running_loop().time() - started
    loading.set()
    await beat
    try:
        assert ticks >= min(10, seconds / 0.01 / 4), f"{ticks} ticks in {seconds:.2f} s of loading"
        assert backend.base_url.startswith("http://127.0.0.1:")
        assert port_is_open(backend.base_url)
        answer = "".join([d.text async for d in backend.stream(HI)])
        assert answer.strip()
    finally:
        url = backend.base_url
        await backend.aclose()
    assert not port_is_open(url), "the port is still served after aclose()"


@pytest.mark.model
async def test_closing_while_the_model_reads_a_long_prompt_ends_the_child_at_once_on_its_own() -> None:
    """Ctrl-C while llama.cpp evaluates a long prompt (a tool's long result, say): the child exits at once, by
    itself. Dropping its server used to wait for the evaluation to end, and after ten seconds it was killed."""
    backend = EmbeddedBackend(n_ctx=8192, options={"seed": 1, "temperature": 0, "max_tokens": 16})
    await backend.start()
    long_prompt = [{"role": "user", "content": "Summarize: " + "the table tennis ball bounces twice " * 600}]

    async def answer() -> None:
        async for _ in backend.stream(long_prompt):
            pass

    with log_lines("EMBEDDED_SERVER_") as stops:
        answering = asyncio.create_task(answer())
        try:
            await asyncio.sleep(1.5)  # the prompt's ~4,000 tokens take far longer than this to evaluate on a CPU
        finally:
            await backend.aclose()
            answering.cancel()
            await asyncio.gather(answering, return_exceptions=True)
    assert not [line for line in stops if line.startswith("EMBEDDED_SERVER_KILL")], stops
    assert any(line.startswith("EMBEDDED_SERVER_STOP") and line.endswith("code=0") for line in stops), stops


@pytest.mark.model
async def test_each_tables_prompt_is_saved_whole_and_kept_so_a_decision_evaluates_only_the_message(tmp_path) -> None:
    """Two servers' tools, too many to read at once: each table's evaluated prompt is saved (by the first
    decision on it, or by the warm-up), and after a restart restores them, a decision on either
    evaluates the few tokens of the message, not the hundreds of its table's tools. A slot file that
    holds another prompt (one was written while a decision ran) is found out and saved again."""
    from sidespin.tooluse import tables as decision_tables
    from sidespin.tools import Tool

    def server(name: str, verbs: list[str]) -> list[Tool]:
        return [Tool(f"{verb}_{name}", f"{verb.title()} a {name} by its title, and say what was done with it.",
                     {"type": "object", "properties": {"title": {"type": "string", "description": "The title."}},
                      "required": ["title"]}, fn=len, source=f"mcp:{name}") for verb in verbs]

    tools = server("song", ["play", "pause", "queue", "skip", "like", "share"]) + server("book", [
        "find", "borrow", "return", "renew", "review"])
    assert len(decision_tables(tools)) == 2
    with log_lines("ROUTE_PREFIX_") as events:
        for start in range(2):  # two starts of the product on the same cache folder
            backend = EmbeddedBackend(n_ctx=4096, options={"max_tokens": 8})
            backend.slot_dir = tmp_path
            async with backend:
                if start == 0:  # a decision before the warm-up (a one-shot `ask`) keeps its table too
                    await (await backend.decider()).decide([{"role": "user", "content": "Borrow the book Dune."}], tools)
                    assert [line.split()[0] for line in events] == ["ROUTE_PREFIX_SAVED"]
                await backend.warm(tools)
                if start == 0:
                    first, second = sorted(tmp_path.iterdir())
                    second.write_bytes(first.read_bytes())  # one file now holds the other table's prompt
                if start == 1:
                    decider, llama = await backend.decider(), backend._llama
                    for table in reversed(decision_tables(tools)):  # the one warmed first, last
                        prompt = await decider.model.prompt([{"role": "user", "content": "Borrow Dune for me."}], table)
                        await llama.next_tokens(prompt)
                        assert llama.last_timings["prompt_n"] < 30 < llama.last_timings["cache_n"], llama.last_timings
    kinds = [line.split()[0] for line in events]
    assert kinds[:2] == ["ROUTE_PREFIX_SAVED"] * 2
    assert sorted(kinds[2:]) == ["ROUTE_PREFIX_RESTORED", "ROUTE_PREFIX_SAVED", "ROUTE_PREFIX_STALE"]
    assert {path.suffix for path in tmp_path.iterdir()} == {".bin"}  # whole, under their own names: no .part left


def test_the_slot_cache_keeps_within_its_budget_deleting_the_least_recently_used_first(tmp_path) -> None:
    """Saved prefixes pile up as servers and their tools change: past the budget the files used longest ago go,
    the one just used stays even when it alone is over, and nothing else in the folder is touched."""
    import os

    from sidespin.llm.embedded import prune_slots

    for age, name in enumerate(["route-new.bin", "route-mid.bin", "route-old.bin"]):
        (tmp_path / name).write_bytes(b"x" * 1000)
        os.utime(tmp_path / name, (1_000_000 - age * 100, 1_000_000 - age * 100))
    (tmp_path / "notes.txt").write_bytes(b"y" * 5000)
    assert prune_slots(tmp_path, "route-new.bin", budget=2500) == ["route-old.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "route-mid.bin", "route-new.bin"]
    assert prune_slots(tmp_path, "route-mid.bin", budget=10) == ["route-new.bin"]  # the one in use stays, alone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "route-mid.bin"]
    assert prune_slots(tmp_path, "route-mid.bin", budget=10) == []


@pytest.mark.model
async def test_a_prefix_that_cannot_be_saved_loses_no_decision_and_a_small_budget_keeps_one_file(tmp_path) -> None:
    """The slot folder gone or unwritable (as on a full disk): the table's prompt is not saved, it says so in the
    log, and the decision is made all the same; with room again, a budget smaller than two files keeps only the
    table used last."""
    from sidespin.tools import Tool

    def tools(thing: str) -> list[Tool]:
        return [Tool(f"{verb}_{thing}", f"{verb.title()} a {thing} by its title.", {"type": "object", "properties": {
            "title": {"type": "string"}}, "required": ["title"]}, fn=len, source=f"mcp:{thing}")
            for verb in ("find", "borrow", "return")]

    folder = tmp_path / "slots"
    backend = EmbeddedBackend(n_ctx=4096, options={"max_tokens": 8})
    backend.slot_dir = folder
    with log_lines("ROUTE_PREFIX_") as events:
        async with backend:
            folder.rmdir()
            folder.write_text("not a folder")  # where llama.cpp writes the slot, nothing can be written
            calls = await (await backend.decider()).decide([{"role": "user", "content": "Borrow the book Dune."}],
                                                               tools("book"))
            assert [(c.name, c.arguments) for c in calls] == [("borrow_book", {"title": "Dune"})]
            assert [e.split()[0] for e in events] == ["ROUTE_PREFIX_SAVE_FAILED"]
            folder.unlink()
            folder.mkdir()
            backend.slot_budget = 1  # smaller than any file
            await backend.warm(tools("song"))
            await backend.warm(tools("film"))
    assert [e.split()[0] for e in events[1:]] == ["ROUTE_PREFIX_SAVED", "ROUTE_PREFIX_SAVED", "ROUTE_PREFIX_PRUNED"]
    assert len(list(folder.iterdir())) == 1


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_shared_backend_describes_itself_and_passes_grammars(embedded: EmbeddedBackend) -> None:
    described = embedded.describe()
    assert described["backend"] == "embedded" and described["native_tools"] is False and described["grammar"] is True
    assert described["base_url"] == embedded.base_url
    answer = "".join([d.text async for d in embedded.stream(HI, grammar=Grammar('root ::= "<mcp-request>" [a-z]+ "</mcp-request>"'))])
    assert re.fullmatch(r"<mcp-request>[a-z]+</mcp-request>", answer)


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_a_number_written_under_its_bounds_stops_after_its_decimals(embedded: EmbeddedBackend) -> None:
    """Numbers are written under bounds on their digits after the point (`sidespin.tooluse.schema.bounds_for`), so a
    small model stops after them; the finest step allowed is one llama.cpp still applies (finer, it drops the whole
    schema and the model writes free text)."""
    from sidespin.tooluse.schema import MOST_DECIMALS, Bounds, arguments_schema
    from sidespin.tools import Tool

    tool = Tool("project", "Project a population.", {"type": "object", "properties": {
        "rate": {"type": "number"}, "tiny": {"type": "number"}}, "required": ["rate", "tiny"]}, fn=len, source="mcp:x")
    prompt = ("<|im_start|>user\nWrite JSON with rate = 1.0555555555555555555555 and tiny = 0.000001256<|im_end|>\n"
              "<|im_start|>assistant\n")
    decider = await embedded.decider()
    for bounds, rate, tiny in [(Bounds(), "1.055555", 0.000001), (Bounds(decimals=MOST_DECIMALS), "1.0555555555",
                                                                   0.000001256)]:
        written = await decider.model.llama.complete(prompt, None, arguments_schema(tool, bounds=bounds), 200)
        assert json.loads(written) == {"rate": float(rate), "tiny": tiny}, written


@pytest.mark.model
@pytest.mark.asyncio(loop_scope="session")
async def test_server_refuses_callers_without_its_key(embedded: EmbeddedBackend) -> None:
    from sidespin.llm.openai import OpenAIBackend

    async with OpenAIBackend(embedded.base_url) as stranger:
        with pytest.raises(BackendError, match="HTTP 401"):
            [d async for d in stranger.stream(HI)]


async def test_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.gguf"
    with pytest.raises(BackendError, match=f"model file not found: {re.escape(str(missing))}"):
        await EmbeddedBackend(missing).start()


async def test_a_file_that_is_not_a_model_is_refused(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_text("not a model")
    with pytest.raises(BackendError, match="could not load"):
        await EmbeddedBackend(bogus).start()


@pytest.mark.model
async def test_a_second_model_runs_in_a_child_of_its_own_and_one_that_cannot_start_leaves_the_first_alone(
        tmp_path: Path) -> None:
    """`second_model`: a model beside the first, which writes the arguments of the calls the first names and decides
    where the first is unsure. Here the default model plays both (the only one every machine that runs the tests
    has)."""
    from sidespin.tools import Tool

    backend = EmbeddedBackend(n_ctx=2048, second_model=str(default_model_path()))
    await backend.start()
    try:
        decider = await backend.decider()
        second = await decider.second()
        assert second is not None and second is not decider
        assert backend._second is not None and port_is_open(backend._second.base_url)
        assert backend._second.base_url != backend.base_url
        assert backend.describe()["second_model"] == str(default_model_path())
        assert backend.describe()["second_model_state"] == "ready"
        # a call the first names gets the arguments the second writes, after its own prompt (here the same text)
        dice = Tool("roll_dice", "Roll a die with the given number of sides.", {"type": "object", "properties": {
            "sides": {"type": "integer"}}, "required": ["sides"]}, fn=len, source="plugin:dice")
        calls = await decider.decide([{"role": "user", "content": "Roll a die with 20 sides."}], [dice])
        assert [(c.name, c.arguments) for c in calls] == [("roll_dice", {"sides": 20})]
        assert second.model.llama.last_timings  # the second model wrote the arguments
    finally:
        url = backend._second.base_url if backend._second else ""
        await backend.aclose()
    assert url and not port_is_open(url), "the second model's port is still served after aclose()"
    bogus = tmp_path / "bogus.gguf"
    bogus.write_text("not a model")
    with log_lines("ROUTE_SECOND_FAILED") as failed:
        async with EmbeddedBackend(n_ctx=2048, second_model=str(bogus)) as backend:
            decider = await backend.decider()
            assert await decider.second() is None
            assert backend.describe()["second_model_state"].startswith("failed: llama.cpp could not load")
            assert await decider.decide([{"role": "user", "content": "hello"}], []) == []
    assert failed and "bogus.gguf" in failed[0] and "alone" in failed[0]


def test_a_second_model_that_names_nothing_is_refused_before_anything_starts() -> None:
    with pytest.raises(ConfigError, match="second_model 'qwen-9b' is neither a model of sidespin"):
        EmbeddedBackend(second_model="qwen-9b")


async def test_streaming_before_start_says_what_to_do() -> None:
    with pytest.raises(BackendError, match="not started"):
        [d async for d in EmbeddedBackend().stream(HI)]


def test_a_model_is_hashed_again_only_when_its_file_changed_even_with_its_old_time_put_back(tmp_path, monkeypatch):
    import dataclasses
    import hashlib
    import os

    import sidespin.models as models

    content = b"GGUF" + bytes(range(256)) * 40
    (tmp_path / "tiny.gguf").write_bytes(content)
    pin = dataclasses.replace(MODELS[DEFAULT_MODEL], filename="tiny.gguf", size=len(content),
                              sha256=hashlib.sha256(content).hexdigest())
    monkeypatch.setitem(models.MODELS, "tiny", pin)
    hashed: list[Path] = []
    real_sha256_of = models.sha256_of
    monkeypatch.setattr(models, "sha256_of", lambda path: hashed.append(path) or real_sha256_of(path))

    assert verified("tiny", tmp_path) == verified("tiny", tmp_path) == tmp_path / "tiny.gguf"
    assert len(hashed) == 1  # the second start read the stamp

    before = os.stat(tmp_path / "tiny.gguf")
    (tmp_path / "tiny.gguf").write_bytes(content[::-1])  # same size, other bytes
    os.utime(tmp_path / "tiny.gguf", ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(BackendError, match="not the pinned"):
        verified("tiny", tmp_path)
    assert len(hashed) == 2


def test_the_default_model_is_assembled_and_checked_against_its_pin(tmp_path) -> None:
    assert default_model_path().is_file()  # ./run assembled it; the sha256 was checked just now
    model = MODELS[DEFAULT_MODEL]
    (tmp_path / model.filename).write_bytes(b"GGUF" + b"\0" * 60)
    with pytest.raises(BackendError, match="not the pinned"):
        verified(DEFAULT_MODEL, tmp_path)
    with pytest.raises(BackendError, match="fetch-model"):
        verified(DEFAULT_MODEL, tmp_path / "nowhere")
