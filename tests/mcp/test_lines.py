"""`LineCutter`: each line of a stdio server handed on as JSON of the same shape, bounded, whatever the chunks."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sidespin.mcp.lines import LineCutter

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))  # what JSON can carry as UTF-8
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(TEXT.filter(lambda t: len(t) <= 8), children,
                                                                      max_size=6),
    max_leaves=30,
)


def cut(data: bytes, sizes: list[int], **limits: int) -> list:
    options = {"max_string": 10**6, "max_data": 10**6, "max_tools": 10**6, "max_line": 10**7, **limits}
    cutter, lines, start = LineCutter(**options), [], 0
    for size in sizes * (len(data) // max(1, sum(sizes)) + 2):
        lines += cutter.feed(data[start:start + size])
        start += size
    return lines


@settings(max_examples=200, deadline=None)
@given(JSON, st.booleans(), st.lists(st.integers(1, 50), min_size=1, max_size=5))
def test_a_line_within_its_limits_comes_out_as_it_went_in(value, ascii_only, sizes) -> None:
    data = (json.dumps(value, ensure_ascii=ascii_only) + "\n").encode()
    (line,) = cut(data, sizes)
    assert json.loads(line.line) == value and not line.cut and line.size == len(data) - 1


@settings(max_examples=200, deadline=None)
@given(JSON, st.lists(st.integers(1, 50), min_size=1, max_size=5))
def test_a_line_over_its_limits_is_still_json_and_its_strings_are_bounded(value, sizes) -> None:
    data = (json.dumps({"id": 1, "result": {"tools": [value] * 5, "v": value}}) + "\n").encode()
    (line,) = cut(data, sizes, max_string=130, max_tools=2, max_line=400)
    bounded = json.loads(line.line)

    def strings(item):
        if isinstance(item, str):
            yield item
        elif isinstance(item, list):
            for child in item:
                yield from strings(child)
        elif isinstance(item, dict):
            for key, child in item.items():
                yield key
                yield from strings(child)

    assert all(len(text.encode()) <= 130 for text in strings(bounded))
    assert len(bounded["result"]["tools"]) <= 2 and line.tools_left_out == 5 - len(bounded["result"]["tools"])


def test_a_long_string_keeps_its_start_and_says_how_much_was_left_out() -> None:
    text = "é\\\"\u2028" * 10 + "A" * 5000
    data = (json.dumps({"content": [{"type": "text", "text": text}, {"type": "image", "data": "QUJD" * 500}]}) +
            "\n").encode()
    (line,) = cut(data, [7, 13], max_string=300, max_data=4000)
    content = json.loads(line.line)["content"]
    assert content[0]["text"].startswith(text[:50]) and len(content[0]["text"].encode()) <= 300
    assert content[0]["text"].endswith(f"more bytes not shown; the server sent {len(json.dumps(text)) - 2:,}]")
    assert content[1]["data"] == "QUJD" * 500  # base64 media may be longer than text
    assert line.strings == 1


def test_a_page_a_resources_read_answer_holds_may_be_as_long_as_media_but_a_tool_s_text_may_not() -> None:
    page = "<html>" + "x" * 3000 + "</html>"
    read = {"jsonrpc": "2.0", "id": 3, "result": {"contents": [{"uri": "ui://a/b.html", "text": page}]}}
    called = {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": page}]}}
    data = (json.dumps(read) + "\n" + json.dumps(called) + "\n").encode()
    kept, cut_short = cut(data, [11], max_string=300, max_data=4000)
    assert json.loads(kept.line)["result"]["contents"][0]["text"] == page and not kept.cut
    assert len(json.loads(cut_short.line)["result"]["content"][0]["text"]) <= 300 and cut_short.strings == 1


def test_lines_are_split_on_newlines_and_a_line_that_is_no_json_comes_out_as_it_came() -> None:
    lines = cut(b'{"a": 1}\n\nnot json {\n[1, 2', [3])
    assert [line.line for line in lines] == [b'{"a": 1}', b"", b"not json {"]
