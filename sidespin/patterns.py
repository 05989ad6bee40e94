"""The form a string argument must take, read off its own schema: the pattern its arguments are written under.

The rules, before the code:

- **A tool that names a form gets it.** A parameter described "the date, in the format 'YYYY-MM-DD'", or
  "Time to convert in 24-hour format (HH:MM)", or given `"format": "date"`, is written under a regular
  expression of that form (llama.cpp turns a JSON schema's `pattern` into the grammar). The 0.5B wrote
  "2023-04-25T00:00:00Z" for a 'YYYY-MM-DD' date, and "Berlin" for a 'City, State' place, where the
  tool's own text said how.
- **Date and time forms** are the letters everyone writes them with (YYYY, MM, DD, HH, mm, SS, MMM,
  AM/PM), the separators between them, and "T", "Z" or " to " as they stand: a quoted or bracketed text
  made of nothing else is a form wherever it appears.
- **A place's form** ('City, State', 'City, Country') is two or three capitalized words joined by
  commas, and counts only right after the word "format": in a description, 'Berkeley, CA' is an example.
- **A place whose state is abbreviated** ("State names must be abbreviated with two letters", "a two-letter
  state") is 'City, ST'. For "Please find a salon in San Francisco." the 0.5B wrote "San Francisco" where the
  tool said so, beside its example 'New York, NY'. Of BFCL's right answers, the 16 values of such parameters
  without another form all end in a state's two letters.
- **A state's name where the tool's examples abbreviate it** ('Berkeley, CA' or 'New York, NY') is its two
  letters (`state_abbreviated`): for "… in Lafayette, Louisiana" the 0.5B wrote "Lafayette, Louisiana". Of BFCL's
  right answers for such parameters, 433 values end in a state's two letters, and each of the 5 that end in its
  name may end in its two letters too.
- **A number a description gives a thing** ("1 for cleaning service, 2 for ironing service", "'1' corresponds to
  Bangkok, '2' to Chiang Mai") is that thing's code (`codes_of`), when the description gives two or more.
- **Several forms** ("'YYYY-MM-DD' or 'MM/DD/YYYY'") are each allowed. Anything else in quotes is not
  a form, and a tool's own `pattern` is not copied: llama.cpp reads only anchored patterns in a subset
  of the syntax, and a pattern it cannot read fails the whole call.
"""

from __future__ import annotations

import re
from typing import Any

from sidespin.tables import words_of

__all__ = ["STATES", "code_named", "codes_of", "pattern_for", "state_abbreviated"]

# each letter group's digits in their range: unranged, the 0.5B began "3 PM" as "3" and had to write "30:00"
_HOUR, _SIXTY, _MONTH, _DAY = "([01][0-9]|2[0-3])", "[0-5][0-9]", "(0[1-9]|1[0-2])", "(0[1-9]|[12][0-9]|3[01])"
_LETTERS = {  # a date or time letter group, longest first; MM and mm next to a colon are minutes
    "YYYY": "[0-9]{4}", "yyyy": "[0-9]{4}", "AM/PM": "(AM|PM)", "am/pm": "(am|pm)", "MMM": "[A-Z][a-z]{2}",
    "MM": _MONTH, "DD": _DAY, "dd": _DAY, "HH": _HOUR, "hh": _HOUR, "mm": _MONTH, "SS": _SIXTY, "ss": _SIXTY,
}
_SEPARATORS = {"-": "-", "/": "/", ":": ":", " ": " ", ",": ",", ".": "\\.", "T": "T", "Z": "Z"}
_PIECE = re.compile("|".join(re.escape(key) for key in [*_LETTERS, " to ", *_SEPARATORS]))
_QUOTED = re.compile(r"'([^'\n]{2,40})'|\"([^\"\n]{2,40})\"|\(([^()\n]{2,40})\)")
_PLACE = re.compile(r"[A-Z][a-z]+(?:, [A-Z][a-z]+){1,2}")
_PLACE_PART = "[^,]{1,60}"
_STATE_ABBREVIATED = re.compile(r"(?i)\bstates?(?: names?)? (?:must|should|is|are) (?:be )?abbreviated|"
                                r"\b(?:two|2)-letter state")
_CITY_STATE = f"{_PLACE_PART}, [A-Z]{{2}}"
_DATE, _TIME = f"[0-9]{{4}}-{_MONTH}-{_DAY}", f"{_HOUR}:{_SIXTY}(:{_SIXTY})?"
_FORMATS = {"date": _DATE, "time": _TIME, "date-time": f"{_DATE}T{_TIME}(Z|[+-]{_HOUR}:{_SIXTY})?"}  # JSON schema's


def pattern_for(schema: dict[str, Any]) -> str | None:
    """The anchored pattern a string property's value must match, from its `format` or the forms its description
    names; None when it names none."""
    forms = [_FORMATS[schema["format"]]] if schema.get("format") in _FORMATS else []
    description = schema.get("description")
    if isinstance(description, str):
        forms += [form for form in map(_form, _quoted(description)) if form and form not in forms]
        if not forms and _STATE_ABBREVIATED.search(description):
            forms.append(_CITY_STATE)
    if not forms:
        return None
    return "^" + (forms[0] if len(forms) == 1 else "(" + "|".join(forms) + ")") + "$"


def _quoted(description: str) -> list[tuple[str, bool]]:
    """Each quoted or bracketed text of a description, and whether the word "format" stands just before it."""
    found = []
    for match in _QUOTED.finditer(description):
        text = next(group for group in match.groups() if group is not None)
        before = description[max(0, match.start() - 20):match.start()].lower()
        found.append((text, "format" in before))
    return found


