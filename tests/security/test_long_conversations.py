"""4. A long conversation opens without stopping the server: it is read and drawn off the event loop, in a
window of turns (the others a link away), so /health answers meanwhile; an import states its limits."""

from __future__ import annotations

import threading
import time

import pytest
from fasthtml.common import to_xml
from starlette.testclient import TestClient

from sidespin import versions
from sidespin.search import SearchIndex
from sidespin.transcript import TranscriptStore
from sidespin.web.sidebar import SearchHit
from sidespin.web.live import HISTORY_WINDOW
from tests.conftest import in_process
from tests.security.conftest import app_request

TURNS = 8000  # 176 KB; it took 188 s to open, /health unanswered all along


def long_conversation(turns: int) -> str:
    return "".join(f"💬: question {i}.\n🤖:\n\nanswer {i}.\n\n" for i in range(turns)) + "💬: \n"


class HealthPoll:
    """Asks /health every 0.1 s from a thread of its own; notes every answer that took over a second."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.answered = 0
        self.late: list[str] = []
        self._stop = threading.Event()
        self._answer = threading.Condition()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            status = self.client.get("/health").status_code
            took = time.monotonic() - started
            if took > 1.0 or status != 200:
                self.late.append(f"{took:.2f} s: {status}")
            else:
                with self._answer:
                    self.answered += 1
                    self._answer.notify_all()
            self._stop.wait(0.1)

    def one_more(self, timeout: float = 10.0) -> None:
        """Wait for the next answer (what the page left running, if anything, would delay it)."""
        with self._answer:
            seen = self.answered
            self._answer.wait_for(lambda: self.answered > seen, timeout)

    def __enter__(self) -> "HealthPoll":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_health_answers_within_a_second_while_a_long_conversation_opens(echo_model, data_dir):
    conversations = data_dir / "conversations"
    conversations.mkdir(parents=True)
    (conversations / "long.md").write_text(long_conversation(TURNS), encoding="utf-8")
    with in_process(echo_model, data_dir) as client:
        with HealthPoll(client) as health:
            status, _, page = app_request(client, "GET", "/c/long")  # a generous deadline: 30 s
            health.one_more()
        assert status == 200
        assert health.late == [] and health.answered >= 2
        assert f'id="user-{TURNS - 1}"'.encode() in page and b'id="user-0"' not in page
        assert page.count(b'data-role="user"') == HISTORY_WINDOW
        assert b"earlier messages" in page

        status, _, first = app_request(client, "GET", "/c/long?start=0")
        assert status == 200 and b'id="user-0"' in first and f'id="user-{TURNS - 1}"'.encode() not in first
        assert b"later messages" in first


def test_a_short_conversation_is_drawn_whole_without_paging(echo_model, data_dir):
    conversations = data_dir / "conversations"
    conversations.mkdir(parents=True)
    (conversations / "short.md").write_text(long_conversation(3), encoding="utf-8")
    with in_process(echo_model, data_dir) as client:
        status, _, page = app_request(client, "GET", "/c/short?start=2")
        assert status == 200 and b'id="user-0"' in page and b'id="user-2"' in page
        assert b"earlier messages" not in page and b"later messages" not in page


def test_an_import_states_its_limit_on_turns_and_writes_nothing(tmp_path):
    store = TranscriptStore(tmp_path)
    data = long_conversation(47_644).encode()  # 1 MB of tiny turns: it held the server for over 13 minutes
    with pytest.raises(ValueError, match=f"at most {versions.MAX_IMPORT_TURNS:,}"):
        versions.import_bytes(store, data, "huge.md", limit=len(data))
    assert store.list() == []
    cid = versions.import_bytes(store, long_conversation(versions.MAX_IMPORT_TURNS - 1).encode(), "long.md",
                                limit=len(data))
    assert len(store.load(cid).turns) == versions.MAX_IMPORT_TURNS


def test_a_search_hit_links_to_the_window_that_draws_its_turn(tmp_path):
    store = TranscriptStore(tmp_path / "conversations")
    text = long_conversation(1000).replace("question 5.", "zeppelins early", 1).replace("question 998.", "zeppelins late")
    store.path("long").write_text(text, encoding="utf-8")
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        links = {hit.turn: to_xml(SearchHit(hit)) for hit in index.search("zeppelins")}
    assert 'href="/c/long?start=0#user-5"' in links[5]
    assert 'href="/c/long#user-998"' in links[998]  # in the last window: the page as it opens
