"""Where the connected servers work: the folders their configuration names, told to the model.

The rules, before the code:

- **Why.** A tool that takes a path or a `repo_path` needs a value the person rarely says:
  asked "what's the git status of my repo?", a small model writes "your-repo-path" or
  "https://github.com/username/repository.git", and the call fails (or, rightly, is not made:
  `sidespin.grounding.invented`). The person already said where, once, in `mcp.json`.
- **What counts as a folder.** A stdio server's `cwd`, and each argument that names an existing
  folder by an absolute (or `~`) path: `--repository /home/me/project`, `--repository=/home/me/project`,
  the filesystem server's allowed directories. Nothing else of the configuration (commands,
  environment, URLs, tokens) is told.
- **Told once, as a fact.** One line per server that has folders, in the system message of every
  rung, so the decision, the arguments and the answer all read it; a value taken from it then
  counts as said (`sidespin.grounding.said_in` reads every message, the system one included).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from sidespin.mcp.config import ServerConfig

__all__ = ["folders", "places_prompt"]


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


def places_prompt(configs: Iterable[ServerConfig]) -> str:
    """The system message's lines saying where each server works ("" when none names a folder)."""
    lines = [f"- {config.name}: {', '.join(found)}" for config in configs
             if not config.disabled and (found := folders(config))]
    if not lines:
        return ""
    return ("The tools' servers work in these folders; a path or repository argument uses them "
            "(a relative path is read inside them):\n" + "\n".join(lines))