def _form(quoted: tuple[str, bool]) -> str | None:
    text, after_format = quoted
    if after_format and _PLACE.fullmatch(text):
        return ", ".join(_PLACE_PART for _ in text.split(", "))
    return _date_form(text)


def _date_form(text: str) -> str | None:
    """The pattern of a date or time form ('YYYY-MM-DD', 'HH:MM AM/PM'); None if `text` is anything else."""
    parts, at, letters = [], 0, False
    for piece in _PIECE.finditer(text):
        if piece.start() != at:
            return None
        token = piece.group()
        letters = letters or token in _LETTERS
        minutes = token in ("MM", "mm") and ":" in (text[piece.start() - 1:piece.start()], text[piece.end():][:1])
        parts.append(_SIXTY if minutes else _LETTERS.get(token) or _SEPARATORS.get(token) or token)
        at = piece.end()
    return "".join(parts) if at == len(text) and letters else None


STATES = {  # the United States' two-letter codes, by name
    "alabama": "AL", "alaska": "AK", "arizona": "AZ", "arkansas": "AR", "california": "CA", "colorado": "CO",
    "connecticut": "CT", "delaware": "DE", "district of columbia": "DC", "florida": "FL", "georgia": "GA",
    "hawaii": "HI", "idaho": "ID", "illinois": "IL", "indiana": "IN", "iowa": "IA", "kansas": "KS", "kentucky": "KY",
    "louisiana": "LA", "maine": "ME", "maryland": "MD", "massachusetts": "MA", "michigan": "MI", "minnesota": "MN",
    "mississippi": "MS", "missouri": "MO", "montana": "MT", "nebraska": "NE", "nevada": "NV", "new hampshire": "NH",
    "new jersey": "NJ", "new mexico": "NM", "new york": "NY", "north carolina": "NC", "north dakota": "ND",
    "ohio": "OH", "oklahoma": "OK", "oregon": "OR", "pennsylvania": "PA", "rhode island": "RI",
    "south carolina": "SC", "south dakota": "SD", "tennessee": "TN", "texas": "TX", "utah": "UT", "vermont": "VT",
    "virginia": "VA", "washington": "WA", "west virginia": "WV", "wisconsin": "WI", "wyoming": "WY",
}
_CITY_ST_EXAMPLE = re.compile(r"'[A-Z][a-z]+(?: [A-Z][a-z]+)*, [A-Z]{2}'")  # 'Berkeley, CA', 'New York, NY'
_CITY_THEN_STATE = re.compile(r"^([^,]{1,60}),\s*([A-Za-z][A-Za-z ]{2,30}?)\s*$")


def state_abbreviated(value: Any, schema: dict[str, Any]) -> Any:
    """A place ending in a state's name ("Lafayette, Louisiana"), for a parameter whose description gives a place
    ending in a state's two letters as an example, ending in those letters ("Lafayette, LA"); any other value as
    it is."""
    description = schema.get("description")
    if not isinstance(value, str) or not isinstance(description, str) or not _CITY_ST_EXAMPLE.search(description):
        return value
    place = _CITY_THEN_STATE.match(value)
    code = STATES.get(place.group(2).lower()) if place else None
    return f"{place.group(1).strip()}, {code}" if place and code else value


# "1 for cleaning service", "'2' represents an ironing service", "'3' corresponds to Chonburi", "2 to Chiang Mai",
# "1: Bangkok"; not "from 1 to 100", nor "where 100 is the highest"
_CODE = re.compile(r"""['"]?(\d+)['"]?\s*(?:for|represents|corresponds to|means|=|:|to)\s+(?:an?\s+|the\s+)?"""
                   r"([^\W\d_][\w ]{1,40}?)(?=[,.;)]|\s+and\b|\s+etc\b|$)")
_CODES = 50  # the most codes read off one description


def codes_of(schema: dict[str, Any]) -> dict[str, int]:
    """The things a parameter's description gives numbers for, by thing ({"cleaning service": 1, "ironing service":
    2}), when it gives two or more; else none."""
    description = schema.get("description")
    if not isinstance(description, str):
        return {}
    codes: dict[str, int] = {}
    for found in _CODE.finditer(description):
        codes.setdefault(found.group(2).strip(), int(found.group(1)))
        if len(codes) == _CODES:  # a hostile server's description lists thousands
            break
    return codes if len(codes) >= 2 else {}


def code_named(schema: dict[str, Any], said: str) -> int | None:
    """The number the parameter's description (`codes_of`) gives the one thing the conversation (`said`, in lower
    case) names, or None. A thing is named by the words that tell it from the others ("ironing" of "ironing
    service", "big cleaning" of "big cleaning service", which "cleaning service" then does not name), one told by a
    letter ("Group B") only whole."""
    codes = codes_of(schema)
    if not codes:
        return None
    told = {thing: set(words_of(thing)) for thing in codes}
    parts = set().union(*told.values())
    lengths = {len(part) for part in parts}
    begun = {word[:length] for word in set(words_of(said)) for length in lengths
             if word[:length] in parts}  # "service" begins "services"
    shared = set.intersection(*told.values())  # "service" of every "… service"
    named = []
    for thing, its in told.items():
        telling = its - shared or its
        if any(len(word) < 3 for word in telling):  # "Group B": its "b" said alone is not enough, nor its "a"
            if re.search(rf"(?<![^\W_]){re.escape(thing.lower())}(?![^\W_])", said):
                named.append(thing)
        elif telling <= begun:
            named.append(thing)
    named = [thing for thing in named if not any(told[thing] < told[other] for other in named)]
    return codes[named[0]] if len(named) == 1 else None
