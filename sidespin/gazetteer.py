"""Where a place is: a city's state, or its country, from GeoNames' data (`scripts/make-gazetteer`).

A small model writes a place as its tool's example does, and takes the example's state with it: for
"What's the weather in Boston?" the 0.5B wrote 'Boston, CA' (the example was 'San Francisco, CA'), for
"… in Tel Aviv" 'Tel Aviv, CA', for "… in Burlingame" 'Burlingame, NY'. Each asks the tool for a place
that does not exist, or for another one. `state_known` puts the place where it is, and
`country_code` writes a country as the two letters a tool asks for ('UK' is 'GB').

The table (`gazetteer.tsv.gz`, 0.4 MB) holds every place of the United States of 1,000 people or
more and every other of 15,000 or more, by its name as GeoNames writes it, with where it is and how
many live there (GeoNames, https://www.geonames.org, CC BY 4.0). It is read on first use, the names
folded (`_key`).
"""

from __future__ import annotations

import functools
import gzip
import re
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from sidespin.patterns import STATES

__all__ = ["country_code", "state_known"]

_TABLE = Path(__file__).with_name("gazetteer.tsv.gz")
_STATE_CODES = frozenset(STATES.values())
_NAMES = {code: name for name, code in STATES.items()}
_DWARFED = 100  # a place of the name a hundredth of the largest's size, or less, is not the one meant
_CITY_CODE = re.compile(r"^([^\W\d_][^,]{0,60}?),\s*([A-Z]{2})$")  # 'Boston, CA'


class Place(NamedTuple):
    where: str  # a state's two letters, or a country's name
    people: int  # thousands
    country: str  # a country's two letters, for a place abroad ("" at home)


@functools.cache
def _places() -> dict[str, tuple[Place, ...]]:
    """The table, by name as looked up (`_key`)."""
    found: dict[str, list[Place]] = {}
    for line in gzip.decompress(_TABLE.read_bytes()).decode().splitlines():
        name, where, people, country = line.split("\t")
        found.setdefault(_key(name), []).append(Place(where, int(people), country))
    return {name: tuple(places) for name, places in found.items()}


_SAINT = re.compile(r"\bst\.?\s+")  # "St. Louis" is "Saint Louis"
_MOUNT = re.compile(r"\bmt\.?\s+")


def _key(name: str) -> str:
    """A place's name as it is looked up: no accents, lower case, "St." and "Mt." written out, no full stops."""
    name = name.replace("đ", "d").replace("Đ", "D")
    name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).lower().strip()
    return _MOUNT.sub("mount ", _SAINT.sub("saint ", name)).replace(".", "")


def state_known(value: Any, schema: dict[str, Any], said: str) -> Any:
    """A place written with the state's two letters of one of its parameter's examples ("such as 'San Francisco,
    CA'"), which the conversation (`said`, in lower case) does not give it, where no place of that name is in that
    state (nor in a country of those letters: 'Vancouver, CA' is Canada's), or only one of a hundredth of the
    largest's size ('Philadelphia, NY'), put in the state, or the country, of the largest place of that name:
    'Boston, CA' → 'Boston, MA', 'Tel Aviv, CA' → 'Tel Aviv, Israel', 'Philadelphia, NY' → 'Philadelphia, PA'.
    A state's name written as a city ('California, CA'), a name no place has, and any other value, as it is."""
    written = _CITY_CODE.match(value) if isinstance(value, str) else None
    description = schema.get("description")
    if written is None or written.group(2) not in _STATE_CODES or not isinstance(description, str):
        return value
    city, code = written.group(1).strip(), written.group(2)
    if not re.search(rf",\s*{code}\b", description) or city.lower() in STATES:
        return value  # a state the model did not take from an example, or no city
    if _NAMES[code] in said or re.search(rf"(?:,|{re.escape(city.lower())})\s*{code.lower()}\b", said):
        return value  # "Boston, CA" said as such, or "in California"
    places = _places().get(_key(city), ())
    largest = max(places, key=lambda place: place.people, default=None)
    there = [place for place in places if code in (place.where, place.country)]
    # a village of the name in that state does not hold it there: 'Philadelphia, NY' (1,000 people, the 0.5B's
    # for "things around Philadelphia", after an example's 'New York, NY') is Philadelphia, PA (1.6 million)
    if largest is None or there and max(place.people for place in there) * _DWARFED >= largest.people:
        return value
    return f"{city}, {largest.where}"


# a parameter that takes a country's two letters: "Use ISO 3166-1 alpha-2 country codes", "the ISO country code
# (2-letter)", "a two-letter country code"
_TAKES_A_CODE = re.compile(r"(?i)\biso[ -]?3166|\balpha-2\b|\b(?:two|2)[- ]letter country|\biso country code")
_NOT_CODES = {"uk": "GB", "great britain": "GB", "britain": "GB", "england": "GB", "usa": "US",
              "united states of america": "US", "america": "US"}  # said for a country, no ISO code


@functools.cache
def _country_codes() -> dict[str, str]:
    """The countries' two letters, by the country's name in lower case, and the two letters themselves."""
    codes = {place.where.lower(): place.country for places in _places().values() for place in places if place.country}
    return {**codes, **{code.lower(): code for code in codes.values()}, **_NOT_CODES}


def country_code(value: Any, schema: dict[str, Any]) -> Any:
    """A country written by its name, or as "UK", for a parameter whose description asks for its ISO two letters,
    as those letters: 'UK' → 'GB' (the 0.5B's, for London's weather where the tool took 'GB'), 'Germany' → 'DE'.
    Anything else as it is."""
    description = schema.get("description")
    if not isinstance(value, str) or not isinstance(description, str) or not _TAKES_A_CODE.search(description):
        return value
    return _country_codes().get(value.strip().lower(), value)
