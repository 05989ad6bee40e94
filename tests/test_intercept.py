"""The interceptor: what reaches the screen, what is caught, whatever the chunking."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sidespin.intercept import Block, Event, Interceptor, Text

TAGS = ("mcp-request", "think")
CALL = '<mcp-request>\n  <tool name="get_cat_fact" />\n</mcp-request>'
CALL_BLOCK = Block("mcp-request", CALL, True)


def merged(events: list[Event]) -> list[Event]:
    """Consecutive Text events joined, as a consumer would show them."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + event.text)
        else:
            out.append(event)
    return out


def run(stream: str, sizes: list[int] | None = None, tags: tuple[str, ...] = TAGS) -> list[Event]:
    """Feed `stream` in chunks of the given sizes (cycled; None: all at once); merged events."""
    interceptor = Interceptor(tags)
    events: list[Event] = []
    i = k = 0
    while i < len(stream):
        size = len(stream) if sizes is None else sizes[k % len(sizes)]
        got = interceptor.feed(stream[i : i + size])
        assert got == merged(got) and Text("") not in got  # one call: no empty or split Text
        events += got
        i, k = i + size, k + 1
    events += interceptor.close()
    return merged(events)


def joined(events: list[Event]) -> str:
    return "".join(e.text if isinstance(e, Text) else e.raw for e in events)


def reference(stream: str, tags: tuple[str, ...] = TAGS) -> list[Event]:
    """An obvious whole-string version of the rules, for streams without code fences."""
    names = "|".join(re.escape(t) for t in sorted(tags, key=len, reverse=True))
    opening = re.compile(rf"<({names})(?=[\s>/])")
    events: list[Event] = []
    i = 0
    while (m := opening.search(stream, i)) is not None:
        if m.start() > i:
            events.append(Text(stream[i : m.start()]))
        close = f"</{m.group(1)}>"
        end = stream.find(close, m.end() + 1)
        if end < 0:
            events.append(Block(m.group(1), stream[m.start() :], False))
            return events
        events.append(Block(m.group(1), stream[m.start() : end + len(close)], True))
        i = end + len(close)
    if i < len(stream):
        events.append(Text(stream[i:]))
    return events


# Streams built from pieces that sit near every edge of the rules.
TRICKY = [
    "<", "<m", "<mcp", "<mcp-request", "<mcp-request>", "</mcp-request>", "<mcp-requests>",
    "<mcp-request-x", "<mcp-request ", "<mcp-request/", "<b>", "3 < 4", "<think>", "</think>",
    "<think", "</", ">", "/", " ", "  ", "\n", "\t", "\r\n", "\u00a0", "hello", "é", CALL,
]
FENCY = ["`", "```", "```xml\n", "~~~", "~~~\n", "\n```\n", "   ```\n", "````", "``` <"]
plain_streams = st.lists(st.sampled_from(TRICKY) | st.text("ab <>/\n", max_size=6), max_size=30).map("".join)
any_streams = st.lists(
    st.sampled_from(TRICKY + FENCY) | st.text("ab <>/\n`~ ", max_size=6), max_size=30
).map("".join)
chunk_sizes = st.lists(st.integers(1, 9), min_size=1, max_size=12)


# --- what the user sees -------------------------------------------------------------------


def test_plain_text_streams_at_once() -> None:
    interceptor = Interceptor()
    assert interceptor.feed("Hello wor") == [Text("Hello wor")]
    assert interceptor.feed("ld. ") == [Text("ld. ")]


def test_only_a_possible_tag_is_held_back() -> None:
    interceptor = Interceptor()
    assert interceptor.feed("Hello <") == [Text("Hello ")]
    assert interceptor.feed("mc") == []
    assert interceptor.feed("p-requ") == []
    assert interceptor.feed("ests are") == [Text("<mcp-requests are")]


def test_line_breaks_and_words_are_not_held() -> None:
    interceptor = Interceptor()
    assert merged(interceptor.feed("One line.\nAnother")) == [Text("One line.\nAnother")]
    assert interceptor.feed("\n") == [Text("\n")]
    assert interceptor.feed("Third") == [Text("Third")]


@pytest.mark.parametrize(
    "stream",
    ["<b>bold</b>", "if 3 < 4 then", "<mcp-requests>", "<mcp-request-x>", "<MCP-REQUEST>", "a <think-tank>", "<"],
)
def test_lookalikes_stay_text(stream: str) -> None:
    assert run(stream) == [Text(stream)]
    assert run(stream, [1]) == [Text(stream)]


@pytest.mark.parametrize(
    "opening", ["<mcp-request>", "<mcp-request id='1'>", "<mcp-request\n>", "<mcp-request\t", "<mcp-request/>"]
)
def test_every_opening_form_starts_a_block(opening: str) -> None:
    raw = opening + "<tool name='x'/></mcp-request>"
    assert run("a " + raw + " b", [1]) == [Text("a "), Block("mcp-request", raw, True), Text(" b")]


