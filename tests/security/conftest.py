"""Helpers for the security tests: requests to the app in process, raw HTTP over a socket (no client tidies a
hostile path), a plain scripted model, and a data folder on a small disk a test fills up."""

from __future__ import annotations

import errno
import http.client
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from tests.scripted import ScriptedBackend

if TYPE_CHECKING:
    from starlette.testclient import TestClient


def raw_request(base: str, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """Send `path` exactly as written (http.client does not normalise `..` or `%2f`)."""
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        sent = {"Host": parts.netloc, **(headers or {})}
        if body is not None and "Content-Length" not in sent and "Transfer-Encoding" not in sent:
            sent["Content-Length"] = str(len(body))
        for key, value in sent.items():
            connection.putheader(key, value)
        connection.endheaders()
        if body is not None:
            connection.send(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def app_request(client: "TestClient", method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """What `raw_request` answers, asked of the app in process: no redirect followed, no cookie kept. httpx tidies
    `..` and `//` in a path, so a test of hostile paths keeps `raw_request` and a socket."""
    response = client.request(method, path, content=body, headers=headers, follow_redirects=False)
    client.cookies.clear()
    return response.status_code, {k.lower(): v for k, v in response.headers.items()}, response.content


def json_of(body: bytes) -> Any:
    return json.loads(body.decode())


@pytest.fixture
def echo_model() -> ScriptedBackend:
    return ScriptedBackend([lambda messages: [f"You said: {messages[-1]['content'][-40:]}"]] * 500)


class SmallDisk:
    """A data folder on a disk of its own that a test fills up: a tmpfs of `size` mounted on it (`kind` "tmpfs"),
    or, where this process may not mount one, the same folder on the usual disk with every `fsync` of a file
    in it failing with ENOSPC while it is full, as a full disk's write does at that call (`kind` "fsync")."""

    def __init__(self, folder: Path, size: str = "2m") -> None:
        self.folder = folder
        self.size = size
        self.kind = ""
        self._filler = folder / "filler.bin"
        self._fsync = os.fsync
        self._full = False

    def __enter__(self) -> "SmallDisk":
        self.folder.mkdir(parents=True, exist_ok=True)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size},mode=0700", "tmpfs",
                                  str(self.folder)], capture_output=True, text=True)
        self.kind = "tmpfs" if mounted.returncode == 0 else "fsync"
        if self.kind == "fsync":
            os.fsync = self._failing_fsync
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.kind == "tmpfs":
            subprocess.run(["umount", "-l", str(self.folder)], check=True)
        else:
            os.fsync = self._fsync

    def _failing_fsync(self, fd: int) -> None:
        inside = os.readlink(f"/proc/self/fd/{fd}").startswith(str(self.folder))
        if self._full and inside:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._fsync(fd)

    def fill(self) -> None:
        """Take every free byte: a new file can no longer be written."""
        self._full = True
        if self.kind != "tmpfs":
            return
        handle = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for chunk in (65536, 4096, 512, 1):
                try:
                    while os.write(handle, b"\0" * chunk):
                        pass
                except OSError as error:
                    assert error.errno == errno.ENOSPC
        finally:
            os.close(handle)

    def free(self) -> None:
        self._full = False
        self._filler.unlink(missing_ok=True)


@pytest.fixture
def small_disk(data_dir: Path):
    with SmallDisk(data_dir) as disk:
        yield disk
