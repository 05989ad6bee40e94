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
- **Told with the server's own tools.** Each tool of the server carries them (`Tool.places`), and the
  route offers it at the end of its description ("It works in /home/me/project", with no full
  stop a small model would copy into the path): a git tool gets the
  repository, a file tool the files' folder, never the other's. A value taken from it counts as
  known (`sidespin.grounding.invented`). Measured: in a system message instead, the same words made
  the 0.5B call far less often (the first token's call probability for "What's on my to-do list?
  It's in notes/todo.md." fell from 0.71 to 0.23; with the tools it rose to 0.80), and its answers
  repeated the folders back.
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