def test_block_is_hidden_and_surrounding_text_kept() -> None:
    stream = f"Let me check.\n{CALL}\nOne moment."
    assert run(stream) == [Text("Let me check.\n"), CALL_BLOCK, Text("\nOne moment.")]


def test_closing_tag_split_across_chunks() -> None:
    interceptor = Interceptor()
    events = interceptor.feed("x<mcp-request>body</mcp-re")
    assert events == [Text("x")]
    assert interceptor.feed("quest>y") == [Block("mcp-request", "<mcp-request>body</mcp-request>", True), Text("y")]


def test_closing_tag_split_after_a_large_chunk() -> None:
    interceptor = Interceptor()
    body = "<mcp-request>" + "x" * 1000
    assert interceptor.feed(body + "</mcp-") == []
    events = interceptor.feed("request>" + "y" * 1000)
    assert events == [Block("mcp-request", body + "</mcp-request>", True), Text("y" * 1000)]


def test_block_arrives_the_moment_it_is_complete() -> None:
    interceptor = Interceptor()
    interceptor.feed("<mcp-request>q")
    assert interceptor.feed("</mcp-request>") == [Block("mcp-request", "<mcp-request>q</mcp-request>", True)]


def test_nothing_inside_a_block_is_interpreted() -> None:
    raw = "<mcp-request><think>no</think>\n```\n<mcp-request>\n</mcp-request>"
    assert run(raw + "!", [3]) == [Block("mcp-request", raw, True), Text("!")]


def test_a_block_ends_only_at_its_own_closing_tag() -> None:
    raw = "<think>use </mcp-request> here</think>"
    assert run(raw, [2]) == [Block("think", raw, True)]


def test_unterminated_block_comes_out_on_close() -> None:
    interceptor = Interceptor()
    assert interceptor.feed("Sure <mcp-request><tool name=") == [Text("Sure ")]
    assert interceptor.close() == [Block("mcp-request", "<mcp-request><tool name=", False)]


@pytest.mark.parametrize("tail", ["<", "<mcp", "<mcp-request", "``", "```xml\n  "])
def test_held_tail_is_flushed_on_close(tail: str) -> None:
    interceptor = Interceptor()
    events = interceptor.feed("end\n" + tail)
    assert merged(events + interceptor.close()) == [Text("end\n" + tail)]


def test_close_resets_for_the_next_stream() -> None:
    interceptor = Interceptor()
    interceptor.feed("<mcp-request>half")
    interceptor.close()
    assert merged(interceptor.feed("fresh <b>") + interceptor.close()) == [Text("fresh <b>")]


def test_think_goes_to_its_own_block() -> None:
    stream = "<think>The user wants a fact.</think>Here you go: " + CALL
    assert run(stream, [5]) == [
        Block("think", "<think>The user wants a fact.</think>", True),
        Text("Here you go: "),
        CALL_BLOCK,
    ]


def test_untracked_tags_are_text() -> None:
    assert run("<think>hm</think>", tags=("mcp-request",)) == [Text("<think>hm</think>")]


def test_many_blocks_in_a_row() -> None:
    stream = CALL * 50
    for sizes in (None, [1], [4], [7, 3]):
        assert run(stream, sizes) == [CALL_BLOCK] * 50


def test_block_at_very_start_and_very_end() -> None:
    assert run(CALL + "mid" + CALL, [4]) == [CALL_BLOCK, Text("mid"), CALL_BLOCK]


def test_bad_tag_names_are_refused() -> None:
    with pytest.raises(ValueError):
        Interceptor(("mcp request",))
    with pytest.raises(ValueError):
        Interceptor(())


# --- code fences ---------------------------------------------------------------------------


def test_fence_around_only_a_block_is_dropped() -> None:
    stream = "Sure.\n```xml\n<mcp-request>...</mcp-request>\n```\nDone"
    expected = [Text("Sure.\n"), Block("mcp-request", "<mcp-request>...</mcp-request>", True), Text("Done")]
    assert run(stream) == expected
    assert run(stream, [1]) == expected


@pytest.mark.parametrize(
    ("fenced", "after"),
    [
        ("```\n{call}\n```\n", "After."),
        ("~~~\n{call}\n~~~\n", "After."),
        ("```xml \n\n  \n{call}  \n\n   ````\n", "After."),
        ("````json\n  {call}\n````  \n", "After."),
        ("~~~ odd~info\n{call}\n~~~\n", "After."),
        ("```xml\r\n{call}\r\n```\r\n", "After."),
        ("```xml\n{call}\n```", ""),  # closing fence at the very end
        ("```xml\n{call}\n", ""),  # left open at the end: closed there, as CommonMark does
    ],
)
def test_fence_variants_around_only_a_block_are_dropped(fenced: str, after: str) -> None:
    stream = "Before:\n" + fenced.format(call=CALL) + after
    expected = [Text("Before:\n"), CALL_BLOCK] + ([Text(after)] if after else [])
    assert run(stream) == expected
    assert run(stream, [1]) == expected


