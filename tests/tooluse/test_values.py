"""Which of a call's values the conversation said (`sidespin.tooluse.values`)."""

from __future__ import annotations

import dataclasses

import pytest

from sidespin.tooluse.schema import as_said
from sidespin.tooluse.values import (asked_parameters, grounded, invented, last_word, mentioned, numbers_said, reads,
                                     said_in)
from tests.tooluse.tools import CONVERT, FORECAST, TEXT, tool


def test_what_was_said_has_number_words_clock_times_and_scaled_numbers_as_digits() -> None:
    said = said_in(["Roll two dice at 3 PM", "a 5% rate on 2 million"])
    for value in (2, "15:00", 0.05, 2_000_000):
        assert mentioned(value, said), value
    assert not mentioned(7, said) and not mentioned(1, said_in(["10 apples"]))


def test_numbers_said_in_words_count_in_each_of_the_five_languages_but_articles_do_not() -> None:
    for message, number in (("Achète sept baguettes", 7), ("Ich brauche elf Stühle", 11),
                            ("Reserva mesa para doce", 12), ("Compra quattro limoni", 4), ("vingt minutes", 20)):
        assert mentioned(number, said_in([message])), message
    for message in ("Lance un dé", "Gib mir eine Zahl", "Tira un dado", "sei so nett"):
        assert not numbers_said(said_in([message])), message


def test_a_text_is_mentioned_by_a_word_of_it_but_a_placeholder_an_address_or_an_unsaid_extension_only_whole() -> None:
    said = said_in(["Email Adriel about the report in the notes folder", "see https://docs.example.org/x"])
    assert mentioned("Adriel", said) and mentioned("quarterly report", said)
    assert not mentioned("adriel@example.com", said)
    assert not mentioned("YOUR_API_KEY", said_in(["my api key please"]))
    assert not mentioned("https://evil.example.net/report", said) and mentioned("https://docs.example.org/y", said)
    assert not mentioned("/home/me/notes.txt", said) and mentioned("notes/report.md", said_in(["notes/report.md"]))


def test_a_long_word_is_mentioned_by_a_spelling_of_it_that_differs_in_its_last_letters() -> None:
    said = said_in(["How far is 5 kilometres? Please analyse the centimetres too."])
    assert mentioned("kilometers", said) and mentioned("analyzed", said) and mentioned("centimeters", said)
    assert not mentioned("kilograms", said) and not mentioned("analytics", said)


def test_optional_values_no_one_said_are_dropped_and_said_ones_kept() -> None:
    said = said_in(["Forecast for Oslo in imperial units"])
    assert grounded(FORECAST, {"city": "Oslo", "days": 5, "units": "imperial"}, said) == {
        "city": "Oslo", "units": "imperial"}


def test_an_optional_value_left_out_is_asked_for_by_its_name_or_an_allowed_value() -> None:
    assert asked_parameters(FORECAST, {"city": "Oslo"}, "Oslo, imperial please") == ["units"]
    assert asked_parameters(FORECAST, {"city": "Oslo"}, "Oslo, 3 days ahead") == ["days"]
    assert asked_parameters(FORECAST, {"city": "Oslo"}, "Oslo") == []


def test_required_values_nothing_mentions_restates_or_only_exemplifies_are_made_up() -> None:
    said = said_in(["What's the weather like?"])
    assert invented(FORECAST, {"city": "San Francisco"}, said) == ["city"]
    assert invented(FORECAST, {"city": "The city"}, said) == []  # "city" is the tool's own word, whole
    example = tool("weather", "Weather at a place, such as 'Berkeley, CA'.", {"place": {"type": "string"}},
                   ["place"])
    assert invented(example, {"place": "Berkeley, CA"}, said) == ["place"]
    assert invented(example, {"place": "Berkeley, CA"}, said_in(["weather in Berkeley"])) == []
    assert invented(CONVERT, {"amount": 20, "from_currency": "USD", "to_currency": "EUR"},
                    said_in(["20 dollars in euros"])) == []  # codes for things said in words
    assert invented(CONVERT, {"amount": 30, "from_currency": "USD", "to_currency": "EUR"},
                    said_in(["20 dollars in euros"])) == ["amount"]


def test_an_id_or_a_list_of_ids_written_as_a_phrase_is_made_up() -> None:
    """Whatever the parameter's name says an id ("id", "entryIds", "todo_ids"), a phrase in it is made up."""
    said = said_in(["Move 'order pizza for Friday' to the weekend list"])
    move = tool("move", "Move entries to a list.", {"entryIds": {"type": "array", "items": TEXT}, "list": TEXT},
                ["entryIds", "list"])
    assert invented(move, {"entryIds": ["order pizza for Friday"], "list": "weekend"}, said) == ["entryIds"]
    assert invented(move, {"entryIds": "order pizza for Friday", "list": "weekend"}, said) == ["entryIds"]
    assert invented(move, {"entryIds": ["Friday"], "list": "weekend"}, said) == []
    assert [last_word(n) for n in ("todo_ids", "entryIds", "id", "status", "address", "q")] == [
        "id", "id", "id", "status", "address", "q"]


