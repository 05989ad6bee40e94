"""What a page watching a live answer receives: few bytes per byte of answer, the whole turn on (re)connect,
and at the end the same answer a reload draws."""

from __future__ import annotations

import html
import re

from bs4 import BeautifulSoup
from fasthtml.common import to_xml

from sidespin.events import TextDelta, TurnDone
from sidespin.record import TurnRecord
from sidespin.web.live import LiveTurn
from sidespin.web.page import AnswerBody, TurnWatch, sse_event
from tests.live_page import LivePage

# the embedded model's decode on 2 shared cores under load: 56–76 tokens a second (sidespin/llm/embedded.py)
EMBEDDED_TOKENS_PER_SECOND = 56


SENTENCES = [
    "The ball crossed the net, spun, and came back faster than anyone expected.",
    "A short serve keeps the receiver from attacking the first ball.",
    "Topspin dips the ball onto the table; backspin makes it float and stop.",
    "Most points at club level are lost on the return of serve, not in the rally.",
    "Footwork matters more than the bat: be in place before the ball arrives.",
]


def six_kilobytes() -> str:
    """An answer as a small model writes one: a heading, paragraphs of two to four sentences, a list, code,
    and text that looks like HTML."""
    parts = ["## Table tennis, briefly\n\n"]
    n = 0
    while sum(len(p) for p in parts) < 6000:
        parts.append(" ".join(SENTENCES[(n + k) % 5] for k in range(2 + n % 3)) + "\n\n")
        if n % 5 == 4:
            parts.append("- serve short\n- push long\n- loop the third ball\n\n")
        if n % 7 == 6:
            parts.append("```python\nfor point in range(11):\n    print('ping', point)\n```\n\n")
        if n == 3:
            parts.append("Written as HTML a loop would be <b>topspin</b> & a chop 2 < 3, but it is only text.\n\n")
        n += 1
    return "".join(parts)[:6144]


def tokens(text: str) -> list[str]:
    """A small model's tokens: a word with its space, long words cut at 6 characters, each newline alone."""
    pieces = re.findall(r" ?[^\s]{1,6}|\n|\s", text)
    assert "".join(pieces) == text
    return pieces


def sse(messages: list[str]) -> list[tuple[str, str]]:
    """(event, data) of each SSE message, read as a browser's EventSource reads them."""
    events = []
    for message in messages:
        name, data = "message", []
        for line in message.rstrip("\n").split("\n"):
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        events.append((name, "\n".join(data)))
    return events


def watch(page: LivePage, watcher: TurnWatch) -> int:
    """Apply what the watcher sends now to the page; the bytes on the wire: the stream route writes them
    at once, one chunk of HTTP/1.1's chunked encoding (its length in hex, CRLF, the bytes, CRLF)."""
    messages = watcher.messages()
    for name, data in sse(messages):
        page.apply(data, name)
    size = len("".join(messages).encode())
    return size + len(f"{size:x}\r\n\r\n") if size else 0


def canonical(markup: str) -> str:
    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup.find_all(True):
        tag.attrs = dict(sorted(tag.attrs.items()))
    return re.sub(r">\s+<", "><", str(soup))


def reloaded_body(text: str, tid: str) -> str:
    """The answer's body as a reload draws it, from the record the transcript replays."""
    record = TurnRecord.replay([TextDelta(text), TurnDone(reason="done")])
    body = BeautifulSoup(to_xml(AnswerBody(record.answer, f"{tid}-body")), "html.parser").div
    return "".join(str(child) for child in body.children)


async def test_a_six_kilobyte_answer_streamed_a_token_at_a_time_costs_a_watcher_at_most_three_times_its_bytes():
    text = six_kilobytes()
    turn = LiveTurn("c")
    # streamed text wakes a watcher once a frame: the tokens the model writes meanwhile go in one update
    per_update = max(1, int(EMBEDDED_TOKENS_PER_SECOND * turn.frame))
    page, watcher = LivePage(), TurnWatch(turn)
    sent = watch(page, watcher)
    for index, piece in enumerate(tokens(text), 1):
        turn.apply(TextDelta(piece))
        if index % per_update == 0:
            sent += watch(page, watcher)
    turn.apply(TurnDone(reason="done"))
    sent += watch(page, watcher)
    assert sent <= 3 * len(text.encode()), f"{sent:,} bytes sent for a {len(text.encode()):,}-byte answer"
    assert canonical(page.body()) == canonical(reloaded_body(text, turn.id))  # drawn as a reload draws it
    assert page.soup.find("b") is None and "<b>topspin</b>" in page.soup.get_text()  # text, never markup


async def test_a_watcher_that_connects_mid_answer_gets_the_whole_turn_in_its_first_message():
    text = six_kilobytes()
    pieces = tokens(text)
    turn = LiveTurn("c")
    first, first_page = TurnWatch(turn), LivePage()
    watch(first_page, first)
    for index, piece in enumerate(pieces[: len(pieces) // 2], 1):
        turn.apply(TextDelta(piece))
        if index % 5 == 0:
            watch(first_page, first)
    watch(first_page, first)
    late, late_page = TurnWatch(turn), LivePage()  # a page that reconnects: a new watcher
    ((name, whole),) = sse(late.messages())
    assert name == "update"
    late_page.apply(whole)
    assert canonical(late_page.body()) == canonical(first_page.body())
    assert "Table tennis, briefly" in late_page.soup.get_text() and "<b>topspin</b>" in late_page.soup.get_text()
    for piece in pieces[len(pieces) // 2:]:
        turn.apply(TextDelta(piece))
        watch(first_page, first), watch(late_page, late)
    turn.apply(TurnDone(reason="done"))
    watch(first_page, first), watch(late_page, late)
    assert canonical(late_page.body()) == canonical(first_page.body()) == canonical(reloaded_body(text, turn.id))


def test_streamed_text_arrives_as_sent_escaped_and_whole():
    for text in [" leading space", "two\n\nparagraphs\n", "\n", "a <script>alert(1)</script> & b", "crlf\r\nand\rcr"]:
        ((name, data),) = sse([sse_event(html.escape(text, quote=False))])
        assert name == "message"
        assert html.unescape(data) == text.replace("\r\n", "\n").replace("\r", "\n")
        assert "<" not in data
