"""A name the message gives goes into SQL as a text, never as SQL (`database.by_name`): a quote in it is doubled, so a
hostile message cannot widen an update past the row it names. Checked by running the written statement on SQLite."""

from __future__ import annotations

import dataclasses
import sqlite3

from sidespin.tooluse import Decider
from tests.route_fake import FakeLlama
from tests.tooluse.tools import tool

TEXT = {"type": "string"}
STATEMENT = dataclasses.replace(tool("run_statement", "Run one SQL statement on the shop's database.", {"sql": TEXT},
                                     ["sql"], source="mcp:shop"), holds=("products(id, name, stock)",))


async def test_a_quote_in_a_name_the_message_gives_stays_inside_the_text_it_is_written_as() -> None:
    for asked in ("Set the stock of O'Brien Mug' OR name LIKE '% to 0.", "Set the stock of Mug' OR 'x'='x to 0."):
        model = FakeLlama({asked: [("run_statement", {"sql": "UPDATE products SET stock = 0 WHERE id = 7"})]})
        calls = await Decider(model).decide([{"role": "user", "content": asked}], [STATEMENT])
        written = calls[0].arguments["sql"]
        assert written != "UPDATE products SET stock = 0 WHERE id = 7", asked  # looked up by a name, as the rule does
        with sqlite3.connect(":memory:") as db:
            db.executescript("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, stock INTEGER);"
                             "INSERT INTO products VALUES (1, 'Mug', 40), (2, 'Kettle', 5);")
            db.execute(written)  # one statement: a second would raise
            assert db.execute("SELECT name, stock FROM products ORDER BY id").fetchall() == [
                ("Mug", 40), ("Kettle", 5)], written


async def test_a_hostile_name_that_replaces_a_whole_condition_stays_inside_its_text() -> None:
    """A change's condition made the look-up by the name (values the person did not say): the name's quote is
    doubled in each sub-query, so nothing but rows of that name can go."""
    holds = ("customers(id, name)", "products(id, name)", "orders(id, customer_id, product_id)")
    statement = dataclasses.replace(STATEMENT, holds=holds)
    asked = "Delete the orders of Ana' OR 1=1 OR name = 'x."
    model = FakeLlama({asked: [("run_statement", {"sql": "DELETE FROM orders WHERE customer_id = 5"})]})
    calls = await Decider(model).decide([{"role": "user", "content": asked}], [statement])
    written = calls[0].arguments["sql"]
    assert "SELECT id FROM customers" in written, written  # the rule acted
    with sqlite3.connect(":memory:") as db:
        db.executescript("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE products (id "
                         "INTEGER PRIMARY KEY, name TEXT); CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id "
                         "INTEGER, product_id INTEGER); INSERT INTO customers VALUES (1, 'Ana'), (2, 'Bo');"
                         "INSERT INTO products VALUES (1, 'Mug'); INSERT INTO orders VALUES (1, 1, 1), (2, 2, 1);")
        db.execute(written)
        assert db.execute("SELECT id FROM orders ORDER BY id").fetchall() == [(1,), (2,)], written
