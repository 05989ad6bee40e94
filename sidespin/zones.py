"""Time zones written as the IANA time zone database names them (for `sidespin.said_values`).

A tool that takes a time zone by its IANA name ('America/New_York') says so with an example in its text. A small
model writes the place instead ("Los Angeles"), or the place under the wrong area ('Europe/Tokyo', 'America/Mexico'
for Mexico City), and the tool fails: the reference time server answered "Invalid timezone: 'No time zone found
with key Los Angeles'". `as_zone` writes such a value as the one zone whose place it names; the database is
Python's own (`zoneinfo`, the system's or the tzdata package's).
"""

from __future__ import annotations

import functools
import re
import unicodedata
import zoneinfo
from typing import Any

__all__ = ["as_zone", "names_in", "takes_a_zone", "zones_of"]

# the areas of the zones that name a place; not the old aliases ('US/Pacific', 'Mexico/General')
_AREAS = ("Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
_ZONE_NAMED = re.compile(rf"\b(?:{'|'.join(_AREAS)})/[A-Za-z_-]+(?:/[A-Za-z_-]+)?")


@functools.cache
def _zones() -> dict[str, str]:
    """Every zone the database knows, by its name in lower case."""
    try:
        return {zone.casefold(): zone for zone in zoneinfo.available_timezones()}
    except OSError:  # no database on this machine: no value is changed
        return {}


@functools.cache
def _by_place() -> dict[str, list[str]]:
    """The zones of the areas that name a place, by the place (`_place`): 'los_angeles': ['America/Los_Angeles']."""
    places: dict[str, list[str]] = {}
    for zone in _zones().values():
        area, _, rest = zone.partition("/")
        if area in _AREAS and rest:
            places.setdefault(_place(rest.rsplit("/", 1)[-1]), []).append(zone)
    return places


def _place(text: str) -> str:
    """A place as the database writes it, in lower case: "Ciudad de México" as 'ciudad_de_mexico'."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[\s-]+", "_", plain.strip()).casefold()


def takes_a_zone(schema: dict[str, Any]) -> bool:
    """Whether a parameter takes a zone's IANA name: its description gives one as an example ("IANA timezone name
    (e.g., 'America/New_York', …)", "in the format of 'Area/Location' (e.g., 'America/Los_Angeles')")."""
    description = schema.get("description")
    return isinstance(description, str) and any(
        match.casefold() in _zones() for match in _ZONE_NAMED.findall(description))


def as_zone(value: Any) -> Any:
    """`value` as the zone it names: a zone in any case as the database writes it ('asia/tokyo'); a place that is a
    zone's place ("Los Angeles", 'Europe/Tokyo' for 'Asia/Tokyo'), or the first words of one place only
    ('America/Mexico' for 'America/Mexico_City'), as that place's zone. Of two names the database gives one place
    ('America/Buenos_Aires', 'America/Argentina/Buenos_Aires'), which it makes one zone, the first in order. Anything
    else is left as written: 'PST', "San Francisco" (no zone's place), 'New' (the first word of several places)."""
    if not isinstance(value, str) or not value.strip():
        return value
    zones = _zones()
    if value.strip().casefold() in zones:
        return zones[value.strip().casefold()]
    place = _place(value.rsplit("/", 1)[-1])
    places = _by_place()
    named = [place] if place in places else [key for key in places if place and key.startswith(place + "_")]
    return sorted(places[named[0]])[0] if len(named) == 1 else value


# a name: capitalised words, one to three ("Lisbon", "Los Angeles", "Ciudad de México" is two names and a word)
_NAME = re.compile(r"(?<![\w'])([A-ZÀ-Þ][\w'-]*(?: [A-ZÀ-Þ][\w'-]*){0,2})")
# what stands before a sentence's first word, read in the three characters before it: nothing but no word, or the
# end of a sentence
_SENTENCE_START = re.compile(r"(?:^|[.!?¿¡:]\s*|\n)\W*$")


def names_in(text: str) -> list[list[str]]:
    """The names a message gives, each as its words: capitalised, not as a sentence's first word ("Wake up" is no
    Pacific/Wake; "In Lisbon, …" names Lisbon)."""
    names = []
    for found in _NAME.finditer(text):
        words = found.group(1).split(" ")
        if _SENTENCE_START.search(text[max(0, found.start() - 3):found.start()]):
            words = words[1:]
        if words:
            names.append(words)
    return names


def zones_of(names: list[list[str]]) -> set[str]:
    """The zones whose places are among a message's `names` (`names_in`): {'Europe/Lisbon'} for "What time is it in
    Lisbon?"."""
    zones = set()
    for words in names:
        named = next((found_zones for k in range(len(words), 0, -1)  # "New York City": New York
                      if (found_zones := _by_place().get(_place(" ".join(words[:k]))))), None)
        if named:
            zones.add(sorted(named)[0])
    return zones
