"""7. Links out of the data directory are never followed: a conversation file that is a symbolic link is not
read (page, export, search, listing), a trash folder that is a link is not moved into, nor is the index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidespin.errors import TranscriptError
from sidespin.search import SearchIndex
from sidespin.transcript import TranscriptStore
from tests.conftest import in_process
from tests.security.conftest import app_request

SECRET = "💬: zanzibar-secret-words from outside\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text(SECRET, encoding="utf-8")
    return folder


def test_a_conversation_file_that_is_a_link_is_not_read(tmp_path, outside):
    store = TranscriptStore(tmp_path / "conversations")
    os.symlink(outside / "secret.md", store.path("linked"))
    with pytest.raises(TranscriptError, match="link"):
        store.read("linked")
    with pytest.raises(TranscriptError):
        store.load("linked")
    assert not store.exists("linked")
    ((cid, title, _),) = store.list()
    assert cid == "linked" and "zanzibar" not in title
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        assert index.search("zanzibar") == []


def test_a_trash_folder_that_is_a_link_is_not_moved_into(tmp_path, outside):
    store = TranscriptStore(tmp_path / "conversations")
    cid = store.new()
    store.path(cid).write_text("💬: mine\n", encoding="utf-8")
    os.symlink(outside, store.trash_dir)
    with pytest.raises(TranscriptError, match="link"):
        store.trash(cid)
    assert store.path(cid).read_text(encoding="utf-8") == "💬: mine\n"  # still here
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]  # nothing moved out
    assert store.trashed() == []  # nor listed from there
    with pytest.raises(TranscriptError, match="link"):
        store.restore("secret")
    assert (outside / "secret.md").exists() and not store.path("secret").exists()


def test_a_trash_folder_inside_works_as_before(tmp_path):
    store = TranscriptStore(tmp_path / "conversations")
    cid = store.new()
    store.trash(cid)
    assert [item[0] for item in store.trashed()] == [cid] and not store.exists(cid)
    store.restore(cid)
    assert store.exists(cid) and store.trashed() == []


def test_an_index_file_that_is_a_link_is_not_written_through(tmp_path, outside):
    store = TranscriptStore(tmp_path / "conversations")
    target = outside / "elsewhere.sqlite3"
    target.write_bytes(b"")
    os.symlink(target, tmp_path / "search.sqlite3")
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        index.search("anything")
    assert target.read_bytes() == b""  # built again beside the store, not through the link
    assert not (tmp_path / "search.sqlite3").is_symlink()


def test_the_page_the_export_and_the_search_do_not_follow_a_link(echo_model, data_dir, outside):
    conversations = data_dir / "conversations"
    conversations.mkdir(parents=True)
    os.symlink(outside / "secret.md", conversations / "linked.md")
    with in_process(echo_model, data_dir) as client:
        for path in ("/c/linked", "/export?cid=linked", "/search?q=zanzibar", "/"):
            status, headers, body = app_request(client, "GET", path)
            if status in (302, 303, 307):
                status, _, body = app_request(client, "GET", headers["location"])
            assert b"secret-words" not in body, path  # the query itself is echoed: "zanzibar" alone may show
        status, _, _ = app_request(client, "GET", "/export?cid=linked")
        assert status == 404
