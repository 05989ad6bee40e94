"""A message is read in time linear in its length, whatever its shape: the tool-use pipeline reads every message
with regular expressions, on the event loop, and one that backtracks over a long run of spaces would stop the server
for everyone (a regular expression holds the interpreter while it runs). Each runs in a child process, stopped at
the deadline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DECIDE = """
import asyncio, json, sys
from loguru import logger
logger.remove()
from sidespin.tools import Tool
from sidespin.tooluse import Decider
from sidespin.tooluse.values import numbers_said, said_in
from tests.route_fake import FakeLlama
text = json.loads(sys.stdin.read())
weather = Tool(name="weather", description="The weather at coordinates, in a city.", fn=lambda **_: None,
               source="mcp:x", input_schema={"type": "object", "properties": {
                   "city": {"type": "string"}, "lat": {"type": "number"}}, "required": ["city"]})
llama = FakeLlama({text: [("weather", {"city": "Paris"})]})
calls = asyncio.run(Decider(llama).decide([{"role": "user", "content": text}], [weather]))
print(json.dumps([[c.name, c.arguments] for c in calls] + [len(numbers_said(said_in([text])))]))
"""
LONG = 100_000  # the longest message a person may send (`max_message_chars`)


def in_a_child(code: str, text: str, seconds: int, what: str) -> str:
    """What `code` prints, run in a child process on `text` (its stdin), stopped at the deadline: an in-process
    thread cannot time out while a regular expression holds the interpreter."""
    try:
        done = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, cwd=ROOT,
                              timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what} did not end within {seconds} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


@pytest.mark.parametrize("text", [
    "weather in Paris 1" + " " * (LONG - 20) + "x",
    "weather in Paris" + " \t" * (LONG // 2 - 10) + ", x",
    "weather in Paris 1°" + " " * (LONG - 20),
], ids=["spaces", "spaces-and-tabs", "degree-and-spaces"])
def test_a_decision_on_a_long_run_of_spaces_ends_and_still_calls(text) -> None:
    # generous: it takes a second or two, most of it starting Python
    decided = in_a_child(DECIDE, json.dumps(text), 60, "the decision")
    assert json.loads(decided)[0] == ["weather", {"city": "Paris"}]


READERS = """
import json, sys
from sidespin.tooluse.conversation import Talk, parts_of
from sidespin.tooluse.shapes.editor import _asks_to_add, _quoted
from sidespin.tooluse.shapes.folders import files_named
from sidespin.tooluse.shapes.timezones import zones_named
from sidespin.tooluse.values import mentioned, said_in
text = sys.stdin.read()
said = said_in([text])
print(json.dumps([sorted(zones_named(text)[0])[:2], files_named(text)[:2], _quoted(text)[:2], _asks_to_add(text),
                  len(parts_of(text)) > 1, Talk([{"role": "user", "content": text}]).asks_several, mentioned(text[:600], said)]))
"""


@pytest.mark.parametrize("text, read", [
    ("Add bread" + " " * (LONG - 20) + "x", [[], [], [], True, False, False, True]),
    ("please, " * (LONG // 8) + "add tea", [[], [], [], True, False, True, True]),
    ("In Lisbon " + "Ab " * (LONG // 3 - 5), [["Europe/Lisbon"], [], [], False, False, False, True]),
    ("a1." * (LONG // 3), [[], ["a1.a1"], [], False, False, False, True]),
    ('change "' + "x" * 150 + '" to "y"' + " " * LONG, [[], [], ["x" * 150, "y"], False, False, False, True]),
    ("notes/" * (LONG // 6) + "a.md", [[], [("notes/" * (LONG // 6) + "a.md")[-300:]], [], False, False, False,
                                       True]),
], ids=["add-and-spaces", "many-pleases", "many-names", "a-dotted-name", "a-quoted-change", "a-deep-path"])
def test_what_the_shapes_and_the_values_read_of_a_message_is_read_in_time(text, read) -> None:
    """The readers the pipeline runs on every message (the zones it names, the files, a quoted change, an addition,
    its parts, the numbers said) on 100,000-character shapes: each ends, and reads what it should."""
    found = json.loads(in_a_child(READERS, text, 30, "a reader"))
    if read[1] and read[1][0].endswith("a.md"):  # a path that long is named whole, or at least its end
        assert found[1] and found[1][0].endswith("a.md")
        found[1], read[1] = [], []
    assert found == read


@pytest.mark.parametrize("text", ["The time in " + "a " * (LONG // 2) + "is 10:00.", "the time is " + " " * LONG,
                                  "the time in a is " * (LONG // 17)], ids=["a-long-place", "spaces", "repeated"])
def test_an_answer_that_tells_a_places_time_is_read_in_time(text) -> None:
    """The model's answer is read for a time told without a tool (`claimed_now`): a hostile page or model may write
    it at any length."""
    claimed = in_a_child("import sys; from sidespin.honesty import claimed_now; "
                         "print(claimed_now(sys.stdin.read()) is not None)", text, 30, "the check")
    assert claimed == "False"


@pytest.mark.parametrize("text, result", [
    ("12:34 " * (LONG // 6), '"2026-11-27T12:34:00+09:00" ' * (LONG // 28)),
    ("1:" * (LONG // 2), "2026-11-27T" * (LONG // 11)),
], ids=["many-times", "half-times"])
def test_an_answers_times_are_read_against_the_results_in_time(text, result) -> None:
    """An answer's clock times are read against the moments the results give (`misread_time`): a hostile page or
    model may write either at any length."""
    script = ("import sys, json; from sidespin.honesty import misread_time; text, result = json.load(sys.stdin); "
              "print(misread_time(text, [('tool', result)], ''))")
    assert in_a_child(script, json.dumps([text, result]), 30, "the check") == "None"


def test_an_answers_dates_are_read_against_the_results_in_time() -> None:
    """The dates an answer gives are read against the turn's results (`unsaid_dates`), both of any length."""
    text, result = "on 2023-02-" * (LONG // 11), "May 1" * (LONG // 5)
    script = ("import sys, json; from sidespin.honesty import unsaid_dates; text, result = json.load(sys.stdin); "
              "print(unsaid_dates(text, [('tool', result)], ''))")
    assert in_a_child(script, json.dumps([text, result]), 30, "the check") == "[]"
