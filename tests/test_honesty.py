"""Nothing shown that did not happen: a claimed tool result without a call is caught, and call syntax in any
wrapper is read as a call or said to be malformed, never shown raw."""

from __future__ import annotations

import dataclasses

from sidespin.events import ErrorNotice, MalformedCall, TextDelta, ToolFinished, ToolProposed
from sidespin.honesty import (ACTION_NOTICE, ARITHMETIC_NOTICE, CONTENT_NOTICE, ALTERED_NOTICE, DATE_NOTICE, FAILED_NOTICE, FAILED_NOW_NOTICE, NOTHING_NOTICE, NOTICE,
                              NOW_NOTICE, REPEAT_NOTICE, TIME_NOTICE, UNREAD_NOTICE, altered_quote, claimed_now,
                              claimed_tool, empty_result, files_unread, misread_time, named_from_nothing,
                              repeated_result, shown_after_failure, unsaid_dates)
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.tools import ToolRegistry, tool
from tests.scripted import ScriptedBackend


async def one_call_turn(message: str, call: str, answer: str, *tools) -> list:
    """The events of a turn in which the model writes `call`, then `answer` from its result."""
    return [e async for e in chat_with_llm(Conversation(), message, backend=ScriptedBackend([[call], [answer]]),
                                           registry=ToolRegistry(list(tools)), options=RallyOptions(mode="xml"))]


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    return "# Groceries\n- milk\n- eggs"


@tool
def write_file(path: str, content: str) -> str:
    """Write a file."""
    return "written"


@tool(read_only=True)
def search_nodes(query: str) -> str:
    """Search the memory for people, places and things."""
    return '{\n  "entities": [],\n  "relations": []\n}' if "sister" in query else '{"entities": [{"name": "Ada"}]}'


OFFERED = ["read_file", "write_file"]


def test_an_answer_that_reports_a_tool_result_without_a_call_is_a_claim() -> None:
    for text in ("The tool read_file answered: # Groceries - milk - eggs - bread",
                 "I called read_file and it says you need milk.",
                 "[result of the tool read_file: milk]",
                 'The tool read_file was run with {"path": "todo.md"} and gave: milk',
                 "[read_file]\n```\nmilk\n```",
                 '[write_file {"path": "a.md"}] failed: denied',
                 "According to write_file, the list is saved.",
                 "`write_file` returned: written",
                 "The tool's result shows three items."):
        assert claimed_tool(text, OFFERED, called=[]) is not None, text


def test_describing_tools_or_code_is_no_claim() -> None:
    for text in ("I can read a file with read_file, which returns its text.",
                 "The function sort returns a new list; list.sort sorts in place.",
                 "Paris is the capital of France.",
                 "A tool like a hammer is used to drive nails."):
        assert claimed_tool(text, OFFERED, called=[]) is None, text


def test_a_claim_about_the_tool_that_did_run_is_no_claim_but_one_about_another_is() -> None:
    text = "The tool read_file answered: milk and eggs. I called write_file to save it."
    assert claimed_tool(text, OFFERED, called=["read_file"]) == "write_file"
    assert claimed_tool("The tool read_file answered: milk.", OFFERED, called=["read_file"]) is None


def test_an_answer_that_gives_the_time_now_or_todays_date_is_a_claim_no_model_can_make() -> None:
    for text in ("The current time in Tokyo is 10:00.",
                 "It is currently 3:45 PM in New York.",
                 "Right now it's 7 pm in Paris.",
                 "Today is Monday, May 14, 2024.",
                 "Today's date is 2024-05-14.",
                 "Il est actuellement 14:30 à Paris.",
                 "L'heure actuelle à Paris est 14:30.",
                 "La hora actual en Madrid es 9:15.",
                 "Ahora son las 9:15 en Ciudad de México.",
                 "The time in Porto is 10:00 AM.",  # no call: the 0.5B's answers once a Berlin zone made none
                 "The time in Porto, Portugal, is 11:30 AM.",
                 "The local time is 9:15."):
        assert claimed_now(text) is not None, text


