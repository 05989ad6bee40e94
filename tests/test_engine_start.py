"""The engine starts the model while the MCP servers connect; a server that fails stops the model's start
too, so nothing is left running."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from sidespin.config import load_settings
from sidespin.engine import Engine
from sidespin.errors import MCPServerError
from tests.scripted import ScriptedBackend

SLOW_SERVER = """
import sys, time
sys.stdin.readline()   # the initialize request: answered never, then the server dies
time.sleep(1.5)
sys.exit(3)
"""


class LoadingModel(ScriptedBackend):
    """A model that takes as long to load as it is given: its start waits until `loaded` is set."""

    def __init__(self) -> None:
        super().__init__([["hi"]])
        self.loaded = asyncio.Event()
        self.started_while_connecting = asyncio.Event()
        self.closed = False

    async def start(self) -> None:
        self.started_while_connecting.set()
        await self.loaded.wait()

    async def aclose(self) -> None:
        self.closed = True


def settings_with_server(tmp_path: Path):
    script = tmp_path / "dies.py"
    script.write_text(SLOW_SERVER)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"dies": {"command": sys.executable, "args": [str(script)]}}}))
    return load_settings(data_dir=tmp_path / "data", mcp_config=config, plugins=False, tool_mode="xml")


async def test_a_server_that_fails_while_the_model_loads_stops_the_load_and_closes_the_model(tmp_path: Path) -> None:
    model = LoadingModel()
    opening = asyncio.create_task(Engine.open(settings_with_server(tmp_path), backend=model,
                                              strict_mcp=True).__aenter__())
    await asyncio.wait_for(model.started_while_connecting.wait(), 30)  # the load began before the server answered
    assert not opening.done()
    with pytest.raises(MCPServerError):
        await asyncio.wait_for(opening, 60)
    assert model.closed and not model.loaded.is_set()
