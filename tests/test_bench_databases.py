"""The database bench's judge: a question is right only after a database call that ran and with every wanted text in
the answer; a change only where the database holds it afterwards."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from bench_databases import holds, right, shop  # noqa: E402


def test_a_question_is_right_only_after_a_database_call_that_ran_and_with_every_wanted_text(tmp_path) -> None:
    database = tmp_path / "shop.db"
    shop(database)
    row = {"want": ["Bruno", "Chlo"]}
    ran = [{"tool": "shop__query"}]
    assert right(row, ran, "Bruno Sato and Chloé Martin live in Lyon.", database)
    assert not right(row, ran, "Bruno Sato lives in Lyon.", database)  # one of the two
    assert not right(row, [], "Bruno Sato and Chloé Martin.", database)  # told with no call
    assert not right(row, [{"tool": "clock__get_current_time"}], "Bruno and Chloé.", database)  # not the database
    assert not right(row, [{"tool": "shop__query", "error": "no such table"}], "Bruno and Chloé.", database)
    assert right({"want": None}, [], "Lisbon.", database) and not right({"want": None}, ran, "Lisbon.", database)
    assert right({"want": ["5"]}, ran, "There are 5 orders.", database)
    assert not right({"want": ["5"]}, ran, "There are 15 orders.", database)  # a number only whole
    assert not right({"want": ["39.9"]}, ran, "It costs 139.95.", database)


def test_a_change_is_right_only_where_the_database_holds_it_afterwards(tmp_path) -> None:
    database = tmp_path / "shop.db"
    shop(database)
    check = ["SELECT stock FROM products WHERE name = 'Mug'", [[35]]]
    row = {"check": check}
    assert not holds(database, check)
    assert not right(row, [{"tool": "shop__write_query"}], "The stock of Mug is now 35.", database)  # not done
    with sqlite3.connect(database) as db:
        db.execute("UPDATE products SET stock = 35 WHERE name = 'Mug'")
    assert right(row, [{"tool": "shop__write_query"}], "Done.", database)
    assert holds(database, None)
    with sqlite3.connect(database) as db:
        db.execute("DROP TABLE products")
    assert not holds(database, check)  # a table dropped: the change asked is not there


def test_each_half_holds_questions_changes_prompts_needing_no_tool_and_scripts() -> None:
    rows = [json.loads(line) for name in ("prompts", "scripts")
            for line in (BENCH / "databases" / f"{name}.jsonl").read_text().splitlines()]
    for half in ("dev", "blind"):
        mine = [r for r in rows if r["half"] == half]
        assert len([r for r in mine if r.get("want", 0) is None]) == 2
        assert len([r for r in mine if "check" in r and "messages" not in r]) >= 3
        assert len([r for r in mine if "messages" in r]) == 3
    for half in ("dev2", "blind2"):  # the second set: scripts only, one wanting no call
        mine = [r for r in rows if r["half"] == half]
        assert len(mine) == 6 and all("messages" in r for r in mine)
        assert len([r for r in mine if r.get("want", 0) is None]) == 1
