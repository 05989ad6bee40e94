"""`plugins` in config.json: the built-in tools on (the default), off, or loaded from another folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sidespin.config import PROJECT_DIR, load_settings
from sidespin.engine import Engine
from sidespin.errors import ConfigError
from tests.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parent.parent
GREET = '''from sidespin.tools import tool


@tool
def greet_crew(name: str) -> str:
    """Greets a member of the crew."""
    return f"Ahoy, {name}!"
'''


def configured(tmp_path: Path, plugins) -> Path:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"plugins": plugins, "data_dir": str(tmp_path / "data"),
                                  "mcp_config": str(tmp_path / "none.json")}))
    return config


async def tools_of(config: Path) -> tuple[list[str], object]:
    async with Engine.open(load_settings(config), backend=ScriptedBackend([])) as engine:
        return engine.registry.names(), engine.health()["plugins"]


async def test_by_default_the_built_in_tools_are_offered(tmp_path: Path) -> None:
    names, shown = await tools_of(configured(tmp_path, True))
    assert "get_cat_fact" in names and shown == str(PROJECT_DIR / "plugins")


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


def test_sidespin_tools_piped_prints_one_line_a_tool_under_a_header(tmp_path: Path) -> None:
    folder = tmp_path / "my-tools"
    folder.mkdir()
    (folder / "greet_crew.py").write_text(GREET)
    shown = subprocess.run([sys.executable, "-m", "sidespin.cli", "--config", str(configured(tmp_path, str(folder))),
                            "tools"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[2].split() == ["tool", "source", "arguments", "description"]
    assert lines[3].split() == ["greet_crew", "plugin:greet_crew", "name", "Greets", "a", "member", "of", "the", "crew."]
    assert "\x1b[" not in shown.stdout  # no colour into a pipe


def test_sidespin_tools_says_the_plugins_are_off(tmp_path: Path) -> None:
    shown = subprocess.run([sys.executable, "-m", "sidespin.cli", "--config", str(configured(tmp_path, False)),
                            "tools"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "plugins: off" in shown.stdout and "get_cat_fact" not in shown.stdout
