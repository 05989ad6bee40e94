"""A conversation's numbers read as runs (`schema.as_said`: "5, 10 and 15" written 510) are paired two or three in a
row, never every run: a tool result holding thousands of numbers (a listing, a hostile server's page) would
otherwise build a table growing with the square of their count, and every later call's decision would stall on it."""

from __future__ import annotations

from sidespin.tooluse.schema import as_said
from sidespin.tooluse.values import said_in
from tests.tooluse.tools import tool

SQUARE = tool("square", "The square of a whole number.", {"n": {"type": "integer"}}, ["n"])


def test_a_result_of_thousands_of_numbers_is_read_in_runs_of_two_or_three_only() -> None:
    page = " ".join(str(n) for n in range(20_000))  # pairing every run of these would take gigabytes
    said = said_in(["Square 5, 10 and 15 for me", page])
    assert as_said(SQUARE, {"n": 51015}, said) == {"n": 5}  # three in a row: the first
    assert as_said(SQUARE, {"n": 5101520}, said_in(["Square 5, 10, 15 and 20"])) == {"n": 5101520}  # four: left