def test_fence_with_code_is_kept_but_its_block_is_hidden() -> None:
    stream = f"Code:\n```python\nprint(1)\n{CALL}\n```\nok"
    assert run(stream, [3]) == [
        Text("Code:\n```python\nprint(1)\n"),
        CALL_BLOCK,
        Text("\n```\nok"),
    ]


def test_fence_with_text_after_the_block_is_kept() -> None:
    stream = f"```\n{CALL}\nprint(2)\n```\n"
    assert run(stream, [2]) == [Text("```\n"), CALL_BLOCK, Text("\nprint(2)\n```\n")]


def test_fence_with_two_blocks_is_kept_and_both_are_hidden() -> None:
    stream = f"```\n{CALL}\n{CALL}\n```\n"
    block = CALL_BLOCK
    assert run(stream, [2]) == [Text("```\n"), block, Text("\n"), block, Text("\n```\n")]


def test_a_closing_fence_is_not_taken_for_an_opening_one() -> None:
    stream = f"```py\nx = 1\n```\n{CALL}\n```\n"
    assert run(stream, [1]) == [Text("```py\nx = 1\n```\n"), CALL_BLOCK, Text("\n```\n")]
    for inner in ("```x", "~~~", "``"):  # inside a ``` fence these are code, not its end
        stream = f"```\ncode\n{inner}\n```\n{CALL}\n```\n"
        assert run(stream, [1]) == [Text(f"```\ncode\n{inner}\n```\n"), CALL_BLOCK, Text("\n```\n")]


def test_fences_indented_four_spaces_are_not_fences() -> None:
    assert run(f"    ```\n{CALL}\n    ```\n", [2]) == [Text("    ```\n"), CALL_BLOCK, Text("\n    ```\n")]
    assert run(f"```\n{CALL}\n    ```\n", [2]) == [Text("```\n"), CALL_BLOCK, Text("\n    ```\n")]


def test_an_indented_line_inside_a_fence_does_not_close_it() -> None:
    stream = f"```\n    ```\n```\n{CALL}\n```\nX"
    expected = [Text("```\n    ```\n```\n"), CALL_BLOCK, Text("\n```\nX")]
    assert run(stream) == expected
    assert run(stream, [1]) == expected


def test_fence_line_is_held_until_the_next_line_shows_what_it_wraps() -> None:
    interceptor = Interceptor()
    assert interceptor.feed("Here:\n```xml\n") == [Text("Here:\n")]
    assert interceptor.feed("\n") == []
    assert interceptor.feed("print") == [Text("```xml\n\nprint")]


def test_an_indented_fence_is_dropped_but_its_indent_has_streamed() -> None:
    interceptor = Interceptor()
    assert interceptor.feed("Before:\n  ") == [Text("Before:\n  ")]
    events = interceptor.feed(f"```xml\n{CALL}\n  ```\nAfter.") + interceptor.close()
    assert merged(events) == [CALL_BLOCK, Text("After.")]


def test_fence_around_an_unfinished_block_is_kept() -> None:
    stream = "```xml\n<mcp-request>half"
    assert run(stream, [2]) == [Text("```xml\n"), Block("mcp-request", "<mcp-request>half", False)]


def test_fence_around_a_think_block_is_dropped() -> None:
    assert run("```\n<think>x</think>\n```\nA") == [Block("think", "<think>x</think>", True), Text("A")]


def test_a_fence_line_with_a_tag_in_it_is_text_and_the_tag_a_block() -> None:
    assert run("```<mcp-request>q</mcp-request>\n```\n", [1]) == [
        Text("```"), Block("mcp-request", "<mcp-request>q</mcp-request>", True), Text("\n```\n")
    ]
    assert run("``` see <b>\nx") == [Text("``` see <b>\nx")]


def test_backticks_that_are_not_fences_stream() -> None:
    assert run("`code` and ``more``\n``x") == [Text("`code` and ``more``\n``x")]
    assert run("```inline``` text") == [Text("```inline``` text")]
    assert run(f"``\n{CALL}\n``\n") == [Text("``\n"), CALL_BLOCK, Text("\n``\n")]


# --- properties ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(plain_streams, chunk_sizes)
def test_lossless_and_matches_the_reference(stream: str, sizes: list[int]) -> None:
    events = run(stream, sizes)
    assert joined(events) == stream
    assert events == merged(reference(stream))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_characters="<`~"), max_size=8), max_size=20))
