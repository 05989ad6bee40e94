"""1. Only static/ is served as files: every spelling of `..` is a 404, nothing else in the project or data is reachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, serve_app
from tests.security.conftest import raw_request

TRAVERSALS = [
    "/static/../README.md",
    "/static/..%2fREADME.md",
    "/static/..%2FREADME.md",
    "/static/%2e%2e/README.md",
    "/static/%2e%2e%2fREADME.md",
    "/static/..%5cREADME.md",
    "/static/..\\README.md",
    "/static/....//README.md",
    "/static/%252e%252e/README.md",
    "/static/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fhostname",
    "/static//etc/hostname",
    "/static/%2fetc%2fhostname",
    "/static/..;/README.md",
    "/README.md",
    "/server.py",
    "/pyproject.toml",
    "/mcp.example.json",
    "/.git/config",
    "/sidespin.egg-info/SOURCES.txt",
    "/sidespin/config.py",
    "/data/cat_facts.json",
    "/data/conversations/",
    "/tests/data/seed_example.md",
]


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A file outside the project with a common extension, as the attacker's target."""
    target = tmp_path / "secret-notes.txt"
    target.write_text("the attacker must never read this")
    return target


def test_every_spelling_of_dot_dot_and_every_project_file_is_a_404(echo_model, data_dir, secret_file):
    absolute = str(secret_file).lstrip("/")
    escapes = ["/" + "..%2f" * 12 + absolute, "/static/" + "..%2f" * 12 + absolute,
               "/" + "%2e%2e%2f" * 12 + absolute, "/static/" + "..%5c" * 12 + absolute.replace("/", "%5c")]
    with serve_app(echo_model, data_dir) as base:
        for path in TRAVERSALS + escapes:
            status, _, body = raw_request(base, "GET", path)
            assert status == 404, f"{path} answered {status}"
            assert b"attacker must never" not in body and b"[project]" not in body and b"sidespin" not in body[:200]


def test_the_data_directory_is_not_reachable_even_by_its_own_file_names(echo_model, data_dir):
    with serve_app(echo_model, data_dir) as base:
        raw_request(base, "POST", "/new", b"", {"Content-Type": "application/x-www-form-urlencoded"})
        conversation = next((data_dir / "conversations").glob("*.md"))
        for path in [f"/data/conversations/{conversation.name}", f"/conversations/{conversation.name}",
                     f"/static/../data/conversations/{conversation.name}", "/logs/server.log", "/data/logs/server.log"]:
            assert raw_request(base, "GET", path)[0] == 404, path


def test_the_static_folder_is_still_served(echo_model, data_dir):
    with serve_app(echo_model, data_dir) as base:
        for name in ("app.css", "app.js", "htmx.min.js", "htmx-ext-sse.min.js"):
            status, headers, body = raw_request(base, "GET", f"/static/{name}")
            assert status == 200 and body == (ROOT / "static" / name).read_bytes()
            assert headers["x-content-type-options"] == "nosniff"
