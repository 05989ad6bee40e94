"""The decision pipeline against a fake of llama.cpp's endpoints (no model): each stage, in order."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sidespin.errors import MalformedToolCall
from sidespin.tools import Tool
from sidespin.tooluse import Decider
from sidespin.tooluse.relevance import Embedder
from sidespin.tooluse.offer import SHORTLIST, tables
from sidespin.tooluse.pipeline import MAX_CALLS
from sidespin.tooluse.schema import MAX_STRING, SHORT_STRING
from sidespin.tooluse.values import change_asked, reads
from tests.route_fake import CLOSE, FakeLlama
from tests.tooluse.tools import (ADD_NOTE, CONVERT, EVALUATE, FIND_NOTES, FORECAST, OLD_FIND, RUN_SQL, STATUS, TEXT,
                                 called, tool)

TOOLS = [EVALUATE, CONVERT, FORECAST, STATUS]


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


async def decided(model: FakeLlama, messages: list[dict], tools: list[Tool] = TOOLS, **options) -> list[tuple]:
    return [(c.name, c.arguments) for c in await Decider(model, **options).decide(messages, tools)]


# --- whether ------------------------------------------------------------------------------------------------


async def test_no_tools_offered_is_no_call_and_asks_the_model_nothing() -> None:
    model = FakeLlama({"What is 2 + 2?": [("evaluate", {"expression": "2+2"})]})
    assert await decided(model, user("What is 2 + 2?"), []) == []
    assert model.asked == []


async def test_a_call_is_made_when_the_chance_of_one_is_over_the_models_bar_and_not_under_it() -> None:
    text = "Will it rain in Oslo?"
    wants = {text: [("forecast", {"city": "Oslo"})]}
    assert await decided(FakeLlama(wants, p_call=0.7), user(text)) == [("forecast", {"city": "Oslo"})]
    assert await decided(FakeLlama(wants, p_call=0.3), user(text)) == []
    assert await decided(FakeLlama(wants, p_call=0.3), user(text), threshold=0.2) != []  # the bar is the model's


async def test_a_message_that_shares_no_word_with_any_tool_still_reaches_the_model() -> None:
    """No word gate: "What's 17 × 23?" shares no word with a tool that evaluates expressions."""
    text = "What's 17 × 23?"
    model = FakeLlama({text: [("evaluate", {"expression": "17*23"})]})
    assert await decided(model, user(text)) == [("evaluate", {"expression": "17*23"})]


async def test_an_act_outside_the_machine_no_tool_says_is_no_call_however_sure_the_model_is() -> None:
    """The class: sending, calling, booking, buying, printing asked of tools that say none of it (a veterinary
    clinic's records, in no bench); said where a tool does it, or where it is one request among others, it calls."""
    pets = tool("find_pet", "Find a pet's record by its name.", {"name": TEXT}, ["name"], source="mcp:vet",
                read_only=True)
    visits = tool("add_visit", "Record a visit for a pet.", {"pet": TEXT, "note": TEXT}, ["pet", "note"],
                  source="mcp:vet")
    mail = tool("send_message", "Send a text message to a phone number.", {"to": TEXT, "body": TEXT},
                ["to", "body"], source="mcp:sms")
    for text in ("Email Rex's owner a reminder.", "Please phone the owner of Bella.", "Buy more flea collars.",
                 "Réserve une table pour deux ce soir.", "Drucke die Rechnung für Rex."):
        wants = {text: [("find_pet", {"name": "Rex"})]}  # a look-up the model is sure of
        assert await decided(FakeLlama(wants, p_call=0.95), user(text), [pets, visits]) == [], text
    text = "Text Rex's owner that he is ready."
    wants = {text: [("send_message", {"to": "Rex's owner", "body": "Rex is ready."})]}
    assert await decided(FakeLlama(wants, p_call=0.95), user(text), [pets, visits, mail]) != []
    text = "Order the pets by name."  # to sort: no act outside the machine
    wants = {text: [("find_pet", {"name": "pets"})]}
    assert await decided(FakeLlama(wants, p_call=0.95), user(text), [pets, visits]) != []
    text = "Find Bella and email her owner."
    wants = {text: [("find_pet", {"name": "Bella"})]}
    assert await decided(FakeLlama(wants, p_call=0.95), user(text), [pets, visits]) == [("find_pet", {"name": "Bella"})]


async def test_a_follow_up_after_an_answer_in_words_is_also_asked_alone() -> None:
    text = "And in euros, 20 dollars?"
    talk = [*user("Hi"), {"role": "assistant", "content": "Hello! How can I help?"}, *user(text)]
    wants = {text: [("convert_currency", {"amount": 20, "from_currency": "USD", "to_currency": "EUR"})]}
    assert await decided(FakeLlama(wants, shy=0.05, p_call=0.9), talk, [CONVERT]) == [
        ("convert_currency", {"amount": 20, "from_currency": "USD", "to_currency": "EUR"})]
    assert await decided(FakeLlama(wants, shy=0.05, p_call=0.3), talk, [CONVERT]) == []


async def test_a_message_that_names_a_tool_is_written_as_a_call_down_to_the_floor() -> None:
    wants = {"Use server status please": [("server_status", {})], "Is it up?": [("server_status", {})]}
    assert await decided(FakeLlama(wants, p_call=0.2), user("Use server status please")) == [("server_status", {})]
    assert await decided(FakeLlama(wants, p_call=0.2), user("Is it up?")) == []
    assert await decided(FakeLlama(wants, p_call=0.1), user("Use server status please")) == []


# --- shortlist ----------------------------------------------------------------------------------------------


def many(source: str, stem: str, count: int) -> list[Tool]:
    return [tool(f"{stem}_{i}", f"Does the {stem} thing number {i}.", {"x": {"type": "string"}}, ["x"],
                 source=source) for i in range(count)]


async def test_many_tools_are_read_a_table_at_a_time_and_the_most_relevant_table_is_read() -> None:
    text = "Tell me the forecast for Oslo."
    tools = [*many("mcp:a", "alpha", 6), *many("mcp:b", "beta", 6), FORECAST]
    assert len(tools) > SHORTLIST
    model = FakeLlama({text: [("forecast", {"city": "Oslo"})]})
    assert await decided(model, user(text), tools) == [("forecast", {"city": "Oslo"})]
    offered = [sorted(t["function"]["name"] for t in asked["tools"]) for asked in model.asked
               if asked["kind"] == "render" and asked["tools"] and "zqx" not in str(asked["tools"])]
    assert offered == [["forecast"]]  # the weather server's table alone
    written = next(a["prompt"] for a in model.asked if a["kind"] == "complete" and a["schema"])
    assert '"forecast"' in written and "alpha_0" not in written  # its arguments were written after its table


async def test_a_message_naming_a_tool_by_its_words_reads_its_table_and_calls_it_though_others_rank_higher() -> None:
    text = "What's left on my to-do list?"
    lists = [tool(f"list_{i}", "List what is left: every open entry, listed.", {}, source="mcp:kb") for i in range(6)]
    todos = [tool(f"todo_{verb}", f"{verb.title()} tasks.", {}, source="mcp:kit") for verb in
             ("create", "list", "delete", "complete", "update", "get")]
    model = FakeLlama({text: [("todo_get", {}), ("todo_list", {})]},  # the model leans to a look-alike
                      name_tokens={"": [('todo_get",', 0.7), ('todo_list",', 0.3)]})
    assert await decided(model, user(text), [*lists, *todos]) == [("todo_list", {})]
    offered = [sorted(t["function"]["name"] for t in asked["tools"]) for asked in model.asked
               if asked["kind"] == "render" and asked["tools"] and "zqx" not in str(asked["tools"])]
    assert offered == [sorted(t.name for t in todos)]


async def test_the_table_of_the_tool_called_last_is_a_candidate_for_a_follow_up() -> None:
    text = "and for Bergen?"
    talk = [*user("Forecast for Oslo"), *called("c1", "forecast", '{"city": "Oslo"}', "Rain."),
            {"role": "assistant", "content": "Rain in Oslo."}, *user(text)]
    tools = [*many("mcp:a", "alpha", 6), *many("mcp:b", "beta", 6), FORECAST]
    model = FakeLlama({text: [("forecast", {"city": "Bergen"})]})
    assert await decided(model, talk, tools) == [("forecast", {"city": "Bergen"})]


async def test_a_follow_up_about_a_thing_the_last_result_gave_reads_the_last_calls_table() -> None:
    """After a listing gave "lisbon.md", "Montre-moi le programme de Lisbonne, s'il te plaît" (long, and sharing
    "programme" with the dates server's tools) reads the listing's table; one sharing no word with the result does
    not."""
    listing = tool("list_dir", "List a folder.", {"path": TEXT}, ["path"], source="mcp:drawer", read_only=True)
    reading = tool("read_text", "Read a text file.", {"path": TEXT}, ["path"], source="mcp:drawer", read_only=True)
    dates = [tool(f"date_{v}", f"Date programme: {v} a date.", {"date": TEXT}, ["date"], source="mcp:dates")
             for v in ("add", "subtract", "parse", "format", "compare", "shift", "round", "check", "name", "week")]
    talk = [*user("Quels fichiers dans travel ?"), *called("c1", "list_dir", '{"path": "travel"}',
                                                         "lisbon.md\nporto.md"),
            {"role": "assistant", "content": "lisbon.md et porto.md."}]
    read = [("read_text", {"path": "lisbon.md"})]
    for text, wanted in (("Montre-moi le programme de Lisbonne, s'il te plaît.", read),
                         ("Montre-moi le programme de Noël, s'il te plaît.", [])):
        model = FakeLlama({text: [("read_text", {"path": "lisbon.md"})]})
        assert await decided(model, [*talk, *user(text)], [listing, reading, *dates]) == wanted, text


async def test_a_follow_up_begun_with_and_is_ranked_with_the_message_before_it() -> None:
    text = "And how many of those were stored after March by someone from Oslo?"
    talk = [*user("How many orders are in the shop database?"),
            *called("c1", "run_sql", '{"sql": "SELECT count(*) FROM orders"}', "8"),
            {"role": "assistant", "content": "There are 8 orders."}, *user(text)]
    tools = [*many("mcp:a", "alpha", 6), *many("mcp:b", "beta", 6), RUN_SQL, FIND_NOTES, ADD_NOTE]
    wanted = ("run_sql", {"sql": "SELECT count(*) FROM orders WHERE city = 'Oslo'"})
    model = FakeLlama({text: [wanted]})
    assert await decided(model, talk, tools) == [wanted]  # not the notes' table, for the word "stored"


# --- which --------------------------------------------------------------------------------------------------


async def test_the_name_is_the_likeliest_as_a_whole_not_the_one_behind_the_likeliest_first_token() -> None:
    text = "Store a note called groceries: milk"
    names = {"": [("find", 0.6), ("add_note", 0.4)], "find": [("_notes", 0.3), ("_nothing", 0.7)],
             "add_note": [('",', 1.0)], "find_notes": [('",', 1.0)]}
    model = FakeLlama({text: [("add_note", {"title": "groceries", "body": "milk"})]}, name_tokens=names)
    assert await decided(model, user(text), [ADD_NOTE, FIND_NOTES]) == [
        ("add_note", {"title": "groceries", "body": "milk"})]


async def test_a_first_name_the_model_is_unsure_of_gives_way_to_the_next_likeliest_once() -> None:
    text = "Look up my notes about taxes"
    names = {"": [("add_note", 0.03), ("find_notes", 0.02), ("forecast", 0.01)], "add_note": [('",', 1.0)],
             "find_notes": [('",', 1.0)], "forecast": [('",', 1.0)]}
    wants = {text: [("find_notes", {"query": "taxes"})]}
    # among three, neither the first nor the next is likely enough: the model does not know which
    assert await decided(FakeLlama(wants, name_tokens=names), user(text), [ADD_NOTE, FIND_NOTES, FORECAST]) == []
    # of two, the one left after the first is refused is called, if it fits
    assert await decided(FakeLlama(wants, name_tokens=names), user(text), [ADD_NOTE, FIND_NOTES]) == [
        ("find_notes", {"query": "taxes"})]
    misfit = FakeLlama(wants, name_tokens=names, misfits=frozenset({"find_notes"}))
    assert await decided(misfit, user(text), [ADD_NOTE, FIND_NOTES]) == []
    sure = {**names, "": [("find_notes", 0.9), ("add_note", 0.1)]}
    assert await decided(FakeLlama(wants, name_tokens=sure), user(text), [ADD_NOTE, FIND_NOTES, FORECAST]) == [
        ("find_notes", {"query": "taxes"})]


class SurerAmongFew(FakeLlama):
    """A model whose name tokens are `few` where its prompt offers four tools or fewer, else `name_tokens`."""

    def __init__(self, *args, few: dict[str, list[tuple[str, float]]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.few, self.many = few, self.name_tokens

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        head = prompt.partition("</tools>")[0]
        self.name_tokens = self.few if head and head.count("\n") + 1 <= 4 else self.many
        return await super().next_tokens(prompt, n)


KILN = [tool(name, about, {"piece": TEXT}, ["piece"], source="mcp:kiln", read_only=True) for name, about in (
    ("firing_schedule", "The kiln's firing schedule for a piece of pottery."),
    ("glaze_recipe", "The glaze recipe a piece of pottery uses."),
    ("clay_body", "The clay body a piece is thrown from."),
    ("shrinkage_estimate", "How much a piece of pottery shrinks in the kiln, in percent."),
    ("studio_hours", "When the pottery studio is open."),
    ("piece_photos", "Photos of a piece of pottery."))]


@pytest.mark.parametrize("text, unsure, few, sure, wanted", [
    # unsure among six, the most relevant three and its own pick offered alone: the one it is sure of there
    ("How much will the blue bowl shrink when it is fired?", 0.35, "shrinkage_estimate", 0.9, "shrinkage_estimate"),
    ("Which glaze is on the blue bowl?", 0.4, "glaze_recipe", 0.85, "glaze_recipe"),
    # offered fewer, it names its own pick again, or another it is not sure of: its own pick
    ("How much will the blue bowl shrink when it is fired?", 0.35, "firing_schedule", 0.9, "firing_schedule"),
    ("How much will the blue bowl shrink when it is fired?", 0.35, "shrinkage_estimate", 0.6, "firing_schedule"),
    # sure of its pick among six: not asked again
    ("How much will the blue bowl shrink when it is fired?", 0.7, "shrinkage_estimate", 0.9, "firing_schedule")])
async def test_a_first_name_the_model_is_unsure_of_among_many_gives_way_to_one_it_is_sure_of_among_the_most_relevant(
        text, unsure, few, sure, wanted) -> None:
    names = {"": [("firing_schedule", unsure), *((t.name, 0.05) for t in KILN if t.name != "firing_schedule")],
             **{t.name: [('",', 1.0)] for t in KILN}}
    fewer = {**names, "": [(few, sure), *((t.name, 0.02) for t in KILN if t.name != few)]}
    model = SurerAmongFew({text: [(n, {"piece": "blue bowl"}) for n in (wanted, "firing_schedule")]},
                          name_tokens=names, few=fewer)
    calls = await decided(model, user(text), KILN)
    assert [name for name, _ in calls] == [wanted]
    offered = [a["tools"] for a in model.asked if a["kind"] == "render" and a["tools"]]
    assert len(offered[-1]) == (6 if unsure >= 0.6 else 4)  # asked again among fewer only where unsure


async def test_after_a_sure_first_name_is_refused_the_next_is_tried_however_unlikely_as_a_whole_if_it_fits() -> None:
    """The model is sure of `delete_plant` (0.9), which no deletion asked lets open the answer: its next name is
    unlikely as a whole (0.006), as any second choice is, and is still tried; the fit question still refuses it."""
    garden = [tool(f"{verb}_plant{s}", f"{verb.title()} the plants of the garden.", {"name": TEXT}, source="mcp:garden")
              for verb, s in (("delete", ""), ("find", "s"), ("show", ""), ("add", ""))]
    text = "Which of my plants need water this week?"
    names = {"": [("delete_plant", 0.9), ("find_plants", 0.006), ("show_plant", 0.003), ("add_plant", 0.001)],
             **{n: [('",', 1.0)] for n in ("delete_plant", "find_plants", "show_plant", "add_plant")}}
    wants = {text: [("find_plants", {"name": "water"})]}
    model = FakeLlama(wants, name_tokens=names)
    assert await decided(model, user(text), garden) == [("find_plants", {"name": "water"})]
    misfit = FakeLlama(wants, name_tokens=names, misfits=frozenset({"find_plants"}))
    assert await decided(misfit, user(text), garden) == []


@pytest.mark.parametrize("text, several", [
    ("Will it rain in Oslo tomorrow?", False), ("Wie wird das Wetter am 14. März in Oslo?", False),
    ("Will it rain in Oslo or in Bergen?", True), ("Regnet es in Oslo und in Bergen?", True),
    ("Rain in Oslo, Bergen, Tromsø?", True)])
async def test_a_message_asking_one_thing_is_answered_by_one_call_without_asking_the_model_for_another(
        text, several) -> None:
    """Whether another call follows is asked of the model only where the message may ask several things (two joined
    in five languages, a list, two sentences; a date's "14." ends no sentence): one asked is one call."""
    first, second = ("forecast", {"city": "Oslo"}), ("forecast", {"city": "Bergen"})
    model = FakeLlama({text: [first, second]})
    wanted = [first, second] if several and "Bergen" in text else [first]
    assert await decided(model, user(text), TOOLS) == wanted
    after = [a for a in model.asked if a["kind"] == "next_tokens" and a["prompt"].endswith(CLOSE)]
    assert bool(after) == several, text  # the model was asked whether it goes on


async def test_a_message_naming_what_a_server_holds_is_written_as_a_call_down_to_the_floor() -> None:
    """A quiet question about a held thing ("my Wifi note") has a small model's chance of a call near 0.3."""
    entry = tool("read_entry", "Return one entry by its title.", {"title": TEXT}, ["title"], source="mcp:journal",
                 read_only=True)
    held = dataclasses.replace(entry, holds=("Wifi", "Bike service"))
    for text, title, tools, calls in (("What did I write in my wifi note?", "Wifi", [held], True),
                                      ("How much was the bike service?", "Bike service", [held], True),
                                      ("What did I write in my wifi note?", "Wifi", [entry], False),  # none known
                                      ("Is a bike faster than a bus?", "bike", [held], False)):  # not said whole
        model = FakeLlama({text: [("read_entry", {"title": title})]}, p_call=0.3)
        assert bool(await decided(model, user(text), tools)) == calls, text


async def test_a_question_saying_a_held_name_in_another_language_is_written_as_a_call_down_to_the_floor() -> None:
    """Real embeddings, a lending library's database in no bench: "préstamos", "Mitglieder", "livres" say its tables
    `loans`, `members`, `books`; a question saying none of them, or a statement, is no call at the same chance."""
    sql = tool("run_sql", "Execute a SQL statement.", {"query": TEXT}, ["query"], source="mcp:library")
    sql = dataclasses.replace(sql, holds=("books(id, title)", "loans(id, book_id, due)", "members(id, name)"))
    embedder = Embedder()
    for text, calls in (("¿Cuántos préstamos vencen esta semana?", True),
                        ("Wie viele Mitglieder haben wir?", True),
                        ("Combien de livres sont en retard ?", True),
                        ("¿Qué tiempo hace hoy en Sevilla?", False),
                        ("Les livres sont en retard.", False)):  # no question
        model = FakeLlama({text: [("run_sql", {"query": "SELECT count(*) FROM loans"})]}, p_call=0.3)
        assert bool(await decided(model, user(text), [sql], embedder=embedder)) == calls, text
    text = "Wie viele Mitglieder haben wir?"  # without embeddings, the word is not read as the name
    assert await decided(FakeLlama({text: [("run_sql", {"query": "SELECT 1"})]}, p_call=0.3), user(text), [sql]) == []


async def test_a_question_saying_a_word_of_a_file_the_server_holds_is_written_as_a_call_down_to_the_floor() -> None:
    """A question about a held file by a word of its name ("the rota" of `choir-rota.ods`), the chance near 0.3; a
    statement, or a word of a held name that is no file's, is not; a question may go on after its "?"."""
    sheet = tool("read_sheet", "Return a sheet's cells.", {"path": TEXT}, ["path"], source="mcp:calc", read_only=True)
    held = dataclasses.replace(sheet, holds=("choir-rota.ods", "Bike service"))
    for text, calls in (("Who hosts in June, according to the rota?", True),
                        ("Who hosts in June? Look at the rota.", True),
                        ("The rota says Ruth hosts in June.", False),  # no question
                        ("Is a bike faster than a bus?", False)):  # a word of a name that is no file's
        model = FakeLlama({text: [("read_sheet", {"path": "choir-rota.ods"})]}, p_call=0.3)
        assert bool(await decided(model, user(text), [held])) == calls, text


async def test_a_name_the_server_holds_is_a_value_known_though_the_message_said_it_in_other_words() -> None:
    text = "Combien de factures impayées ?"
    ledger = tool("run_select", "Run a SELECT statement.", {"statement": TEXT}, ["statement"], source="mcp:ledger")
    model = FakeLlama({text: [("run_select", {"statement": "SELECT count(*) FROM invoices WHERE paid = 0"})]})
    assert await decided(model, user(text), [ledger]) == []  # made up: nothing said is in it
    assert await decided(model, user(text), [dataclasses.replace(ledger, holds=("invoices", "suppliers"))]) == [
        ("run_select", {"statement": "SELECT count(*) FROM invoices WHERE paid = 0"})]


POST = tool("post_entry", "Insert a row into the ledger's entries.",
            {"row": {"type": "string"}, "kind": {"enum": ["coffee", "lunch"]}}, ["row"], source="mcp:ledger")


@pytest.mark.parametrize("text, called", [
    ("Order me a taxi to the station at six.", False), ("Please ship the blue kettle to Porto.", False),
    ("Add an entry: lunch, 12 euros.", True), ("Ajoute une ligne : café, 3 euros.", True),
    ("Order the entries from May.", True),  # no change asked, but a word of the tool's own
    ("Which entries are from May?", False), ("Welche entries wurden geändert?", False),  # a question asks none
    ("Order me a coffee.", True), ("Could you order me a coffee?", True),  # a value it takes
    ("Mark the taxi as paid.", True), ("Close the one from Monday.", True),  # a change of state
    ("Markiere den Eintrag vom Montag als erledigt.", True),
])
async def test_a_first_call_of_a_tool_that_changes_things_needs_a_change_asked_or_a_word_of_its_own(text, called):
    """A request no tool does ("order me a taxi") is not an insert because the model leans to call what is offered."""
    said = text.rstrip(".?").split()[-1]
    wants = {text: [("post_entry", {"row": said}), ("run_sql", {"sql": f"SELECT * FROM t WHERE x = '{said}'"})]}
    model = FakeLlama(wants, p_call=0.9, later={"kind": "coffee"},
                      name_tokens={"": [('post_entry",', 0.8), ('run_sql",', 0.2)]})
    # refused, the tool the model meant gives way to no other: it meant to do what no tool does
    assert [name for name, _ in await decided(model, user(text), [POST, RUN_SQL])] == ["post_entry"] * called


STOCK = tool("stock_item", "Put an item on the pantry's shelf.", {"item": TEXT}, ["item"], source="mcp:pantry")
BIN = tool("discard_item", "Remove an item from the pantry for good.", {"item": TEXT}, ["item"], source="mcp:pantry",
           destructive=True)
FRESH = tool("create_pantry", "Create a new, empty pantry file.", {"name": TEXT, "replace": {"type": "boolean"}},
             ["name"], source="mcp:pantry", destructive=True)
PRICE = tool("set_price", "Set an item's price in the pantry.", {"item": TEXT, "price": {"type": "number"}},
             ["item", "price"], source="mcp:pantry")


@pytest.mark.parametrize("text, item, first, then, wanted", [
    ("Put the oat milk on the shelf.", "oat milk", "discard_item", "stock_item", "stock_item"),  # no deletion asked
    ("Ajoute le lait d'avoine.", "lait", "discard_item", "stock_item", "stock_item"),
    ("Throw out the oat milk, please remove it.", "oat milk", "discard_item", "stock_item", "discard_item"),
    ("Entferne die Hafermilch.", "Hafermilch", "discard_item", "stock_item", "discard_item"),
    ("Change the price of oat milk to 3.", "oat milk", "create_pantry", "set_price", "set_price"),  # not a new thing
    ("Create a pantry called oat milk.", "oat milk", "create_pantry", "set_price", "create_pantry"),
    ("Set up a new pantry, oat milk.", "oat milk", "create_pantry", "set_price", "create_pantry"),
])
async def test_a_tool_that_deletes_or_makes_a_new_thing_is_called_only_where_that_kind_of_change_is_asked(
        text, item, first, then, wanted) -> None:
    """`core.kind_asked`, on a pantry server in no bench: the model's first name deletes (or creates) where the
    message asks to add (or to change a value); its next likeliest is taken instead."""
    arguments = {"stock_item": {"item": item}, "discard_item": {"item": item}, "set_price": {"item": item, "price": 3},
                 "create_pantry": {"name": item}}
    model = FakeLlama({text: [(first, arguments[first]), (then, arguments[then])]}, p_call=0.9,
                      name_tokens={"": [(f'{first}",', 0.6), (f'{then}",', 0.2)]})
    assert [n for n, _ in await decided(model, user(text), [STOCK, BIN, FRESH, PRICE])] == [wanted]


async def test_a_word_a_changing_tool_says_only_further_on_in_its_description_does_not_make_it_asked() -> None:
    """`core.change_asked`: "Book me a table" shares "table" with a page copier's later sentence, not with what it
    is for; "Copy my travel page" shares its purpose."""
    copier = tool("duplicate_page", "Duplicate a page of the notebook. Its tables get new names.", {"page": TEXT},
                  ["page"], source="mcp:notebook")
    for text, made in (("Book me a table for two at eight tonight.", False), ("Duplicate my travel page.", True),
                       ("My travel page, one more like it for the notebook", True)):
        model = FakeLlama({text: [("duplicate_page", {"page": "travel"})]}, p_call=0.9)
        assert [n for n, _ in await decided(model, user(text), [copier])] == ["duplicate_page"] * made, text


def test_a_tool_of_several_actions_one_of_which_reads_may_open_an_answer_that_asks_no_change() -> None:
    ops = tool("dir_ops", "Directory operations: create, list, or delete.", {"action": TEXT}, ["action"])
    meta = tool("config_ops", "Config operations. - set_root: add a root - get_info: a file's metadata", {}, [])
    assert change_asked(ops, "Léeme qué hay en la carpeta.") and change_asked(meta, "Wann wurde x.csv geändert?")
    assert not change_asked(POST, "Léeme qué hay en la carpeta.")
    unname = tool("delete_defined_name", "Delete a defined name; formulas using it will show #NAME?.", {}, [])
    assert not change_asked(unname, "Send Brigitte an email to thank her.")  # a verb further on is no action


async def test_a_first_call_of_a_tool_the_model_says_does_not_do_what_was_asked_is_not_made() -> None:
    text = "How tall is Mount Everest?"
    model = FakeLlama({text: [("forecast", {"city": "Everest"})]}, misfits=frozenset({"forecast"}))
    assert await decided(model, user(text), [FORECAST]) == []
    model = FakeLlama({text: [("forecast", {"city": "Everest"})]})
    assert await decided(model, user(text), [FORECAST]) == [("forecast", {"city": "Everest"})]
    assert await decided(FakeLlama({text: [("forecast", {"city": "Everest"})]}), user(text), [FORECAST],
                         fit=1.01) == []  # the bar is the model's


JOKE = tool("random_joke", "Tell a random programmer joke.", {}, source="mcp:fun", read_only=True)
HISTORY = tool("history", "Show the commit history of the repository.", {}, source="mcp:vcs", read_only=True)


@pytest.mark.parametrize("text, tools, wanted", [
    ("How tall is the Eiffel Tower?", [JOKE], "random_joke"),
    ("Who discovered penicillin?", [STATUS], "server_status"),
    ("Summarise the French revolution in one sentence.", [JOKE, STATUS], "random_joke"),
])
async def test_a_first_call_that_carries_nothing_said_to_a_tool_far_in_meaning_is_not_made(text, tools,
                                                                                            wanted) -> None:
    """Real embeddings: a question no tool is about, to a tool without parameters the model leans to call."""
    wants = {text: [(wanted, {})]}
    assert await decided(FakeLlama(wants), user(text), tools, embedder=Embedder()) == []
    assert await decided(FakeLlama(wants), user(text), tools) == [(wanted, {})]  # without embeddings: no floor


@pytest.mark.parametrize("text, tools, wanted", [
    ("Tell me a joke about coders", [JOKE, STATUS], ("random_joke", {})),
    ("Is the build machine running?", [JOKE, STATUS], ("server_status", {})),
    ("Will it rain in Bergen?", [FORECAST], ("forecast", {"city": "Bergen"})),  # a value said: no floor
    ("Welche Commits gab es heute?", [HISTORY, JOKE], ("history", {})),  # far in meaning, but a word in common
    ("Enséñame qué notas tengo.", [tool("note_list", "List them; scope='' means the global scope (use a registered "
                                        "name otherwise).", {}, source="mcp:desk", read_only=True), JOKE],
     ("note_list", {})),  # far in meaning, no word in common, but a word of its name in Spanish
    ("Montre-moi mes factures.", [tool("invoice_list", "List them; scope='' means the global scope (use a registered "
                                       "name otherwise).", {}, source="mcp:books", read_only=True), JOKE],
     ("invoice_list", {})),
])
async def test_a_call_close_in_meaning_or_carrying_a_value_said_is_made(text, tools, wanted) -> None:
    assert await decided(FakeLlama({text: [wanted]}), user(text), tools, embedder=Embedder()) == [wanted]


TRIVIA = tool("animal_trivia", "A random fun fact about cats, dogs or other animals.", {}, source="mcp:zoo",
              read_only=True)


async def test_the_models_next_name_after_a_refused_one_does_not_pass_the_meaning_floor_by_copying_the_message(
        ) -> None:
    text = "Who painted the Mona Lisa?"
    model = FakeLlama({text: [("animal_trivia", {}), ("run_sql", {"sql": "SELECT * FROM t WHERE name = 'Mona Lisa'"})]})
    assert await decided(model, user(text), [TRIVIA, RUN_SQL], embedder=Embedder()) == []
    first = FakeLlama({text: [("run_sql", {"sql": "SELECT * FROM t WHERE name = 'Mona Lisa'"})]})
    assert await decided(first, user(text), [TRIVIA, RUN_SQL], embedder=Embedder()) != []  # a first name may


async def test_a_made_up_value_is_the_one_its_parameter_says_to_use_where_the_person_gives_none() -> None:
    station = {"type": "string", "description": "A station code, e.g. 'KSEA'. Use 'EGLL' as the home station if no "
                                                "station is provided by the user."}
    reading = tool("station_reading", "The temperature and wind at a weather station now.", {"station": station},
                   ["station"], source="mcp:meteo", read_only=True)
    text = "How cold is it outside right now?"
    model = FakeLlama({text: [("station_reading", {"station": "KSEA"})]})
    assert await decided(model, user(text), [reading]) == [("station_reading", {"station": "EGLL"})]
    said = "How cold is it at station LFPG?"  # said: as written
    model = FakeLlama({said: [("station_reading", {"station": "LFPG"})]})
    assert await decided(model, user(said), [reading]) == [("station_reading", {"station": "LFPG"})]
    plain = tool("station_reading", "The temperature and wind at a weather station now.", {"station": {
        "type": "string", "description": "A station code, e.g. 'KSEA'."}}, ["station"], source="mcp:meteo",
        read_only=True)  # no value to use where none is given: the example stays made up
    assert await decided(FakeLlama({text: [("station_reading", {"station": "KSEA"})]}), user(text), [plain]) == []


RUN = tool("run_statement", "Run a SQL statement on the ledger database.", {"sql": TEXT}, ["sql"], source="mcp:ledger")
DROP = tool("drop_index", "Drop an index of the ledger database.", {"name": TEXT}, ["name"], source="mcp:ledger")
INDEXES = tool("list_indexes", "List the indexes of a table.", {"table": TEXT}, ["table"], source="mcp:ledger",
               read_only=True)
COLUMNS = tool("show_columns", "List the columns of a table and their types.", {"table": TEXT}, ["table"],
               source="mcp:ledger", read_only=True)


async def test_where_the_first_name_is_refused_the_tool_words_and_meaning_both_rank_first_is_tried() -> None:
    """Real embeddings: the model's first name does not fit; the one the message's words and meaning agree on is
    tried instead. Without them, the next likeliest that may be called: not the one that deletes, which no one asked
    (`core.kind_asked`), but the index lister after it."""
    text = "Which columns does the invoices table hold?"
    wants = {text: [("run_statement", {"sql": "SELECT * FROM invoices"}), ("drop_index", {"name": "invoices"}),
                    ("list_indexes", {"table": "invoices"}), ("show_columns", {"table": "invoices"})]}
    names = {"": [('run_statement",', 0.5), ('drop_index",', 0.3), ('list_indexes",', 0.15), ('show_columns",', 0.05)]}
    model = FakeLlama(wants, name_tokens=names, misfits=frozenset({"run_statement"}))
    assert await decided(model, user(text), [RUN, DROP, INDEXES, COLUMNS], embedder=Embedder()) == [
        ("show_columns", {"table": "invoices"})]
    assert await decided(model, user(text), [RUN, DROP, INDEXES, COLUMNS]) == [("list_indexes", {"table": "invoices"})]


async def test_a_tool_marked_deprecated_is_the_tool_its_description_says_to_use_instead() -> None:
    text = "search my notes for taxes"
    model = FakeLlama({text: [("search", {"query": "taxes"})]})
    assert await decided(model, user(text), [OLD_FIND, FIND_NOTES]) == [("find_notes", {"query": "taxes"})]


# --- arguments ----------------------------------------------------------------------------------------------


async def test_a_call_whose_required_values_nothing_mentions_is_not_made() -> None:
    text = "What's the weather like?"
    assert await decided(FakeLlama({text: [("forecast", {"city": "San Francisco"})]}), user(text), [FORECAST]) == []
    assert await decided(FakeLlama({text: [("forecast", {"city": "Weather"})]}), user(text), [FORECAST]) != []


async def test_values_from_earlier_results_or_the_tools_own_text_count_as_said() -> None:
    text = "And the forecast there?"
    talk = [*user("Where is the office?"), *called("c1", "run_sql", '{"sql": "select city from office"}',
                                                   '[["Trondheim"]]'), *user(text)]
    model = FakeLlama({text: [("forecast", {"city": "Trondheim"})]}, p_call=0.9)
    assert await decided(model, talk, [FORECAST, RUN_SQL]) == [("forecast", {"city": "Trondheim"})]


async def test_an_optional_value_no_one_said_is_dropped_and_one_the_message_asks_for_is_written() -> None:
    text = "Forecast for Oslo in imperial units"
    model = FakeLlama({text: [("forecast", {"city": "Oslo", "days": 3})]}, later={"units": "imperial"})
    assert await decided(model, user(text), [FORECAST]) == [("forecast", {"city": "Oslo", "units": "imperial"})]


async def test_optional_values_that_would_be_dropped_are_not_written_at_all_and_those_said_are() -> None:
    """A switch and a count the message does not say are not in the schema the model writes under (writing them
    only cost time before they were dropped); said, they are, and the call carries them."""
    find = tool("find_cells", "Find cells whose value matches a query in a workbook.", {
        "path": TEXT, "query": TEXT, "case_sensitive": {"type": "boolean"}, "max_results": {"type": "integer"}},
        ["path", "query"], source="mcp:sheets", read_only=True)
    wrote = {"path": "rota.xlsx", "query": "snacks", "case_sensitive": True, "max_results": 7}
    for text, kept in (("Find 'snacks' in rota.xlsx.", {}),
                       ("Find 'snacks' in rota.xlsx, case sensitive, at most 7.", {"case_sensitive": True,
                                                                                    "max_results": 7})):
        model = FakeLlama({text: [("find_cells", wrote)]})
        assert await decided(model, user(text), [find]) == [("find_cells", {"path": "rota.xlsx", "query": "snacks",
                                                                            **kept})]
        schema = next(a["schema"] for a in model.asked if a["kind"] == "complete" and a["schema"])
        assert set(schema["properties"]) == {"path", "query", *kept}


async def test_a_placeholder_an_address_or_a_file_no_one_named_is_no_value() -> None:
    mail = tool("send_mail", "Send an e-mail.", {"to": {"type": "string"}, "text": {"type": "string"}},
                ["to", "text"])
    text = "Tell Adriel the meeting moved"
    assert await decided(FakeLlama({text: [("send_mail", {"to": "adriel@example.com", "text": "moved"})]}),
                         user(text), [mail]) == []
    text = "Tell adriel@example.com the meeting moved"
    assert await decided(FakeLlama({text: [("send_mail", {"to": "adriel@example.com", "text": "meeting moved"})]}),
                         user(text), [mail]) != []


async def test_arguments_that_do_not_fit_the_tool_raise_malformed_tool_call() -> None:
    text = "How much is 48 times 37?"
    with pytest.raises(MalformedToolCall):  # cut off at every length
        await decided(FakeLlama({text: [("evaluate", {"expression": "48*37"})]}, loops_past=0), user(text),
                      [EVALUATE])


async def test_arguments_cut_off_in_a_loop_are_asked_again_with_short_strings() -> None:
    text = "Note: buy milk, title shopping"
    model = FakeLlama({text: [("add_note", {"title": "shopping", "body": "buy milk"})]}, loops_past=200)
    assert await decided(model, user(text), [ADD_NOTE]) == [("add_note", {"title": "shopping", "body": "buy milk"})]


# --- more ---------------------------------------------------------------------------------------------------


async def test_two_values_asked_of_one_tool_are_two_calls_even_where_the_model_writes_one() -> None:
    text = "Forecast for Oslo and for Bergen"
    wants = {text: [("forecast", {"city": "Oslo"}), ("forecast", {"city": "Bergen"})]}
    for writes in (None, 1):
        assert await decided(FakeLlama(wants, writes=writes), user(text), [FORECAST]) == [
            ("forecast", {"city": "Oslo"}), ("forecast", {"city": "Bergen"})]
    assert await decided(FakeLlama({"Forecast for Oslo": wants[text]}, writes=1), user("Forecast for Oslo"),
                         [FORECAST]) == [("forecast", {"city": "Oslo"})]  # nothing asks for another


async def test_three_values_asked_of_one_tool_are_three_calls_and_a_value_no_one_asked_for_ends_them() -> None:
    text = "Forecasts for Oslo, Lima and Perth please"
    cities = ["Oslo", "Lima", "Perth", "Rome"]  # past the scripted three, it writes one no one asked for
    wants = {text: [("forecast", {"city": city}) for city in cities]}
    assert await decided(FakeLlama(wants, writes=1), user(text), [FORECAST]) == [
        ("forecast", {"city": city}) for city in cities[:3]]


async def test_values_one_call_already_used_are_not_asked_again_by_another_call_of_its_tool() -> None:
    save = tool("save_text", "Save a text under a name.", {"name": TEXT, "text": TEXT}, ["name", "text"])
    text = "Save a shopping list named groceries with: milk, eggs, bread"
    whole = ("save_text", {"name": "groceries", "text": "milk\neggs\nbread"})
    wants = {text: [whole, ("save_text", {"name": "groceries", "text": "eggs"})]}
    assert await decided(FakeLlama(wants, writes=1), user(text), [save]) == [whole]  # not overwritten with a part
    book = tool("book_trip", "Book a trip.", {"origin": TEXT, "destination": TEXT}, ["origin", "destination"])
    text = "Book a trip from Lima to Quito, and one from Quito to Bogota"
    legs = [("book_trip", {"origin": "Lima", "destination": "Quito"}),
            ("book_trip", {"origin": "Quito", "destination": "Bogota"})]
    assert await decided(FakeLlama({text: legs}, writes=1), user(text), [book]) == legs  # a value in another place
    run = tool("run_statement", "Run a SQL statement on the choir's database.", {"sql": TEXT}, ["sql"])
    text = "Add a singer to choir.db: Ines Moreau, alto, joined 2024."
    insert = ("run_statement", {"sql": "INSERT INTO singers (name, voice) VALUES ('Ines Moreau', 'alto')"})
    wants = {text: [insert, ("run_statement", {"sql": "SELECT * FROM singers WHERE id = 1"})]}
    assert await decided(FakeLlama(wants, writes=1), user(text), [run]) == [insert]  # nothing new the message said


async def test_a_call_after_the_first_that_the_message_does_not_ask_for_is_not_kept() -> None:
    text = "Forecast for Oslo"
    wants = {text: [("forecast", {"city": "Oslo"}), ("forecast", {"city": "Paris"})]}
    assert await decided(FakeLlama(wants), user(text), [FORECAST]) == [("forecast", {"city": "Oslo"})]
    wants = {text: [("forecast", {"city": "Oslo"}), ("evaluate", {"expression": "1+1"})]}
    assert await decided(FakeLlama(wants), user(text), [FORECAST, EVALUATE]) == [("forecast", {"city": "Oslo"})]


async def test_a_second_call_writing_the_first_calls_text_again_with_more_words_is_the_same_thing_again() -> None:
    """"Fine. Then put 'order pizza for Friday' on my to-do list.": the to-do was made twice, the second with the
    list's words added; two things the message lists are two calls."""
    create = tool("todo_create", "Create a todo item.", {"text": TEXT}, ["text"], source="mcp:desk")
    text = "Fine. Then put 'order pizza for Friday' on my to-do list."
    again = [("todo_create", {"text": "order pizza for Friday"}), ("todo_create", {"text": "order pizza for Friday "
                                                                                          "on my to-do list"})]
    assert await decided(FakeLlama({text: again}), user(text), [create, FORECAST]) == [again[0]]
    two = "Put 'order pizza' and 'call the plumber' on my to-do list."
    both = [("todo_create", {"text": "order pizza"}), ("todo_create", {"text": "call the plumber"})]
    assert await decided(FakeLlama({two: both}), user(two), [create, FORECAST]) == both


async def test_a_model_that_calls_on_and_on_stops_at_the_limit() -> None:
    text = "Forecast for " + ", ".join(f"town{i}" for i in range(10))
    wants = {text: [("forecast", {"city": f"town{i}"}) for i in range(10)]}
    assert len(await decided(FakeLlama(wants), user(text), [FORECAST])) == MAX_CALLS


# --- after results, and mend ----------------------------------------------------------------------------------


async def test_after_results_a_call_needs_a_surer_model_and_a_tool_called_this_turn_is_not_called_again() -> None:
    text = "Forecast for Oslo"
    talk = [*user(text), *called("c1", "forecast", '{"city": "Oslo"}', "Rain.")]
    again = {text: [("forecast", {"city": "Oslo"})]}
    assert await decided(FakeLlama({}, after=again, p_call=0.99), talk, [FORECAST]) == []
    other = {text: [("evaluate", {"expression": "1+1"})]}
    assert await decided(FakeLlama({}, after=other, p_call=0.6), talk, [FORECAST, EVALUATE]) == []  # 0.6 < 0.75


class Hesitant(FakeLlama):
    """A model that writes "Europe/Tokyo" again, but had other ideas for its start: the error's words, "Asia"."""

    VALUE = '{"zone": "'
    IDEAS = {VALUE: [("Europe", 0.5), ("No", 0.35), ("Asia", 0.1)], VALUE + "Europe": [("/Tokyo", 0.9), ("/", 0.05)],
             VALUE + "Europe/Tokyo": [('"}', 0.97)]}
    ENDS = {"Asia": '/Tokyo"', "No": ' time zone found with key Europe/Tokyo"'}

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        for written, likely in self.IDEAS.items():
            if prompt.endswith(written):
                return likely
        return await super().next_tokens(prompt, n)

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict | None, max_tokens: int) -> str:
        for start, end in self.ENDS.items():
            if prompt.endswith(self.VALUE + start):
                return end
        return await super().complete(prompt, grammar, json_schema, max_tokens)


CLOCK = tool("clock", "The current time in a time zone.", {"zone": {"type": "string"}}, ["zone"], read_only=True)


async def test_a_failed_call_takes_a_value_its_error_offers_for_the_value_it_names() -> None:
    """A grid reader's error lists the sheets there are: the call written again as it failed takes the one offered
    (the error's words are otherwise never written back); an error offering only the failed value mends nothing."""
    grid = tool("read_cells", "Read a sheet's cells.", {"path": TEXT, "sheet": TEXT}, ["path", "sheet"],
                read_only=True)
    text = "What's the price of lavender in plants.xlsx?"
    for error, wanted in (("Error: Sheet 'Lavender' not found. Available sheets: 'Plants', 'Pots'.", "Plants"),
                          ("Error: Sheet 'Lavender' is empty. Valid sheets: 'Lavender'.", None)):
        failed = [*user(text), *called("c1", "read_cells", '{"path": "plants.xlsx", "sheet": "Lavender"}', error)]
        model = FakeLlama({}, after={text: [("read_cells", {"path": "plants.xlsx", "sheet": "Lavender"})]}, p_call=0.99)
        calls = await decided(model, failed, [grid, FORECAST])
        assert calls == ([("read_cells", {"path": "plants.xlsx", "sheet": wanted})] if wanted else []), error


async def test_a_failed_call_written_again_gets_the_models_next_likeliest_value_once() -> None:
    text = "time in Tokyo"
    failed = [*user(text), *called("c1", "clock", '{"zone": "Europe/Tokyo"}',
                                   "Error: No time zone found with key Europe/Tokyo")]
    model = Hesitant({}, after={text: [("clock", {"zone": "Europe/Tokyo"})]}, p_call=0.99)
    assert await decided(model, failed, [CLOCK, FORECAST]) == [("clock", {"zone": "Asia/Tokyo"})]
    twice = [*failed, *called("c2", "clock", '{"zone": "Asia/Tokyo"}', "Error: the clock is down")]
    model = Hesitant({}, after={text: [("clock", {"zone": "Asia/Tokyo"})]}, p_call=0.99)
    assert await decided(model, twice, [CLOCK, FORECAST]) == []  # mended once: closed for the turn
    quiet = [*user(text), *called("c1", "clock", '{"zone": "Europe/Tokyo"}', "Error: the clock is down")]
    model = Hesitant({}, after={text: [("clock", {"zone": "Europe/Tokyo"})]}, p_call=0.99)
    assert await decided(model, quiet, [CLOCK]) == []  # the error names no value: nothing to mend


# --- a second model -------------------------------------------------------------------------------------------


async def test_with_a_second_model_it_names_and_writes_the_calls_and_judges_whether_where_the_first_is_unsure(
) -> None:
    text = "Will it rain in Oslo?"
    wanted = [("forecast", {"city": "Oslo"})]

    async def with_second(p_call: float, second_p_call: float = 0.9, started: bool = True) -> tuple[list, FakeLlama,
                                                                                                    FakeLlama]:
        first, second = FakeLlama({text: wanted}, p_call=p_call), FakeLlama({text: wanted}, p_call=second_p_call)
        decider = Decider(first)

        async def bigger() -> Decider | None:
            return Decider(second) if started else None
        decider.second = bigger
        calls = await decider.decide(user(text), [FORECAST, EVALUATE])
        return [c.name for c in calls], first, second

    names, first, second = await with_second(0.9)  # sure: the first decides whether, the second names and writes
    assert names == ["forecast"] and "complete" in second.kinds() and "complete" not in first.kinds()
    names, _, second = await with_second(0.4)  # unsure whether: the second's chance decides
    assert names == ["forecast"]
    assert (await with_second(0.4, second_p_call=0.1))[0] == []
    assert (await with_second(0.1))[0] == []  # sure there is no call: the second is not asked
    names, first, _ = await with_second(0.9, started=False)  # it could not start: the first decides alone
    assert names == ["forecast"] and "complete" in first.kinds()

async def test_a_question_about_what_a_refused_changers_name_says_is_asked_of_a_reader() -> None:
    """"Which invoice has the largest total?" names `invoice_create` by its word "invoice": refused (a question asks
    no change), the reader of invoices is next; a question sharing no word with it gets no call."""
    books = [tool("invoice_create", "Create an invoice for a customer.", {"customer": TEXT, "amount": {
        "type": "number"}}, ["customer", "amount"], source="mcp:books"),
        tool("invoice_list", "List the invoices with their totals.", {}, [], source="mcp:books", read_only=True)]
    names = {"": [('invoice_create",', 0.7), ('invoice_list",', 0.3)]}
    for text, wanted in (("Which invoice has the largest total?", [("invoice_list", {})]),
                         ("Wann schließt die Bibliothek?", [])):
        model = FakeLlama({text: [("invoice_create", {"customer": "Ana", "amount": 80}), ("invoice_list", {})]},
                          name_tokens=names)
        assert await decided(model, user(text), books) == wanted, text


async def test_a_tool_that_exports_or_imports_writes_a_file_so_a_question_does_not_call_it() -> None:
    """"What's in recipes.json?": the model likes `export_recipes` (it writes a PDF file), which no change asked lets
    open the answer: no file is written, and the question about recipes is asked of the tool that reads them (its
    next name: `core.read_what_came`); asked to export, it is called."""
    kitchen = [tool(f"{verb}_recipes", f"{verb.title()} the recipes of a file.", {"path": TEXT}, ["path"],
                    source="mcp:kitchen") for verb in ("export", "import", "read")]
    names = {"": [('export_recipes",', 0.8), ('read_recipes",', 0.15), ('import_recipes",', 0.05)]}
    for text, wanted in (("What's in recipes.json?", [("read_recipes", {"path": "recipes.json"})]),
                         ("Export recipes.json, please.", [("export_recipes", {"path": "recipes.json"})])):
        model = FakeLlama({text: [("export_recipes", {"path": "recipes.json"})]}, name_tokens=names)
        assert await decided(model, user(text), kitchen) == wanted, text


async def test_after_results_the_decision_reads_the_last_calls_table_unless_the_message_asks_several_things() -> None:
    tools = [*many("mcp:a", "alpha", 6), *many("mcp:b", "beta", 6), FORECAST, EVALUATE]
    text = "Forecast for Oslo"
    talk = [*user(text), *called("c1", "forecast", '{"city": "Oslo"}', "Rain, 12 degrees.")]
    elsewhere = {text: [("alpha_1", {"x": "Oslo"})]}  # a small model keeps calling, whatever the table
    assert await decided(FakeLlama({}, after=elsewhere, p_call=0.99), talk, tools) == []
    both = "Forecast for Oslo and then run alpha 1 on Oslo"
    talk = [*user(both), *called("c1", "forecast", '{"city": "Oslo"}', "Rain, 12 degrees.")]
    assert await decided(FakeLlama({}, after={both: [("alpha_1", {"x": "Oslo"})]}, p_call=0.99), talk, tools) == [
        ("alpha_1", {"x": "Oslo"})]


@pytest.mark.parametrize("arguments", [{"name": "content", "content": "chairs"}, {"name": "string", "content": "x"}])
async def test_a_value_copying_a_parameters_name_or_a_json_type_no_one_said_is_made_up(arguments) -> None:
    text = "Add 'bring chairs' to my note residents-meeting."
    append = tool("note_append", "Append text to a note.", {"name": TEXT, "content": TEXT}, ["name", "content"],
                  source="mcp:notes")
    model = FakeLlama({text: [("note_append", arguments)]})
    assert await decided(model, user(text), [append]) == []
    said = f"Append 'chairs' to my note called {arguments['name']}."  # said: a name like any other
    assert await decided(FakeLlama({said: [("note_append", arguments)]}), user(said), [append]) == [
        ("note_append", arguments)]


async def test_a_value_copying_the_parameters_schema_is_made_up() -> None:
    """A model writing `edits` as its schema (`{"anyOf": [...]}`) writes no edit; an edit's own keys are values."""
    edits = {"anyOf": [{"type": "object", "additionalProperties": True}, {"type": "array"}]}
    blocks = tool("edit_blocks", "Apply search/replace edits.", {"edits": edits}, ["edits"], source="mcp:editor")
    text = "Read me garden/planting.md."
    model = FakeLlama({text: [("edit_blocks", {"edits": edits})]})
    assert await decided(model, user(text), [blocks]) == []
    edit = {"edits": {"file_path": "garden/planting.md", "old": "garlic", "new": "leeks"}}
    said = "In garden/planting.md, replace garlic with leeks."
    assert await decided(FakeLlama({said: [("edit_blocks", edit)]}), user(said), [blocks]) == [("edit_blocks", edit)]


def test_a_word_every_tool_of_the_table_is_named_for_does_not_let_a_change_open_an_answer() -> None:
    notebook = [tool(f"{verb}_note", f"{verb.title()} a note.", {"title": TEXT}, ["title"], source="mcp:nb")
                for verb in ("add", "read", "delete")]
    assert not change_asked(notebook[0], "What did I write in my Wifi note?", notebook)
    assert change_asked(notebook[0], "My Wifi note: the code is 4412.")  # the word is the tool's own, alone
    assert not change_asked(notebook[0], "What did I write in my Wifi note?")  # ... but a question asks no change
    assert change_asked(notebook[0], "Add a note: call mom", notebook)


async def test_a_family_of_tools_the_message_names_is_chosen_among_not_a_look_alike_of_another_family() -> None:
    """"Save a recipe" names the `recipe_*` family: the model's likeliest name of another family (`pantry_add`) is not
    chosen."""
    kitchen = [tool(name, f"{name.replace('_', ' ').capitalize()}.", {"text": TEXT}, ["text"], source="mcp:kitchen",
                    read_only=name.endswith("find")) for name in ("pantry_add", "recipe_add", "recipe_find")]
    text = "Save a recipe: lemon bars with a shortbread base"
    model = FakeLlama({text: [("pantry_add", {"text": "lemon bars"}), ("recipe_add", {"text": "lemon bars"})]},
                      p_call=0.9, name_tokens={"": [('pantry_add",', 0.7), ('recipe_add",', 0.2),
                                                    ('recipe_find",', 0.1)]})
    assert await decided(model, user(text), kitchen) == [("recipe_add", {"text": "lemon bars"})]


async def test_a_family_the_message_names_chooses_the_table_a_server_cut_in_parts_is_read_in() -> None:
    """Too many tools for one table: "a to-do" reads the part with the `todo_*` family, though "add" is the word
    the `note_*` tools share with the message."""
    kinds = ("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p")
    desk = [tool(f"note_add_{kind}", f"Add a note of kind {kind}: add words, add tags.", {"text": TEXT}, ["text"],
                 source="mcp:desk") for kind in kinds]
    desk += [tool(f"todo_{verb}", f"{verb.capitalize()} a todo item.", {"text": TEXT}, ["text"], source="mcp:desk")
             for verb in ("create", "list", "complete", "delete", "tag", "move", "get", *kinds)]
    text = "Add a to-do: buy stamps."
    model = FakeLlama({text: [("todo_create", {"text": "buy stamps"})]}, p_call=0.9)
    assert len(tables(desk)) > 1
    assert await decided(model, user(text), desk) == [("todo_create", {"text": "buy stamps"})]


async def test_a_second_call_of_the_same_tool_may_carry_the_tools_own_words_beside_what_the_message_says() -> None:
    """"75 kg to pounds" is written `{"to_unit": "lb", "unit_type": "weight"}`: words of the tool's description, not
    the message's; a second call with nothing new the message says is still not made."""
    convert = tool("convert", "Convert a measure.\n\nUnit types:\n- length: cm, in, m\n- weight: kg, lb\n",
                   {"value": {"type": "number"}, "from_unit": TEXT, "to_unit": TEXT, "unit_type": TEXT},
                   ["value", "from_unit", "to_unit", "unit_type"], source="mcp:units", read_only=True)
    first = ("convert", {"value": 180, "from_unit": "cm", "to_unit": "in", "unit_type": "length"})
    text = "Convert 180 cm to inches and 75 kg to pounds."
    second = ("convert", {"value": 75, "from_unit": "kg", "to_unit": "lb", "unit_type": "weight"})
    assert await decided(FakeLlama({text: [first, second]}), user(text), [convert, FORECAST]) == [first, second]
    alone = "Convert 180 cm to inches."
    again = ("convert", {"value": 180, "from_unit": "cm", "to_unit": "in", "unit_type": "weight"})
    assert await decided(FakeLlama({alone: [first, again]}), user(alone), [convert, FORECAST]) == [first]


async def test_what_was_made_up_for_one_tool_is_not_asked_of_another_and_no_id_is_a_phrase() -> None:
    """"Add a chore" has no id: after `chore_tag(id)` is refused, `chore_note(id)` is passed over for `chore_new`,
    though the model likes it more; an id written as the chore's words is made up too."""
    needs_id = {"id": TEXT, "tag": TEXT}
    chores = [tool("chore_tag", "Tag a chore.", needs_id, ["id", "tag"], source="mcp:home"),
              tool("chore_note", "Add a note to a chore.", {"id": TEXT, "note": TEXT}, ["id", "note"],
                   source="mcp:home"),
              tool("chore_new", "Create a chore.", {"text": TEXT}, ["text"], source="mcp:home"), FORECAST]
    for text, first in (("Add a chore: water the ferns", ("chore_tag", {"id": "7", "tag": "ferns"})),
                        ("Add a chore: water the ferns", ("chore_tag", {"id": "water the ferns", "tag": "ferns"}))):
        model = FakeLlama({text: [first, ("chore_new", {"text": "water the ferns"})]}, p_call=0.9,
                          name_tokens={"": [('chore_tag",', 0.6), ('chore_note",', 0.3), ('chore_new",', 0.1)]})
        assert await decided(model, user(text), chores) == [("chore_new", {"text": "water the ferns"})]



async def test_after_a_refused_call_a_change_asked_goes_to_no_tool_that_only_reads_nor_needing_an_id_alike() -> None:
    """The model's first tool needs an id no one said. "Put 'fix the gate' on my task list": its next likeliest
    tools, one needing a `task_id`, one that only reads, are passed over for the one that adds; "Find the gate
    task" asks no change, "Mark the gate task as done" no new thing: the reader is tried (it finds the id), not the
    tool needing a `task_id` ("gate" would be an id made up)."""
    tasks = [tool("task_label", "Label a task.", {"id": TEXT, "label": TEXT}, ["id", "label"], source="mcp:home"),
             tool("task_comment_list", "List a task's comments.", {"task_id": TEXT}, ["task_id"], source="mcp:home"),
             tool("task_search", "Search tasks by title.", {"title": TEXT}, ["title"], source="mcp:home"),
             tool("task_open", "Open a new task.", {"text": TEXT}, ["text"], source="mcp:home"), FORECAST]
    names = {"": [('task_label",', 0.5), ('task_comment_list",', 0.25), ('task_search",', 0.15), ('task_open",', 0.1)]}
    for text, wanted in (("Then put 'fix the gate' on my task list.", ("task_open", {"text": "fix the gate"})),
                         ("Find the gate task", ("task_search", {"title": "gate"})),
                         ("Mark the gate task as done.", ("task_search", {"title": "gate"}))):
        wants = [("task_label", {"id": "3", "label": "gate"}), ("task_comment_list", {"task_id": "gate"}),
                 ("task_search", {"title": "gate"}), ("task_open", {"text": "fix the gate"})]
        assert await decided(FakeLlama({text: wants}, name_tokens=names), user(text), tasks) == [wanted]


async def test_an_optional_filter_said_for_an_earlier_request_is_not_carried_into_a_new_one() -> None:
    """The chore's words, said when it was added, do not narrow "Which chores do I have now?" to that chore; a
    filter the new message says is kept, and so is one a short follow-up's message before it says."""
    add = tool("chore_add", "Add a chore.", {"text": TEXT, "room": TEXT}, ["text"], source="mcp:home")
    listing = tool("chore_list", "List the chores.", {"room": TEXT, "status": TEXT}, [], source="mcp:home",
                   read_only=True)
    before = [*user("Add 'descale the kettle' to my chores, for the kitchen."),
              *called("c1", "chore_add", '{"text": "descale the kettle", "room": "kitchen"}', '{"id": 4}'),
              {"role": "assistant", "content": "Added."}]
    for text, wanted in (("Which chores do I have now?", {}), ("Which chores are there in the kitchen?",
                                                               {"room": "kitchen"})):
        model = FakeLlama({text: [("chore_list", {"room": "kitchen"})]})
        assert await decided(model, [*before, *user(text)], [add, listing]) == [("chore_list", wanted)]
    follow = [*user("Which chores are open in the kitchen?"), {"role": "assistant", "content": "Two."},
              *user("And done?")]
    model = FakeLlama({"And done?": [("chore_list", {"room": "kitchen", "status": "done"})]}, shy=0.9)
    assert await decided(model, follow, [add, listing]) == [("chore_list", {"room": "kitchen", "status": "done"})]


async def test_a_call_that_failed_is_not_made_again_as_it_was_after_calls_that_only_read() -> None:
    """`book_room` failed; a reading call succeeded since, which cannot make it succeed: written again as it was, it
    is mended or not made. After a call that changes things (a room freed), the same call may be made again."""
    book = tool("book_room", "Book a meeting room.", {"room": TEXT}, ["room"], source="mcp:rooms")
    rooms = tool("list_rooms", "List the meeting rooms.", {}, [], source="mcp:rooms", read_only=True)
    free = tool("free_room", "Cancel a room's booking.", {"room": TEXT}, ["room"], source="mcp:rooms")
    text = "Book the Fjord room and tell me which rooms there are."
    talk = [*user(text), *called("c1", "book_room", '{"room": "Fjord"}', "Error: the room is taken"),
            *called("c2", "list_rooms", "{}", "Fjord, Delta")]
    model = FakeLlama({}, after={text: [("book_room", {"room": "Fjord"})]}, p_call=0.99)
    assert await decided(model, talk, [book, rooms, free]) == []
    freed = [*talk, *called("c3", "free_room", '{"room": "Fjord"}', "Freed.")]
    assert await decided(model, freed, [book, rooms, free]) == [("book_room", {"room": "Fjord"})]


async def test_a_reading_verb_a_tool_allows_as_a_value_chooses_it_over_a_look_alike_the_model_likes_more() -> None:
    vault = tool("vault_ops", "Vault operations.", {"action": {"enum": ["open", "list", "seal"]}}, ["action"],
                 source="mcp:cellar")
    label = tool("read_label", "Read a bottle's label.", {"bottle": TEXT}, ["bottle"], source="mcp:cellar")
    text = "List the vaults in my cellar."
    model = FakeLlama({text: [("read_label", {"bottle": "cellar"}), ("vault_ops", {"action": "list"})]},
                      name_tokens={"": [('read_label",', 0.7), ('vault_ops",', 0.3)]})
    assert await decided(model, user(text), [vault, label]) == [("vault_ops", {"action": "list"})]


async def test_a_request_about_a_thing_the_last_result_gave_goes_to_a_reader_when_the_first_tool_would_change_things():
    """The bins were listed; "Show me the compost bin" is refused for `bin_empty` (it changes things, nothing asks a
    change) and goes to the reader that takes a bin, the next likeliest; a request sharing no word with the last
    result ("Show me a magic trick") and one with no result before it get no call. A question about a thing the
    server holds goes to the reader too; an order sharing a word with it, and a question sharing none, do not."""
    bins = [tool("bin_list", "List the bins.", {}, [], source="mcp:yard"),
            tool("bin_empty", "Empty a bin: deletes what it holds.", {"bin": TEXT}, ["bin"], source="mcp:yard"),
            tool("bin_read", "Read what a bin holds.", {"bin": TEXT}, ["bin"], source="mcp:yard")]
    before = [*user("Which bins are there?"), *called("c1", "bin_list", "{}", '["compost-bin", "glass-bin"]'),
              {"role": "assistant", "content": "compost-bin and glass-bin."}]
    names = {"": [('bin_empty",', 0.6), ('bin_read",', 0.3), ('bin_list",', 0.1)]}
    for history, text, wanted in ((before, "Show me the compost bin.", [("bin_read", {"bin": "compost-bin"})]),
                                  (before, "Show me a magic trick.", []), ([], "Show me the compost bin.", [])):
        model = FakeLlama({text: [("bin_empty", {"bin": "compost-bin"}), ("bin_read", {"bin": "compost-bin"})]},
                          name_tokens=names)
        assert await decided(model, [*history, *user(text)], bins) == wanted, text
    for one in bins:  # what the yard holds, read from its listing: a question about one of them is asked of a reader
        one.holds = ("compost-bin", "glass-bin")
    for text, wanted in (("What's left in the compost bin?", [("bin_read", {"bin": "compost-bin"})]),
                         ("Order a compost bin.", []), ("Is the garden open today?", [])):
        model = FakeLlama({text: [("bin_empty", {"bin": "compost-bin"}), ("bin_read", {"bin": "compost-bin"})]},
                          name_tokens=names)
        assert await decided(model, user(text), bins) == wanted, text


async def test_a_tool_called_again_in_one_answer_writes_texts_no_longer_than_its_first_calls_first() -> None:
    """One more call of a tool, where the model stopped after one and the message asks several things: its texts are
    of the kind the first call wrote, so a model that loops in a long text is not first let run to `MAX_STRING`."""
    text = "Add two notes: buy milk, and call mum"
    wants = {text: [("add_note", {"title": "milk", "body": "buy milk"}),
                    ("add_note", {"title": "mum", "body": "call mum"})]}
    model = FakeLlama(wants, writes=1, loops_past=SHORT_STRING)
    assert await decided(model, user(text), [ADD_NOTE]) == wants[text]
    longest = [max(p.get("maxLength", 0) for p in a["schema"]["properties"].values())
               for a in model.asked if a["kind"] == "complete" and a["schema"]]
    assert longest[:2] == [MAX_STRING, SHORT_STRING] and set(longest[2:]) == {SHORT_STRING}  # the first cut off once


@pytest.mark.parametrize("text, wanted", [
    ("Muéstrame las piezas de antes de 1900.", "find_exhibits"),  # a reading request, no question mark
    ("Zeig mir alle Stücke aus Bronze.", "find_exhibits"),
    ("Add a new exhibit: a bronze bell from 1850.", "add_exhibit"),  # a change asked: the changer may follow
])
async def test_the_next_name_after_a_refusal_is_never_one_the_kind_of_change_asked_would_refuse(text, wanted) -> None:
    """A museum catalogue in no bench: the model's first name does not fit, its next likeliest adds an exhibit where
    the message asks to see some (`core.change_asked` would refuse it): the one try left goes to a reader."""
    overview = tool("catalogue_overview", "Summarise the catalogue's sections.", {}, [], source="mcp:museum",
                    read_only=True)
    add = tool("add_exhibit", "Add an exhibit to the catalogue.", {"title": TEXT, "year": {"type": "integer"}},
               ["title"], source="mcp:museum")
    find = tool("find_exhibits", "Search the catalogue's exhibits.", {"query": TEXT}, ["query"], source="mcp:museum",
                read_only=True)
    arguments = {"add_exhibit": {"title": "bronze bell", "year": 1850},
                 "find_exhibits": {"query": text.split()[-1][:-1]}, "catalogue_overview": {}}
    names = {"": [('catalogue_overview",', 0.6), ('add_exhibit",', 0.3), ('find_exhibits",', 0.1)]}
    model = FakeLlama({text: [(n, a) for n, a in arguments.items()]}, name_tokens=names,
                      misfits=frozenset({"catalogue_overview"}))
    assert [n for n, _ in await decided(model, user(text), [overview, add, find])] == [wanted]


async def test_a_message_naming_one_thing_a_server_holds_is_for_a_tool_that_takes_a_thing_not_a_listing() -> None:
    """A wiki server in no bench holds pages by title: asked about one ("my packing list"), the model's favourite,
    the listing of every page, gives way to the tool that opens one; asked for the pages, the listing stays."""
    listing = tool("list_pages", "List every page of the wiki.", {}, [], source="mcp:wiki", read_only=True)
    opening = tool("open_page", "Open a page of the wiki.", {"title": TEXT}, ["title"], source="mcp:wiki",
                   read_only=True)
    renaming = tool("rename_page", "Rename a page of the wiki.", {"title": TEXT, "new_title": TEXT},
                    ["title", "new_title"], source="mcp:wiki")
    history = tool("page_history", "Show who edited a page.", {"title": TEXT}, ["title"], source="mcp:wiki",
                   read_only=True)
    wiki = [dataclasses.replace(t, holds=("Packing list", "Wifi")) for t in (listing, opening, renaming, history)]
    names = {"": [('list_pages",', 0.7), ('rename_page",', 0.26), ('open_page",', 0.03), ('page_history",', 0.01)]}
    for text, wanted in (("What's on my packing list?", "open_page"), ("Which pages do I have?", "list_pages"),
                         ("Qu'est-ce qu'il y a dans Packing list ?", "open_page"),  # a question: a reader, if unsure
                         ("Rename Packing list to Trip kit.", "rename_page")):  # else the tools taking a page
        calls = {text: [("list_pages", {}), ("rename_page", {"title": "Packing list", "new_title": "Trip kit"}),
                        ("open_page", {"title": "Packing list"}), ("page_history", {"title": "Packing list"})]}
        assert [n for n, _ in await decided(FakeLlama(calls, name_tokens=names), user(text), wiki)] == [wanted], text


async def test_a_question_naming_a_held_table_may_go_to_the_tool_that_runs_queries_where_none_reads_by_name() -> None:
    """A database server in no bench, none of its tools annotated: the tool that runs a query (`execute_query`) may
    read, so a question about a held table (or saying a column of one) goes to it rather than to the listing of
    every table."""
    listing = tool("every_table_name", "Return all table names.", {}, [], source="mcp:db")
    running = tool("execute_query", "Execute a SQL query and return the results.", {"query": TEXT}, ["query"],
                   source="mcp:db")
    schema = tool("schema_definitions", "Returns schema information for the given tables.", {"table_names": TEXT},
                  ["table_names"], source="mcp:db")
    db = [dataclasses.replace(t, holds=("members(id, name, town)", "loans(id, member_id, due)")) for t in (
        listing, running, schema)]
    names = {"": [('every_table_name",', 0.7), ('schema_definitions",', 0.2), ('execute_query",', 0.1)]}
    for text in ("How many members do we have?", "Which town does Ana live in?"):  # a table, or one's column, named
        calls = {text: [("every_table_name", {}), ("schema_definitions", {"table_names": "members"}),
                        ("execute_query", {"query": "SELECT count(*) FROM members"})]}
        assert [n for n, _ in await decided(FakeLlama(calls, name_tokens=names), user(text), db)] == [
            "execute_query"], text


def _disk_and_vcs(parameter: str) -> tuple[list[Tool], list[Tool]]:
    """A file server and a version control server in no bench, the latter's tools taking one text, `parameter`."""
    disk = [tool(name, text, {"path": TEXT}, ["path"], source="mcp:disk") for name, text in (
        ("put_file", "Write a text file."), ("read_file", "Read a text file's contents."),
        ("list_dir", "List a folder's entries."), ("move_file", "Move or rename a file."),
        ("file_info", "Size and dates of a file."), ("find_files", "Find files by a name pattern."))]
    vcs = [tool(name, text, {parameter: TEXT}, [parameter], source="mcp:vcs") for name, text in (
        ("vcs_stage", "Add file contents to the staging area."), ("vcs_commit", "Record staged changes."),
        ("vcs_status", "Show the working tree status."), ("vcs_log", "Show the commit history."),
        ("vcs_diff", "Show unstaged changes."), ("vcs_branch", "List or create branches."))]
    return disk, vcs


async def test_a_short_follow_up_reads_the_last_calls_table_unless_words_and_meaning_both_place_it_elsewhere() -> None:
    """Real embeddings, a file server and a version control server in no bench: after a file is written, "Stage that
    file." is for the version control's table (both rankings put its staging tool first); "Read it back." stays."""
    disk, vcs = _disk_and_vcs("files")
    before = [*user("Write notes.txt saying hi"), *called("c1", "put_file", '{"path": "notes.txt"}', "Wrote notes.txt"),
              {"role": "assistant", "content": "Done."}]
    embedder = Embedder()
    for text, wanted in (("Stage that file.", ("vcs_stage", {"files": "notes.txt"})),
                         ("Read it back.", ("read_file", {"path": "notes.txt"}))):
        model = FakeLlama({text: [wanted]})
        assert await decided(model, [*before, *user(text)], [*disk, *vcs], embedder=embedder) == [wanted], text
    journal = tool("read_journal", "Read the travel journal's itinerary.", {}, [], source="mcp:journal")
    listed = [*user("What's in my trip folder?"), *called("c1", "list_dir", '{"path": "trip"}', "itinerary.md"),
              {"role": "assistant", "content": "itinerary.md"}]
    text, wanted = "Read me the itinerary.", ("read_file", {"path": "trip/itinerary.md"})  # a word of the result: stays
    model = FakeLlama({text: [wanted]})
    assert await decided(model, [*listed, *user(text)], [*disk, *vcs, journal], embedder=embedder) == [wanted]


async def test_a_longer_request_after_a_call_reads_the_table_its_words_and_meaning_both_place_it_in() -> None:
    """After a file server wrote shopping.md, "Stage it and commit it with the message 'Add the shopping list'":
    the quoted message's words are what is written (they share "shopping" with the result, no follow-up of it), and
    the words' first tool and the meaning's first lie in the version control's table: it is read, not the last
    call's. A request for the file server stays there."""
    disk, vcs = _disk_and_vcs("message")
    wrote = called("c1", "put_file", '{"path": "shopping.md"}', "Wrote shopping.md")
    before = [*user("Write shopping.md with eggs"), *wrote, {"role": "assistant", "content": "Done."}]
    embedder = Embedder()
    for text, wanted in (("Stage it and commit it with the message 'Add the shopping list'.",
                          ("vcs_commit", {"message": "Add the shopping list"})),
                         ("Now move the shopping file into the archive folder please.",
                          ("move_file", {"path": "shopping.md"}))):
        model = FakeLlama({text: [wanted]})
        assert await decided(model, [*before, *user(text)], [*disk, *vcs], embedder=embedder) == [wanted], text


async def test_a_short_request_joined_to_another_is_a_part_of_its_own_and_has_its_round() -> None:
    """"Stage it and commit it with the message '…'": "Stage it", two words, asks a change: after the staging's
    result the commit is decided; "between 14 March and 25 December" is one thing asked, no second round."""
    disk, vcs = _disk_and_vcs("message")
    text = "Stage it and commit it with the message 'Add the shopping list'."
    staged = called("c1", "vcs_stage", '{"message": "shopping.md"}', "Staged shopping.md")
    commit = ("vcs_commit", {"message": "Add the shopping list"})
    model = FakeLlama({}, after={text: [commit]}, p_call=0.99)
    assert await decided(model, [*user(text), *staged], [*disk, *vcs]) == [commit]
    dates = "How many commits between 14 March and 25 December?"
    logged = called("c1", "vcs_log", '{"message": "14 March"}', "3 commits")
    model = FakeLlama({}, after={dates: [("vcs_log", {"message": "25 December"})]}, p_call=0.99)
    assert await decided(model, [*user(dates), *logged], [*disk, *vcs]) == []


def _desk() -> tuple[list[Tool], Tool, Tool]:
    """A server too large for one table, whose to-dos are changed by id and listed, with their ids, by one tool."""
    kinds = "abcdefghijklmnop"
    desk = [tool(f"note_add_{k}", f"Add a note of kind {k}: add words, add tags.", {"text": TEXT}, ["text"],
                 source="mcp:desk") for k in kinds]
    desk += [tool(f"todo_{verb}", f"{verb.capitalize()} a todo item, by its id.", {"id": TEXT}, ["id"],
                  source="mcp:desk") for verb in ("done", "tag", "move", "lock", *kinds)]
    listing = tool("todo_list", "List the todo items with their ids.", {}, [], source="mcp:desk", read_only=True)
    return [*desk, listing], desk[len(kinds)], listing


async def test_a_change_of_a_thing_named_by_its_words_looks_its_id_up_first_then_makes_the_change() -> None:
    """"Mark the to-do 'Renew passport' as done": `todo_done`, named, needs an id no one said. The tool of its kind
    that only reads and needs none is called first; after its result, the change is decided, with the id the listing
    gives the thing the message names (a small model copies a long id badly). A question, or a change already made,
    has no round after its first."""
    desk, done, listing = _desk()
    parts = [part for part in tables(desk) if any(t.name.startswith("todo_") for t in part)]
    assert len(parts) > 1 and all(listing in part for part in parts)  # a family cut in parts: its listing in each
    text = "Mark the to-do 'Renew passport' as done."
    model = FakeLlama({text: [("todo_done", {"id": "7"}), ("todo_list", {})]}, p_call=0.9,
                      name_tokens={"": [('todo_done",', 0.8), ('todo_tag",', 0.15), ("todo_", 0.05)],
                                   "todo_": [('list",', 0.5)]})
    assert await decided(model, user(text), desk) == [("todo_list", {})]
    found = called("c1", "todo_list", "{}", '[{"id": "a1f0c2d4", "text": "Renew passport", "status": "open"}, '
                                           '{"id": "b7e19f03", "text": "Buy stamps", "status": "open"}]')
    after = FakeLlama({}, after={text: [("todo_done", {"id": "a1f0c2d4"})]}, p_call=0.99)
    assert await decided(after, [*user(text), *found], desk) == [("todo_done", {"id": "a1f0c2d4"})]
    mangled = FakeLlama({}, after={text: [("todo_done", {"id": "a1f0c2"})]}, p_call=0.99)  # copied badly: the id
    assert await decided(mangled, [*user(text), *found], desk) == [("todo_done", {"id": "a1f0c2d4"})]  # listed
    cut = called("c1", "todo_list", "{}", '{"items": [{"id": "b7e19f03", "text": "Buy stamps"}, {"id": "a1f0c2d4", '
                                          '"text": "Renew passport", "tags": ["adm…')  # cut, as long results are
    phrase = FakeLlama({}, after={text: [("todo_done", {"id": "Renew passport"})]}, p_call=0.99)
    assert await decided(phrase, [*user(text), *cut], desk) == [("todo_done", {"id": "a1f0c2d4"})]
    question = "Which to-dos have I got?"
    again = FakeLlama({}, after={question: [("todo_done", {"id": "a1f0"})]}, p_call=0.99)
    assert await decided(again, [*user(question), *found], desk) == []
    changed = called("c1", "todo_tag", '{"id": "a1f0"}', "Tagged.")
    assert await decided(after, [*user(text), *changed], desk) == []


async def test_a_tool_that_runs_a_language_may_change_things_so_its_call_ends_a_change_asked() -> None:
    """`run_sql_query` says "query" but runs any statement: after its INSERT, "Add a plant…" has had its change, and
    no second round is decided; after a reading tool's result, it would be."""
    run = tool("run_sql_query", "Run SQL on the garden database.", {"sql": TEXT}, ["sql"], source="mcp:garden")
    look = tool("query_plants", "Search the plants.", {"text": TEXT}, ["text"], source="mcp:garden")
    assert not reads(run, [run, look]) and reads(look, [run, look])
    text = "Add a plant to garden.db: basil, sown on 2 May."
    insert = ("run_sql_query", {"sql": "INSERT INTO plants VALUES ('basil')"})
    model = FakeLlama({}, after={text: [insert]}, p_call=0.99)
    inserted = called("c1", "run_sql_query", '{"sql": "INSERT INTO plants (name) VALUES (\'basil\')"}', "1 row.")
    assert await decided(model, [*user(text), *inserted], [run, look, FORECAST]) == []
    looked = called("c1", "query_plants", '{"text": "basil"}', "No plant.")
    assert await decided(model, [*user(text), *looked], [run, look, FORECAST]) != []


@pytest.mark.parametrize("text, called_by, items", [
    ("Create a list called weekend-chores with: dishes, laundry", "weekend-chores", "dishes, laundry"),
    ("Crée une liste intitulée « Courses du samedi » avec : pain, lait", "Courses du samedi", "pain, lait"),
])
async def test_a_thing_the_message_calls_by_a_name_is_written_with_that_name(text, called_by, items) -> None:
    """A small model writes a list's name as its parameter's ("content"), a made-up value: the name the message calls
    the list by is written; a name the message says is kept."""
    lists = [tool("list_write", "Write a list of items.", {"name": TEXT, "items": TEXT}, ["name", "items"],
                  source="mcp:lists"), FORECAST]
    model = FakeLlama({text: [("list_write", {"name": "content", "items": items})]}, p_call=0.9)
    assert await decided(model, user(text), lists) == [("list_write", {"name": called_by, "items": items})]
    said = FakeLlama({text: [("list_write", {"name": called_by.lower(), "items": items})]}, p_call=0.9)
    assert await decided(said, user(text), lists) == [("list_write", {"name": called_by.lower(), "items": items})]


async def test_a_text_a_tool_that_changes_things_writes_may_come_from_an_earlier_turns_result() -> None:
    """"Write their names into a new file" after a turn whose result gave the names: the optional `content` is what
    the call writes, kept though this request does not say it; a reader's optional filter from an earlier turn is
    still dropped, and so is a text no one said."""
    files = tool("file_ops", "File operations: write, append or delete.", {"action": TEXT, "file_path": TEXT,
                 "content": TEXT}, ["action", "file_path"], source="mcp:disk", places=("/home/me",))
    rooms = tool("list_rooms", "List the rooms of the house, by floor.", {"floor": TEXT}, [], source="mcp:house",
                 read_only=True)
    before = [*user("Who borrowed tools from the shed?"),
              *called("c1", "run_sql", '{"sql": "SELECT name FROM loans"}', "Ana Ferreira\nCarlos Mendes"),
              {"role": "assistant", "content": "Ana Ferreira and Carlos Mendes."}]
    text = "Write their names into a new file borrowers.txt in my folder."
    names = ("file_ops", {"action": "write", "file_path": "/home/me/borrowers.txt",
                          "content": "Ana Ferreira\nCarlos Mendes"})
    model = FakeLlama({text: [names]}, p_call=0.9)
    assert await decided(model, [*before, *user(text)], [files, rooms, RUN_SQL]) == [names]
    poem = ("file_ops", {"action": "write", "file_path": "/home/me/borrowers.txt", "content": "Roses are red today"})
    assert await decided(FakeLlama({text: [poem]}, p_call=0.9), [*before, *user(text)], [files, rooms]) == [
        ("file_ops", {"action": "write", "file_path": "/home/me/borrowers.txt"})]
    floor = "Now tell me every room in the whole house, please."
    earlier = [*user("Which rooms are on the upper floor?"), *called("c2", "list_rooms", '{"floor": "upper floor"}',
                                                                     "Attic, Study"), *user(floor)]
    model = FakeLlama({floor: [("list_rooms", {"floor": "upper floor"})]}, p_call=0.9)
    assert await decided(model, earlier, [files, rooms]) == [("list_rooms", {})]


async def test_a_new_thing_asked_where_the_tools_named_need_an_id_goes_to_the_tool_of_its_kind_that_makes_one():
    """"Put 'water the ferns' on my to-do list": the message's words name the `todo_put_*` tools ("put", "to-do"),
    every one of which needs an id no one said; the tool of their kind that makes a to-do, named by none, is tried."""
    kinds = "abcdefghijklmnopqrstuvwx"
    desk = [tool(f"note_add_{k}", f"Add a note of kind {k}: add words, add tags.", {"text": TEXT}, ["text"],
                 source="mcp:desk") for k in kinds]
    desk += [tool(f"todo_put_{k}", f"Put label {k} on a todo item in your list, by its id.", {"id": TEXT}, ["id"],
                  source="mcp:desk") for k in kinds]
    create = tool("todo_create", "Create a todo item.", {"text": TEXT}, ["text"], source="mcp:desk")
    desk.append(create)
    text = "Put 'water the ferns' on my to-do list."
    model = FakeLlama({text: [("todo_put_a", {"id": "7"}), ("todo_create", {"text": "water the ferns"})]},
                      p_call=0.9, name_tokens={"": [('todo_put_a",', 0.8), ('todo_put_b",', 0.15), ("todo_", 0.05)],
                                               "todo_": [('create",', 0.5)]})
    assert await decided(model, user(text), desk) == [("todo_create", {"text": "water the ferns"})]


@pytest.mark.parametrize("text, wanted", [
    ("How long does the banana bread bake? It's in my recipe box.", ("read_recipe", {"title": "banana bread"})),
    ("Make a new recipe box for cakes.", ("create_recipe_box", {"title": "cakes"})),
])
async def test_a_table_is_as_relevant_as_its_best_tool_of_the_kind_asked_so_a_question_reads_the_readers_part(
        text, wanted) -> None:
    """A server cut in parts, whose makers share the most words with a question ("recipe box"), has the question read
    in the part with its reader (`core.table_of_kind`); a request to make one still reads the makers'."""
    things = ("recipe_box", "recipe", "box_label", "shelf", "menu_box", "menu", "label", "pantry", "meal_plan")
    extra = {f"{word}_note": {"type": "string", "description": f"The {word} of the thing, as the kitchen keeps it."}
             for word in ("colour", "order", "place", "owner", "season", "source")}
    makers = [tool(f"create_{thing}", f"Create a new {thing.replace('_', ' ')}.", {"title": TEXT, **extra}, ["title"],
                   source="mcp:cookbook") for thing in things]
    readers = [tool(f"read_{thing}", f"Read one {thing.replace('_', ' ')}: its steps and times.", {"title": TEXT,
                    **extra}, ["title"], source="mcp:cookbook") for thing in things[1:]]
    cookbook = [*makers, *readers, *many("mcp:a", "alpha", 3)]
    parts = [{t.name for t in part} for part in tables(cookbook)]
    assert not any({t.name for t in makers} <= part and {t.name for t in readers} & part for part in parts)
    model = FakeLlama({text: [wanted]}, p_call=0.9)
    assert await decided(model, user(text), cookbook) == [wanted]


async def test_a_change_asked_by_a_part_no_call_served_is_judged_on_that_part_with_the_usual_bar() -> None:
    """"Stage it and commit it …": the model wrote the staging and stopped; after its result, a small model's chance
    of a call for the whole conversation is under the bar raised after results, though the commit is still asked.
    Judged on the part left alone, at the usual bar, the commit is made. A part left that asks no change ("It's in
    the shed log."), or a message of one part, keeps the raised bar."""
    vcs = [tool("vcs_stage", "Stage changed files for the next commit.", {"paths": {"type": "array", "items": TEXT}},
                ["paths"], source="mcp:vcs"),
           tool("vcs_commit", "Record the staged changes with a message.", {"message": TEXT}, ["message"],
                source="mcp:vcs"),
           tool("vcs_log", "Show recent commits.", {}, [], source="mcp:vcs", read_only=True),
           tool("vcs_diff", "Show what changed in the files.", {}, [], source="mcp:vcs", read_only=True)]
    text = "Stage plan.md and commit it with the message 'Plan the shed'."
    part = "commit it with the message 'Plan the shed'."
    commit = ("vcs_commit", {"message": "Plan the shed"})
    model = FakeLlama({text: [("vcs_stage", {"paths": ["plan.md"]})], part: [commit]}, p_call=0.6,
                      after={text: [commit]})
    staged = [*user(text), *called("c1", "vcs_stage", '{"paths": ["plan.md"]}', "staged plan.md")]
    assert await decided(model, staged, vcs) == [commit]
    for text, part, first in (("How many commits touch plan.md? It's in the shed log.", "It's in the shed log.",
                               "vcs_log"), ("Commit plan.md with the message 'Plan'.", "", "vcs_commit")):
        model = FakeLlama({text: [(first, {})], part: [("vcs_diff", {})]}, p_call=0.6, after={text: [("vcs_diff", {})]})
        assert await decided(model, [*user(text), *called("c1", first, "{}", "a1 plan")], vcs) == [], text


async def test_a_question_in_words_of_what_a_query_tool_holds_is_not_refused_by_the_fit_question() -> None:
    """A tool that runs a query says how, not what about: asked "does run_query do what 'What did we harvest from
    bed 3?' asks?", a small model says no. Where the question says a word of a table the tool holds ("harvest" of
    `harvests`, "planted" of `plantings`), that question is not asked; a question in no word of them, or a request
    that is no question, still is."""
    garden = dataclasses.replace(
        tool("run_query", "Run a SQL statement on the database and return the rows.", {"sql": TEXT}, ["sql"],
             source="mcp:garden", read_only=True),
        holds=("plantings(id, bed, crop, sown_on)", "harvests(id, bed, crop, kilos, picked_on)"))
    for text, wanted in (("What did we harvest from bed 3 in July?", True), ("Which beds have tomatoes planted?", True),
                         ("What's the best crop for a shady bed?", False), ("Harvest schedule please.", False)):
        model = FakeLlama({text: [("run_query", {"sql": "SELECT * FROM harvests"})]}, misfits=frozenset({"run_query"}))
        assert bool(await decided(model, user(text), [garden, EVALUATE])) == wanted, text


async def test_a_question_saying_a_column_of_one_held_table_is_not_refused_by_the_fit_question() -> None:
    """The same for a column a table is held with ("Which shelf is Dune on?" of `books(…, shelf)`), but a column that
    names a row (`title`, `name`, `id`) or one every table has: those tell no table."""
    library = dataclasses.replace(
        tool("sql", "Execute a SQL query.", {"query": TEXT}, ["query"], source="mcp:library", read_only=True),
        holds=("books(id, title, author, shelf)", "loans(id, book_id, member, returned)"))
    for text, wanted in (("Which shelf is Dune on?", True), ("Who is the author of Dune?", True),
                         ("What's the title of your favourite film?", False), ("Who wrote Dune?", False)):
        model = FakeLlama({text: [("sql", {"query": "SELECT * FROM books"})]}, misfits=frozenset({"sql"}))
        assert bool(await decided(model, user(text), [library, EVALUATE])) == wanted, text


async def test_an_allowed_value_no_one_said_is_the_one_the_message_says() -> None:
    """"a moderately priced Thai place": the model wrote `pricey`, an allowed value no one said, where the message says
    one other (`moderate`, by its stem); the same for a choice its description lists. Two said, or the value written
    said, leave it."""
    places = tool("find_places", "Find places to eat.\nunits: \"km\" | \"miles\"",
                  {"city": TEXT, "cuisine": TEXT, "price": {"type": "string", "enum": ["cheap", "moderate", "pricey"]},
                   "units": TEXT}, ["city", "price"], source="mcp:eat", read_only=True)
    for text, wrote, wanted in (
            ("Find a moderately priced Thai place in Leeds.", {"price": "pricey"}, {"price": "moderate"}),
            ("Cheap noodles in Leeds within 3 miles?", {"price": "moderate", "units": "km"},
             {"price": "cheap", "units": "miles"}),
            ("Cheap or moderate food in Leeds?", {"price": "pricey"}, {"price": "pricey"}),
            ("Pricey but not cheap food in Leeds?", {"price": "cheap"}, {"price": "cheap"})):
        model = FakeLlama({text: [("find_places", {"city": "Leeds", **wrote})]})
        assert await decided(model, user(text), [places, EVALUATE]) == [("find_places", {"city": "Leeds", **wanted})], text


async def test_an_allowed_value_that_is_a_function_word_gives_way_to_the_one_value_the_message_names() -> None:
    """"Show me all the Kotlin repositories": `all` is an allowed value, but said as a function word; the one value
    the message names (`kotlin`) is meant. With no value named, `all` stays."""
    repos = tool("list_repos", "List the repositories.", {"language": {"type": "string", "enum": [
        "all", "python", "kotlin", "go"], "default": "all"}}, [], source="mcp:forge", read_only=True)
    for text, wanted in (("Show me all the Kotlin repositories.", "kotlin"), ("List all my repositories.", "all")):
        model = FakeLlama({text: [("list_repos", {"language": "all"})]})
        assert await decided(model, user(text), [repos]) == [("list_repos", {"language": wanted})], text


async def test_a_request_to_register_a_new_thing_asks_a_change() -> None:
    """"Register a new printer called Atlas": a tool that adds one is no change no one asked."""
    printers = [tool("add_printer", "Add a printer to the office network.", {"name": TEXT}, ["name"],
                     source="mcp:office"),
                tool("list_printers", "List the printers.", {}, [], source="mcp:office", read_only=True)]
    for text in ("Please register a new printer called Atlas.", "Inscris une nouvelle imprimante nommée Atlas."):
        model = FakeLlama({text: [("add_printer", {"name": "Atlas"})]})
        assert await decided(model, user(text), printers) == [("add_printer", {"name": "Atlas"})], text


async def test_an_origin_and_a_destination_written_the_other_way_round_are_as_the_message_says_them() -> None:
    """"from Basel to Bern" written with Bern as the start: swapped, in English, German and French; written as said,
    or a message saying two ways, is left as written."""
    trains = tool("find_trains", "Find train connections.", {"start_station": TEXT, "end_station": TEXT, "day": TEXT},
                  ["start_station", "end_station"], source="mcp:rail", read_only=True)
    for text, wrote, wanted in (
            ("Find a train from Basel to Bern on Friday.", ("Bern", "Basel"), ("Basel", "Bern")),
            ("Gibt es einen Zug von Chur nach Zürich?", ("Zürich", "Chur"), ("Chur", "Zürich")),
            ("Un train de Lyon à Nice, s'il vous plaît.", ("Nice", "Lyon"), ("Lyon", "Nice")),
            ("Find a train from Basel to Bern.", ("Basel", "Bern"), ("Basel", "Bern")),
            ("I came from Bern to Basel; now a train Basel to Bern?", ("Basel", "Bern"), ("Basel", "Bern"))):
        written = {"start_station": wrote[0], "end_station": wrote[1]}
        model = FakeLlama({text: [("find_trains", written)]})
        assert await decided(model, user(text), [trains, EVALUATE]) == [
            ("find_trains", {"start_station": wanted[0], "end_station": wanted[1]})], text


RECIPES = [dataclasses.replace(t, holds=("chili-con-carne", "lemon-tart", "lemon-curd", "pancakes")) for t in (
    tool("recipe_open", "Open a recipe by its title.", {"title": TEXT}, ["title"], source="mcp:recipes",
         read_only=True),
    tool("recipe_save", "Save a recipe under a title.", {"title": TEXT, "text": TEXT}, ["title", "text"],
         source="mcp:recipes"))]


@pytest.mark.parametrize("text, wanted", [
    ("Which spices go in the chili? It's in my recipes.", [("recipe_open", {"title": "chili-con-carne"})]),
    ("¿Cuántos huevos lleva la receta de pancakes?", [("recipe_open", {"title": "pancakes"})]),
    ("How long does the lemon one bake?", []),  # words of two things held: none is the one
    ("Which spices go in my stew?", [])])  # words of no thing held
async def test_a_made_up_name_of_a_thing_looked_up_is_the_one_thing_held_the_message_says_words_of(text,
                                                                                                  wanted) -> None:
    model = FakeLlama({text: [("recipe_open", {"title": "Dinner"})]})  # a title no one said
    assert await decided(model, user(text), RECIPES) == wanted


async def test_a_sentence_that_only_gives_a_detail_the_call_used_is_no_request_of_its_own_after_results() -> None:
    """The class: a message that gives, in a sentence of its own, a detail its request needs ("The database is
    shop.db.", "The city is Bergen."). After the call that used it, the model is not asked for another round; a
    sentence asking more ("I also want the wind in Tromsø"),
    a question, or a change is a request still, and the model is asked."""
    query = tool("query_db", "Run SQL on a SQLite database file.", {"db_file": TEXT, "sql": TEXT}, ["db_file", "sql"],
                 source="mcp:sqlite", read_only=True)
    wind = tool("wind", "The wind speed and direction for a city.", {"city": TEXT}, ["city"], source="mcp:weather",
                read_only=True)
    cases = [("How many orders came in today? The database is shop.db.", query,
              {"db_file": "shop.db", "sql": "SELECT 1"}, [query], None),
             ("Will it rain tomorrow? The city is Bergen.", FORECAST, {"city": "Bergen"}, [FORECAST, wind], None),
             ("Will it rain in Bergen tomorrow? I also want the wind in Tromsø.", FORECAST, {"city": "Bergen"},
              [FORECAST, wind], "Tromsø"),
             ("Will it rain tomorrow? The city is Bergen. How windy will it be?", FORECAST, {"city": "Bergen"},
              [FORECAST, wind], "Bergen")]
    for text, first, arguments, tools, windy in cases:
        model = FakeLlama({}, p_call=0.99, after={text: [("wind", {"city": windy or "Bergen"})]})
        talk = [*user(text), *called("c1", first.name, json.dumps(arguments), "3")]
        calls = await decided(model, talk, tools)
        assert bool(model.asked) == bool(windy), text
        assert calls == ([("wind", {"city": windy})] if windy else []), text
