"""bench/bench_bfcl.py's own parts, offline: BFCL's functions as JSON Schema tools, and answers scored by BFCL's checker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (bench/bench_bfcl.py installs it: pip install --no-deps bfcl-eval==2026.3.23)",
)

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_bfcl", ROOT / "bench" / "bench_bfcl.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_bfcl"] = bench  # dataclasses look their module up by name
_spec.loader.exec_module(bench)

TRIANGLE = {  # simple_python_0, as BFCL ships it
    "name": "calculate_triangle_area",
    "description": "Calculate the area of a triangle given its base and height.",
    "parameters": {"type": "dict", "properties": {
        "base": {"type": "integer", "description": "The base of the triangle."},
        "height": {"type": "integer", "description": "The height of the triangle."},
        "unit": {"type": "string", "description": "The unit of measure (defaults to 'units' if not specified)"},
    }, "required": ["base", "height"]},
}
# BFCL's other types, nested: a dict inside an array of dicts, a float array, a tuple, "any", `optional`.
ORDER = {
    "name": "shop.place_order",
    "description": "Place an order.",
    "parameters": {"type": "dict", "properties": {
        "items": {"type": "array", "items": {"type": "dict", "properties": {
            "sku": {"type": "string"}, "price": {"type": "float"}, "extras": {"type": "dict", "properties": {
                "gift": {"type": "boolean"}}}}}},
        "weights": {"type": "array", "items": {"type": "float"}},
        "size": {"type": "tuple", "items": {"type": "integer"}},
        "note": {"type": "any", "optional": True},
    }, "required": ["items"], "optional": ["note"]},
}


def question(category: str, number: str) -> bench.Question:
    return next(q for q in bench.load_category(category) if q.id == f"{category}_{number}")


def test_bfcl_types_become_the_json_schema_types_an_mcp_server_publishes():
    schema = bench.listed_tool(ORDER).input_schema
    assert schema["type"] == "object" and "optional" not in schema
    item = schema["properties"]["items"]["items"]
    assert item["type"] == "object"
    assert item["properties"]["price"] == {"type": "number"}
    assert item["properties"]["extras"]["properties"]["gift"] == {"type": "boolean"}
    assert schema["properties"]["weights"] == {"type": "array", "items": {"type": "number"}}
    assert schema["properties"]["size"] == {"type": "array", "items": {"type": "integer"}}
    assert schema["properties"]["note"] == {"type": "string"}  # BFCL's checker wants a string for "any"
    assert schema["required"] == ["items"]


def test_every_shipped_function_converts_to_a_schema_without_bfcl_types():
    bfcl_only = {"dict", "float", "tuple", "any"}

    def types(schema: dict) -> set[str]:
        found = {schema["type"]} if "type" in schema else set()
        for sub in schema.get("properties", {}).values():
            found |= types(sub)
        return found | (types(schema["items"]) if "items" in schema else set())

    for category in ("simple_python", "live_multiple"):
        for q in bench.load_category(category):
            for function in q.entry["function"]:
                assert not types(bench.listed_tool(function).input_schema) & bfcl_only, q.id


def test_the_registry_offers_the_functions_as_an_mcp_servers_tools_dots_kept():
    with bench.offered([TRIANGLE, ORDER]) as registry:
        assert registry.names() == ["calculate_triangle_area", "shop.place_order"]
        tool = registry.get("shop.place_order")
        assert tool.source == "mcp:bfcl" and tool.required == ["items"]


def test_beside_the_reference_servers_the_functions_come_after_their_tools_and_keep_their_own_names(monkeypatch):
    listed = bench.beside(ROOT / "bench" / "server_eval" / "reference_tools.json")
    assert len(listed) == 52 and {t.source for t in listed} == {
        "mcp:filesystem", "mcp:memory", "mcp:git", "mcp:time", "mcp:everything"}
    echo = {**TRIANGLE, "name": "echo"}  # a question's function named as a reference tool is the question's
    monkeypatch.setattr(bench, "BESIDE", listed)
    with bench.offered([TRIANGLE, echo]) as registry:
        assert len(registry) == 53 and registry.names()[-2:] == ["calculate_triangle_area", "echo"]
        assert registry.get("echo").source == "mcp:bfcl"


def test_a_right_answer_passes_bfcls_checker_and_a_wrong_one_fails_it():
    q = question("simple_python", "1")  # math.factorial(number=5)
    assert bench.judge(q, bench.Answer(calls=[{"math.factorial": {"number": 5}}])) == (True, "")
    right, why = bench.judge(q, bench.Answer(calls=[{"math.factorial": {"number": 6}}]))
    assert not right and "value_error" in why
    right, why = bench.judge(q, bench.Answer(calls=[]))
    assert not right and "wrong_count" in why


def test_parallel_answers_are_checked_in_any_order():
    q = question("parallel_multiple", "0")
    calls = [{"math_toolkit.product_of_primes": {"count": 5}},
             {"math_toolkit.sum_of_multiples": {"lower_limit": 1, "upper_limit": 1000, "multiples": [3, 5]}}]
    assert bench.judge(q, bench.Answer(calls=calls)) == (True, "")
    assert not bench.judge(q, bench.Answer(calls=calls[:1]))[0]
    wrong = [calls[0], {"math_toolkit.sum_of_multiples": {"lower_limit": 1, "upper_limit": 999, "multiples": [3, 5]}}]
    right, why = bench.judge(q, bench.Answer(calls=wrong))  # BFCL explains this one with a dict among its strings
    assert not right and "999" in why


def test_irrelevance_is_right_without_a_call_and_relevance_with_one():
    irrelevant = question("irrelevance", "0")
    relevant = bench.load_category("live_relevance")[0]
    a_call = bench.Answer(calls=[{"anything": {}}])
    assert bench.judge(irrelevant, bench.Answer())[0] and not bench.judge(irrelevant, a_call)[0]
    assert bench.judge(relevant, a_call)[0] and not bench.judge(relevant, bench.Answer())[0]


def test_a_malformed_call_is_wrong_even_where_no_call_is_right():
    right, why = bench.judge(question("irrelevance", "0"), bench.Answer(problem="malformed call: bad JSON"))
    assert not right and why.startswith("malformed")


def test_a_categorys_sample_depends_on_the_seed_not_on_the_other_categories():
    alone = bench.choose_questions(["live_simple"], 5, 0, None)
    with_others = bench.choose_questions(["irrelevance", "live_simple"], 5, 0, None)
    assert [q.id for q in alone] == [q.id for q in with_others if q.category == "live_simple"]
    assert [q.id for q in bench.choose_questions(["live_simple"], 5, 1, None)] != [q.id for q in alone]


def test_visible_call_syntax_is_noticed():
    assert bench.shows_call('I will call math.factorial(number=5) now', ["math.factorial"])
    assert bench.shows_call('{"name": "x", "arguments": {}}', ["x"])
    assert not bench.shows_call("The factorial of 5 is 120.", ["math.factorial"])


async def test_a_multi_turn_tool_runs_on_bfcls_own_classes_and_its_call_joins_the_turn():
    q = question("multi_turn_base", "0")  # GorillaFileSystem and TwitterAPI
    stage = bench.Stage(q, "sidespin_test_stage")
    stage.turns.append([])
    result = await stage.body("cd")(folder="document")
    assert "document" in result and stage.turns == [["cd(folder='document')"]]


def test_multi_turn_answers_are_judged_by_bfcls_state_and_response_checker():
    q = question("multi_turn_base", "0")
    assert bench.judge(q, bench.Answer(turns=[list(turn) for turn in q.truth]), "sidespin_test_right") == (True, "")
    wrong = [[]] + [list(turn) for turn in q.truth[1:]]
    right, why = bench.judge(q, bench.Answer(turns=wrong), "sidespin_test_wrong")
    assert not right and "empty_turn" in why
