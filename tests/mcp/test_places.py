"""Which folders of a server's configuration are told to the model (sidespin.mcp.places)."""

from __future__ import annotations

from pathlib import Path

from sidespin.mcp.config import ServerConfig
from sidespin.mcp.places import folders


def test_the_cwd_and_every_argument_naming_an_existing_folder_are_its_folders(tmp_path: Path) -> None:
    repo, files, data = tmp_path / "repo", tmp_path / "files", tmp_path / "data.json"
    repo.mkdir(), files.mkdir(), data.write_text("{}")
    config = ServerConfig("git", "stdio", command="mcp-server-git", cwd=str(files),
                          args=["--repository", str(repo), f"--root={files}", str(data), str(tmp_path / "gone"),
                                "relative/path", "--verbose"])
    assert folders(config) == [str(files), str(repo)]  # cwd first, each once; no file, no missing or relative path


def test_a_remote_server_has_no_folders_of_ours(tmp_path: Path) -> None:
    assert folders(ServerConfig("remote", "http", url="https://example.com/mcp")) == []
