"""6. One bad file breaks no other page: a conversation file that cannot be read is listed as unreadable and
skipped; every other page, conversation and search works."""

from __future__ import annotations

import os

import pytest

from sidespin.errors import TranscriptError
from sidespin.events import ToolFinished, ToolProposed
from sidespin.tools import ToolCall, ToolResult
from sidespin.transcript import TranscriptRecorder, TranscriptStore, parse
from tests.conftest import in_process
from tests.security.conftest import app_request

DEEP = 5000


def nested_note(depth: int) -> str:
    return "<!-- sidespin: " + '{"a":' * depth + "1" + "}" * depth + " -->\n"


def deep_call(depth: int) -> str:
    arguments = '{"a":' * depth + "1" + "}" * depth
    return '❓: `{"id":"c1","type":"function","function":{"name":"t","arguments":' + arguments + "}}`\n"


BAD_FILES = {
    "a note nested deep at the top": nested_note(DEEP) + "💬: hello\n",
    "a note nested deep in an answer": "💬: hello\n🤖:\n\n" + nested_note(DEEP),
    "a note nested deep under a question": "💬: hello\n" + nested_note(DEEP),
    "a tool call nested deep": "💬: hello\n🤖:\n\n" + deep_call(DEEP),
}


@pytest.mark.parametrize("text", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_file_nested_too_deep_is_read_or_refused_with_its_line_never_a_crash(tmp_path, text):
    store = TranscriptStore(tmp_path)
    path = store.path("deep")
    path.write_text(text, encoding="utf-8")
    try:
        store.load("deep").render()
    except TranscriptError as error:
        assert error.line is not None
    assert [item[0] for item in store.list()] == ["deep"]


def test_a_note_nested_deep_is_not_a_note():
    (turn,) = parse("💬: hello\n" + nested_note(DEEP)).turns
    assert turn.user_note == {}


def test_a_result_nested_too_deep_to_keep_is_recorded_without_its_structured_content(tmp_path):
    store = TranscriptStore(tmp_path)
    cid = store.new()
    recorder = TranscriptRecorder(store, cid, "m", min_interval=0)
    recorder.user("q")
    call = ToolCall("t", {}, id="c1")
    structured: dict = {}
    inner = structured
    for _ in range(DEEP):
        inner["a"] = inner = {}
    recorder.apply(ToolProposed(call))
    recorder.apply(ToolFinished(ToolResult(call, output="ok", structured=structured)))
    (result,) = store.load(cid).turns[-1].results()
    assert result.text == "ok"


def test_a_file_that_cannot_be_opened_is_listed_as_unreadable(tmp_path):
    store = TranscriptStore(tmp_path)
    good = store.new()
    (tmp_path / "broken.md").mkdir()  # a folder with a conversation's name: cannot be read as a file
    listed = dict((cid, title) for cid, title, _ in store.list())
    assert good in listed and "unreadable" in listed["broken"]


def test_every_page_works_beside_a_file_nested_too_deep(echo_model, data_dir):
    conversations = data_dir / "conversations"
    conversations.mkdir(parents=True)
    (conversations / "good.md").write_text("💬: the good one\n🤖:\n\nfine\n\n💬: \n", encoding="utf-8")
    for number, text in enumerate(BAD_FILES.values()):
        (conversations / f"bad{number}.md").write_text(text, encoding="utf-8")
        os.utime(conversations / f"bad{number}.md", (2_000_000_000, 2_000_000_000))  # the newest: opened by /
    with in_process(echo_model, data_dir) as client:
        status, headers, _ = app_request(client, "GET", "/")
        assert status in (302, 303, 307)
        status, _, page = app_request(client, "GET", headers["location"])
        assert status == 200
        status, _, page = app_request(client, "GET", "/c/good")
        assert status == 200 and b"the good one" in page
        status, _, found = app_request(client, "GET", "/search?q=good")
        assert status == 200 and b"the good one" in found
        for number in range(len(BAD_FILES)):
            status, _, _ = app_request(client, "GET", f"/c/bad{number}")
            assert status == 200  # drawn, or "This conversation cannot be shown"
            status, _, _ = app_request(client, "GET", f"/export?cid=bad{number}")
            assert status == 200
