"""`sidespin chat` driven through a pseudo-terminal, as a person types into it.

The tool-call test uses a real stdio MCP server (mcp-server-time from PyPI, in its own
venv installed by ./run test) and a model that speaks Ollama's documented /api/chat
protocol (Ollama itself cannot be installed here), so the tool call is deterministic.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Iterator

import pexpect
import pytest
from aiohttp import web

from sidespin.transcript import parse
from tests.conftest import LONG_PROMPTS, ROOT, default_sigint, ollama_stub, serving_in_thread
from tests.mcp.mcp_harness import alive_pids, descendants

TIME_SERVER = ROOT / ".cache" / "mcp-server-time" / "bin" / "mcp-server-time"


def ollama_app() -> web.Application:
    """Answers like Ollama: first a native call of get_current_time, then a streamed sentence using its result."""

    def reply(body: dict) -> list[dict]:
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_results:
            call = {"function": {"name": "get_current_time", "arguments": {"timezone": "Europe/Paris"}}}
            return [{"content": "", "tool_calls": [call]}]
        result = json.loads(tool_results[-1]["content"])
        return [{"content": w} for w in ["The ", "time ", "in ", "Paris ", "is ", result["datetime"][11:16], "."]]

    return ollama_stub(reply)


@pytest.fixture
def fake_ollama() -> Iterator[str]:
    with serving_in_thread(ollama_app()) as url:
        yield url


def say_bye(chat: pexpect.spawn) -> None:
    """`bye` at the prompt ends the chat, with status 0."""
    chat.sendline("bye")
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0


def spawn_chat(tmp_path: Path, *args: str, **env: str) -> pexpect.spawn:
    environment = {**os.environ, "SIDESPIN_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "120", "TERM": "dumb", **env}
    environment.pop("SIDESPIN_BACKEND", None)
    return pexpect.spawn(sys.executable, ["-m", "sidespin.cli", *args], cwd=str(ROOT), env=environment,
                         encoding="utf-8", timeout=120, dimensions=(40, 120), preexec_fn=default_sigint)


@pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time is installed by ./run test (scripts/setup-node)")
def test_chat_calls_a_real_stdio_mcp_server_shows_the_panel_and_bye_ends_everything(tmp_path, fake_ollama):
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text(json.dumps({"servers": {"time": {"type": "stdio", "command": str(TIME_SERVER)}}}))
    transcript = tmp_path / "chat.md"
    chat = spawn_chat(tmp_path, "--mcp-config", str(mcp_json), "chat", "ollama:llama3.2",
                      "--transcript", str(transcript), OLLAMA_HOST=fake_ollama)
    chat.expect_exact("prompt -> ")
    servers = descendants(chat.pid)
    assert servers, "the MCP server should be running as a child"
    chat.sendline("What time is it in Paris?")
    chat.expect("get_current_time")
    chat.expect("arguments")
    chat.expect_exact('"timezone": "Europe/Paris"')
    chat.expect("result")
    chat.expect(r"duration\s+\d+\.\d+ s")
    chat.expect(r"The time in Paris is \d\d:\d\d\.")
    chat.expect_exact("prompt -> ")
    say_bye(chat)
    assert not servers & set(alive_pids()), "a child process outlived the chat"
    saved = parse(transcript.read_text(encoding="utf-8"))
    text = saved.render()
    assert "💬: What time is it in Paris?" in text and "[get_current_time]" in text and "The time in Paris is" in text


@pytest.mark.model
def test_ctrl_c_in_the_middle_of_an_answer_exits_cleanly_with_the_transcript_intact(tmp_path):
    transcript = tmp_path / "count.md"
    # no tools: the 0.5B answers "Count from 1 to 300" with a cat fact when get_cat_fact is offered, and a short
    # answer ends before Ctrl-C lands
    chat = spawn_chat(tmp_path, "--mcp-config", str(tmp_path / "none.json"), "chat", "--transcript", str(transcript),
                      SIDESPIN_PLUGINS="false")
    chat.expect_exact("prompt -> ")
    for prompt in LONG_PROMPTS:  # a sampled answer is sometimes short (or a refusal) and ends first: ask again
        chat.sendline(prompt)
        chat.expect_exact(prompt[-20:])  # the terminal's echo of the line typed
        if chat.expect([r"(\S+\s+){12}", "prompt -> "]) == 0:
            break  # the answer is streaming
    else:
        pytest.fail("no answer was long enough to interrupt")
    chat.sendintr()
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0
    saved = parse(transcript.read_text(encoding="utf-8"))
    assert prompt in saved.render()
    assert saved.turns and saved.turns[0].model is not None  # the answer's 🤖: block was written


@pytest.mark.model
def test_quit_and_ctrl_d_end_the_chat_with_status_zero(tmp_path):
    for ending in ("quit", None):
        chat = spawn_chat(tmp_path, "--mcp-config", str(tmp_path / "none.json"), "chat")
        chat.expect_exact("prompt -> ")
        if ending:
            chat.sendline(ending)
        else:
            chat.sendeof()
        chat.expect(pexpect.EOF)
        chat.close()
        assert chat.exitstatus == 0


def test_start_up_failures_are_fatal_and_clear(tmp_path):
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text(json.dumps({"servers": {"broken": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('no database configured\\n'); sys.exit(3)"]}}}))
    chat = spawn_chat(tmp_path, "--mcp-config", str(mcp_json), "chat", "ollama:x", OLLAMA_HOST="http://127.0.0.1:9")
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 2
    assert "broken" in chat.before and "no database configured" in chat.before

    chat = spawn_chat(tmp_path, "--mcp-config", str(tmp_path / "none.json"), "chat", str(tmp_path / "missing.gguf"))
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 2 and "model file not found" in chat.before


def test_every_command_has_accurate_help():
    for command in ("serve", "chat", "poke", "ask", "tools", "mcp-serve"):
        helper = pexpect.spawn(sys.executable, ["-m", "sidespin.cli", command, "--help"], cwd=str(ROOT), encoding="utf-8")
        helper.expect(pexpect.EOF)
        helper.close()
        assert helper.exitstatus == 0 and f"sidespin {command}" in helper.before


def test_approve_asks_before_a_call_and_a_refusal_reaches_the_model(tmp_path):
    def reply(body: dict) -> list[dict]:
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results:
            return [{"content": "", "tool_calls": [{"function": {"name": "web_search",
                                                                 "arguments": {"query": "sidespin"}}}]}]
        return [{"content": "The tool said: " + results[-1]["content"][:60]}]

    transcript = tmp_path / "chat.md"
    with serving_in_thread(ollama_stub(reply)) as url:
        chat = spawn_chat(tmp_path, "--mcp-config", str(tmp_path / "none.json"), "chat", "ollama:llama3.2",
                          "--approve", "--transcript", str(transcript), OLLAMA_HOST=url)
        chat.expect_exact("prompt -> ")
        chat.sendline("Search the web for sidespin")
        chat.expect_exact("❓ web_search")
        chat.expect_exact(">> Please choose (")
        chat.sendline("maybe")  # not a choice: the choices are listed and it asks again
        chat.expect_exact("choose one of:")
        chat.expect_exact(">> Please choose (")
        chat.sendline("n")
        chat.expect_exact("The tool said:")
        chat.expect_exact("prompt -> ")
        say_bye(chat)
    saved = parse(transcript.read_text(encoding="utf-8"))
    (proposal,) = [segment for turn in saved.turns for segment in turn.segments if hasattr(segment, "decision")]
    assert proposal.decision == "n" and proposal.call.arguments == {"query": "sidespin"}


def test_ctrl_c_while_a_long_call_runs_as_a_task_cancels_the_task_on_the_server(tmp_path):
    """sidespin's own /mcp serves the suite's task fixtures over HTTP; the model calls slow_compute for a minute, which
    runs as a task; Ctrl-C while it works ends the chat with status 0, and the server's task is cancelled."""
    from tests.mcp.mcp_harness import endpoint_app, serve_in_thread, tasks_endpoint

    def reply(body: dict) -> list[dict]:
        call = {"function": {"name": "slow_compute", "arguments": {"seconds": 60, "label": "the report"}}}
        return [{"content": "", "tool_calls": [call]}]

    endpoint = tasks_endpoint()
    with serve_in_thread(endpoint_app(endpoint)) as port, serving_in_thread(ollama_stub(reply)) as ollama:
        mcp_json = tmp_path / "mcp.json"
        mcp_json.write_text(json.dumps({"servers": {"long": {"url": f"http://127.0.0.1:{port}/mcp"}}}))
        transcript = tmp_path / "long.md"
        chat = spawn_chat(tmp_path, "--mcp-config", str(mcp_json), "chat", "ollama:llama3.2", "--transcript",
                          str(transcript), OLLAMA_HOST=ollama, SIDESPIN_PLUGINS="false")
        chat.expect_exact("prompt -> ")
        chat.sendline("Compute the report")
        deadline = time.monotonic() + 60
        while not [t for t in endpoint.tasks if t.status_message == "computing the report (1/60)"]:
            assert time.monotonic() < deadline, "the task never reported its first second"
            chat.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.1)  # reads what the chat prints meanwhile
        chat.sendintr()
        chat.expect(pexpect.EOF)
        chat.close()
        assert chat.exitstatus == 0
        (task,) = endpoint.tasks
        assert task.status == "cancelled" and task.runner.done()
    saved = parse(transcript.read_text(encoding="utf-8"))
    assert "Compute the report" in saved.render()
