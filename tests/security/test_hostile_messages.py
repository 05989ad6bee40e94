"""A message is read in time linear in its length, whatever its shape: the route's rules read every message with
regular expressions, on the event loop, and one that backtracks over a long run of spaces would stop the server for
everyone (a regular expression holds the interpreter while it runs). "Weather 1" and 8,000 spaces held a decision
more than ten minutes before, when it was stopped (a request split read every run of spaces from every start, every
way); a number and 20,000 spaces cost the coordinates' rule 2.5 s. Each runs in a child process, stopped at the
deadline."""

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
from sidespin.route import Router
from sidespin.said_values import negatives_said
from sidespin.tools import Tool
from tests.route_fake import FakeLlama
text = json.loads(sys.stdin.read())
weather = Tool(name="weather", description="The weather at coordinates, in a city.", fn=lambda **_: None,
               source="mcp:x", input_schema={"type": "object", "properties": {
                   "city": {"type": "string"}, "lat": {"type": "number"}}, "required": ["city"]})
llama = FakeLlama({text: [("weather", {"city": "Paris"})]})
calls = asyncio.run(Router(llama).route([{"role": "user", "content": text}], [weather]))
print(json.dumps([[c.name, c.arguments] for c in calls] + [sorted(negatives_said(text))]))
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
    assert json.loads(decided) == [["weather", {"city": "Paris"}], []]


def test_the_coordinates_rule_reads_a_number_and_a_long_run_of_spaces_in_time() -> None:
    text = "1" + " " * (LONG - 1)  # more than 20 s before (2.5 s for 20,000 spaces, and quadratic)
    read = in_a_child("import sys; from sidespin.said_values import negatives_said; "
                      "print(sorted(negatives_said(sys.stdin.read())))", text, 20, "the coordinates' rule")
    assert read == "[]"


READERS = """
import json, sys
from sidespin.patterns import state_abbreviated
from sidespin.said_values import _NAME, kept_said
from sidespin.zones import names_in, zones_of
text = sys.stdin.read()
city = {"description": "The city, such as 'Berkeley, CA'."}
print(json.dumps([kept_said(text)[:20], sorted(zones_of(names_in(text)))[:2], len(set(_NAME.findall(text))),
                  state_abbreviated(text[:600], city)[:12]]))
"""


@pytest.mark.parametrize("text, read", [
    ("Remember that" + " " * (LONG - 20) + "x", ["x", [], 0, "Remember tha"]),
    ("please, " * (LONG // 8) + "remember: I like tea", ["I like tea", [], 0, "please, plea"]),
    ("In Lisbon " + "Ab " * (LONG // 3 - 5), ["", ["Europe/Lisbon"], 0, "In Lisbon Ab"]),
    ("a1." * (LONG // 3), ["", [], 1, "a1.a1.a1.a1."]),
    ("Austin," + " " * 580 + "Texas", ["", [], 0, "Austin, TX"]),
], ids=["keep-and-spaces", "many-pleases", "many-names", "a-dotted-name", "a-state-far-away"])
def test_what_a_message_asks_to_keep_its_places_names_and_states_are_read_in_time(text, read) -> None:
    """The readers of this stop's rules (what to remember, the zones a message names, names with digits, a state's
    name) on 100,000-character shapes: each ends, and reads what it should."""
    assert json.loads(in_a_child(READERS, text, 30, "a reader")) == read


CODES = """
import json, sys
from sidespin.patterns import code_named
description, said = json.loads(sys.stdin.read())
print(code_named({"description": description}, said))
"""


@pytest.mark.parametrize("description, said, read", [
    ("".join(f"{n} for thing{n}, " for n in range(LONG // 12)),
     " ".join(f"thing{n}" for n in range(LONG // 7)), "None"),
    ("1 for " * (LONG // 6), "for " * (LONG // 4), "None"),
    ("1 for cleaning service, 2 for ironing service.", "a" * LONG + " ironing " + "b " * (LONG // 2), "2"),
], ids=["thousands-of-codes", "repeated-for", "a-long-word"])
def test_the_numbers_a_hostile_description_gives_things_are_read_in_time(description, said, read) -> None:
    """A server's description is the server's to write: thousands of "n for thing", against a message naming
    thousands of things (the first form of the reader compared each with each: 4 s for 8,000 of both), end, and
    read what they should; the codes read are the first fifty."""
    assert in_a_child(CODES, json.dumps([description, said]), 20, "the codes' reader") == read


@pytest.mark.parametrize("text", ["The time in " + "a " * (LONG // 2) + "is 10:00.", "the time is " + " " * LONG,
                                  "the time in a is " * (LONG // 17)], ids=["a-long-place", "spaces", "repeated"])
def test_an_answer_that_tells_a_places_time_is_read_in_time(text) -> None:
    """The model's answer is read for a time told without a tool (`claimed_now`): a hostile page or model may write
    it at any length."""
    claimed = in_a_child("import sys; from sidespin.honesty import claimed_now; "
                         "print(claimed_now(sys.stdin.read()) is not None)", text, 30, "the check")
    assert claimed == "False"


@pytest.mark.parametrize("text, asks", [
    ("What time" + " " * LONG + "x", False),
    ("what time is" + " is" * (LONG // 3) + " now", True),
    ("What day " * (LONG // 9), False),
], ids=["spaces", "many-is", "repeated"])
def test_a_question_for_now_is_read_in_time(text, asks) -> None:
    """Whether a message asks the date or time it is now (`tables._ASKS_NOW`, read for every message to choose a
    table) ends on 100,000-character shapes, and reads what it should."""
    found = in_a_child("import sys; from sidespin.tables import _ASKS_NOW; "
                       "print(_ASKS_NOW.search(sys.stdin.read()) is not None)", text, 30, "the reader")
    assert found == str(asks)


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
