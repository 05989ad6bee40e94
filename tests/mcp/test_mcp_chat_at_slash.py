"""`sidespin chat` with `@URI` and `/name arg=value`, typed into a pseudo-terminal against server-everything (stdio).

The model is the scripted one with an empty script (tests/scripted_chat.py): every answer fails with a notice, which
is enough here, since what matters is the message the chat sends and the transcript keeps.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest
from mcp_harness import EVERYTHING, NODE, ROOT, requires_node

from sidespin.transcript import parse
from tests.test_terminal import say_bye

FEATURES = "demo://resource/static/document/features.md"


@pytest.mark.node
@requires_node
def test_chat_attaches_at_uri_runs_slash_prompts_and_refuses_unknown_ones(tmp_path: Path) -> None:
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"everything": {"command": str(NODE), "args": [str(EVERYTHING), "stdio"]}}}))
    transcript = tmp_path / "chat.md"
    environment = {**os.environ, "SIDESPIN_DATA_DIR": str(tmp_path / "data"), "SIDESPIN_TOOL_MODE": "xml",
                   "COLUMNS": "200", "TERM": "dumb"}
    chat = pexpect.spawn(sys.executable, ["-m", "tests.scripted_chat", "--mcp-config", str(mcp_json), "chat",
                                          "--transcript", str(transcript)],
                         cwd=str(ROOT), env=environment, encoding="utf-8", timeout=60, dimensions=(50, 200))
    chat.expect_exact("prompt -> ")
    chat.sendline("/")
    chat.expect_exact("/args-prompt city=… [state=…]")
    chat.expect_exact("prompt -> ")
    chat.sendline("@")
    chat.expect_exact(f"@{FEATURES}")
    chat.expect_exact("prompt -> ")
    chat.sendline("look at @demo://nowhere/x")
    chat.expect_exact("no MCP server lists the resource demo://nowhere/x")
    chat.expect_exact("nothing was sent")
    chat.expect_exact("prompt -> ")
    chat.sendline("/args-prompt")
    chat.expect_exact("/args-prompt needs city")
    chat.expect_exact("prompt -> ")
    chat.sendline(f"Summarise @{FEATURES} please")
    chat.expect_exact(f"📎 {FEATURES}")
    chat.expect_exact("prompt -> ")
    chat.sendline("/args-prompt city='San Francisco'")
    chat.expect_exact("What's weather in San Francisco?")
    chat.expect_exact("prompt -> ")
    say_bye(chat)

    turns = [turn for turn in parse(transcript.read_text(encoding="utf-8")).turns if turn.user]
    assert [turn.user.split("\n")[0] for turn in turns] == ["Summarise please", "What's weather in San Francisco?"]
    assert "# Everything Server - Features" in turns[0].user
    assert turns[0].user_note["attached"][0]["uri"] == FEATURES
