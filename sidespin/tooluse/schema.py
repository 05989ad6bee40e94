"""The JSON schema a call's arguments are written under: the tool's own in the subset llama.cpp turns into a
grammar, every field bounded (`bounds_for` what was said), a date or time form a string names as a pattern; without
the optional parameters whose values would be dropped whatever they were (`dropped_whatever`); and the values
written mended as the schema and the message say them (`as_said`, `choice_said`, `direction_said`, `as_defaults`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection

from loguru import logger

from sidespin.tools import Tool
from sidespin.tooluse.values import STOP, THOUSANDS, allowed, mentioned, numbers_said, whole_in, words_of

__all__ = ["MAX_STRING", "SHORT_STRING", "Bounds", "arguments_schema", "as_defaults", "as_said", "bounded",
           "bounds_for", "choice_said", "direction_said", "dropped_whatever", "token_budget"]

MAX_STRING = 600  # characters in one string argument (a file's new content fits; a loop stays short)
SHORT_STRING = 120  # ... when the arguments were cut off at MAX_STRING: asked once more
MAX_ITEMS, MOST_ITEMS = 8, 64  # items in one array argument, unless the conversation said a longer list (up to 64)
INTEGER_BOUND = 1_000_000  # |number| where the tool gives no range and the conversation said none larger
DECIMALS = 6  # digits after a number's point, unless the conversation said a number with more
MOST_DECIMALS = 10  # llama.cpp drops a schema whose step is finer than this, silently
_SAID_DECIMALS = re.compile(r"\d(?:\.(\d+))?(?:[eE]-(\d+))?")
_SENTENCE_END = re.compile(r"[.;:!?\n](?!\d)")
_LIST_LINE = re.compile(r"(?:^|\n|\\n)[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+\S")
_SWITCHES = frozenset({"true", "false", "yes", "no"})  # allowed values that are a switch, said by its name
_ORIGIN = frozenset("from origin source start departure src".split())  # a parameter's word for where a way begins
_DESTINATION = frozenset("to destination target end arrival dest dst".split())  # ... and where it ends
_FROM_TO = re.compile(r"\b(?:from|von|de|desde|da|du)\s+(.{2,40}?)\s+(?:to|nach|bis|à|au|a|hasta|al)\s+(.{2,40}?)"
                      r"(?=[,.;!?]|\s+(?:on|at|for|by|this|next|am|le|el|il|in|und|and|et|y)\b|$)")
_HOUR, _SIXTY, _MONTH, _DAY = "([01][0-9]|2[0-3])", "[0-5][0-9]", "(0[1-9]|1[0-2])", "(0[1-9]|[12][0-9]|3[01])"
_LETTERS = {"YYYY": "[0-9]{4}", "yyyy": "[0-9]{4}", "AM/PM": "(AM|PM)", "MM": _MONTH, "DD": _DAY, "dd": _DAY,
            "HH": _HOUR, "hh": _HOUR, "mm": _MONTH, "SS": _SIXTY, "ss": _SIXTY}
_SEPARATORS = {"-": "-", "/": "/", ":": ":", " ": " ", ",": ",", ".": "\\.", "T": "T", "Z": "Z"}
_PIECE = re.compile("|".join(re.escape(key) for key in [*_LETTERS, *_SEPARATORS]))
_FORM_QUOTED = re.compile(r"'([^'\n]{2,40})'|\"([^\"\n]{2,40})\"|\(([^()\n]{2,40})\)")
_LABELS = frozenset("city state country province region town code name".split())  # words of a form's label
_CODED = re.compile(r"[A-Z][^,'\"\n]{0,40}, ([A-Z]{2,3})")  # an example of a name and a code: 'Portland, OR'
_DATE, _TIME = f"[0-9]{{4}}-{_MONTH}-{_DAY}", f"{_HOUR}:{_SIXTY}(:{_SIXTY})?"
_FORMATS = {"date": _DATE, "time": _TIME, "date-time": f"{_DATE}T{_TIME}(Z|[+-]{_HOUR}:{_SIXTY})?"}


@dataclass(frozen=True)
class Bounds:
    """Where a tool gives none: how large a number may be, its digits after the point, and the items a list may hold."""

    largest: int = INTEGER_BOUND
    decimals: int = DECIMALS
    items: int = MAX_ITEMS


def bounds_for(said: str) -> Bounds:
    """The bounds for a conversation (`said`): numbers as large as it said (up to 10**15), as many decimals as it
    wrote (up to `MOST_DECIMALS`), lists as long as its longest (up to `MOST_ITEMS`)."""
    decimals = (len(point or "") + int(power or 0) for point, power in _SAID_DECIMALS.findall(said))
    listed = max([part.count(",") + 1 for part in _SENTENCE_END.split(said)] + [len(_LIST_LINE.findall(said))])
    return Bounds(int(min(max([INTEGER_BOUND, *numbers_said(said)]), 10**15)),
                  min(max([DECIMALS, *decimals]), MOST_DECIMALS), min(max(MAX_ITEMS, listed), MOST_ITEMS))


def arguments_schema(tool: Tool, *, max_string: int = MAX_STRING, bounds: Bounds = Bounds(),
                     leave: Collection[str] = ()) -> dict[str, Any]:
    """The schema arguments are written under: the tool's properties but the optional ones named in `leave`, bounded
    (an untyped one is a string); a text parameter with no allowed values in its schema takes those the tool's
    description lists for it (`listed`)."""
    properties = {name: {"enum": values} if (values := listed(tool, name)) else sub
                  for name, sub in tool.parameters.items() if name in tool.required or name not in leave}
    return _object(properties, [name for name in tool.parameters if name in tool.required], max_string, bounds)


def dropped_whatever(tool: Tool, said: str, asked: str) -> set[str]:
    """The optional parameters `grounded` drops whatever value is written for them (so none need be written): a switch
    whose name `asked`, the person's words, does not say; a number where `said` holds none; a text of allowed values
    none of which `said` mentions."""
    dropped, numbers = set(), bool(numbers_said(said))
    for name, schema in tool.parameters.items():
        if name in tool.required or not isinstance(schema, dict):
            continue
        kind = schema.get("type")
        kinds = set(kind) if isinstance(kind, list) else {kind}
        if kinds <= {"boolean", "null"} and "boolean" in kinds and not mentioned(True, asked, name):
            dropped.add(name)
        elif kinds & {"integer", "number"} and not kinds & {"string", "array", "object"} and not numbers:
            dropped.add(name)
        elif (choices := allowed(schema)) and schema.get("type", "string") == "string" and not any(
                mentioned(c, said, name) for c in choices):
            dropped.add(name)
    return dropped


_DEFAULT = re.compile(r"""(?i)\buse\s+(['"`])([^'"`\n]{1,60})\1\s+(?:as|for)\b[^.]{0,60}?\bif\s+(?:no|not|none)\b|"""
                      r"""\bdefaults?\s*(?:to|is|:|=)\s*(['"`])([^'"`\n]{1,60})\3""")


def as_defaults(tool: Tool, arguments: dict[str, Any], made_up: list[str]) -> dict[str, Any]:
    """`arguments` with every made-up value (`values.invented`) replaced by the one its parameter says to use where the
    person gives none: its schema's `default`, or a quoted value its description says so of ("Use 'Europe/Madrid' as
    local timezone if no timezone provided", "Defaults to 'main'"); `arguments` as they are where one of them says
    none (`core.default_stated`)."""
    fixed = dict(arguments)
    for name in made_up:
        schema = tool.parameters.get(name)
        schema = schema if isinstance(schema, dict) else {}
        if "default" not in schema and not (found := _DEFAULT.search(schema.get("description") or "")):
            return arguments
        fixed[name] = schema["default"] if "default" in schema else found.group(2) or found.group(4)
    return fixed


_AS_DECIMAL = re.compile(r"(?i)(?:as an?|in|into) decimal|decimal form|fraction|\d%\s*(?:is|=|would be)\s*0\.\d|"
                         r"\b(?:rate|ratio|probability)\b")
_RUN_ON = re.compile(r"(.*\d)((?:[.-]0)+)")  # a version and zeros run on past it: "2.1.3.0", "release-1.0.0"


def as_said(tool: Tool, arguments: dict[str, Any], said: str) -> dict[str, Any]:
    """`arguments` with each number written as `said` says it: a percentage as a decimal where its parameter asks one;
    digits run on past a number said cut; two or three numbers said one after another and written run together ("5,
    10" as 510) the first; a version said and written with zeros run on past it ("2.1.3" as 2.1.3.0) as said."""
    percents = {float(n) for n, _ in re.findall(r"(\d+(?:\.\d+)?)\s?(%|percent\b|per cent\b)", said)}
    plain = THOUSANDS.sub("", said)
    fixed = dict(arguments)
    for name, value in arguments.items():
        schema = tool.parameters.get(name)
        run = _RUN_ON.fullmatch(value) if isinstance(value, str) else None  # a version run on with zeros past the
        if run and not whole_in(value.lower(), said) and whole_in(run.group(1).lower(), said):  # one said: 2.1.3.0
            fixed[name] = run.group(1)
        elif isinstance(schema, dict) and isinstance(value, (int, float)) and not isinstance(value, bool):
            described = f"{name} {schema.get('description') or ''}"
            if value in percents and schema.get("type") == "number" and _AS_DECIMAL.search(described) and (
                    "percent" not in described.lower() or "decimal" in described.lower()):
                fixed[name] = value / 100
            elif isinstance(value, int) and not numbers_said(str(value)) & numbers_said(said):
                fixed[name] = _as_numbers_said(value, plain)
        if fixed[name] != value:
            logger.info("TOOLUSE_VALUE_AS_SAID {}.{}: written as the conversation says it", tool.name, name)
    return fixed


def _as_numbers_said(value: int, plain: str) -> int:
    """A whole number no one said, as the numbers of `plain` (what was said, without thousands separators) say it: two
    or three said one after another and run together (510 of "5, 10 and 15"), the first; digits run on past the one
    number of two digits or more it begins with, that number; else `value`."""
    written, listed = str(value), re.findall(r"(?<![\d.])\d+(?![\d.])", plain)  # in the order said
    runs = (listed[i] for i in range(len(listed)) for j in (i + 2, i + 3) if written == "".join(listed[i:j]))
    if (first := next(runs, None)) is not None:
        return int(first)
    begun = [n for n in set(listed) if len(n) >= 2 and written.startswith(n) and written != n]
    return int(begun[0]) if len(begun) == 1 and written[len(begun[0]):].strip("0") else value


def choice_said(tool: Tool, arguments: dict[str, Any], said: str, asked: str) -> dict[str, Any]:
    """`arguments` with a value of a parameter's allowed ones (its enum, or those its description lists) that the
    conversation (`said`) does not say replaced by the one allowed value the person's words (`asked`) say, where they
    say exactly one: a word begun by it, or its words in a row ("moderately priced": `moderate`, not `pricey`). A value
    that is a function word ("all", "any") is not said by that word ("all the PostgreSQL servers": `postgres`)."""
    fixed = dict(arguments)
    for name, value in arguments.items():
        choices = [c for c in allowed(tool.parameters.get(name)) or listed(tool, name) if c.lower() not in _SWITCHES]
        if not isinstance(value, str) or value not in choices or _says(said, value) and value.lower() not in STOP:
            continue
        if len(meant := [c for c in choices if _says(asked, c) and c.lower() not in STOP]) == 1 and meant[0] != value:
            fixed[name] = meant[0]
            logger.info("TOOLUSE_VALUE_AS_SAID {}.{}: the allowed value the message says", tool.name, name)
    return fixed


def _says(text: str, value: str) -> bool:
    words = words_of(value)
    return bool(words) and (f" {' '.join(words)} " in f" {' '.join(words_of(text))} " if len(words) > 1 else any(
        w.startswith(words[0]) for w in words_of(text)))


def direction_said(arguments: dict[str, Any], message: str) -> dict[str, Any]:
    """`arguments` with the values of its one origin and one destination parameter (named from, origin, start, source…
    and to, destination, end, target…) swapped where the message says them the other way round ("from Las Vegas to
    Los Angeles", "von Bern nach Basel", "de Lyon à Nice")."""
    ends = [[n for n in arguments if set(words_of(n)) & kind] for kind in (_ORIGIN, _DESTINATION)]
    if any(len(names) != 1 for names in ends) or ends[0] == ends[1]:
        return arguments
    (origin,), (destination,) = ends
    first, second = (str(arguments[n]).strip().lower() for n in (origin, destination))
    said, text = list(_FROM_TO.finditer(message.lower())), message.lower()
    if len(said) == 1 and first and second and first != second and not re.search(  # nor said as written, too
            rf"{re.escape(first)}\s+(?:to|nach|bis|à|au|a|hasta|al)\s+{re.escape(second)}", text):
        start, end = said[0].group(1).strip(), said[0].group(2).strip()
        if (second in start or start in second) and (first in end or end in first):
            logger.info("TOOLUSE_VALUE_AS_SAID {} and {}: swapped, as the message says them", origin, destination)
            return {**arguments, origin: arguments[destination], destination: arguments[origin]}
    return arguments


def listed(tool: Tool, name: str) -> list[str]:
    """The values a tool's description lists for text parameter `name` without enum, as `name: "a" | "b"`, or as
    `name:` then lines `- "a": …` (a docstring's Args); or under a heading that says the parameter's words, as
    "Available operations: mean, median" or "Supported unit types:" then lines `- length: …`; [] for under two."""
    schema = tool.parameters.get(name) or {}
    if not isinstance(schema, dict) or schema.get("enum") or schema.get("type", "string") != "string":
        return []
    head, value = rf"(?m)^\s*{re.escape(name)}\s*:[ \t]*", r'"([\w.-]+)"'
    inline = re.search(head + rf"((?:{value}[ \t]*(?:\||,|or)[ \t]*)+{value})", tool.description)
    lines = inline or re.search(head + rf"\n((?:[ \t]*-[ \t]*{value}.*\n?)+)", tool.description)
    values = re.findall(value if inline else r"(?m)^[ \t]*-[ \t]*" + value, lines.group(1)) if lines else []
    if not lines:  # a heading: its line says the parameter's words ("unit types" of `unit_type`), then a colon
        heading = r"(?im)^[^:\n]*\b" + r"[\s_-]+".join(map(re.escape, words_of(name))) + r"s?\b[^:\n]*:[ \t]*"
        word = r"[\w.-]*\w"
        inline = re.search(heading + rf"({word}(?:,[ \t]*{word})+)[ \t.]*$", tool.description)
        lines = inline or re.search(heading + rf"\n((?:[ \t]*-[ \t]*{word}.*(?:\n|$))+)", tool.description)
        values = re.findall(word if inline else rf"(?m)^[ \t]*-[ \t]*({word})", lines.group(1)) if lines else []
    return list(dict.fromkeys(values)) if len(values) > 1 else []


def _object(properties: dict[str, Any], required: list[str] | None, max_string: int, bounds: Bounds) -> dict[str, Any]:
    """An object's schema: its properties bounded, no other keys allowed, those of `required` it has required."""
    nested = {name: bounded(sub or {}, max_string, bounds) for name, sub in properties.items()}
    kept = {"required": [name for name in required if name in nested]} if required else {}
    return {"type": "object", "properties": nested, "additionalProperties": False, **kept}


def bounded(schema: dict[str, Any], max_string: int, bounds: Bounds = Bounds()) -> dict[str, Any]:
    """One property's schema in the subset llama.cpp turns into a grammar, with bounds added."""
    for key in ("anyOf", "oneOf"):
        if choices := [c for c in schema.get(key) or [] if isinstance(c, dict) and c.get("type") != "null"]:
            return bounded(choices[0], max_string, bounds)
    if schema.get("enum"):
        return {"enum": list(schema["enum"])}
    if "const" in schema:
        return {"const": schema["const"]}
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "integer":
        return {"type": "integer", "minimum": int(schema.get("minimum", -bounds.largest)),
                "maximum": int(schema.get("maximum", bounds.largest))}
    if kind == "number":
        step = schema.get("multipleOf")
        usable = isinstance(step, (int, float)) and not isinstance(step, bool) and step >= 10.0 ** -MOST_DECIMALS
        return {"type": "number", "minimum": schema.get("minimum", -bounds.largest),
                "maximum": schema.get("maximum", bounds.largest),
                "multipleOf": step if usable else 10.0 ** -bounds.decimals}
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return {"type": "array", "items": bounded(items, max_string, bounds),
                "maxItems": min(int(schema.get("maxItems", bounds.items)), bounds.items)}
    if kind == "object" and schema.get("properties"):
        return _object(schema["properties"], schema.get("required"), max_string, bounds)
    if kind in ("boolean", "object"):
        return {"type": kind}
    if pattern := _pattern_for(schema) if kind in (None, "string") else None:
        return {"type": "string", "pattern": pattern}
    longest = min(int(schema.get("maxLength", max_string)), max_string)
    return {"type": "string", "minLength": min(int(schema.get("minLength", 1)), longest), "maxLength": longest}


def _pattern_for(schema: dict[str, Any]) -> str | None:
    """The anchored pattern of the date or time forms a string's `format` or description names, or of a name and a
    code its examples show ('San Francisco, CA'); None if none."""
    forms = [_FORMATS[schema["format"]]] if schema.get("format") in _FORMATS else []
    if isinstance(description := schema.get("description"), str):
        quoted = [next(g for g in match.groups() if g is not None) for match in _FORM_QUOTED.finditer(description)]
        coded = _coded([a or b for a, b in re.findall(r"'([^'\n]{2,60})'|\"([^\"\n]{2,60})\"", description)])
        forms = list(dict.fromkeys([*forms, *filter(None, [*map(_date_form, quoted), coded])]))
    return "^" + (forms[0] if len(forms) == 1 else "(" + "|".join(forms) + ")") + "$" if forms else None


def _coded(examples: list[str]) -> str | None:
    """The pattern of a name and a code its examples show ('San Francisco, CA', 'Portland, OR': a name, a comma, two
    or three capitals), where every example with a comma but a form's label ('City, State') has that form."""
    shown = [e for e in examples if "," in e and not set(re.findall(r"\w+", e.lower())) <= _LABELS]
    codes = [_CODED.fullmatch(e) for e in shown]
    if not codes or not all(codes):
        return None
    sizes = sorted({len(m.group(1)) for m in codes if m})
    return r"[^,\n]{1,60}, [A-Z]{" + ",".join(map(str, dict.fromkeys([sizes[0], sizes[-1]]))) + "}"


def _date_form(text: str) -> str | None:
    """The pattern of a date or time form ('YYYY-MM-DD', 'HH:MM'); None if `text` is anything else."""
    parts, at, letters = [], 0, False
    for piece in _PIECE.finditer(text):
        if piece.start() != at:
            return None
        token = piece.group()
        letters = letters or token in _LETTERS
        minutes = token in ("MM", "mm") and ":" in (text[piece.start() - 1:piece.start()], text[piece.end():][:1])
        parts.append(_SIXTY if minutes else _LETTERS.get(token) or _SEPARATORS[token])
        at = piece.end()
    return "".join(parts) if at == len(text) and letters else None


def token_budget(schema: dict[str, Any]) -> int:
    """Enough tokens for any answer the schema admits at a few characters a token, capped."""
    budget = 12
    for sub in schema.get("properties", {}).values():
        kind = sub.get("type")
        budget += 12 if kind not in ("string", "array", "object") else 8 + (
            sub.get("maxLength", MAX_STRING) // 2 if kind == "string" else
            sub.get("maxItems", MAX_ITEMS) * 24 if kind == "array" else token_budget(sub))
    return min(budget, 512)
