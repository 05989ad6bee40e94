"""Search: the FTS5 index follows the markdown files (the truth), whatever happens to either."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest
from fasthtml.common import to_xml

from sidespin.events import TextDelta, TurnDone
from sidespin.protocol import poke_prompt
from sidespin.search import SearchIndex
from sidespin.tools import ToolCall, tool
from sidespin.transcript import TranscriptRecorder, TranscriptStore
from sidespin.web.sidebar import ConversationGroups, SearchResults
from tests.conftest import ROOT, ollama_stub, serving_in_thread


def converse(store: TranscriptStore, question: str, answer: str, conversation: str | None = None) -> str:
    conversation = conversation or store.new()
    recorder = TranscriptRecorder(store, conversation, "m", min_interval=0)
    recorder.user(question)
    recorder.apply(TextDelta(answer))
    recorder.apply(TurnDone(reason="done"))
    return conversation


@pytest.fixture
def store(tmp_path: Path) -> TranscriptStore:
    return TranscriptStore(tmp_path / "conversations")


@pytest.fixture
def index(tmp_path: Path, store: TranscriptStore):
    with SearchIndex(tmp_path / "search.sqlite3", store) as index:
        yield index


def found(index: SearchIndex, query: str) -> list[tuple[str, int, str]]:
    return [(hit.conversation, hit.turn, hit.role) for hit in index.search(query)]


def test_a_search_finds_questions_and_answers_and_marks_the_words(index, store):
    first = converse(store, "Tell me about zeppelins", "Zeppelins are rigid airships.")
    second = converse(store, "And balloons?", "Balloons have no frame.")
    converse(store, "What about kites?", "Kites are tethered.", second)
    assert sorted(found(index, "zeppelins")) == [(first, 0, "assistant"), (first, 0, "user")]
    assert found(index, "tethered") == [(second, 1, "assistant")]
    hit = index.search("rigid")[0]
    assert hit.snippet == "Zeppelins are \x02rigid\x03 airships." and hit.text == "Zeppelins are rigid airships."
    assert hit.title == "Tell me about zeppelins"
    assert found(index, "zepp") == found(index, "zeppelin") == found(index, "zeppelins")  # the last word: a prefix
    assert found(index, '"rigid airships"') == [(first, 0, "assistant")]  # FTS5 syntax works too
    assert set(found(index, "tethered OR frame")) == {(second, 0, "assistant"), (second, 1, "assistant")}


def test_what_the_store_writes_is_indexed_at_once(index, store):
    converse(store, "Where is Lyon?", "Lyon is in France.")
    assert found(index, "France")
    assert index.refresh() == 0  # nothing for the search to catch up on: every save was indexed


def test_a_file_edited_by_hand_is_searched_as_it_now_is(index, store):
    conversation = converse(store, "Where is Lyon?", "Lyon is in France.")
    assert found(index, "France")
    path = store.path(conversation)
    path.write_text(path.read_text().replace("France", "Burgundy"), encoding="utf-8")
    assert found(index, "Burgundy") == [(conversation, 0, "assistant")]
    assert found(index, "France") == []


def test_a_file_written_by_someone_else_appears_and_a_deleted_one_goes(index, store):
    kept = converse(store, "alpha question", "alpha answer")
    (store.directory / "20260101-000000-abcdef.md").write_text("💬: a hand-made omega\n", encoding="utf-8")
    assert found(index, "omega") == [("20260101-000000-abcdef", 0, "user")]
    (store.directory / "20260101-000000-abcdef.md").unlink()
    store.path(kept).unlink()
    assert found(index, "omega") == [] and found(index, "alpha") == []


def test_a_deleted_index_is_built_again_from_the_files(index, store, tmp_path):
    conversation = converse(store, "Tell me about zeppelins", "They float.")
    (tmp_path / "search.sqlite3").unlink()
    assert found(index, "float") == [(conversation, 0, "assistant")]
    assert (tmp_path / "search.sqlite3").exists()


def test_a_corrupt_or_stale_index_is_built_again(index, store, tmp_path):
    conversation = converse(store, "Tell me about zeppelins", "They float.")
    index.close()
    (tmp_path / "search.sqlite3").write_bytes(b"not a database " * 500)
    assert found(index, "float") == [(conversation, 0, "assistant")]
    index.close()
    import sqlite3

    with sqlite3.connect(tmp_path / "search.sqlite3") as db:
        db.execute("PRAGMA user_version = 999")  # made by another version
    db.close()
    assert found(index, "float") == [(conversation, 0, "assistant")]


@pytest.mark.parametrize("query", ['"half', "AND", "zeppelins AND", "(", "a:b", "NEAR(", "*", "^", '""', "-x"])
def test_a_query_that_is_not_fts5_syntax_is_searched_as_plain_words(index, store, query):
    converse(store, "Tell me about zeppelins and airships", "x-rays: a:b (half) of it")
    index.search(query)  # never raises


def test_plain_words_find_what_fts5_syntax_would_refuse(index, store):
    conversation = converse(store, "C++ and foo-bar, a:b", 'A "half quote')
    assert found(index, "foo-bar") == [(conversation, 0, "user")]
    assert found(index, '"half') == [(conversation, 0, "assistant")]
    assert found(index, "airships AND") == []


def test_calls_results_thoughts_and_notes_are_not_searched(index, store):
    conversation = store.new()
    recorder = TranscriptRecorder(store, conversation, "m", min_interval=0)
    recorder.user("weather please")
    from sidespin.events import Thought, ToolFinished, ToolProposed
    from sidespin.tools import ToolResult

    call = ToolCall("lookup", {"city": "Quimper"})
    recorder.apply(Thought("I ponder the sardines", closed=True))
    recorder.apply(ToolProposed(call))
    recorder.apply(ToolFinished(ToolResult(call, output="drizzle in Quimper")))
    recorder.apply(TextDelta("It drizzles."))
    recorder.apply(TurnDone(reason="done"))
    assert found(index, "drizzles") == [(conversation, 0, "assistant")]
    assert found(index, "Quimper") == [] and found(index, "sardines") == [] and found(index, "lookup") == []


# ---- titles, trash ----


@tool
def get_cat_fact() -> str:
    """A fact about cats."""
    return "cats sleep"


def test_titles_a_poke_a_rename_and_never_new_for_a_conversation_with_a_message(store):
    poked = store.new()
    TranscriptRecorder(store, poked, "m").user(poke_prompt([get_cat_fact], "get_cat_fact"))
    named = converse(store, "a question", "an answer")
    transcript = store.load(named)
    transcript.set_meta("title", "My trip to Lyon")
    store.save(named, transcript)
    answer_only = store.new()
    store.path(answer_only).write_text("💬:\n\n🤖:[m]\n\nAn answer nobody asked for.\n", encoding="utf-8")
    empty = store.new()
    titles = {cid: title for cid, title, _ in store.list()}
    assert titles[poked] == "🏓 get_cat_fact" == store.load(poked).title()
    assert titles[named] == "My trip to Lyon" == store.load(named).title()
    assert titles[answer_only] == "An answer nobody asked for." == store.load(answer_only).title()
    assert titles[empty] == "(new conversation)"
    assert "My trip to Lyon" not in store.read(named).split("💬:")[1]  # kept in the note at the top


def test_a_deleted_conversation_goes_to_the_trash_and_comes_back(index, store):
    conversation = converse(store, "Tell me about zeppelins", "They float.")
    store.trash(conversation)
    assert conversation not in [cid for cid, _, _ in store.list()]
    assert [cid for cid, _, _ in store.trashed()] == [conversation]
    assert (store.directory / ".trash" / f"{conversation}.md").is_file()
    assert found(index, "float") == []
    store.restore(conversation)
    assert found(index, "float") == [(conversation, 0, "assistant")]
    assert store.trashed() == []
    store.trash(conversation)
    store.path(conversation).write_text("💬: a new file with the same name\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        store.restore(conversation)


# ---- the sidebar's parts ----


def test_the_list_is_grouped_by_day_most_recent_first():
    today = date(2026, 11, 23)
    noon = datetime(2026, 11, 23, 12).timestamp()
    listing = [("c1", "this morning", noon), ("c2", "last night", noon - 86400),
               ("c3", "last week", noon - 6 * 86400), ("c4", "last year", noon - 400 * 86400)]
    html = to_xml(ConversationGroups(listing, "c2", today=today))
    headings = [part.split("</h2>")[0] for part in html.split("<h2>")[1:]]
    assert headings == ["Today", "Yesterday", "Tuesday 17 November", "Sunday 19 October 2025"]
    assert 'class="current"' in html.split("last night")[0].rsplit("<li", 1)[1]


def test_a_snippet_is_escaped_and_only_the_marks_become_markup(index, store):
    converse(store, "a question", "<script>alert(1)</script> & the <b>zeppelin</b>")
    html = to_xml(SearchResults(index.search("zeppelin"), "zeppelin"))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&lt;b&gt;<mark>zeppelin</mark>&lt;/b&gt;" in html
    assert "#turn-0" in html


# ---- the command ----


def test_sidespin_search_finds_what_sidespin_ask_said(tmp_path):
    def reply(body: dict) -> list[dict]:
        return [{"content": "Zeppelins float on "}, {"content": "hydrogen."}]

    environment = {**os.environ, "SIDESPIN_DATA_DIR": str(tmp_path / "data"), "SIDESPIN_TOOL_MODE": "xml",
                   "SIDESPIN_MCP_CONFIG": str(tmp_path / "mcp.json")}
    environment.pop("SIDESPIN_BACKEND", None)
    with serving_in_thread(ollama_stub(reply)) as url:
        asked = subprocess.run([sys.executable, "-m", "sidespin.cli", "ask", "--model", "ollama:stub",
                                "What keeps an airship up?"], cwd=ROOT, capture_output=True, text=True,
                               env={**environment, "OLLAMA_HOST": url}, timeout=120)
    assert asked.returncode == 0, asked.stderr
    assert "hydrogen" in asked.stdout
    searched = subprocess.run([sys.executable, "-m", "sidespin.cli", "search", "hydrogen", "--json"], cwd=ROOT,
                              capture_output=True, text=True, env=environment, timeout=60)
    assert searched.returncode == 0, searched.stderr
    hits = json.loads(searched.stdout)
    assert len(hits) == 1
    assert hits[0]["title"] == "What keeps an airship up?" and hits[0]["snippet"] == "Zeppelins float on hydrogen."
    assert datetime.fromisoformat(hits[0]["when"]).date() == date.today()
    assert (tmp_path / "data" / "conversations" / f"{hits[0]['id']}.md").is_file()
    nothing = subprocess.run([sys.executable, "-m", "sidespin.cli", "search", "helium", "--json"], cwd=ROOT,
                             capture_output=True, text=True, env=environment, timeout=60)
    assert nothing.returncode == 1 and json.loads(nothing.stdout) == []


# ---- the routes refuse bad input with a reason ----


def test_the_sidebar_routes_refuse_bad_input_with_a_clear_json_reason(tmp_path):
    from tests.scripted import ScriptedBackend
    from tests.conftest import in_process

    with in_process(ScriptedBackend([]), tmp_path / "data") as client:
        client.headers["Origin"] = str(client.base_url).rstrip("/")
        cid = str(client.get("/").url).rsplit("/", 1)[1]

        def refusal(method: str, path: str, **kwargs) -> tuple[int, str]:
            response = client.request(method, path, follow_redirects=False, **kwargs)
            return response.status_code, response.json()["error"]

        assert refusal("GET", "/search", params={"q": "x" * 501}) == (
            400, "the search has 501 characters; the limit is 500")
        status, reason = refusal("POST", "/rename", data={"cid": "no-such-one", "title": "x"})
        assert status == 404 and "no conversation 'no-such-one'" in reason
        assert refusal("POST", "/rename", data={"cid": cid, "title": "t" * 201})[0] == 400
        assert refusal("POST", "/delete", data={"cid": "../../etc/passwd"})[0] == 404
        assert client.post("/delete", data={"cid": cid}, follow_redirects=False).status_code == 303
        (tmp_path / "data" / "conversations" / f"{cid}.md").write_text("💬: same name, new file\n")
        status, reason = refusal("POST", "/restore", data={"cid": cid})
        assert status == 409 and "exists already" in reason