def test_times_and_dates_that_are_not_now_are_no_claim() -> None:
    for text in ("If it is 15:00 in New York, it is 20:00 in London.",
                 "I cannot know the current time; a clock or a time tool can tell you.",
                 "The meeting moved from Tuesday at 10:00 to Wednesday at 11:00.",
                 "UTC and GMT show the same time; GMT is a time zone, UTC a standard.",
                 "Python 3.11 was released in October 2022.",
                 "Use `git log -1` to see the last commit now.",
                 "The actual difference is five hours: 15:00 in New York is 20:00 in London.",
                 "The meeting time is 10:00, and the time in Paris is ahead of London's."):
        assert claimed_now(text) is None, text


TODO = "# To do\n\n## Groceries\n- milk\n- eggs\n- spinach\n\n## This week\n- call the plumber"


def test_an_answer_that_repeats_three_lines_or_a_long_one_of_an_earlier_result_repeats_it() -> None:
    earlier = [("get_time", "12:00"), ("read_file", TODO)]
    assert repeated_result("## Groceries\n* Milk\n* eggs\n* spinach\n* bread", earlier) == "read_file"
    long_line = "The plumber comes on Tuesday between nine and eleven, and the tap must be shut off before then."
    assert repeated_result(f"It says: \n{long_line}", [("read_file", f"notes\n{long_line}\n")]) == "read_file"
    for text in ("You need milk and eggs.", "- milk\n- bread", "Groceries:\n- milk\n- bread\n- cheese"):
        assert repeated_result(text, earlier) is None, text


async def play(answers: list[list[str]], history: list[dict] | None = None, **options) -> tuple[list, str]:
    model = ScriptedBackend(answers)
    events = [e async for e in chat_with_llm(Conversation(), "Now add bread to that list.", backend=model,
                                             registry=ToolRegistry([read_file, write_file]), history=history,
                                             options=RallyOptions(mode=options.get("mode", "xml")))]
    return events, "".join(e.text for e in events if isinstance(e, TextDelta))


def read_before() -> list[dict]:
    """A conversation whose earlier turn read the to-do list."""
    call = {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "todo.md"}'}}
    return [{"role": "user", "content": "Read todo.md for me."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": TODO},
            {"role": "assistant", "content": "You need milk, eggs and spinach."}]


async def test_a_follow_up_that_shows_an_earlier_result_changed_without_any_call_says_nothing_was_changed() -> None:
    answer = "# To do\n\n## Groceries\n- milk\n- eggs\n- spinach\n- bread"
    events, shown = await play([[answer]], history=read_before())
    assert not [e for e in events if isinstance(e, ToolProposed)]
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert notices == [REPEAT_NOTICE.format(tool="read_file")] and "nothing was read or changed" in notices[0]
    assert shown == answer  # kept as written


async def test_a_follow_up_that_writes_the_file_gets_no_notice_for_repeating_its_lines() -> None:
    call = '<tool_call>\n{"name": "write_file", "arguments": {"path": "todo.md", "content": "- bread"}}\n</tool_call>'
    events, shown = await play([[call], ["Added. The list is now:\n- milk\n- eggs\n- spinach\n- bread"]],
                               history=read_before())
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == ["written"]
    assert not [e for e in events if isinstance(e, ErrorNotice)]
    assert shown == "Added. The list is now:\n- milk\n- eggs\n- spinach\n- bread"  # the call itself not shown


async def test_a_turn_that_claims_a_result_without_any_call_says_so_under_the_answer() -> None:
    events, shown = await play([["The tool read_file answered: # Groceries - milk - eggs - bread"]])
    assert not [e for e in events if isinstance(e, ToolProposed)]
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert notices == [NOTICE] and "nothing was done" in notices[0]
    assert shown.startswith("The tool read_file answered")  # kept as written: the transcript stays what happened


async def test_a_turn_whose_answer_reports_the_call_it_made_gets_no_notice() -> None:
    events, shown = await play([['<tool_call>\n{"name": "read_file", "arguments": {"path": "todo.md"}}\n</tool_call>'],
                                ["The tool read_file answered with milk and eggs."]])
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == ["# Groceries\n- milk\n- eggs"]
    assert not [e for e in events if isinstance(e, ErrorNotice)]


async def test_call_syntax_in_another_wrapper_mid_answer_is_run_and_never_shown() -> None:
    for wrapped in ('Sure. <tool_call>{"name": "read_file", "arguments": {"path": "a.md"}}</tool_call>',
                    'Sure. <request-id><tool name="read_file"><param name="path">a.md</param></tool></request-id>'):
        events, shown = await play([[wrapped], ["It says milk."]])
        assert [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolProposed)] == \
            [("read_file", {"path": "a.md"})], wrapped
        assert "<" not in shown and "read_file" not in shown and shown == "Sure. It says milk."


