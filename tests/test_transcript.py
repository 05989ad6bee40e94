"""The transcript is the state: Parley's markdown format, read back exactly, written as events arrive."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidespin.errors import TranscriptError
from sidespin.events import ApprovalNeeded, TextDelta, Thought, ToolFinished, ToolProposed, ToolStarted, TurnDone
from sidespin.tools import ToolCall, ToolResult
from sidespin.transcript import (
    CONDENSED,
    NOT_RUN,
    REFUSED,
    RESULT,
    Proposal,
    Result,
    TranscriptRecorder,
    TranscriptStore,
    parse,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SEED_FILE = Path("/work/shared/seeds/002_3813ba488b336489.txt")


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def seed_call(number: int, name: str, query: str) -> dict:
    arguments = '{"query":"' + query + '"}'
    return {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": arguments}}


# The message list the seed's example stands for (seed 002, written by hand from it):
# one chat completion proposed both calls after "Should, I need to search the web.",
# the results go back as tool messages, the second completion's answer follows.
SEED_MESSAGES = [
    {"role": "user", "content": "can you find the latest stock price of google and microsoft?"},
    {
        "role": "assistant",
        "content": "Should, I need to search the web.",
        "tool_calls": [
            seed_call(1, "repo_search", "google stock price"),
            seed_call(2, "web_search", "microsoft stock price"),
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "call_1",
        "name": "repo_search",
        "content": '{"matches":[{"google stock GOOGL price is $911 as of today" ... ]}',
    },
    {
        "role": "tool",
        "tool_call_id": "call_2",
        "name": "repo_search",
        "content": '{"matches":[{"microsoft stock MSFT price is $544 as of today" ... ]}',
    },
    {
        "role": "assistant",
        "content": "Ok, I found the price of GOOGL is $911 and MSFT is $544 as of today. Do you want something else?",
    },
]


def test_seed_example_renders_back_byte_for_byte() -> None:
    text = read(DATA / "seed_example.md")
    assert parse(text).render() == text


@pytest.mark.skipif(not SEED_FILE.exists(), reason="the seed documents are not on this machine")
def test_seed_fixtures_are_the_seed_blocks() -> None:
    # The seed file holds UTF-8 that was once read as Mac Roman ("üí¨:" for "💬:"); undo that.
    seed = read(SEED_FILE).encode("mac_roman").decode("utf-8")
    assert "\n===\n\n" + read(DATA / "seed_example.md") + "\n===\n" in seed
    prompt = ">> Please choose (yA/ya/yo/yO): \n"
    assert "\n===\n\n" + read(DATA / "seed_pending.md") + prompt + "\n===\n" in seed


def test_seed_example_gives_exactly_the_seed_messages() -> None:
    transcript = parse(read(DATA / "seed_example.md"))
    assert transcript.to_messages() == SEED_MESSAGES
    assert transcript.pending_calls() == []


def test_seed_first_answer_waits_for_both_proposals() -> None:
    transcript = parse(read(DATA / "seed_pending.md"))
    assert [call.id for call in transcript.pending_calls()] == ["call_1", "call_2"]
    assert transcript.pending_calls()[1] == ToolCall("web_search", {"query": "microsoft stock price"}, "call_2")
    messages = transcript.to_messages()
    assert messages[-1]["role"] == "assistant"
    assert [item["id"] for item in messages[-1]["tool_calls"]] == ["call_1", "call_2"]


def proposal_line(call_id: str, name: str = "web_search", decision: str = "") -> str:
    chosen = f"[{decision}]" if decision else ""
    return f'❓:{chosen} `{{"id":"{call_id}","type":"function","function":{{"name":"{name}","arguments":"{{}}"}}}}`\n'


def test_pending_calls_are_the_undecided_unanswered_proposals_of_the_last_turn() -> None:
    text = (
        "💬: three things\n\n🤖:[m]\n\nLet me look.\n\n"
        + proposal_line("a", decision="yo")
        + proposal_line("b")
        + f"{RESULT} [web_search][b]\n\n`done`\n\n"
        + proposal_line("c")
    )
    transcript = parse(text)
    assert [call.id for call in transcript.pending_calls()] == ["c"]
    assert parse(text + "\nAll done.\n\n💬: \n").pending_calls() == []
    # a new question leaves the unanswered call behind: the model is told it did not run
    abandoned = parse(text + "\n💬: never mind\n").to_messages()
    assert abandoned[-2] == {"role": "tool", "tool_call_id": "c", "name": "web_search", "content": NOT_RUN}
    assert abandoned[-1] == {"role": "user", "content": "never mind"}


def test_refused_call_tells_the_model_and_the_answer_goes_on() -> None:
    text = "💬: search\n\n🤖:[m]\n\n" + proposal_line("a", decision="n") + "\nI will not search then.\n"
    assert parse(text).to_messages() == [
        {"role": "user", "content": "search"},
        {"role": "assistant", "tool_calls": [seed_call_empty("a")]},
        {"role": "tool", "tool_call_id": "a", "name": "web_search", "content": REFUSED},
        {"role": "assistant", "content": "I will not search then."},
    ]


def seed_call_empty(call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "web_search", "arguments": "{}"}}


def test_unanswered_proposal_before_later_text_is_reported_not_run() -> None:
    text = "💬: q\n\n🤖:[m]\n\n" + proposal_line("a", decision="ya") + "\nLater text.\n"
    messages = parse(text).to_messages()
    assert messages[2] == {"role": "tool", "tool_call_id": "a", "name": "web_search", "content": NOT_RUN}


def test_thoughts_are_not_sent_and_error_results_are() -> None:
    text = (
        "💬: q\n\n🤖:[m]\n\n🧠: the user wants x\nso call it\n\n"
        + proposal_line("a", decision="ya")
        + f"{RESULT} [web_search][a][error]\n\n```\nError: boom\nsecond line\n```\n\nSorry.\n"
    )
    transcript = parse(text)
    assert transcript.render() == text
    result = transcript.turns[0].results()[0]
    assert (result.is_error, result.text) == (True, "Error: boom\nsecond line")
    messages = transcript.to_messages()
    assert all("the user wants" not in str(message) for message in messages)
    assert messages[2]["content"] == "Error: boom\nsecond line"


def exchange(number: int, summary: str | None) -> str:
    text = f"💬: question {number}\n\n🤖:[m]\n\nanswer {number}\n\n"
    return text + (f"📝: {summary}\n\n" if summary else "")


def test_summaries_condense_older_turns() -> None:
    transcript = parse(exchange(1, "asked one, answered one") + exchange(2, None) + exchange(3, "s3") + "💬: \n")
    full = transcript.to_messages()
    assert [m["content"] for m in full if m["role"] == "user"] == ["question 1", "question 2", "question 3"]
    assert full[1]["content"] == "answer 1\n\n📝: asked one, answered one"
    condensed = transcript.to_messages(summarize_after=1)
    assert condensed == [
        {"role": "user", "content": CONDENSED},
        {"role": "assistant", "content": "asked one, answered one"},
        {"role": "user", "content": "question 2"},  # no summary: kept whole
        {"role": "assistant", "content": "answer 2"},
        {"role": "user", "content": "question 3"},
        {"role": "assistant", "content": "answer 3\n\n📝: s3"},
    ]
    assert transcript.to_messages(summarize_after=0)[-1] == {"role": "assistant", "content": "s3"}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("🤖:[m]\nhello\n", 1, "before the first 💬:"),
        ("💬: hi\n\n🤖:[m]\n\n❓: `{bad json`\n", 5, "not valid JSON"),
        ('💬: hi\n🤖:\n❓:[maybe] `{"id":"a","function":{"name":"t","arguments":"{}"}}`\n', 3, "ya, yA, yo, yO, n"),
        ('💬: hi\n🤖:\n❓: `{"id":"a"}`\n', 3, "needs"),
        ("💬: hi\n🤖:\n🛠️: [t][c]\n\nno backticks\n", 5, "in backticks"),
        ("💬: hi\n🤖:\n🛠️: [t][c]\n\n```\nunclosed\n", 5, "never closed"),
        ("💬: hi\n🤖:\n🛠️: t c\n", 3, "[tool][call-id]"),
        ("💬: hi\n🤖:\ntext\n🤖:\n", 4, "second 🤖:"),
    ],
)
def test_parse_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TranscriptError) as caught:
        parse(text, path="chat.md")
    assert caught.value.line == line
    assert f"chat.md, line {line}" in str(caught.value)
    assert words in str(caught.value)


def test_text_that_is_not_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    store.path("broken").write_bytes(b"\xf0\x9f\x92\xac: hi\n\n\xff\xfe oops\n")
    with pytest.raises(TranscriptError) as caught:
        store.load("broken")
    assert caught.value.line == 3


MARKERISH = st.sampled_from(
    ["💬:", "💬: ", "🤖:", "🤖:[m]", "🧠: ", "📝: ", "❓:", "❓:[yA] ", "❓:[zz]", RESULT, " [t][c1]", "[error]",
     "🛠:", "\n", "\n\n", " ", "`", "```", "\r", "\ufeff", "x", "é", "[", "]",
     '`{"id":"c1","type":"function","function":{"name":"t","arguments":"{}"}}`']
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(MARKERISH, st.text(max_size=4)), max_size=40))
def test_any_text_that_parses_renders_back_exactly(pieces: list[str]) -> None:
    text = "".join(pieces)
    try:
        transcript = parse(text)
    except TranscriptError as error:
        assert error.line is not None and 1 <= error.line <= text.count("\n") + 1
        return
    assert transcript.render() == text


# ---- writing ----


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def new_recorder(tmp_path: Path, **options: Any) -> TranscriptRecorder:
    store = TranscriptStore(tmp_path / "conversations")
    return TranscriptRecorder(store, store.new(), "Claude-Sonnet", **options)


GOOGLE = ToolCall("web_search", {"query": "google stock price"}, "call_1")
MICROSOFT = ToolCall("web_search", {"query": "microsoft stock price"}, "call_2")

RECORDED_SEED = (
    "💬: can you find the latest stock price of google and microsoft?\n\n"
    "🤖:[Claude-Sonnet]\n\n"
    "Should, I need to search the web.\n\n"
    '❓:[yA] `{"id":"call_1","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"google stock price\\"}"}}`\n'
    "🛠️: [web_search][call_1]\n\n"
    "`GOOGL $911`\n\n"
    '❓:[yA] `{"id":"call_2","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"microsoft stock price\\"}"}}`\n'
    "🛠️: [web_search][call_2]\n\n"
    "`MSFT $544`\n\n"
    "Ok, I found the price of GOOGL is $911 and MSFT is $544 as of today.\n\n"
    "💬: \n"
)


def test_recorder_writes_the_seed_exchange_across_an_approval(tmp_path: Path) -> None:
    recorder = new_recorder(tmp_path)
    store, conversation = recorder.store, recorder.conversation_id
    recorder.user("can you find the latest stock price of google and microsoft?")
    for event in [
        TextDelta("Should, I need "), TextDelta("to search the web."),
        ToolProposed(GOOGLE), ApprovalNeeded(GOOGLE), ToolProposed(MICROSOFT), ApprovalNeeded(MICROSOFT),
        TurnDone(reason="approval", pending=[GOOGLE, MICROSOFT]),
    ]:
        recorder.apply(event)
    assert [call.id for call in store.load(conversation).pending_calls()] == ["call_1", "call_2"]

    # Later (another request, after a reload): the person answers yA and the rally goes on.
    later = TranscriptRecorder(store, conversation, "Claude-Sonnet")
    for call in (GOOGLE, MICROSOFT):
        later.record_decision(call.id, "yA")
    assert store.load(conversation).pending_calls() == []
    for event in [
        ToolStarted(GOOGLE), ToolStarted(MICROSOFT),
        ToolFinished(ToolResult(MICROSOFT, output="MSFT $544")), ToolFinished(ToolResult(GOOGLE, output="GOOGL $911")),
        TextDelta("Ok, I found the price of GOOGL is $911 and MSFT is $544 as of today."),
        TurnDone(),
    ]:
        later.apply(event)
    written = store.read(conversation)
    notes = [line for line in written.splitlines(keepends=True) if line.startswith("<!-- sidespin: ")]
    # the seed's exchange, plus one note per result with what the page shows of it (its duration)
    assert "".join(line for line in written.splitlines(keepends=True) if line not in notes) == RECORDED_SEED
    assert notes == ['<!-- sidespin: {"result":"call_1","seconds":0.0} -->\n',
                     '<!-- sidespin: {"result":"call_2","seconds":0.0} -->\n']
    messages = store.load(conversation).to_messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "name": "web_search", "content": "GOOGL $911"}


def test_structured_content_is_kept_through_a_reload_and_an_edit(tmp_path: Path) -> None:
    from sidespin import versions

    recorder = new_recorder(tmp_path)
    recorder.user("weather?")
    weather = ToolCall("weather", {"city": "Lyon"}, "call_w")
    huge = {"rows": ["x" * 1000] * 200}  # over the note's limit: only its text is kept
    listing = ToolCall("rows", {}, "call_r")
    for event in [ToolProposed(weather), ToolStarted(weather),
                  ToolFinished(ToolResult(weather, output="14 °C in Lyon", structured={"temperature": 14, "unit": "C"})),
                  ToolProposed(listing), ToolStarted(listing),
                  ToolFinished(ToolResult(listing, output="200 rows", structured=huge)),
                  TextDelta("It is 14 °C."), TurnDone()]:
        recorder.apply(event)
    transcript = recorder.store.load(recorder.conversation_id)
    finished = {event.result.call.id: event.result for event in transcript.turns[0].events(last=True)
                if isinstance(event, ToolFinished)}
    assert finished["call_w"].structured == {"temperature": 14, "unit": "C"}
    assert finished["call_w"].text() == "14 °C in Lyon"
    assert finished["call_r"].structured is None and finished["call_r"].text() == "200 rows"
    assert len(recorder.store.read(recorder.conversation_id)) < 10_000
    reused = {result.call.id: result for result in versions.recorded_results(transcript, 0)}
    assert reused["call_w"].structured == {"temperature": 14, "unit": "C"}


def test_recorder_fills_the_empty_user_turn_and_keeps_thoughts_apart(tmp_path: Path) -> None:
    recorder = new_recorder(tmp_path)
    recorder.user("first")
    for event in [Thought("Let me", closed=False), Thought(" think.\n\nMore.", closed=False),
                  TextDelta("Answer."), TurnDone()]:
        recorder.apply(event)
    recorder.user("second\n🤖: not a marker")
    text = recorder.store.read(recorder.conversation_id)
    assert text == (
        "💬: first\n\n🤖:[Claude-Sonnet]\n\n🧠: Let me think.\n\n🧠: More.\n\nAnswer.\n\n"
        "💬: second\n 🤖: not a marker\n"
    )
    transcript = parse(text)
    assert transcript.render() == text
    assert [m["content"] for m in transcript.to_messages()] == ["first", "Answer.", "second\n 🤖: not a marker"]


def test_streamed_text_is_written_at_most_every_50_ms_and_completely_at_the_end(tmp_path: Path) -> None:
    clock = FakeClock()
    recorder = new_recorder(tmp_path, clock=clock)
    recorder.user("count")
    before = recorder.writes
    for number in range(100):
        recorder.apply(TextDelta(f"{number} "))
        clock.now += 0.002  # 100 tokens over 0.2 s
    assert recorder.writes - before <= 5
    recorder.apply(ToolProposed(GOOGLE))  # any other event is written at once
    on_disk = parse(recorder.store.read(recorder.conversation_id))
    assert on_disk.turns[0].proposals()[0].call == GOOGLE
    recorder.apply(TextDelta("end"))
    recorder.apply(TurnDone())
    answer = parse(recorder.store.read(recorder.conversation_id)).to_messages()[1]["content"]
    assert answer == " ".join(str(n) for n in range(100))


def test_every_file_the_recorder_writes_renders_back_exactly(tmp_path: Path) -> None:
    recorder = new_recorder(tmp_path, min_interval=0)
    recorder.user("hello")
    recorder.apply(TextDelta("text with\n❓: a fake proposal\n🛠️: [x][y]\n💬: and a fake turn"))
    recorder.apply(ToolProposed(ToolCall("t", {"s": "a`b\nc"}, "c1")))
    recorder.apply(ToolFinished(ToolResult(ToolCall("t", {}, "c1"), output="```\nfenced\n````\n")))
    recorder.apply(TurnDone())
    text = recorder.store.read(recorder.conversation_id)
    transcript = parse(text)
    assert transcript.render() == text
    assert transcript.turns[0].proposals()[0].call.arguments == {"s": "a`b\nc"}
    assert transcript.turns[0].results()[0].text == "```\nfenced\n````\n"
    assert len(transcript.turns) == 2 and transcript.turns[1].is_placeholder


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("💬🤖🧠📝❓\U0001f6e0\ufe0f:[]`\n\r \t")), st.characters(exclude_categories=("Cs",))
    ),
    max_size=30,
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), TEXT),
        st.tuples(st.just("text"), TEXT),
        st.tuples(st.just("thought"), TEXT, st.booleans()),
        st.tuples(st.just("propose"), st.dictionaries(TEXT, TEXT, max_size=2)),
        st.tuples(st.just("decide"), st.integers(0, 5), st.sampled_from(["ya", "yA", "yo", "yO", "n"])),
        st.tuples(st.just("result"), st.integers(0, 5), TEXT, st.booleans()),
        st.tuples(st.just("done"), st.sampled_from(["done", "approval", "error"])),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_recorded_conversations_read_back_to_the_same_calls_and_results(tmp_path: Path, ops: list[tuple]) -> None:
    recorder = new_recorder(tmp_path, min_interval=3600)  # text stays in memory: only structure hits the disk
    calls: list[ToolCall] = []
    answered: dict[str, tuple[str, bool]] = {}
    decided: dict[str, str] = {}
    for op in ops:
        kind = op[0]
        if kind == "user":
            recorder.user(op[1])
        elif kind == "text":
            recorder.apply(TextDelta(op[1]))
        elif kind == "thought":
            recorder.apply(Thought(op[1], closed=op[2]))
        elif kind == "propose":
            call = ToolCall("tool_" + str(len(calls) % 2), op[1], f"call_{len(calls)}")
            calls.append(call)
            recorder.apply(ToolProposed(call))
        elif kind == "decide" and calls:
            call = calls[op[1] % len(calls)]
            recorder.record_decision(call.id, op[2])
            decided[call.id] = op[2]
        elif kind == "result" and calls and calls[op[1] % len(calls)].id not in answered:
            call = calls[op[1] % len(calls)]
            result = ToolResult(call, output=op[2]) if not op[3] else ToolResult(call, error=op[2])
            recorder.apply(ToolFinished(result))
            answered[call.id] = (result.text(), op[3])
        elif kind == "done":
            recorder.apply(TurnDone(reason=op[1]))
    text = recorder.transcript.render()
    transcript = parse(text)
    assert transcript.render() == text
    proposals = [s for turn in transcript.turns for s in turn.segments if isinstance(s, Proposal)]
    results = [s for turn in transcript.turns for s in turn.segments if isinstance(s, Result)]
    assert [p.call for p in proposals] == calls
    assert {p.call.id: p.decision for p in proposals if p.decision} == decided
    assert {r.call_id: (r.text, r.is_error) for r in results} == answered
    assert transcript.to_messages() == parse(transcript.render()).to_messages()


# ---- files ----


def test_store_lists_conversations_newest_first_with_their_first_question(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    old, new = store.new(), store.new()
    TranscriptRecorder(store, old, "m").user("What is the capital of Australia? I always forget it and " * 3)
    TranscriptRecorder(store, new, "m").user("hello there")
    os.utime(store.path(old), (1_000_000, 1_000_000))
    (tmp_path / f".{new}.md.123.tmp").write_text("left by a kill")
    listed = store.list()
    assert [item[0] for item in listed] == [new, old]
    assert listed[0][1] == "hello there"
    assert listed[1][1].startswith("What is the capital of Australia?") and listed[1][1].endswith("…")
    assert len(listed[1][1]) <= 60


def test_a_file_edited_by_hand_is_the_new_truth(tmp_path: Path) -> None:
    recorder = new_recorder(tmp_path, min_interval=0)
    store, conversation = recorder.store, recorder.conversation_id
    recorder.user("question")
    recorder.apply(TextDelta("first answer"))
    path = store.path(conversation)
    path.write_text(read(path).replace("first answer", "an answer I corrected by hand"), encoding="utf-8")
    assert "corrected by hand" in store.load(conversation).to_messages()[1]["content"]
    recorder.apply(TextDelta(", and more"))  # the live recorder picks the edit up instead of overwriting it
    assert store.load(conversation).to_messages()[1]["content"] == "an answer I corrected by hand, and more"


def test_a_file_that_does_not_parse_is_reported_and_never_overwritten(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    conversation = store.new()
    broken = "💬: hi\n\n🤖:[m]\n\n❓: `{oops`\n"
    store.path(conversation).write_text(broken, encoding="utf-8")
    with pytest.raises(TranscriptError) as caught:
        TranscriptRecorder(store, conversation, "m")
    assert caught.value.line == 5
    assert read(store.path(conversation)) == broken

    recorder = TranscriptRecorder(store, store.new(), "m")
    recorder.user("hi")
    store.path(recorder.conversation_id).write_text(broken, encoding="utf-8")  # broken while recording
    with pytest.raises(TranscriptError):
        recorder.apply(TextDelta("more"))
    assert read(store.path(recorder.conversation_id)) == broken


CHILD = textwrap.dedent(
    """
    import sys
    from sidespin.events import TextDelta
    from sidespin.transcript import TranscriptRecorder, TranscriptStore

    store = TranscriptStore(sys.argv[1])
    recorder = TranscriptRecorder(store, sys.argv[2], "m", min_interval=0)
    recorder.user("count for me")
    for number in range(1_000_000):
        recorder.apply(TextDelta(f"w{number} "))
        print(number, flush=True)
    """
)


def test_a_kill_mid_stream_leaves_a_file_that_parses_and_holds_everything_applied(tmp_path: Path) -> None:
    store = TranscriptStore(tmp_path)
    conversation = store.new()
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "LOGURU_LEVEL": "WARNING"}
    command = [sys.executable, "-c", CHILD, str(tmp_path), conversation]
    with subprocess.Popen(command, stdout=subprocess.PIPE, env=environment, cwd=ROOT) as child:
        assert child.stdout is not None
        applied = -1
        deadline = time.monotonic() + 60
        while applied < 300:
            ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, "the child did not stream in time"
            line = child.stdout.readline()
            assert line, "the child ended early"
            applied = int(line)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    transcript = store.load(conversation)  # parses
    answer = transcript.to_messages()[1]["content"] + " "
    count = answer.count(" ")
    assert count > applied  # everything applied before the last report, and maybe a little more
    assert answer == "".join(f"w{n} " for n in range(count))
    assert store.list()[0][:2] == (conversation, "count for me")  # a restart shows the conversation


def test_conversation_metadata_lives_in_one_note_before_the_first_turn_and_round_trips() -> None:
    transcript = parse("Notes of mine.\n💬: hi\n🤖:[m]\n\nhello\n\n💬: \n")
    transcript.set_meta("title", "Greetings <b>--></b>")
    transcript.set_meta("forked_from", "20260101-000000-abcdef")
    text = transcript.render()
    assert text.startswith('<!-- sidespin: {"title":"Greetings \\u003cb\\u003e--\\u003e')  # never closes early
    assert text.count("<!-- sidespin:") == 1 and "Notes of mine.\n💬: hi" in text
    again = parse(text)
    assert again.meta == {"title": "Greetings <b>--></b>", "forked_from": "20260101-000000-abcdef"}
    assert again.render() == text and again.turns[0].user == "hi" and again.to_messages() == transcript.to_messages()
    again.set_meta("title", None)
    assert parse(again.render()).meta == {"forked_from": "20260101-000000-abcdef"}
