"""`plugins` in config.json: the built-in demo tools offered while no MCP server is configured (the default,
"auto"), always (true), never (false), or another folder's plugins instead. With a server configured the user's
tools come first: the demo plugins are held back, `sidespin tools` says so and why, and Poke calls a server's
tool."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
import sys
from pathlib import Path

import pytest

from sidespin import cli
from sidespin.config import PROJECT_DIR, load_settings
from sidespin.engine import Engine
from sidespin.errors import ConfigError, ToolNotOffered
from sidespin.events import ToolFinished
from sidespin.offer import plugins_for
from sidespin.protocol import format_block
from sidespin.tools import ToolCall
from tests.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parent.parent
GREET = '''from sidespin.tools import tool


@tool
def greet_crew(name: str) -> str:
    """Greets a member of the crew."""
    return f"Ahoy, {name}!"
'''


SHOUTER = Path(__file__).resolve().parent / "mcp" / "servers" / "tools_only_server.py"
DEMOS = ["say_hello", "get_cat_fact", "get_time", "roll_dice", "query_database", "web_search"]


def configured(tmp_path: Path, plugins, servers: dict | None = None) -> Path:
    """A config.json with `plugins` ("auto" left out: the default), and an mcp.json of `servers` if given."""
    config = tmp_path / "config.json"
    mcp = tmp_path / ("mcp.json" if servers is not None else "none.json")
    if servers is not None:
        mcp.write_text(json.dumps({"servers": servers}))
    config.write_text(json.dumps({**({} if plugins == "auto" else {"plugins": plugins}),
                                  "data_dir": str(tmp_path / "data"), "mcp_config": str(mcp)}))
    return config


def shouter(disabled: bool = False) -> dict:
    return {"shouter": {"command": sys.executable, "args": [str(SHOUTER)], **({"disabled": True} if disabled else {})}}


async def tools_of(config: Path, environ: dict[str, str] | None = None) -> tuple[list[str], object]:
    settings = load_settings(config, environ=environ or {})
    async with Engine.open(settings, backend=ScriptedBackend([])) as engine:
        return engine.registry.names(), engine.health()["plugins"]


async def test_by_default_the_built_in_tools_are_offered(tmp_path: Path) -> None:
    names, shown = await tools_of(configured(tmp_path, True))
    assert "get_cat_fact" in names and shown == str(PROJECT_DIR / "plugins")


async def test_with_no_server_configured_the_demo_plugins_are_offered_as_on_first_run(tmp_path: Path) -> None:
    names, shown = await tools_of(configured(tmp_path, "auto"))
    assert sorted(names) == sorted(DEMOS) and shown == str(PROJECT_DIR / "plugins")


async def test_with_a_server_configured_the_model_is_offered_its_tools_and_not_the_demo_plugins(tmp_path) -> None:
    async with Engine.open(load_settings(configured(tmp_path, "auto", shouter()), environ={}),
                           backend=ScriptedBackend([])) as engine:
        assert engine.registry.names() == ["shout"]
        assert sorted(t.name for t in engine.plugins.held) == sorted(DEMOS)  # loaded, to say what is held back
        why = engine.plugins.why
        assert "MCP servers are configured (shouter)" in why and '"plugins": true in config.json' in why
        health = engine.health()
        assert health["tools"] == 1 and sorted(health["plugins_held_back"]) == sorted(DEMOS)


def test_a_plugin_of_ones_own_in_plugins_is_offered_while_the_demos_are_held_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    (home / "plugins" / "say_hello.py").write_text((PROJECT_DIR / "plugins" / "say_hello.py").read_text())
    (home / "plugins" / "greet_crew.py").write_text(GREET)
    monkeypatch.setattr("sidespin.config.PROJECT_DIR", home)  # where `plugins/` is, beside the program
    settings = load_settings(configured(tmp_path, "auto", shouter()), environ={})
    plugins = plugins_for(settings)
    assert [t.name for t in plugins.offered] == ["greet_crew"] and [t.name for t in plugins.held] == ["say_hello"]
    assert [t.name for t in plugins_for(replace(settings, plugins=True)).offered] == ["greet_crew", "say_hello"]


async def test_a_server_mcp_json_switches_off_does_not_hold_the_demo_plugins_back(tmp_path: Path) -> None:
    names, _ = await tools_of(configured(tmp_path, "auto", shouter(disabled=True)))
    assert sorted(names) == sorted(DEMOS)


async def test_plugins_true_or_the_environment_turns_them_on_beside_the_servers_tools(tmp_path: Path) -> None:
    names, _ = await tools_of(configured(tmp_path, True, shouter()))
    assert sorted(names) == sorted([*DEMOS, "shout"])
    names, _ = await tools_of(configured(tmp_path, "auto", shouter()), environ={"SIDESPIN_PLUGINS": "on"})
    assert sorted(names) == sorted([*DEMOS, "shout"])
    names, _ = await tools_of(configured(tmp_path, True, shouter()), environ={"SIDESPIN_PLUGINS": "auto"})
    assert names == ["shout"]


async def test_a_folder_of_ones_own_plugins_is_offered_beside_the_servers_tools(tmp_path: Path) -> None:
    folder = tmp_path / "my-tools"
    folder.mkdir()
    (folder / "greet_crew.py").write_text(GREET)
    names, _ = await tools_of(configured(tmp_path, str(folder), shouter()))
    assert sorted(names) == ["greet_crew", "shout"]


async def test_poke_with_the_demo_plugins_held_back_calls_a_servers_tool(tmp_path: Path) -> None:
    backend = ScriptedBackend([[format_block(ToolCall("shout", {"text": "ping"}))], ["PING, it says."]])
    settings = load_settings(configured(tmp_path, "auto", shouter()), environ={}, tool_mode="xml")
    async with Engine.open(settings, backend=backend) as engine:
        with pytest.raises(ToolNotOffered, match="'get_cat_fact' is not offered to the model: demo plugins off"):
            engine.poke_tool(None, "get_cat_fact")
        tool = engine.poke_tool(None)
        assert tool == "shout"  # the default: the first tool the model is offered
        events = [event async for event in engine.events(engine.conversation(), None, poke_tool=tool)]
    finished = [event.result for event in events if isinstance(event, ToolFinished)]
    assert [(r.call.name, r.output) for r in finished] == [("shout", "PING")]
    assert "Now call the shout tool" in backend.calls[0][-1]["content"]


def test_sidespin_poke_with_the_demo_plugins_held_back_calls_a_servers_tool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    config = configured(tmp_path, "auto", shouter())
    script = [[format_block(ToolCall("shout", {"text": "ping"}))], ["Done."]]
    monkeypatch.setattr(cli, "_backend_for", lambda args, settings: ScriptedBackend(script))
    monkeypatch.setenv("SIDESPIN_TOOL_MODE", "xml")
    assert cli.main(["--config", str(config), "poke", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["tool"] == "shout" and shown["result"] == "PING"

    assert cli.main(["--config", str(config), "poke", "--tool", "get_cat_fact"]) == 2
    err = capsys.readouterr().err
    assert "'get_cat_fact' is not offered to the model: demo plugins off" in err and '"plugins": true' in err


async def test_plugins_false_offers_no_built_in_tool_and_health_says_so(tmp_path: Path) -> None:
    names, shown = await tools_of(configured(tmp_path, False))
    assert names == [] and shown is False


async def test_a_folder_loads_its_own_plugins_instead(tmp_path: Path) -> None:
    folder = tmp_path / "my-tools"
    folder.mkdir()
    (folder / "greet_crew.py").write_text(GREET)
    names, shown = await tools_of(configured(tmp_path, str(folder)))
    assert names == ["greet_crew"] and shown == str(folder)


def test_a_plugins_value_that_is_no_folder_is_refused_with_what_it_may_be(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="true, false, or a folder"):
        load_settings(configured(tmp_path, str(tmp_path / "missing")))
    with pytest.raises(ConfigError, match="true, false or a folder"):
        load_settings(configured(tmp_path, 3))
    assert load_settings(configured(tmp_path, True), environ={"SIDESPIN_PLUGINS": "off"}).plugins_folder is None


def sidespin_tools(config: Path, *flags: str) -> str:
    shown = subprocess.run([sys.executable, "-m", "sidespin.cli", "--config", str(config), "tools", *flags],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_sidespin_tools_piped_prints_one_line_a_tool_under_a_header(tmp_path: Path) -> None:
    folder = tmp_path / "my-tools"
    folder.mkdir()
    (folder / "greet_crew.py").write_text(GREET)
    shown = sidespin_tools(configured(tmp_path, str(folder)))
    lines = shown.splitlines()
    assert lines[2] == "offered to the model: 1 tool (1 from plugins)"
    assert lines[3].split() == ["tool", "source", "arguments", "description"]
    assert lines[4].split() == ["greet_crew", "plugin:greet_crew", "name", "Greets", "a", "member", "of", "the", "crew."]
    assert "not offered" not in shown
    assert "\x1b[" not in shown  # no colour into a pipe


def test_sidespin_tools_says_what_the_model_is_offered_and_which_demo_plugins_are_not_and_why(tmp_path) -> None:
    config = configured(tmp_path, "auto", shouter())
    lines = sidespin_tools(config).splitlines()
    assert lines[1] == f"plugins: {PROJECT_DIR / 'plugins'} (the demos are not offered to the model: see below)"
    assert lines[2] == "offered to the model: 1 tool (1 from shouter)"
    assert lines[4].split()[:2] == ["shout", "mcp:shouter"] and len(lines) == 7
    assert lines[5].startswith("not offered to the model: ")
    assert set(lines[5].removeprefix("not offered to the model: ").split(", ")) == set(DEMOS)
    assert lines[6] == ('  demo plugins off because MCP servers are configured (shouter); '
                        'set "plugins": true in config.json to turn them on')

    rows = json.loads(sidespin_tools(config, "--json"))
    assert {row["name"]: row["offered"] for row in rows} == {"shout": True, **{name: False for name in DEMOS}}


def test_sidespin_tools_says_the_plugins_are_off(tmp_path: Path) -> None:
    shown = subprocess.run([sys.executable, "-m", "sidespin.cli", "--config", str(configured(tmp_path, False)),
                            "tools"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "plugins: off" in shown.stdout and "get_cat_fact" not in shown.stdout
