"""The calculator bench's judge: a calculation is right only when a calculator ran and the answer holds the number."""

from __future__ import annotations

import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from bench_calculators import right  # noqa: E402


def test_a_calculation_is_right_only_with_a_calculator_that_ran_and_the_number_in_the_answer() -> None:
    row = {"want": ["19.2", "19,2"]}
    ran = [{"tool": "maths__divide", "result": "19.2"}]
    assert right(row, ran, "Each of you pays 19.20 euros.")
    assert right(row, ran, "Chacun paie 19,2 €.")
    assert not right(row, ran, "Each of you pays 19.25 euros.")  # another number
    assert not right(row, [], "Each of you pays 19.2 euros.")  # worked out in words
    assert not right(row, [{"tool": "clock__get_current_time"}], "19.2")  # not a calculator
    assert not right(row, [{"tool": "maths__divide", "error": "bad"}], "19.2")  # it failed
    assert right({"want": ["9396"]}, ran, "It is 9,396.")
    assert not right({"want": ["45"]}, ran, "It is 2045.")


def test_a_prompt_wanting_no_tool_is_right_only_without_a_call() -> None:
    assert right({"want": None}, [], "Because nothing times zero gives it back.")
    assert not right({"want": None}, [{"tool": "maths__add"}], "Because…")


def test_each_half_holds_prompts_needing_a_calculation_and_prompts_needing_none() -> None:
    rows = [json.loads(line) for line in (BENCH / "calculators" / "prompts.jsonl").read_text().splitlines()]
    for half in ("dev", "blind"):
        mine = [r for r in rows if r["half"] == half]
        assert len([r for r in mine if r["want"]]) == 8 and len([r for r in mine if r["want"] is None]) == 2