async def test_a_wrapper_that_calls_nothing_readable_is_a_malformed_call_not_text() -> None:
    events, shown = await play([["Let me see. <tool_call>read it please</tool_call>"]])
    assert [e.reason for e in events if isinstance(e, MalformedCall)] and "tool_call" not in shown


async def test_an_imitated_result_block_and_an_echoed_request_id_are_hidden() -> None:
    events, shown = await play([["<tool_response>milk</tool_response>Done. <request-id>ab12cd34</request-id>"]])
    assert shown == "Done. " and not [e for e in events if isinstance(e, (ToolProposed, MalformedCall))]


async def test_a_turn_that_gives_the_time_without_calling_anything_says_it_was_made_up() -> None:
    events, shown = await play([["The current time in Tokyo is 10:00."]])
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert shown == "The current time in Tokyo is 10:00." and notices == [NOW_NOTICE]  # the answer kept, marked


def test_a_result_holds_nothing_when_blank_or_json_of_empty_values_only() -> None:
    for output in ("", "  \n", "[]", "{}", '{"entities": [], "relations": []}', '{"matches": null, "note": ""}'):
        assert empty_result(output), output
    for output in ("No matches", '{"entities": [{"name": "Ada"}]}', "0", '{"count": 0}', "Error: no such file"):
        assert not empty_result(output), output


def test_an_answer_naming_what_empty_results_never_said_is_named_from_nothing() -> None:
    empty = [("search_nodes", '{"entities": [], "relations": []}')]
    said = "What is my sister's name?"
    assert named_from_nothing("My sister's name is Alice.", empty, said) == ("search_nodes", "Alice")
    assert named_from_nothing("Your appointment is on the 14th, at 9.", empty, said) == ("search_nodes", "9")
    for text in ("I found nothing about your sister in my memory.", "Sorry, I don't know your sister's name.",
                 "The search returned 0 results.",
                 "Nothing was found. Could you tell me?"):
        assert named_from_nothing(text, empty, said) is None, text
    assert named_from_nothing("Her name is Ada.", empty, "Remember that my sister is Ada. What is her name?") is None
    assert named_from_nothing("Her name is Ada.", [("search_nodes", '{"entities": [{"name": "Ada"}]}')], said) is None
    assert named_from_nothing("Her name is Alice.", [*empty, ("read_file", "Alice")], said) is None  # one found it


async def ask_memory(answer: str) -> tuple[list, str]:
    call = '<tool_call>\n{"name": "search_nodes", "arguments": {"query": "sister"}}\n</tool_call>'
    events = [e async for e in chat_with_llm(Conversation(), "What is my sister's name?",
                                             backend=ScriptedBackend([[call], [answer]]),
                                             registry=ToolRegistry([search_nodes]), options=RallyOptions(mode="xml"))]
    return events, "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_name_given_after_a_search_that_found_nothing_says_it_was_made_up() -> None:
    events, shown = await ask_memory("My sister's name is Alice.")
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == [
        '{\n  "entities": [],\n  "relations": []\n}']
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert notices == [NOTHING_NOTICE.format(tool="search_nodes", name="Alice")]
    assert "search_nodes found nothing" in notices[0] and "Alice" in notices[0] and "no tool result" in notices[0]
    assert shown == "My sister's name is Alice."  # kept as written


async def test_saying_the_search_found_nothing_gets_no_notice() -> None:
    events, shown = await ask_memory("I could not find your sister's name in my memory.")
    assert not [e for e in events if isinstance(e, ErrorNotice)]


