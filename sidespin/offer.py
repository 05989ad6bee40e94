"""What the model is offered, and where each tool comes from: the user's tools come first.

`plugins/` beside the program ships six demo plugins (`DEMOS`). The `plugins` setting says
whether the model is offered them:

| `plugins`            | the model is offered the demo plugins                      |
|----------------------|------------------------------------------------------------|
| `"auto"` (default)   | while `mcp.json` lists no server that is switched on       |
| `true`               | always, beside the servers' tools                          |
| a folder             | none: that folder's plugins instead, always                |
| `false`              | none, and no plugin at all                                 |

A plugin of one's own (any other file, in `plugins/` or the folder) is always offered.
`plugins_for(settings)` loads the plugins and says which are held back, why and how to turn them
on. `by_source` counts tools by where they come from, as the empty page, the Servers panel and
`sidespin tools` show them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from sidespin.config import Settings
from sidespin.tools import Tool, load_plugins

__all__ = ["DEMOS", "PLUGINS", "Plugins", "by_source", "plugins_for", "poke_default", "servers_on", "source_name"]

PLUGINS = "plugins"
"""The source every plugin is counted under (a plugin's own source is `plugin:<file>`)."""

DEMOS = frozenset({"get_cat_fact", "get_time", "query_database", "roll_dice", "say_hello", "web_search"})
"""The files (stems) of `plugins/` that ship with sidespin as demos."""

POKE_DEFAULT = "get_cat_fact"  # the seed's Poke, when the model is offered it


@dataclass(frozen=True)
class Plugins:
    """The plugins the settings name, loaded, and those the model is not offered."""

    tools: list[Tool] = field(default_factory=list)  # every plugin loaded, offered or not
    folder: Path | None = None  # where they were loaded from; None: switched off (`"plugins": false`)
    held: list[Tool] = field(default_factory=list)  # the demos the model is not offered
    why: str = ""  # why they are held back and how to turn them on; "" when none is

    @property
    def offered(self) -> list[Tool]:
        """The plugins the model is offered: every one but the demos held back."""
        return [tool for tool in self.tools if tool not in self.held]


def servers_on(settings: Settings) -> list[str]:
    """The servers `mcp.json` lists and does not switch off (`"disabled": true`); none without the file.

    Raises ConfigError for an `mcp.json` that cannot be read, as connecting to it would."""
    path = Path(settings.mcp_config)
    if not path.exists():
        return []
    from sidespin.mcp import load_mcp_config  # the MCP SDK loads only when there are servers

    return [config.name for config in load_mcp_config(path) if not config.disabled]


def plugins_for(settings: Settings, folder: Path | None = None) -> Plugins:
    """The plugins of `folder` (offered always) or of the settings' `plugins`, loaded; under `"auto"` the demos
    of `plugins/` are held back while `mcp.json` lists a server that is switched on."""
    chosen = folder or settings.plugins_folder
    if chosen is None:
        return Plugins()
    tools = load_plugins(chosen)
    demos = [tool for tool in tools if tool.source.removeprefix("plugin:") in DEMOS]
    if folder is not None or settings.plugins != "auto" or not demos:
        return Plugins(tools, chosen)
    servers = servers_on(settings)
    if not servers:
        return Plugins(tools, chosen)
    why = (f"demo plugins off because MCP servers are configured ({', '.join(servers)}); "
           'set "plugins": true in config.json to turn them on')
    return Plugins(tools, chosen, demos, why)


def source_name(source: str) -> str:
    """Where a tool comes from, as a person names it, from its `Tool.source`: `plugins`, or its server's name."""
    if source == "plugin" or source.startswith("plugin:"):
        return PLUGINS
    return source.removeprefix("mcp:")


def by_source(sources: Iterable[str]) -> dict[str, int]:
    """How many tools come from each source (`source_name` of each one's `Tool.source`), in order of appearance."""
    counts: dict[str, int] = {}
    for source in sources:
        counts[source_name(source)] = counts.get(source_name(source), 0) + 1
    return counts


def poke_default(names: list[str]) -> str | None:
    """The tool a Poke calls when none is named: get_cat_fact if it is among `names`, else the first; None
    when there is none."""
    if POKE_DEFAULT in names:
        return POKE_DEFAULT
    return names[0] if names else None
