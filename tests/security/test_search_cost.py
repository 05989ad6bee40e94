"""5. Every search is bounded: dense text costs a search time linear in it, a search that runs out of its
time says so, and a search stops when the person who asked leaves."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sidespin.errors import SearchStopped
from sidespin.search import MARK, SearchIndex
from sidespin.transcript import TranscriptStore
from tests.conftest import app_for, in_process, running
from tests.security.conftest import app_request


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "conversations")


def in_a_thread(work, deadline: float):
    """Run `work` in a thread; its result, or a failure when it is not done within `deadline` seconds."""
    outcome: list = []
    thread = threading.Thread(target=lambda: outcome.append(work()), daemon=True)
    thread.start()
    thread.join(deadline)
    assert outcome, f"not done within {deadline} s"
    return outcome[0]


def test_a_search_of_dense_text_is_linear_in_it(tmp_path, store):
    for name, chars in (("forty", 40_000), ("hundred", 100_000)):  # 31 s and 158 s of CPU before
        store.path(name).write_text("💬: " + "a " * (chars // 2) + "\n", encoding="utf-8")
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        hits = in_a_thread(lambda: index.search("a a a"), deadline=30)  # generous: it takes milliseconds
    assert {hit.conversation for hit in hits} == {"forty", "hundred"}
    assert all(hit.snippet.startswith(f"{MARK[0]}a{MARK[1]} {MARK[0]}a{MARK[1]}") for hit in hits)
    assert all(len(hit.text) < 300 for hit in hits)


def test_a_snippet_marks_the_words_around_a_match_far_into_a_message(tmp_path, store):
    store.path("far").write_text("💬: " + "filler " * 5000 + "the Zéppelin landed " + "tail " * 5000 + "\n",
                                 encoding="utf-8")
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        (hit,) = index.search("zeppelin")
    assert f"the {MARK[0]}Zéppelin{MARK[1]} landed" in hit.snippet
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")


def many_matches(store: TranscriptStore) -> None:
    for number in range(300):
        store.path(f"c{number}").write_text(f"💬: zeppelin number {number}\n", encoding="utf-8")


def test_a_search_out_of_its_time_is_stopped_with_a_reason(tmp_path, store):
    many_matches(store)
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        index.refresh()
        with pytest.raises(SearchStopped, match="too long"):
            index.search("zeppelin", seconds=0)
        cancel = threading.Event()
        cancel.set()
        with pytest.raises(SearchStopped):
            index.search("zeppelin", cancel=cancel)
        assert len(index.search("zeppelin")) == 50  # the index is fine afterwards


class WaitingSearch:
    """Stands in for the index's search: waits for its cancel event (or `timeout`), and notes whether it came."""

    def __init__(self, timeout: float = 30) -> None:
        self.timeout = timeout
        self.started = threading.Event()
        self.cancelled = threading.Event()

    def __call__(self, query: str, limit: int = 50, *, cancel: threading.Event | None = None, **_: object):
        self.started.set()
        if cancel is not None and cancel.wait(self.timeout):
            self.cancelled.set()
            raise SearchStopped("stopped")
        return []


def test_a_search_stops_when_the_client_leaves(echo_model, data_dir):
    # leaving is closing a socket: this one keeps a real server
    app = app_for(echo_model, data_dir)
    with running(app) as base:
        waiting = WaitingSearch()
        index = app.state.engine.search
        index.search = waiting
        try:
            parts = urlsplit(base)
            with socket.create_connection((parts.hostname, parts.port), timeout=10) as client:
                client.sendall(f"GET /search?q=zeppelin HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
                assert waiting.started.wait(10)
            assert waiting.cancelled.wait(10)  # the person left: the search was told to stop
        finally:
            del index.search


def test_a_search_out_of_time_answers_with_a_clear_message(echo_model, data_dir):
    def out_of_time(query: str, limit: int = 50, **_: object):
        raise SearchStopped("the search took too long and was stopped; try fewer, longer or rarer words")

    with in_process(echo_model, data_dir) as client:
        index = client.app.state.engine.search
        index.search = out_of_time
        try:
            status, _, body = app_request(client, "GET", "/search?q=zeppelin")
        finally:
            del index.search
    assert status == 200 and b"The search took too long and was stopped" in body