def test_a_quote_of_a_result_with_a_line_of_its_own_inside_is_altered() -> None:
    read = [("read_file", TODO)]
    shown = "To do\n\n## Groceries\n- milk\n- eggs\n- spinach\n- bread\n\n## This week\n- call the plumber"
    assert altered_quote(shown, read) == ("read_file", "- bread")
    for text in ("Your list:\n- milk\n- eggs\n- spinach\nYou could add bread.",  # after the quote, not in it
                 "You need milk and eggs.",  # no quote
                 "- milk\n- bread\n- eggs"):  # two lines quoted: too few to be a quote
        assert altered_quote(text, read) is None, text
    # a diff that added the line holds it, marks and all
    diff = [("edit_file", "@@ -3,3 +3,4 @@\n - milk\n - eggs\n - spinach\n+- bread")]
    assert altered_quote("Done:\n- milk\n- eggs\n- spinach\n- bread\n", diff) is None


async def test_a_follow_up_that_read_the_file_and_showed_it_changed_says_which_line_no_tool_gave() -> None:
    call = '<tool_call>\n{"name": "read_file", "arguments": {"path": "todo.md"}}\n</tool_call>'
    answer = "# Groceries\n- milk\n- bread\n- eggs"
    events, shown = await play([[call], [answer]], history=read_before())
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == ["# Groceries\n- milk\n- eggs"]
    notices = [e.message for e in events if isinstance(e, ErrorNotice)]
    assert notices == [ALTERED_NOTICE.format(tool="read_file", line="- bread")] and "no tool gave it" in notices[0]
    assert shown == answer


@tool(read_only=True)
def get_current_time(timezone: str) -> str:
    """The current time in a time zone."""
    raise ValueError(f"Invalid timezone: 'No time zone found with key {timezone}'")


async def test_a_time_given_after_the_time_tool_failed_says_it_was_made_up() -> None:
    call = '<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "America/Mexico"}}\n</tool_call>'
    for answer, notice in (("The current time in Ciudad de México is 10:00 AM.",
                            FAILED_NOW_NOTICE.format(tool="get_current_time")),
                           ("I could not get the time: America/Mexico is no time zone.", None)):
        events = await one_call_turn("¿Qué hora es ahora en Ciudad de México?", call, answer, get_current_time)
        assert [bool(e.result.error) for e in events if isinstance(e, ToolFinished)] == [True]
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == ([notice] if notice else []), answer


TOKYO = '{"timezone": "Asia/Tokyo", "datetime": "2026-11-27T22:59:01+09:00", "day_of_week": "Friday", "is_dst": false}'
MEXICO = '{"timezone": "America/Mexico_City", "datetime": "2026-11-27T07:59:10-06:00", "is_dst": false}'
CONVERTED = ('{"source": {"timezone": "America/New_York", "datetime": "2026-11-27T15:00:00-05:00"}, '
             '"target": {"timezone": "Europe/London", "datetime": "2026-11-27T20:00:00+00:00"}}')


def test_a_time_the_time_tool_did_not_return_is_misread() -> None:
    """The reference time server's answers, as the 0.5B told them: "22:59:01 UTC" for 22:59 at +09:00, "7:59 PM" for
    07:59. A time at its own offset, as UTC, in twelve hours, or said in the message (in twelve hours or
    twenty-four) is no misreading."""
    tokyo, mexico = [("get_current_time", TOKYO)], [("get_current_time", MEXICO)]
    converted = [("convert_time", CONVERTED)]
    assert misread_time("The time in Tokyo is 22:59:01 UTC.", tokyo, "Tokyo time?") == (
        "22:59:01 UTC", "get_current_time", "22:59 at UTC+09:00")
    assert misread_time("The current time in Ciudad de México is 7:59 PM.", mexico, "") == (
        "7:59 PM", "get_current_time", "07:59 at UTC-06:00")
    for text, results, said in (("It is 22:59 in Tokyo.", tokyo, ""), ("It's 10:59 p.m. in Tokyo.", tokyo, ""),
                                ("That is 13:59 UTC.", tokyo, ""), ("It is 7:59 AM, a Friday.", mexico, ""),
                                ("At 15:00 in New York it is 20:00 in London.", converted, ""),
                                ("Your meeting at 10:30 is in an hour.", tokyo, "My meeting is at 10:30."),
                                ("Your call at 15:30 is after it.", tokyo, "My call is at 3:30 PM."),
                                ("It is 14:30.", [("read_file", "Lunch at 14:30")], "")):
        assert misread_time(text, results, said) is None, text