def test_text_without_tags_or_fences_streams_chunk_by_chunk(chunks: list[str]) -> None:
    interceptor = Interceptor()
    for chunk in chunks:
        assert merged(interceptor.feed(chunk)) == ([Text(chunk)] if chunk else [])
    assert interceptor.close() == []


@settings(max_examples=200, deadline=None)
@given(any_streams, chunk_sizes)
def test_chunking_does_not_change_the_events(stream: str, sizes: list[int]) -> None:
    whole = run(stream)
    assert run(stream, [1]) == whole
    assert run(stream, sizes) == whole


@settings(max_examples=200, deadline=None)
@given(any_streams, chunk_sizes)
def test_no_opening_tag_ever_reaches_the_screen(stream: str, sizes: list[int]) -> None:
    leak = re.compile(r"<(mcp-request|think)[\s>/]")
    for event in run(stream, sizes):
        if isinstance(event, Text):
            assert not leak.search(event.text)
        else:
            assert leak.match(event.raw)


@settings(max_examples=200, deadline=None)
@given(any_streams, chunk_sizes)
def test_lossless_unless_a_fence_is_dropped(stream: str, sizes: list[int]) -> None:
    out = joined(run(stream, sizes))
    if "`" not in stream and "~" not in stream:
        assert out == stream
    else:  # only fence lines and whitespace may go missing: nothing added, no '<' lost
        rest = iter(stream)
        assert all(c in rest for c in out)
        assert out.count("<") == stream.count("<")


bodies = st.text("ab \n<>/=\"`", max_size=20)
lines = st.text("abc .,\t", min_size=1, max_size=15).filter(lambda t: t.strip() != "")
blanks = st.lists(st.text(" \t", max_size=3), max_size=2).map(lambda ls: "".join(x + "\n" for x in ls))


@st.composite
def fenced_segments(draw: st.DrawFn) -> tuple[str, list[Event]]:
    """A stream of lines, blocks and fenced blocks, with the events it must give."""
    stream, expected = "", []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["line", "block", "fenced", "kept"]))
        tag = draw(st.sampled_from(TAGS))
        body = draw(bodies)
        assume(f"</{tag}>" not in body + ">")
        raw = f"<{tag}>{body}</{tag}>"
        char = draw(st.sampled_from("`~"))
        length = draw(st.integers(3, 5))
        indent = " " * draw(st.integers(0, 3))  # streams before we know it indents a fence: it stays
        opener = char * length + draw(st.sampled_from(["", "xml", " json "])) + "\n"
        closer = " " * draw(st.integers(0, 3)) + char * (length + draw(st.integers(0, 2)))
        closer += draw(st.sampled_from(["", " "])) + "\n"
        if kind == "line":
            text = draw(lines) + "\n"
            stream += text
            expected.append(Text(text))
        elif kind == "block":
            stream += raw + "\n"
            expected += [Block(tag, raw, True), Text("\n")]
        elif kind == "fenced":
            before = draw(blanks) + " " * draw(st.integers(0, 4))
            after = " " * draw(st.integers(0, 2)) + "\n" + draw(blanks)
            stream += indent + opener + before + raw + after + closer
            expected += [Text(indent), Block(tag, raw, True)]
        else:
            code = draw(lines) + "\n"
            stream += indent + opener + code + raw + "\n" + closer
            expected += [Text(indent + opener + code), Block(tag, raw, True), Text("\n" + closer)]
    return stream, merged([e for e in expected if e != Text("")])


@settings(max_examples=200, deadline=None)
@given(fenced_segments(), chunk_sizes)
def test_fences_around_only_a_block_are_dropped_and_others_kept(
    case: tuple[str, list[Event]], sizes: list[int]
) -> None:
    stream, expected = case
    assert run(stream, sizes) == expected


# --- cost ------------------------------------------------------------------------------------


def test_long_stream_in_tiny_chunks_stays_fast() -> None:
    # A re-scanning interceptor needs minutes here (about 10^10 character reads); ours well under a second.
    body = "<tool name='x'><param name='p'>" + "data " * 20_000 + "</param></tool>"
    stream = "word " * 20_000 + "<mcp-request>" + body + "</mcp-request>" + "more " * 20_000
    interceptor = Interceptor()
    started = time.perf_counter()
    events = [e for ch in stream for e in interceptor.feed(ch)] + interceptor.close()
    elapsed = time.perf_counter() - started
    raw = "<mcp-request>" + body + "</mcp-request>"
    assert merged(events) == [Text("word " * 20_000), Block("mcp-request", raw, True), Text("more " * 20_000)]
    assert elapsed < 10
