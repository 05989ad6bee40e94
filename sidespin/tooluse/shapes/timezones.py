"""The `timezones` shape: a parameter whose description gives an IANA zone example; rules: docs/tool-use-rules.md.

- `timezones.as_zone`: a zone in another case, a zone's place, or its first words (or a place's words parted by "/",
  "Mexico/City"), is that zone.
- `timezones.translated`: a place in another language is the zone of the place clearly nearest in meaning and spelling.
- `timezones.place_named`: a zone no one said, or a zone parameter left out, is the first place named the answer's
  calls have not used yet.
- `timezones.now_asked`: a question of the time or date now reads a zone tool's table, a call down to `NAMED_FLOOR`.
- `timezones.elsewhere`: a zone no one said, where the message names places none of which its name holds, is no call.
- `timezones.time_asked`: a zone tool is not named for a message that says nothing of time (a word of time, a date, a
  clock time, in five languages; "17 times 23" is none) unless it follows up a zone tool's call in a few words: a
  place is not a time asked ("Which customers live in Lyon?")."""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
import zoneinfo
from typing import Any, Sequence

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import FOLLOW_UP, Decision, Shape
from sidespin.tooluse.relevance import Embedder, meant
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import mentioned, words_of

__all__ = ["TimeZones", "as_zone", "zones_named"]

_AREAS = ("Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific")
_ZONE_NAMED = re.compile(rf"\b(?:{'|'.join(_AREAS)})/[A-Za-z_-]+(?:/[A-Za-z_-]+)?")
_NAME = re.compile(r"(?<![\w'])([A-ZÀ-Þ][\w'-]*(?: [A-ZÀ-Þ][\w'-]*){0,2})")  # one to three capitalised words
_SENTENCE_START = re.compile(r"(?:^|[.!?¿¡:]\s*|\n)\W*$")
_CALENDAR = frozenset("""january february march april may june july august september october november december jan feb
mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri
sat sun""".split())
_NOW = re.compile(r"(?i)\b(?:what time|time is it|today'?s date|date today|what day is it|current (?:time|date)|"
                  r"quelle heure|quel jour sommes|qu[ée] hora|qu[ée] d[íi]a es hoy|qu[ée] fecha es|wie sp[äa]t|"
                  r"welcher tag ist heute|welches datum|che ore|che giorno [èe] oggi)\b")
_TIME = re.compile(  # a word of time, a date, a clock time: in English, French, German, Spanish, Italian
    r"(?i)(?<!\w)(?:time(?:s(?!\s*\d))?|hours?|clocks?|o'clock|dates?|days?|today|tonight|tomorrow|yesterday|now|"
    r"when|late|early|"
    r"(?:time)?zones?|minutes?|weeks?|months?|years?|morning|afternoon|evening|noon|midnight|dst|gmt|utc|"
    r"heures?|jours?|aujourd'hui|demain|hier|maintenant|quand|fuseau|semaines?|mois|ann[ée]es?|matin|soir|midi|minuit|"
    r"uhr\w*|zeit\w*|datum|tage?|heute|morgen|gestern|jetzt|wann|sp[äa]t\w*|wochen?|monat\w*|jahr\w*|abend|mittag|"
    r"horas?|fechas?|d[íi]as?|hoy|mañana|ayer|ahora|cu[áa]ndo|semanas?|mes(?:es)?|años?|tarde|noche|"
    r"ore?|giorn[oi]|oggi|domani|ieri|adesso|quando|\d{1,2}[:h.]\d\d|\d{1,2}\s?[ap]\.?m\.?)(?!\w)")
_CAPITALS = re.compile(r"[A-Z]+\.?$")  # "EST", "UTC", "PM": no place
_SPELLED = 0.5  # how alike the spellings of a name and the place it says in another language are at least


@functools.cache
def _zones() -> dict[str, str]:
    return {zone.casefold(): zone for zone in zoneinfo.available_timezones()}


