"""A server's question in `sidespin chat`: asked field by field, validated, answered, as a person types it.

server-everything (stdio) asks during `trigger-elicitation-request`; a model that speaks Ollama's
/api/chat calls it and then repeats what the tool said, so the test reads what reached the server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pexpect
import pytest
from aiohttp import web

from sidespin.transcript import parse
from tests.conftest import ollama_stub, serving_in_thread
from tests.mcp.mcp_harness import EVERYTHING, HAVE_NODE, NO_NODE, NODE
from tests.test_terminal import say_bye, spawn_chat

pytestmark = [pytest.mark.node, pytest.mark.skipif(not HAVE_NODE, reason=NO_NODE)]

FIELDS = 13  # the properties server-everything's form asks for


def ollama_app() -> web.Application:
    def reply(body: dict) -> list[dict]:
        results = [m for m in body["messages"] if m["role"] == "tool"]
        if not results:
            return [{"content": "", "tool_calls": [{"function": {"name": "trigger-elicitation-request",
                                                                 "arguments": {}}}]}]
        said = results[-1]["content"].splitlines()
        return [{"content": "The tool said: " + " | ".join(line for line in said if line.startswith("- "))}]

    return ollama_stub(reply)


@pytest.fixture
def fake_ollama() -> Iterator[str]:
    with serving_in_thread(ollama_app()) as url:
        yield url


def chat_with_everything(tmp_path: Path, fake_ollama: str, **server: object) -> tuple[pexpect.spawn, Path]:
    """`sidespin chat` on the Ollama stub with server-everything over stdio (`server`: more of its mcp.json
    fields); the chat and its transcript file."""
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text(json.dumps({"servers": {"everything": {
        "type": "stdio", "command": str(NODE), "args": [str(EVERYTHING), "stdio"], **server}}}))
    transcript = tmp_path / "chat.md"
    chat = spawn_chat(tmp_path, "--mcp-config", str(mcp_json), "chat", "ollama:llama3.2",
                      "--transcript", str(transcript), OLLAMA_HOST=fake_ollama)
    return chat, transcript


def test_a_question_is_asked_field_by_field_and_a_bad_answer_is_asked_again(tmp_path, fake_ollama):
    chat, transcript = chat_with_everything(tmp_path, fake_ollama)
    chat.expect_exact("prompt -> ")
    chat.sendline("Ask me")
    chat.expect("everything asks")
    chat.expect_exact("Please provide inputs")
    chat.expect_exact("String (string) *: ")  # the name: required
    chat.sendline("")
    chat.expect_exact("Boolean (yes/no): ")
    for _ in range(FIELDS - 1):  # every other field as its default, then accept: the name is missing
        chat.sendline("")
    chat.expect_exact("[a/d/c]: ")
    chat.sendline("a")
    chat.expect_exact("not taken:")
    chat.expect_exact("String: an answer is required")

    chat.expect_exact("String (string) *: ")
    chat.sendline("Ada Lovelace")
    chat.expect_exact("Boolean (yes/no): ")
    chat.sendline("yes")
    for _ in range(FIELDS - 2):  # the integer's prompt shows its range and default; the others as they are
        index = chat.expect([r"Integer \(integer 1–100, Enter for 42\): ", r"\): "])
        chat.sendline("7" if index == 0 else "")
    chat.expect_exact("[a/d/c]: ")
    chat.sendline("a")
    chat.expect_exact("answered: accept")
    chat.expect(r"The tool said: - Name: Ada Lovelace \| - Agreed to terms: true .*- Favorite Integer: 7")
    chat.expect_exact("prompt -> ")
    say_bye(chat)
    text = parse(transcript.read_text(encoding="utf-8")).render()
    assert '"answered":' in text and '"action":"accept"' in text.replace(" ", "")


def test_a_question_whose_call_ends_leaves_the_next_line_to_the_chat(tmp_path, fake_ollama):
    chat, transcript = chat_with_everything(tmp_path, fake_ollama, timeout=3)
    chat.expect_exact("prompt -> ")
    chat.sendline("Ask me")
    chat.expect_exact("String (string) *: ")
    chat.expect_exact("not answered (the call ended)", timeout=30)  # nobody answers: the call's 3 s run out
    chat.expect_exact("prompt -> ")
    chat.sendline("What happened to my question?")  # the first line after the prompt is the next message
    chat.expect_exact("The tool said:")
    chat.expect_exact("prompt -> ")
    say_bye(chat)
    users = [turn.user for turn in parse(transcript.read_text(encoding="utf-8")).turns if turn.user]
    assert users == ["Ask me", "What happened to my question?"]
