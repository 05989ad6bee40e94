"""Where the connected servers work: the folders their configuration names, told to the model.

A tool that takes a path or a `repo_path` needs a value the person rarely says; they said it once, in `mcp.json`.
A stdio server's `cwd`, and each argument that names an existing folder by an absolute (or `~`) path
(`--repository /home/me/project`, `--repository=/home/me/project`, the filesystem server's allowed directories)
is such a folder. Nothing else of the configuration (commands, environment, URLs, tokens) is told. Each tool of the
server carries its folders (`Tool.places`); the tool-use pipeline offers them at the end of the tool's description
(`sidespin.tooluse.offer`), and a value taken from them counts as known (`sidespin.tooluse.values.invented`).
"""

from __future__ import annotations

from pathlib import Path

from sidespin.mcp.config import ServerConfig

__all__ = ["folders"]


def folders(config: ServerConfig) -> list[str]:
    """The folders a stdio server's configuration names (its cwd first), each once, as written."""
    if config.transport != "stdio":
        return []
    named = [config.cwd] if config.cwd else []
    for argument in config.args:
        value = argument.split("=", 1)[1] if argument.startswith("-") and "=" in argument else argument
        if value.startswith(("/", "~")):
            named.append(value)
    return [folder for folder in dict.fromkeys(named) if _is_folder(folder)]


def _is_folder(path: str) -> bool:
    try:
        return Path(path).expanduser().is_dir()
    except OSError:  # a name too long, a folder we may not look into
        return False