def _place(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[\s-]+", "_", plain.strip()).casefold()


@functools.cache
def _by_place() -> dict[str, list[str]]:
    """The zones of areas that name places, by their place ('los_angeles': ['America/Los_Angeles'])."""
    places: dict[str, list[str]] = {}
    for zone in _zones().values():
        area, _, rest = zone.partition("/")
        if area in _AREAS and rest:
            places.setdefault(_place(rest.rsplit("/", 1)[-1]), []).append(zone)
    return places


def takes_a_zone(schema: Any) -> bool:
    """Whether a parameter's description gives a zone's IANA name as an example."""
    description = schema.get("description") if isinstance(schema, dict) else None
    return isinstance(description, str) and any(z.casefold() in _zones() for z in _ZONE_NAMED.findall(description))


def as_zone(value: Any) -> Any:
    """`value` as the zone it names (`timezones.as_zone`), or as it is."""
    if not isinstance(value, str) or not value.strip():
        return value
    if value.strip().casefold() in _zones():
        return _zones()[value.strip().casefold()]
    for place in (_place(value.rsplit("/", 1)[-1]), _place(value.replace("/", " "))):  # its last part, else all of it
        named = [place] if place in _by_place() else [k for k in _by_place() if place and k.startswith(place + "_")]
        if len(named) == 1:
            return sorted(_by_place()[named[0]])[0]
    return value


def _names_in(text: str) -> list[list[str]]:
    """The names a message gives, each as its words (a sentence's first word is not one)."""
    names = []
    for found in _NAME.finditer(text):
        words = found.group(1).split(" ")
        words = words[1:] if _SENTENCE_START.search(text[max(0, found.start() - 3):found.start()]) else words
        if words and not all(w.lower().rstrip(".") in _CALENDAR or _CAPITALS.match(w) for w in words):
            names.append(words)
    return names


def _translated(name: str, embedder: Embedder) -> list[str] | None:
    """The zones of the place `name` names in another language (`timezones.translated`), or None."""
    place = _place(meant(name, [p.replace("_", " ").title() for p in _by_place()], embedder) or "")
    alike = bool(place) and difflib.SequenceMatcher(None, _place(name), place).ratio() >= _SPELLED
    return _by_place()[place] if alike else None


def zones_named(text: str, embedder: Embedder | None = None) -> tuple[list[str], list[str]]:
    """The zones whose places `text` names, in order (with `embedder`, in any language), and its names of no place."""
    zones, others = [], []
    for words in _names_in(text):
        found = next((z for k in range(len(words), 0, -1) if (z := _by_place().get(_place(" ".join(words[:k]))))), None)
        if not found and embedder is not None:
            found = _translated(" ".join(words), embedder)
        if found:
            zones.append(sorted(found)[0])
        else:
            others.append(" ".join(words))
    return list(dict.fromkeys(zones)), others


class TimeZones(Shape):
    id = "timezones"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(takes_a_zone(schema) for tool in tools for schema in tool.parameters.values())

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        return "timezones.now_asked" if _NOW.search(decision.talk.last) and self.applies(tools) else None

    def unasked(self, decision: Decision, tool: Tool) -> str | None:
        talk = decision.talk
        if not self.applies([tool]) or _TIME.search(talk.last) or any(
                w.lower() in _CALENDAR for w in words_of(talk.last)):
            return None
        zone_called = any(self.applies([t]) for t in decision.tools if t.name == talk.last_called)
        return None if zone_called and len(words_of(talk.last)) <= FOLLOW_UP else "timezones.time_asked"

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool = decision.names[call.name]
        arguments = dict(call.arguments)
        zones, others = zones_named(decision.talk.last, decision.embedder)
        translated = set(zones) - set(zones_named(decision.talk.last)[0]) if decision.embedder else set()
        zones = [zone for zone in zones if all(zone not in c.arguments.values() for c in decision.calls)]
        for name, value in call.arguments.items():
            if not isinstance(value, str) or not takes_a_zone(tool.parameters.get(name)):
                continue
            if (zone := as_zone(value)) != value:
                decision.notes.append("timezones.as_zone")
            left = [z for z in zones if z not in arguments.values()]  # nor by this call's other zones
            if not mentioned(zone, decision.said, name) and left:
                zone = left[0]
                decision.notes.append("timezones.place_named")
                if zone in translated:  # said in another language: now said in its own
                    decision.notes.append("timezones.translated")
                    decision.said = f"{decision.said} {zone}"
            elif not mentioned(zone, decision.said, name) and others and all(
                    not set(words_of(_place(other).replace("_", " "))) & set(words_of(zone)) for other in others):
                logger.info("TOOLUSE_REFUSED timezones.elsewhere {}.{}={!r}: the message names another place",
                            call.name, name, zone)
                decision.notes.append("timezones.elsewhere")
                return None
            arguments[name] = zone
        for name in (n for n, schema in tool.parameters.items() if n not in arguments and takes_a_zone(schema)):
            if left := [z for z in zones if z not in arguments.values()]:  # left out: a place named is its zone
                arguments[name] = left[0]
                decision.notes.append("timezones.place_named")
        return ToolCall(call.name, arguments, call.id)
