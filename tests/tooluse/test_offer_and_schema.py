"""What the model is offered (`offer`), the call format read off a template (`call_format`), and the bounded schema
arguments are written under (`schema`)."""

from __future__ import annotations

import re

import pytest

from sidespin.tooluse.model import FALLBACK, read_format
from sidespin.tooluse.model import names_grammar
from sidespin.tooluse.offer import (SHORTLIST, TABLE_CHARS, action_named, family_named, named, offered, offered_table,
                                   tables)
from sidespin.tooluse.schema import MAX_ITEMS, arguments_schema, bounds_for, dropped_whatever
from sidespin.tooluse.values import said_in
from tests.route_fake import BETWEEN, CLOSE, OPEN, FakeLlama
from tests.tooluse.tools import TEXT, tool


def test_few_tools_are_one_table_and_many_a_table_per_source_each_within_the_budget() -> None:
    few = [tool(f"t{i}", "A tool.", {}, source="mcp:a") for i in range(SHORTLIST)]
    assert tables(few) == [few]
    long = "A tool that does a great many things, described at length. " * 20
    many = [tool(f"a{i}", long, {"x": {"type": "string"}}, source="mcp:a") for i in range(30)] + [
        tool(f"b{i}", "Short.", {}, source="mcp:b") for i in range(3)]
    cut = tables(many)
    assert {t.source for t in cut[-1]} == {"mcp:b"} and all(len({t.source for t in table}) == 1 for table in cut)
    assert len(cut) > 2  # the long server is cut in parts
    assert all(len(str(offered_table(table))) < TABLE_CHARS * 1.2 for table in cut)