async def test_a_time_told_otherwise_than_the_time_tool_gave_it_says_so() -> None:
    @tool(read_only=True, name="get_current_time")
    def tokyo_time(timezone: str) -> str:
        """The current time in a time zone."""
        return TOKYO

    call = '<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>'
    for answer, notice in (("The time in Tokyo is 22:59:01 UTC.", TIME_NOTICE.format(
            told="22:59:01 UTC", tool="get_current_time", given="22:59 at UTC+09:00")),
                           ("It is 22:59 in Tokyo, on a Friday.", None)):
        events = await one_call_turn("Tokyo time?", call, answer, tokyo_time)
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == ([notice] if notice else []), answer


BUDGET = "date,item,amount\n2023-02-01,rent,900\n2023-02-03,food,120\n"


def test_a_date_no_result_and_no_one_gave_is_unsaid() -> None:
    """Asked when budget.csv was last changed, the 0.5B read the file (not its details) and answered "on February 29,
    2023". A date a result gives in another form, or the message says, is no such date."""
    budget, clock = [("read_text_file", BUDGET)], [("get_current_time", TOKYO)]
    assert unsaid_dates("The file was last changed on February 29, 2023.", budget, "When was budget.csv changed?") == [
        "2023-02-29"]
    for text, results, said in (("On February 1, 2023 you paid rent.", budget, ""),
                                ("Today's date is November 27, 2026.", clock, ""),
                                ("It is 27 November 2026.", clock, ""),
                                ("Your trip on 2027-01-05 is close.", clock, "My trip is on January 5, 2027."),
                                ("It was changed on March 3, 2023.", [], "")):  # no result: no call's to judge
        assert unsaid_dates(text, results, said) == [], text


async def test_a_date_told_from_a_file_that_does_not_hold_it_says_so() -> None:
    @tool(read_only=True, name="read_text_file")
    def read_budget(path: str) -> str:
        """Read a text file."""
        return BUDGET

    call = '<tool_call>\n{"name": "read_text_file", "arguments": {"path": "budget.csv"}}\n</tool_call>'
    for answer, notice in (("The file budget.csv was last changed on February 29, 2023.",
                            DATE_NOTICE.format(told="2023-02-29")),
                           ("Rent was 900 on February 1, 2023.", None)):
        events = await one_call_turn("When was budget.csv last changed?", call, answer, read_budget)
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == ([notice] if notice else []), answer


@tool(read_only=True)
def read_weather(path: str) -> str:
    """Read a weather file."""
    raise FileNotFoundError(f"ENOENT: no such file or directory, open '{path}'")


def test_content_is_a_fenced_block_or_three_lines_of_a_list_or_of_names_and_values() -> None:
    assert shown_after_failure('As follows:\n\n```json\n{\n  "temperature": 25\n}\n```') == "{"
    assert shown_after_failure("Readings:\n- temperature: 25\n- humidity: 60\n- wind: 10") == "- temperature: 25"
    assert shown_after_failure("Temperature: 25\nHumidity: 60\nWind speed: 10 km/h") == "Temperature: 25"
    for text in ("I could not read the file: it does not exist.",
                 "The file was not found.\nCheck the path: weather/chicago.json.",  # one "name: value" line
                 "- one\n- two"):  # two list lines: too few
        assert shown_after_failure(text) is None, text


async def test_content_shown_after_calls_that_all_failed_says_no_tool_gave_it() -> None:
    call = '<tool_call>\n{"name": "read_weather", "arguments": {"path": "weather/chicago.json"}}\n</tool_call>'
    made_up = 'The structured weather content for Chicago is as follows:\n\n```json\n{"temperature": 25}\n```'
    for answer, notice in ((made_up, FAILED_NOTICE.format(tool="read_weather")),
                           ("I could not read weather/chicago.json: there is no such file.", None)):
        events = await one_call_turn("Get the structured weather content for Chicago.", call, answer, read_weather)
        assert [bool(e.result.error) for e in events if isinstance(e, ToolFinished)] == [True]
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == ([notice] if notice else []), answer
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == answer  # kept as written


