"""`sidespin ask`: one turn with no person to ask. A call that would wait for approval is reported, not run and
not dropped; `--yes` runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidespin import cli
from sidespin.protocol import format_block
from sidespin.tools import ToolCall
from tests.scripted import ScriptedBackend

PLUGIN = '''
from pathlib import Path
from sidespin.tools import tool

@tool(destructive=True)
def write_note(text: str) -> str:
    """Writes a note to the notes file (replaces what was there)."""
    Path(__file__).with_name("note.txt").write_text(text)
    return "written"
'''


@pytest.fixture
def asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "write_note.py").write_text(PLUGIN)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_dir": str(tmp_path / "data"), "mcp_config": str(tmp_path / "none.json"),
                                  "plugins": str(plugins), "tool_mode": "xml"}))
    script = [[format_block(ToolCall("write_note", {"text": "buy bread"}))], ["Noted."]]
    monkeypatch.setattr(cli, "_backend_for", lambda args, settings: ScriptedBackend(script))

    def ask(*flags: str) -> tuple[int, dict, str]:
        args = cli.build_parser().parse_args(["--config", str(config), "ask", "Note: buy bread", "--json", *flags])
        code = args.func(args)
        out, err = capsys.readouterr()
        return code, json.loads(out), err

    return ask, plugins / "note.txt"


def test_a_call_that_waits_for_approval_is_reported_and_not_run(asked) -> None:
    ask, note = asked
    code, answer, err = ask()
    assert answer["tool_calls"] == [
        {"tool": "write_note", "arguments": {"text": "buy bread"}, "result": None, "error": None, "held": True,
         "why": "it is marked destructive"}]
    assert any("waits for a person's approval" in notice for notice in answer["notices"])
    assert "--yes" in err
    assert not note.exists()


def test_yes_runs_a_call_that_would_wait_for_approval(asked) -> None:
    ask, note = asked
    code, answer, _ = ask("--yes")
    assert answer["tool_calls"][0]["result"] == "written"
    assert "held" not in answer["tool_calls"][0]
    assert note.read_text() == "buy bread"
