"""The times and dates an answer tells, read against the turn's results and the conversation: the current time or
date claimed (`claimed_now`), and a clock time (`misread_time`) or a whole date (`unsaid_dates`) no one gave."""

from __future__ import annotations

import re
from typing import Sequence

__all__ = ["claimed_now", "misread_time", "unsaid_dates", "dates_said"]

MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_ISO_DATE = re.compile(r"(?<!\d)(?<!\d\.)(\d{4})([-./])(\d{1,2})\2(\d{1,2})(?!\.?\d)")
_SLASHED_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
_MONTH = rf"({'|'.join(MONTHS)})[a-z]*\.?"
_NAMED_DATE = re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b")
_DAY_FIRST_DATE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH},? (\d{{4}})\b")
_NOW = (r"\b(?:current(?:ly)?|right now|now|at the moment|today|today's|this morning|tonight|"
        r"actuellement|actuelle?|maintenant|aujourd'hui|ahora|hora actual|fecha actual|actualmente|hoy|"
        r"jetzt|aktuelle?|gerade|heute|adesso|attuale|oggi)\b")
_CLOCK = r"(?<![\d:.,])(?:[01]?\d|2[0-3])(?::[0-5]\d(?::[0-5]\d)?(?:\s?[ap]\.?m\.?)?|\s?[ap]\.?m\.?)(?![\d:])"
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
           "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
           "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
           "januar|februar|märz|juni|juli|oktober|dezember")
_DATE = (rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTHS})\s+\d{{1,2}}\b|\d{{1,2}}\.?\s+(?:de\s+)?(?:{_MONTHS})\b|"
         r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)")
# "The time in Porto, Portugal, is 11:30 AM.", "the local time is 9:15": a place's time told as it is, no "now" needed
_TIME_IS = r"\bthe (?:local |exact )?time (?:(?:in|at|for) [^.!?\n]{1,40}? )?(?:is|would be)\b[^.!?\n\d]{0,12}" + _CLOCK
# a moment a result gives as it is somewhere, with its offset: 2026-11-27T22:59:01+09:00, 2025-03-11 09:30:00+01:00
_RESULT_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):([0-5]\d)(?::\d{2}(?:\.\d+)?)?"
                          r"(Z|[+-]\d{2}:?\d{2})(?![\d:])")
# a clock time an answer or a message gives, with minutes: 22:59, 22:59:01, 7:59 PM, 10:59 p.m. UTC
_TOLD_TIME = re.compile(r"(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?![\d:])(?:\s?([ap])(?:\.m\.|\.?m\b))?"
                        r"(?:\s?(UTC|GMT)\b)?", re.IGNORECASE)


def dates_said(text: str) -> set[str]:
    """The whole dates `text` (lower case) says, as YYYY-MM-DD: 2023-04-22, 05/15/2023, "April 22nd, 2023"…"""
    dates = {(int(y), int(m), int(d)) for y, _, m, d in _ISO_DATE.findall(text)}
    dates |= {(int(y), int(a), int(b)) if int(a) <= 12 else (int(y), int(b), int(a))
              for a, b, y in _SLASHED_DATE.findall(text)}
    dates |= {(int(y), MONTHS.index(m) + 1, int(d)) for m, d, y in _NAMED_DATE.findall(text)}
    dates |= {(int(y), MONTHS.index(m) + 1, int(d)) for d, m, y in _DAY_FIRST_DATE.findall(text)}
    return {f"{y}-{m:02d}-{d:02d}" for y, m, d in dates if 1 <= m <= 12 and 1 <= d <= 31}


def claimed_now(text: str) -> str | None:
    """The sentence of an answer that gives the current time or today's date, or None."""
    return next((sentence.strip() for sentence in re.split(r"(?<=[.!?])\s+|\n+", text)
                 if re.search(_NOW, lowered := sentence.lower()) and re.search(f"{_CLOCK}|{_DATE}", lowered)
                 or re.search(_TIME_IS, lowered)), None)


def misread_time(text: str, results: Sequence[tuple[str, str]], said: str) -> tuple[str, str, str] | None:
    """A clock time the answer tells no moment of `results` nor `said` gives: (as told, tool, returned); or None."""
    moments = [(tool, int(h), int(m), offset) for tool, output in results
               for h, m, offset in _RESULT_TIME.findall(output)]
    if not moments:
        return None
    local = {(h, m) for _, h, m, _ in moments}.union(*map(_readings, _TOLD_TIME.finditer(said)))  # and those said
    utc = {_as_utc(h, m, offset) for _, h, m, offset in moments}
    for found in _TOLD_TIME.finditer(text):
        if not _readings(found) & (utc if found.group(4) else local | utc):
            tool, h, m, offset = moments[0]
            zone = "UTC" if offset.upper() == "Z" or offset.replace(":", "") in ("+0000", "-0000") else f"UTC{offset}"
            return found.group(0).strip(), tool, f"{h:02d}:{m:02d} at {zone}"
    return None


def _readings(found: re.Match[str]) -> set[tuple[int, int]]:
    """The hours and minute a `_TOLD_TIME` may mean: "7:59 PM" is 19:59, "7:59" 07:59 or 19:59, "22:59" itself."""
    hour, minute, half = int(found.group(1)), int(found.group(2)), found.group(3)
    hours = {hour % 12 + (12 if half.lower() == "p" else 0)} if half and hour <= 12 else (
        {hour, hour + 12} if hour < 12 else {hour})
    return {(h % 24, minute) for h in hours}


def unsaid_dates(text: str, results: Sequence[tuple[str, str]], said: str) -> list[str]:
    """The whole dates (`dates_said`) an answer gives that no result nor `said` gives; [] when there is no result."""
    known = " ".join([said, *(output for _, output in results)]).lower()
    return sorted(dates_said(text.lower()) - dates_said(known)) if results else []


def _as_utc(hour: int, minute: int, offset: str) -> tuple[int, int]:
    digits = offset[1:].replace(":", "") or "00"  # "Z": no shift
    shift = (-1 if offset.startswith("-") else 1) * (int(digits[:2]) * 60 + int(digits[2:] or 0))
    return divmod((hour * 60 + minute - shift) % (24 * 60), 60)