def test_a_tool_as_offered_leaves_out_schema_noise_but_no_field_and_ends_with_its_servers_folder() -> None:
    noisy = tool("read", "Read a file.", {"title": {"type": "string", "title": "Title"},
                                          "path": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
                 places=("/home/me/files",))
    function = offered(noisy)["function"]
    assert function["parameters"]["properties"] == {"title": {"type": "string"}, "path": {"type": "string"}}
    assert function["description"].endswith("It works in /home/me/files")


async def test_the_call_format_is_read_off_the_template_and_a_template_without_tools_gets_the_fallback() -> None:
    form = await read_format(FakeLlama())
    assert (form.opening, form.between, form.closing) == (OPEN, BETWEEN, CLOSE) and form.native
    assert await read_format(FakeLlama(native=False)) == FALLBACK


def test_the_names_grammar_escapes_quotes_backslashes_and_newlines() -> None:
    grammar = names_grammar(['say"hi', "back\\slash", "new\nline"], '", ')
    assert '\\"' in grammar and "\\\\" in grammar and "\\n" in grammar and "\n" not in grammar.strip()


@pytest.mark.parametrize("description, form", [
    ("Pick-up town, such as 'Boulder, CO' or 'Austin, TX'. States abbreviated.", True),
    ("Where, in the format 'City, State' (e.g., 'Salem, OR').", True),
    ("The venue's city, e.g. \"Leeds, UK\".", True),
    ("A city, e.g. 'Lyon, France' or 'Boulder, CO'.", False),  # an example of another form: no pattern
    ("A city, in the format 'City, State'.", False),  # a label, no example of a code
    ("The city name, such as 'Boulder'.", False),
])
def test_a_name_and_a_code_the_descriptions_examples_show_is_a_pattern(description, form) -> None:
    """"Los Angeles" written where the description shows 'San Francisco, CA': the examples' form, a name, a comma and
    two or three capitals, is the pattern the value is written under."""
    schema = arguments_schema(tool("find", "Find it.", {"city": {"type": "string", "description": description}},
                                   ["city"]))["properties"]["city"]
    assert ("pattern" in schema) is form
    if form:
        assert re.fullmatch(schema["pattern"].strip("^$"), "Boulder, CO") and not re.fullmatch(
            schema["pattern"].strip("^$"), "Boulder")


def test_every_field_is_bounded_optional_ones_stay_optional_and_a_named_date_form_is_a_pattern() -> None:
    events = tool("events", "Events on a day.", {
        "day": {"type": "string", "description": "the day, in the format 'YYYY-MM-DD'"},
        "tags": {"type": "array", "items": {"type": "string"}}, "limit": {"type": "integer"},
        "ratio": {"type": "number"}}, ["day"])
    schema = arguments_schema(events)
    assert schema["required"] == ["day"] and schema["additionalProperties"] is False
    day, tags, limit, ratio = (schema["properties"][n] for n in ("day", "tags", "limit", "ratio"))
    assert day["pattern"].startswith("^[0-9]{4}-") and tags["maxItems"] == MAX_ITEMS
    assert limit["maximum"] == 1_000_000 and ratio["multipleOf"] == 1e-6
    said = bounds_for("numbers 0.1234567 and 5000000. tags a, b, c, d, e, f, g, h, i, j, k")
    bigger = arguments_schema(events, bounds=said)["properties"]
    assert bigger["limit"]["maximum"] == 5_000_000 and bigger["ratio"]["multipleOf"] == 1e-7
    assert bigger["tags"]["maxItems"] == 11


def test_a_server_cut_in_parts_keeps_each_family_of_its_tools_in_one_part() -> None:
    long = "A tool that does a great many things, described at length. " * 20
    names = [f"note_{i}" for i in range(8)] + [f"todo_{i}" for i in range(14)] + [f"timer_{i}" for i in range(8)]
    cut = tables([tool(name, long, {"x": {"type": "string"}}, source="mcp:kit") for name in names])
    assert len(cut) > 2
    families = [{t.name.split("_")[0] for t in table} for table in cut]
    assert all(len(family) == 1 for family in families), families  # an even cut mixed todo with note and timer
    one = [tool(f"git_{i}", long, {}, source="mcp:git") for i in range(30)]  # one family: cut in listed order
    assert [t.name for table in tables(one) for t in table] == [t.name for t in one] and len(tables(one)) > 1


def test_the_values_a_description_lists_for_a_text_parameter_are_its_allowed_values() -> None:
    ops = tool("dir_ops", 'Directory operations.\n\n    Args:\n        action: "create" | "list" | "delete"\n'
               '        format: "tree" | "flat" (list only).\n        dir_path: Absolute path.',
               {"action": {"type": "string"}, "format": {"type": "string"}, "dir_path": {"type": "string"}},
               ["action"])
    config = tool("config_ops", 'Config.\n    Args:\n        action:\n            - "set_root": Add a root\n'
                  '            - "get_info": Get metadata\n        path: Target path.', {"action": {"type": "string"}})
    schema = arguments_schema(ops)["properties"]
    assert schema["action"] == {"enum": ["create", "list", "delete"]} and schema["format"] == {"enum": ["tree", "flat"]}
    assert "enum" not in schema["dir_path"]
    assert arguments_schema(config)["properties"]["action"] == {"enum": ["set_root", "get_info"]}
    said = tool("note", 'Write a note. Use action: "save" for good.', {"action": {"type": "string"}})
    assert "enum" not in arguments_schema(said)["properties"]["action"]  # one value is an example, not a list


def test_the_values_a_description_lists_under_a_heading_that_says_the_parameters_words() -> None:
    stats = tool("summarize", "Summary statistics.\n\nAvailable methods: average, spread, count.",
                 {"method": {"type": "string"}, "values": {"type": "array"}}, ["method", "values"])
    paint = tool("paint", "Paint a wall.\n\nColour schemes:\n- warm: red, orange\n- cool: blue, green\n",
                 {"colour_scheme": {"type": "string"}, "wall": {"type": "string"}}, ["colour_scheme"])
    prose = tool("greet", "Greet someone.\nName: the person, as they like to be called.", {"name": {"type": "string"}})
    assert arguments_schema(stats)["properties"]["method"] == {"enum": ["average", "spread", "count"]}
    assert arguments_schema(paint)["properties"]["colour_scheme"] == {"enum": ["warm", "cool"]}
    assert "enum" not in arguments_schema(paint)["properties"]["wall"]
    assert "enum" not in arguments_schema(prose)["properties"]["name"]  # a sentence after the colon lists nothing


SHOPPING = [tool("shopping_list", "The items on the shopping list.", {}, source="mcp:shop"),
            tool("shopping_add", "Add an item to the shopping list.", {"item": TEXT}, ["item"], source="mcp:shop"),
            tool("shopping_clear", "Empty the shopping list.", {}, source="mcp:shop")]


@pytest.mark.parametrize("text, wanted", [("What's on my shopping list?", {"shopping_list"}),
                                          ("Put oat milk on my shopping list.", set()),
                                          ("Add to the shopping list: oat milk", {"shopping_add"})])
def test_a_tool_named_is_the_action_unless_it_only_reads_and_the_message_asks_a_change(text, wanted) -> None:
    """"On my shopping list" names where a change goes, not the tool that lists it."""
    assert named(SHOPPING, text) == wanted


KITCHEN = [tool(name, f"{name.replace('_', ' ')}.", {"text": TEXT}, ["text"], source="mcp:kitchen")
           for name in ("recipe_add", "recipe_find", "recipe_delete", "pantry_add", "pantry_list")]


@pytest.mark.parametrize("text, family", [
    ("Add a recipe: lemon bars with shortbread base", {"recipe_add", "recipe_find", "recipe_delete"}),
    ("Is there flour in the pantry?", {"pantry_add", "pantry_list"}),
    ("Put the pantry's flour in a recipe", set()), ("Add lemon bars", set())])
def test_a_family_of_tools_is_named_by_its_first_word_said_alone(text, family) -> None:
    assert family_named(KITCHEN, text) == family


def test_a_family_is_named_only_by_a_word_that_is_no_verb_and_only_within_one_server() -> None:
    readers = [tool(name, "Read.", {"path": TEXT}, ["path"], source="mcp:fs") for name in ("read_file", "read_dir")]
    twins = [tool(name, "Note.", {}, source=source) for name, source in (("note_add", "mcp:a"), ("note_get", "mcp:a"),
                                                                           ("note_add", "mcp:b"), ("note_get", "mcp:b"))]
    assert family_named(readers + KITCHEN, "Read the file a.txt") == set()
    assert family_named(twins, "Add a note") == set()


CELLAR = [tool("vault_ops", "Vault operations.", {"action": {"enum": ["open", "list", "seal"]}, "vault": TEXT}, ["action"],
               source="mcp:cellar"),
          tool("shelf", 'Shelf work.\nop: "count" | "add"', {"op": TEXT}, ["op"], source="mcp:cellar"),
          tool("read_label", "Read a bottle's label.", {"bottle": TEXT}, ["bottle"], source="mcp:cellar")]


@pytest.mark.parametrize("text, wanted", [("List the vaults in my cellar.", {"vault_ops"}),
                                          ("Could you count the bottles on the shelf?", {"shelf"}),
                                          ("Please seal the old vault.", set()),  # a change: no reading verb
                                          ("Which wines age best?", set())])
def test_a_reading_verb_a_request_opens_with_names_the_tools_that_allow_it_as_a_value(text, wanted) -> None:
    assert action_named(CELLAR, text) == wanted


SEARCH_LOG = tool("grep_log", "Search a log file for lines matching a pattern.", {
    "path": TEXT, "pattern": TEXT, "ignore_case": {"type": "boolean"}, "whole_words": {"type": ["boolean", "null"]},
    "context_lines": {"type": "integer"}, "tail": {"type": ["number", "null"]},
    "level": {"type": "string", "enum": ["debug", "info", "warning", "error"]}, "since": TEXT},
    ["path", "pattern"], source="mcp:logs", read_only=True)


def test_optional_values_that_would_be_dropped_whatever_they_were_are_not_offered_to_be_written() -> None:
    """A switch the person does not name, a number where nothing was said as a number, a choice of values none said:
    whatever the model wrote for them would be dropped (`grounded`), so writing them only costs time. A required
    parameter, an open text, and those the message does say stay."""
    plain = said_in(["Look for 'timeout' in server.log."])
    assert dropped_whatever(SEARCH_LOG, plain, plain) == {"ignore_case", "whole_words", "context_lines", "tail",
                                                          "level"}
    said = said_in(["Show the last 20 warning lines about 'timeout' in server.log, ignoring case."])
    assert dropped_whatever(SEARCH_LOG, said, said) == {"whole_words"}
    schema = arguments_schema(SEARCH_LOG, leave=dropped_whatever(SEARCH_LOG, plain, plain))
    assert set(schema["properties"]) == {"path", "pattern", "since"} and schema["required"] == ["path", "pattern"]
    assert "whole_words" not in dropped_whatever(SEARCH_LOG, plain, said_in(["Match whole words only."]))
    assert dropped_whatever(tool("f", "F.", {"on": {"type": "boolean"}}, ["on"]), plain, plain) == set()  # required