def test_a_percentage_goes_as_a_decimal_where_the_tool_asks_for_one_and_a_run_on_number_is_cut_back() -> None:
    loan = tool("loan", "Monthly payment of a loan.", {
        "rate": {"type": "number", "description": "annual interest rate as a decimal"},
        "years": {"type": "integer"}}, ["rate", "years"])
    said = said_in(["a loan at 5% over 15, 20 or 30 years"])
    assert as_said(loan, {"rate": 5, "years": 152000}, said) == {"rate": 0.05, "years": 15}
    assert as_said(loan, {"rate": 0.05, "years": 20}, said) == {"rate": 0.05, "years": 20}


def test_numbers_said_one_after_another_and_written_run_together_are_the_first_of_them() -> None:
    squares = tool("square", "The square of a whole number.", {"n": {"type": "integer"}}, ["n"])
    said = said_in(["Square 7, 12 and 3 for me"])
    assert as_said(squares, {"n": 712}, said) == {"n": 7} and as_said(squares, {"n": 1223}, said) == {"n": 12}
    assert as_said(squares, {"n": 73}, said) == {"n": 73}  # not said one after the other: left
    assert as_said(squares, {"n": 12}, said_in(["Vierkant van 1 en 2"])) == {"n": 1}


def test_a_version_said_and_written_with_zeros_run_on_past_it_is_as_said() -> None:
    deploy = tool("deploy", "Deploy a release.", {"tag": TEXT, "build": TEXT}, ["tag"])
    said = said_in(["Deploy release-4.2 with build 7.1.3 please"])
    assert as_said(deploy, {"tag": "release-4.2.0", "build": "7.1.3.0"}, said) == {"tag": "release-4.2",
                                                                                   "build": "7.1.3"}
    assert as_said(deploy, {"tag": "4.20"}, said_in(["Deploy 4.2"])) == {"tag": "4.20"}  # no zero run on: left
    assert as_said(deploy, {"tag": "v2.0"}, said_in(["Deploy v2.0"])) == {"tag": "v2.0"}  # as said: left


def test_a_tool_whose_name_says_a_reading_verb_reads_though_a_word_of_it_begins_like_a_change() -> None:
    """"address" begins like "add", "settings" like "set": whole words of the name tell a change."""
    for name in ("get_address", "read_settings", "list_started_timers"):
        assert reads(tool(name, "Some lookup.", {}, []), []), name
    assert not reads(tool("list_and_delete", "Some cleanup.", {}, []), [])


def test_an_id_or_key_a_reader_looks_up_is_one_said_whole_or_held_while_one_a_writer_stores_may_be_new() -> None:
    """A recall by key in a store in no bench: "mum_birthday" put together from words said is made up for a lookup;
    the key said whole, or one the store holds, is not; a new key to store under is the writer's to make."""
    lookup = tool("fetch_entry", "Get one saved entry by its key.", {"entry_key": TEXT}, ["entry_key"],
                  source="mcp:jar")
    keep = tool("put_entry", "Save an entry under a key.", {"entry_key": TEXT, "text": TEXT}, ["entry_key", "text"],
                source="mcp:jar")
    said = said_in(["What do you remember about my mum's birthday?"])
    assert invented(lookup, {"entry_key": "mum_birthday"}, said) == ["entry_key"]
    assert invented(lookup, {"entry_key": "birthday"}, said) == []
    held = dataclasses.replace(lookup, holds=("mum_birthday",))
    assert invented(held, {"entry_key": "mum_birthday"}, said) == []
    assert invented(keep, {"entry_key": "mum_birthday", "text": "mum's birthday"}, said) == []
    assert invented(lookup, {"entry_key": ["birthday", "mum_party"]}, said) == ["entry_key"]  # every one in a list


def test_a_change_said_by_an_amounts_direction_is_a_change_asked_in_several_languages_but_a_comparison_is_not() -> None:
    from sidespin.tooluse.values import asks_change

    asked = ["Lower the rent to 900.", "Please trim the budget by a tenth.", "Bump the version.",
             "Baisse le prix de 2 euros.", "Erhöhe das Limit auf 20.", "Sube la cuota a 3.", "Aggiorna il saldo."]
    assert all(asks_change(m) for m in asked), [m for m in asked if not asks_change(m)]
    questions = ["Is the rent lower than 900?", "Which price was reduced last week?", "What is the upper bound?"]
    assert not any(asks_change(m) for m in questions), [m for m in questions if asks_change(m)]


@pytest.mark.parametrize("message, value, said", [
    ("Busca todos los archivos markdown que tengo.", "*.md", True),  # an extension said by its format's name
    ("Liste mes fichiers texte, s'il te plaît.", "*.txt", True),
    ("Which python scripts are in the project?", "**/*.py", True),
    ("Find my text files.", "*.md", False),  # another format's name
    ("Find my pdf files.", "*.txt", False),
    ("Open my markdown notes.", "report.md", False)])  # the format said, not the file's name
def test_a_files_extension_is_said_by_its_formats_name(message, value, said) -> None:
    assert mentioned(value, said_in([message]), "pattern") is said
