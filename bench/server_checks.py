"""How bench/bench_servers.py judges: argument matchers for one call, and the checks of a multi-turn script.

Argument matchers (one prompt's `arguments`, a `call_made` check's `arguments`), as in
bench/tool_eval/README.md: a plain value must be present and equal (strings ignore case and
surrounding spaces; numbers must have the same type); `{"any_of": [...]}` one of them;
`{"contains": [...]}` every word in the value's text (case-insensitive; a list or object is
read as its JSON); `{"contains_any": [...]}` at least one.

Checks, judged after the script's last message (`turn` counts the script's messages from 1):

    file_contains   {"path": "{files}/notes/todo.md", "text": "bread"}      the file holds the text
    branch_exists   {"name": "feature-x"}                                   the repository has the branch
    last_commit     {"contains": "see you soon"}                             HEAD's message holds the text
    call_made       {"tool": "echo" or [...], "turn": 1, "arguments": {...}} a call of that tool finished
                                                                             without error (in that turn, or
                                                                             any), its arguments matching
    calls_in_turn   {"turn": 1, "at_least": 2} or {"at_most": 0}            calls that finished in the turn
    answer_contains {"turn": 3, "text": "Ada"}                               the turn's visible answer holds it

`{files}`, `{repo}`, `{memory}` and `{root}` in any string stand for the workspace's paths.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Call", "Played", "arguments_match", "applicable", "fill", "judge", "value_matches", "CHECKS"]

@dataclass
class Call:
    """A call that ran: its tool, arguments, and the error it ended with (None: it succeeded)."""

    tool: str
    arguments: dict[str, Any]
    error: str | None = None


@dataclass
class Played:
    """One turn of a script as the judge sees it: the calls that finished and the visible answer."""

    calls: list[Call] = field(default_factory=list)
    answer: str = ""


# --- matchers ------------------------------------------------------------------------------------


def value_matches(value: Any, spec: Any, present: bool) -> bool:
    """One argument against its expectation."""
    if not isinstance(spec, dict):
        return present and _same(value, spec)
    if "absent_or" in spec:
        return not present or _same(value, spec["absent_or"])
    if not present:
        return False
    text = (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)).lower()
    checks = []
    if "any_of" in spec:
        checks.append(any(_same(value, option) for option in spec["any_of"]))
    if "contains" in spec:
        checks.append(all(str(word).lower() in text for word in spec["contains"]))
    if "contains_any" in spec:
        checks.append(any(str(word).lower() in text for word in spec["contains_any"]))
    return bool(checks) and all(checks)


def _same(value: Any, expected: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(value, str) and value.strip().lower() == expected.strip().lower()
    return value == expected and type(value) is type(expected)


def arguments_match(arguments: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(value_matches(arguments.get(name), spec, name in arguments) for name, spec in expected.items())


def applicable(expected: dict[str, Any], parameters: list[str] | set[str]) -> dict[str, Any]:
    """The matchers that name a parameter of the chosen tool: a prompt that accepts several tools states its
    arguments under each tool's own names (`query` for search_nodes, `names` for open_nodes)."""
    return {name: spec for name, spec in expected.items() if name in parameters}


def fill(value: Any, places: dict[str, str]) -> Any:
    """`value` with `{files}`, `{repo}` ... replaced by the workspace's paths, in every string it holds."""
    if isinstance(value, str):
        for name, path in places.items():
            value = value.replace("{" + name + "}", path)
        return value
    if isinstance(value, list):
        return [fill(item, places) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, places) for key, item in value.items()}
    return value


# --- checks --------------------------------------------------------------------------------------


def judge(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    """Whether one check passes, and a short reason a person can read either way."""
    kind = check["check"]
    if kind not in _JUDGES:
        raise ValueError(f"unknown check {kind!r} (known: {', '.join(CHECKS)})")
    return _JUDGES[kind](check, turns, repo)


def _file_contains(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    path = Path(check["path"])
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False, f"{path.name} does not exist"
    found = check["text"].lower() in text.lower()
    return found, f"{path.name} {'holds' if found else 'lacks'} {check['text']!r}"


def _file_lacks(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    """A text replaced, or removed: the file exists and no longer holds it."""
    held, reason = _file_contains(check, turns, repo)
    return not held and "does not exist" not in reason, reason


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False).stdout


def _branch_exists(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    branches = _git(repo, "branch", "--format=%(refname:short)").split()
    found = check["name"] in branches
    return found, f"branch {check['name']!r} {'exists' if found else 'missing'} (branches: {', '.join(branches)})"


def _last_commit(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    message = _git(repo, "log", "-1", "--format=%s").strip()
    found = check["contains"].lower() in message.lower()
    return found, f"last commit {message!r}"


def _in_turns(check: dict[str, Any], turns: list[Played]) -> list[Played]:
    turn = check.get("turn")
    return turns if turn is None else turns[turn - 1: turn]


def _call_made(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    tools = check["tool"] if isinstance(check["tool"], list) else [check["tool"]]
    expected = check.get("arguments", {})
    calls = [call for played in _in_turns(check, turns) for call in played.calls]
    for call in calls:
        if call.tool in tools and call.error is None and arguments_match(call.arguments, expected):
            return True, f"{call.tool} {_short(call.arguments)}"
    where = f"turn {check['turn']}" if "turn" in check else "the script"
    made = "; ".join(f"{c.tool} {_short(c.arguments)}" + (f" failed: {c.error[:80]}" if c.error else "")
                     for c in calls) or "no call"
    wanted = "/".join(tools) + (f" with {_short(expected)}" if expected else "")
    return False, f"{where}: wanted {wanted}, got {made}"


def _calls_in_turn(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    calls = sum(len(played.calls) for played in _in_turns(check, turns))
    low, high = check.get("at_least", 0), check.get("at_most")
    passed = calls >= low and (high is None or calls <= high)
    return passed, f"turn {check['turn']}: {calls} call(s)"


def _answer_contains(check: dict[str, Any], turns: list[Played], repo: Path) -> tuple[bool, str]:
    answer = " ".join(played.answer for played in _in_turns(check, turns))
    found = check["text"].lower() in answer.lower()
    return found, f"answer {'holds' if found else 'lacks'} {check['text']!r}: {answer[:100]!r}"


_JUDGES = {
    "file_contains": _file_contains, "file_lacks": _file_lacks, "branch_exists": _branch_exists, "last_commit": _last_commit,
    "call_made": _call_made, "calls_in_turn": _calls_in_turn, "answer_contains": _answer_contains,
}
CHECKS = tuple(_JUDGES)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 100 else text[:97] + "..."


def ratio(hits: int, total: int) -> str:
    """"hits/total percent", or "-" for nothing counted."""
    return f"{hits}/{total} {100 * hits / total:5.1f}%" if total else "-"


def p90(values: list[float]) -> float:
    """The 90th percentile of `values` (the one value, or 0.0 for none)."""
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=10, method="inclusive")[-1]