def test_files_an_answer_names_that_no_one_named_are_unread_when_asked_about_files() -> None:
    listing = ("The notes folder contains several files, including:\n\n1. **notes.txt**: the main text file.\n"
               "2. **notes.md**: a Markdown file.\n3. **notes.pdf**: for presentations.")
    asked = "Which files are in the notes folder?"
    assert files_unread(listing, asked, asked) == ["notes.txt", "notes.md", "notes.pdf"]
    assert files_unread(listing, "Which notes do I have?", "") == []  # asks about no file or folder
    assert files_unread("Open todo.md and ideas.md.", asked, "notes/todo.md") == []  # one file no one named
    assert files_unread("See https://example.com/a.html, e.g. version 3.11, i.e. the site.", asked, "") == []
    assert files_unread("```python\nopen('a.txt')\nopen('b.txt')\n```", asked, "") == []  # code, not files had


async def test_a_listing_of_files_without_any_call_says_nothing_was_read_from_the_folders() -> None:
    """"Which files are in the notes folder?", the filesystem server connected: the 0.5B made no call and listed
    notes.txt, notes.md, notes.pdf … . Without a server that works in folders, it still told what a folder holds
    with no tool run."""
    listing = "The notes folder contains:\n- notes.txt\n- notes.md\n- notes.pdf"
    in_folders = dataclasses.replace(read_file, places=("/home/me/files",))
    for registry, notices in ((ToolRegistry([in_folders, write_file]),
                               [UNREAD_NOTICE.format(files="notes.txt, notes.md, notes.pdf")]),
                              (ToolRegistry([read_file, write_file]), [CONTENT_NOTICE.format(thing="folder")])):
        events = [e async for e in chat_with_llm(Conversation(), "Which files are in the notes folder?",
                                                 backend=ScriptedBackend([[listing]]), registry=registry,
                                                 options=RallyOptions(mode="xml"))]
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == notices
        assert "".join(e.text for e in events if isinstance(e, TextDelta)) == listing  # kept as written


@tool
def add_row(table: str, values: str) -> str:
    """Insert a row into a table."""
    return "Error: table is read-only"


@tool(read_only=True)
def evaluate(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return "1776"


async def test_an_action_reported_done_needs_a_call_of_a_tool_that_changes_things_that_succeeded() -> None:
    """The class: "… has been added to the table" after a call that cannot add a row, or after none. Said in four
    languages; an answer about code it shows is no such report."""
    for answer in ("Done! Tom has been added to the table.", "I've saved your note.", "J'ai enregistré la note.",
                   "Die Zeile wurde erfolgreich hinzugefügt.", "He guardado la nota.",
                   "Tom's age has been set to 41.", "The price has been lowered to 9.50."):
        events = [e async for e in chat_with_llm(Conversation(), "Add Tom to the people table",
                                                 backend=ScriptedBackend([[answer]]),
                                                 registry=ToolRegistry([add_row, read_file]),
                                                 options=RallyOptions(mode="xml"))]
        notices = [e.message for e in events if isinstance(e, ErrorNotice)]
        assert notices and notices[0].startswith(ACTION_NOTICE.split(":")[0]), (answer, notices)
    failed = await one_call_turn("Add Tom to people", '<mcp-request><tool name="add_row" /><param name="table">people'
                                 '</param><param name="values">Tom</param></mcp-request>',
                                 "Tom has been added to the table.", add_row)
    assert any(isinstance(e, ErrorNotice) and "was not done" in e.message for e in failed)
    done = await one_call_turn("Write it down", '<mcp-request><tool name="write_file" /><param name="path">a.md'
                               '</param><param name="content">x</param></mcp-request>', "I've saved it.", write_file)
    assert not [e for e in done if isinstance(e, ErrorNotice)]
    code = [e async for e in chat_with_llm(Conversation(), "Write a sort function", backend=ScriptedBackend(
        [["I've written a function below:\n```python\ndef s(x): return sorted(x)\n```"]]),
        registry=ToolRegistry([add_row]), options=RallyOptions(mode="xml"))]
    assert not [e for e in code if isinstance(e, ErrorNotice)]


@tool
def read_records(table: str) -> str:
    """Read the rows of a table."""
    return '[{"name": "Mug", "stock": 40}]'


@tool
def update_records(table: str, values: str) -> str:
    """Update the rows of a table."""
    return "1 row updated"


async def test_a_call_of_a_tool_that_only_reads_by_its_name_backs_no_action_where_its_server_marks_none() -> None:
    """Where no tool is marked read-only or destructive, a tool whose name says it reads (`read_records`) changed
    nothing: "… has been set to 35" after it alone is marked; after the updating tool, it is not."""
    read = await one_call_turn("Set the stock of Mug to 35.", '<mcp-request><tool name="read_records" /><param '
                               'name="table">products</param></mcp-request>', "The stock of Mug has been set to 35.",
                               read_records, update_records)
    assert any(isinstance(e, ErrorNotice) and "was not done" in e.message for e in read)
    done = await one_call_turn("Set the stock of Mug to 35.", '<mcp-request><tool name="update_records" /><param '
                               'name="table">products</param><param name="values">stock=35</param></mcp-request>',
                               "The stock of Mug has been set to 35.", read_records, update_records)
    assert not [e for e in done if isinstance(e, ErrorNotice)]


async def test_an_act_in_the_world_reported_done_after_a_query_alone_is_marked() -> None:
    """The class: a message sent, a person contacted, a thing bought or printed, told as done where the only call
    read ("Each customer has been given a thank-you email." after a listing)."""
    for answer in ("Each customer has been given a thank-you email.", "I have emailed all three customers.",
                   "Your invoice has been printed.", "The two mugs have been bought."):
        read = await one_call_turn("Thank every customer by email.", '<mcp-request><tool name="read_records" />'
                                   '<param name="table">customers</param></mcp-request>', answer, read_records,
                                   update_records)
        assert any(isinstance(e, ErrorNotice) and "was not done" in e.message for e in read), answer
    sorted_ = await one_call_turn("List the customers by name.", '<mcp-request><tool name="read_records" /><param '
                                  'name="table">customers</param></mcp-request>',
                                  "The customers have been ordered by name: Ana, Bo.", read_records, update_records)
    assert not [e for e in sorted_ if isinstance(e, ErrorNotice)]  # a listing's order is no act


@tool
def delete_rows(table: str, where: str) -> str:
    """Delete the rows of a table that match."""
    return '{"changes": 0}' if "nobody" in where else '{"changes": 2}'


async def test_a_change_whose_result_says_nothing_changed_backs_no_action_reported_done() -> None:
    """The class: a statement that matched no row ran without an error ("0 rows affected", `{"changes": 0}`), and the
    answer tells the row deleted; where the result counts rows changed, it backs the report."""
    none = await one_call_turn("Delete the order of Nobody.", '<mcp-request><tool name="delete_rows" /><param '
                               'name="table">orders</param><param name="where">nobody</param></mcp-request>',
                               "The order has been deleted.", delete_rows, read_records)
    assert any(isinstance(e, ErrorNotice) and "was not done" in e.message for e in none)
    two = await one_call_turn("Delete the orders of Ana.", '<mcp-request><tool name="delete_rows" /><param '
                              'name="table">orders</param><param name="where">ana</param></mcp-request>',
                              "The orders have been deleted.", delete_rows, read_records)
    assert not [e for e in two if isinstance(e, ErrorNotice)]
    from sidespin.honesty import changed_nothing
    assert all(changed_nothing(o) for o in ("Rows affected: 0", "0 rows affected", "No records were updated.",
                                            '{"affected_rows": 0}', "Updated 0 rows"))
    assert not any(changed_nothing(o) for o in ('{"changes": 1}', "1 row updated", '[{"stock": 0}]',
                                                '{"lastInsertRowid": 0, "changes": 1}'))


async def test_arithmetic_answered_in_words_while_a_tool_that_calculates_is_offered_is_marked() -> None:
    events = [e async for e in chat_with_llm(Conversation(), "What is 48 x 37?", backend=ScriptedBackend(
        [["48 x 37 = 1,766."]]), registry=ToolRegistry([evaluate]), options=RallyOptions(mode="xml"))]
    assert [e.message for e in events if isinstance(e, ErrorNotice)] == [
        ARITHMETIC_NOTICE.format(tool="evaluate", claim="1766")]
    plain = [e async for e in chat_with_llm(Conversation(), "What is the capital of Peru?", backend=ScriptedBackend(
        [["Lima, since 1535."]]), registry=ToolRegistry([evaluate]), options=RallyOptions(mode="xml"))]
    assert not [e for e in plain if isinstance(e, ErrorNotice)]


@tool()
def book_options(mode: str) -> str:
    """Set how the workbook calculates, and its precision."""
    return "Set."


async def test_arithmetic_in_words_names_a_tool_that_takes_the_calculation_and_none_after_one_was_called() -> None:
    """A workbook's settings tool says it "calculates" in its first sentence but takes a mode: the notice names the tool
    that evaluates; after a call of it, worked out right or not in the answer, no notice."""
    tools = ToolRegistry([book_options, evaluate])
    events = [e async for e in chat_with_llm(Conversation(), "What is 48 x 37?", backend=ScriptedBackend(
        [["48 x 37 = 1,766."]]), registry=tools, options=RallyOptions(mode="xml"))]
    assert [e.message for e in events if isinstance(e, ErrorNotice)] == [
        ARITHMETIC_NOTICE.format(tool="evaluate", claim="1766")]
    called = [e async for e in chat_with_llm(Conversation(), "What is 48 x 37?", backend=ScriptedBackend(
        [['<mcp-request><tool name="evaluate" /><param name="expression">48*37</param></mcp-request>'],
         ["48 x 37 = 1,776."]]), registry=tools, options=RallyOptions(mode="xml"))]
    assert any(isinstance(e, ToolFinished) for e in called)
    assert not [e for e in called if isinstance(e, ErrorNotice)]


async def test_a_quantity_worked_out_in_words_from_a_result_while_a_tool_that_calculates_is_offered_is_marked() -> None:
    """"How many full weeks is that?" after a result of 286 days: "40 weeks" comes from no tool; a count a result
    gives ("There are 14") is not marked."""
    call = {"id": "c1", "type": "function", "function": {"name": "date_diff", "arguments": '{"start": "2025-03-14"}'}}
    history = [{"role": "user", "content": "How many days from 14 March to 25 December 2025?"},
               {"role": "assistant", "content": "", "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "name": "date_diff", "content": "286 days"},
               {"role": "assistant", "content": "There are 286 days between them."}]
    for text, answer, marked in (("And how many full weeks is that?", "That is 40 full weeks.", "40"),
                                 ("Und wie viele Tage sind das?", "Es sind 286 Tage.", None)):
        events = [e async for e in chat_with_llm(Conversation(), text, backend=ScriptedBackend([[answer]]),
                                                 registry=ToolRegistry([evaluate]), history=history,
                                                 options=RallyOptions(mode="xml"))]
        notices = [e.message for e in events if isinstance(e, ErrorNotice)]
        assert notices == ([ARITHMETIC_NOTICE.format(tool="evaluate", claim=marked)] if marked else []), text


async def test_a_named_file_shown_without_a_read_is_content_made_up() -> None:
    """"Read me planting.md." after a listing of the folder: the 0.5B made no call and wrote a planting plan. Where
    a tool reads the folders, a file the message names, shown with no call, did not come from it; an answer that
    shows nothing, or a change asked of the file, is not that claim."""
    in_folders = dataclasses.replace(read_file, places=("/home/me/files",))
    plan = ("The planting plan is as follows:\n\n1. **Tomatoes**: in May.\n2. **Garlic**: in October.\n"
            "3. **Beans**: in June.")
    for message, answer, notices in (
            ("Read me planting.md.", plan, [CONTENT_NOTICE.format(thing="file")]),
            ("Read me planting.md.", "I could not open planting.md, sorry.", []),
            ("What should I plant in May?", plan, []),
            ("Add leeks to planting.md.", plan, [])):
        events = [e async for e in chat_with_llm(Conversation(), message, backend=ScriptedBackend([[answer]]),
                                                 registry=ToolRegistry([in_folders, write_file]),
                                                 options=RallyOptions(mode="xml"))]
        assert [e.message for e in events if isinstance(e, ErrorNotice)] == notices, message
