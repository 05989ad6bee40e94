"""Catching an answer that says what did not happen: `unfounded` checks it against the turn's calls and results and
gives the notice to show (the answer is kept as written); the checks' classes: docs/tool-use-rules.md. The times and
dates an answer tells are read against the results and the conversation: the current time or date claimed
(`claimed_now`), and a clock time (`misread_time`) or a whole date (`unsaid_dates`) no one gave."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from sidespin.tools import Tool
from sidespin.tooluse.shapes.calculator import asks_calculation, calculates
from sidespin.tooluse.values import MONTHS as MONTH_NAMES, asks_change, reads

__all__ = ["Facts", "unfounded"]  # the checks and notices are named in the docs and read by their tests

NOTICE = ("no tool ran for this answer: what it says a tool returned or did did not come from a tool, "
          "and nothing was done")
NOW_NOTICE = "no tool ran for this answer: the model has no clock, so the current time or date it gives was made up"
REPEAT_NOTICE = ("no tool ran for this answer: it repeats what {tool} returned earlier in the conversation, so "
                 "nothing was read or changed just now")
# not "made up": the model may know it ("Lisbon"); what is sure is where it did not come from
NOTHING_NOTICE = "{tool} found nothing: \"{name}\" in this answer came from no tool result and no message"
FAILED_NOW_NOTICE = "{tool} failed, and the model has no clock: the current time or date this answer gives was made up"
FAILED_NOTICE = "{tool} failed: what this answer shows did not come from it, nor from any other tool"
UNREAD_NOTICE = ("no tool ran for this answer: nothing was read from your folders, so the files it names ({files}) "
                 "are not from them")
ALTERED_NOTICE = "this answer shows what {tool} returned with a line it did not return (\"{line}\"): no tool gave it"
TIME_NOTICE = "this answer gives the time \"{told}\", which {tool} did not return: it returned {given}"
DATE_NOTICE = "this answer gives the date {told}, which no tool returned and no one said"
ACTION_NOTICE = ("no tool changed anything for this answer: what it says was done (\"{claim}\") was not done; ask "
                 "again to have a tool do it")
CONTENT_NOTICE = "no tool read anything for this answer: what it says is in your {thing} did not come from it"
ARITHMETIC_NOTICE = '{tool} was not used for this answer: the model worked out "{claim}" in its head, and may be wrong'
_REPEATED_LINES, _LONG_LINE = 3, 80  # lines of an earlier result an answer repeats to count, or characters of one line

# past tense only: "get_time returns the time" describes a tool, "get_time returned 12:00" reports a result
_VERBS = r"(?:answered|returned|responded|replied|reported|said|gave|showed|came back)"
_RAN = r"(?:I|I've|I have|we)\s+(?:just\s+)?(?:called|ran|run|used|executed|invoked|queried)"
# a file's name: a word, a dot, an extension with a letter (todo.md, notes.txt); not a web address's
_FILE_NAMED = re.compile(r"(?<![\w./@-])([\w-]+(?:\.[\w-]+)*\.(?!(?:com|org|net|io|dev)\b)[a-z][a-z0-9]{1,4})"
                         r"(?![\w/@-]|\.\w)", re.IGNORECASE)
_FILES_ASKED = re.compile(r"(?i)\b(?:files?|folders?|director(?:y|ies)|subfolders?|dossiers?|répertoires?|dateien|"
                          r"datei|ordner|verzeichnis(?:se)?|archivos?|carpetas?|directorios?|cartell[ae])\b")
_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_SHOWN_LINE = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|\"?[\w ]{1,40}\"?\s*:)\s*\S")  # a list item, or "name: value"
# an action reported done: "I've added", "I just saved", "has been created", "j'ai enregistré", "wurde gelöscht"
_DONE = (r"added|appended|saved|stored|created|written|wrote|deleted|removed|updated|edited|changed|renamed|moved|"
         r"copied|committed|staged|inserted|recorded|remembered|noted|memorized|sent|scheduled|booked|replaced|set|"
         r"marked|modified|registered|raised|lowered|increased|decreased|reduced|cleared|dropped|emailed|messaged|texted|"
         r"notified|contacted|invited|paid|posted|published|shipped|forwarded|purchased|bought|reserved|"
         r"printed|given|delivered")
_ACTION = re.compile(
    rf"\b(?:I|we)(?:'ve| have)?\s+(?:just\s+|now\s+|also\s+|successfully\s+)?(?:{_DONE})\b|"
    rf"\b(?:has|have)\s+(?:now\s+)?been\s+(?:successfully\s+)?(?:{_DONE})\b|"
    r"\bj'ai\s+(?:bien\s+)?(?:ajouté|enregistré|créé|supprimé|modifié|noté|mémorisé|écrit)|"
    r"\ba\s+été\s+(?:ajouté|enregistré|créé|supprimé|modifié)e?s?\b|"
    r"\b(?:habe|hab)\s+(?:ich\s+)?[\w ]{0,30}?(?:hinzugefügt|gespeichert|erstellt|gelöscht|geändert|notiert|gemerkt)|"
    r"\bwurde[n]?\s+[\w ]{0,30}?(?:hinzugefügt|gespeichert|erstellt|gelöscht|geändert)|"
    r"\bhe\s+(?:añadido|agregado|guardado|creado|eliminado|borrado|modificado|anotado)|"
    r"\bha\s+sido\s+(?:añadid|agregad|guardad|cread|eliminad|borrad|modificad)[oa]s?\b", re.IGNORECASE)
_CODE_TALK = re.compile(r"(?i)\b(?:below|here is|here's|following|example|function|code|script|snippet)\b|```")
# content told as a thing's: "the file contains", "your memory says", "the table has 12 rows"
_THINGS = r"file|document|table|database|list|memory|memories|notes?|graph|repository|repo|folder|directory"
_HOLDS = re.compile(rf"\b(?:the|your|this|that)\s+(?:[\w-]+\s+)?({_THINGS})\s+(?:currently\s+|now\s+)?"
                    r"(?:contains|holds|has|have|shows|says|lists|includes|reads|stores)\b", re.IGNORECASE)
_QUANTITY = re.compile(r"(?i)\b(?:how (?:many|much)|wie ?viele?|combien|cu[áa]nt[oa]s?|quant[ie])\b")
_RESULT_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w.]*\d)")
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
_DATE = (rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|(?:{MONTH_NAMES})\s+\d{{1,2}}\b|\d{{1,2}}\.?\s+(?:de\s+)?(?:{MONTH_NAMES})\b|"
         r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)")
# "The time in Porto, Portugal, is 11:30 AM.", "the local time is 9:15": a place's time told as it is, no "now" needed
_TIME_IS = r"\bthe (?:local |exact )?time (?:(?:in|at|for) [^.!?\n]{1,40}? )?(?:is|would be)\b[^.!?\n\d]{0,12}" + _CLOCK
# a moment a result gives as it is somewhere, with its offset: 2026-11-27T22:59:01+09:00, 2025-03-11 09:30:00+01:00
_RESULT_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):([0-5]\d)(?::\d{2}(?:\.\d+)?)?"
                          r"(Z|[+-]\d{2}:?\d{2})(?![\d:])")
# a clock time an answer or a message gives, with minutes: 22:59, 22:59:01, 7:59 PM, 10:59 p.m. UTC
_TOLD_TIME = re.compile(r"(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?![\d:])(?:\s?([ap])(?:\.m\.|\.?m\b))?"
                        r"(?:\s?(UTC|GMT)\b)?", re.IGNORECASE)


def claimed_tool(text: str, offered: Iterable[str], called: Sequence[str]) -> str | None:
    """The tool the answer claims ran (or "a tool") though it was not called in the turn, or None."""
    names = sorted({n for n in offered if n}, key=len, reverse=True)
    name_pattern = "|".join(re.escape(n) for n in names) or r"(?!)"
    patterns = (
        rf"\[?result of the tool\s+`?({name_pattern}|\w[\w.\-]*)",
        rf"\bthe tool\s+`?({name_pattern}|\w[\w.\-]*)`?\s+was run\b",  # how results are told (`told_result`)
        rf"(?m)^\s*\[({name_pattern})(?:\s+\{{[^\n]*\}})?\](?:\s+failed:|\s*$)",  # ... and lead (`results_lead`)
        rf"\b(?:the\s+)?(?:tool|function)\s+[`'\"]?({name_pattern})[`'\"]?\s+{_VERBS}",
        rf"\bthe\s+(tool)(?:'s)?\s+(?:{_VERBS}|result|output)",
        rf"[`'\"]?\b({name_pattern})\b[`'\"]?\s+(?:tool\s+)?{_VERBS}\b",
        rf"\b{_RAN}\s+(?:the\s+)?(?:tool\s+|function\s+)?[`'\"]?({name_pattern})\b",
        rf"\baccording to\s+(?:the\s+)?(?:tool\s+)?[`'\"]?({name_pattern})\b")
    claimed = (found.group(1) for pattern in patterns for found in re.finditer(pattern, text, re.IGNORECASE))
    return next((tool for tool in claimed if (tool not in called if tool in names else not called)), None)


def repeated_result(text: str, results: Iterable[tuple[str, str]]) -> str | None:
    """The tool of `results` (earlier ones: name and output) whose output the answer repeats, or None."""
    said = _lines(text)
    return next((tool for tool, output in results if len(common := said & _lines(output)) >= _REPEATED_LINES
                 or any(len(line) >= _LONG_LINE for line in common)), None)


def empty_result(output: str) -> bool:
    """Whether a tool's output holds nothing: blank, or JSON whose every value is empty (`[]`, `{}`, `""`, null)."""
    try:
        return not (text := output.strip()) or _holds_nothing(json.loads(text))
    except ValueError:
        return False


def _holds_nothing(value: Any) -> bool:
    return all(map(_holds_nothing, value.values())) if isinstance(value, dict) else (
        not value if isinstance(value, list) else value is None or value == "")


def named_from_nothing(text: str, results: Sequence[tuple[str, str]], said: str) -> tuple[str, str] | None:
    """All `results` (name, output) empty: the tool, and the answer's first name no result nor `said` has; else None."""
    if not results or not all(empty_result(output) for _, output in results):
        return None
    known = " ".join([said, *(output for _, output in results)]).lower()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        for at, word in enumerate(re.findall(r"[\w'’-]+", sentence)):
            name = word.strip("'’-")
            capital = at > 0 and name[:1].isupper() and name != "I" and len(name) > 1
            named = capital or (name.isdigit() and name != "0")  # "0 results" is what finding nothing says
            if named and not re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", known):
                return results[0][0], name
    return None


def altered_quote(text: str, results: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The tool whose output the answer quotes (three lines or more) with a line of its own between, and that line."""
    written = [line.strip() for line in text.splitlines()]
    for tool, output in results:
        theirs = _lines(output)
        quoted = [i for i, line in enumerate(written) if _line(line) in theirs]
        between = written[quoted[0]:quoted[-1]] if len({_line(written[i]) for i in quoted}) >= _REPEATED_LINES else []
        if own := next((line for line in between if len(_line(line)) >= 3 and _line(line) not in theirs), None):
            return tool, own
    return None


def files_unread(text: str, asked: str, said: str) -> list[str]:
    """The files an answer names outside code that `said` does not, when two or more and `asked` asks about files."""
    named = dict.fromkeys(name for name in _FILE_NAMED.findall(_FENCED.sub(" ", text))
                          if not re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", said.lower()))
    return list(named) if len(named) >= 2 and _FILES_ASKED.search(asked) else []


def file_shown_unread(text: str, asked: str) -> str | None:
    """The first line an answer shows as content (`shown_after_failure`) where `asked` names a file and asks no
    change: with no call, that is a file's content made up ("Read me planting.md." answered with a planting plan)."""
    return shown_after_failure(text) if _FILE_NAMED.search(asked) and not asks_change(asked) else None


def shown_after_failure(text: str) -> str | None:
    """The first line of what an answer shows as content (a fenced block, or three list or "name: value" lines)."""
    lines = [line for line in text.splitlines() if line.strip()]
    fenced = next((i for i, line in enumerate(lines) if line.lstrip().startswith("```")), None)
    if fenced is not None and fenced + 1 < len(lines):
        return lines[fenced + 1].strip()
    shown = [line for line in lines if _SHOWN_LINE.match(line)]
    return shown[0].strip() if len(shown) >= _REPEATED_LINES else None


def _line(line: str) -> str:
    return " ".join(line.split()).lstrip("-+*•# ").lower()


def _lines(text: str) -> set[str]:
    return {line for line in map(_line, text.splitlines()) if len(line) >= 3}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", _FENCED.sub(" ", text)) if s.strip()]


_NOTHING_CHANGED = re.compile(
    r"(?i)\"?\b(?:changes|affected_?rows|rows_?affected|rowcount|row_count|rows_?changed|deleted_?count|"
    r"modified_?count|updated_?count)\"?\s*[:=]\s*0\b|\b(?:0|no|zero)\s+(?:rows?|records?|row\(s\)|entries|documents?)"
    r"\s+(?:were\s+|was\s+)?(?:affected|changed|updated|deleted|modified|removed)\b|\b(?:rows?|records?)\s+"
    r"affected\s*[:=]\s*0\b|\b(?:updated|deleted|changed|modified|removed|affected)\s+0\s+(?:rows?|records?)\b")


def changed_nothing(output: str) -> bool:
    """Whether a tool's result says it changed no row or record ("0 rows affected", `{"changes": 0}`), and no
    other count: such a call backs no action reported done."""
    return bool(_NOTHING_CHANGED.search(output)) and not re.search(
        r"(?i)\b[1-9]\d*\s+(?:rows?|records?)\b|\"?\b(?:changes|affected_?rows|rows_?affected|rowcount)\"?\s*[:=]\s*[1-9]",
        output)


def claimed_action(text: str) -> str | None:
    """The first sentence of an answer that reports an action done, but one that talks about code it shows."""
    return next((s for s in _sentences(text) if _ACTION.search(s) and not _CODE_TALK.search(s)), None)


def claimed_content(text: str) -> tuple[str, str] | None:
    """The first sentence of an answer that tells what a thing holds, and the thing ("file", "table" …)."""
    return next(((s, found.group(1).lower()) for s in _sentences(text) if (found := _HOLDS.search(s))), None)


def unchecked_arithmetic(text: str, asked: str, said: str = "") -> str | None:
    """A number the answer gives that `asked` does not, when `asked` asks for a calculation, or that neither gives
    nor `said` (the conversation and its results), when it asks how many or how much; else None."""
    calculation = asks_calculation(asked)
    if not calculation and not _QUANTITY.search(asked):
        return None
    given = set(_RESULT_NUMBER.findall((asked if calculation else f"{said} {asked}").replace(",", "")))
    return next((n for n in _RESULT_NUMBER.findall(text.replace(",", "")) if n not in given), None)


@dataclass
class Facts:
    """What an answer is checked against: the turn's calls and results, and what the conversation said."""

    text: str  # the answer
    offered: list[Tool]  # the tools offered in the turn
    called: list[str] = field(default_factory=list)  # the names of the turn's calls
    found: list[tuple[str, str]] = field(default_factory=list)  # the turn's results: tool and output
    earlier: list[tuple[str, str]] = field(default_factory=list)  # the conversation's results
    said: str = ""  # what the person, a tool or a call said
    asked: str = ""  # the person's last message


def unfounded(facts: Facts) -> tuple[str, str] | None:
    """What the answer says that did not happen or cannot be known, and the notice to show; None when nothing."""
    if (tool := claimed_tool(facts.text, [t.name for t in facts.offered], facts.called)) is not None:
        return tool, NOTICE
    reading = {t.name for t in facts.offered if reads(t, facts.offered)}  # marked so, or by name where none is
    changed = any(not output.startswith("Error") and name not in reading and not changed_nothing(output)
                  for name, output in facts.found)
    if any(not t.read_only for t in facts.offered) and not changed and (action := claimed_action(facts.text)):
        return action, ACTION_NOTICE.format(claim=action[:80])
    calculators = [t for t in facts.offered if calculates(t)]  # named: one taking a calculation's operands, first
    takers = [t for t in calculators if calculates(t, operands=True)] or calculators
    if takers and not {t.name for t in calculators} & set(facts.called) and (
            number := unchecked_arithmetic(facts.text, facts.asked, facts.said)) is not None:
        return number, ARITHMETIC_NOTICE.format(tool=takers[0].name, claim=number)
    return _after_calls(facts) if facts.called else _without_calls(facts)


def _after_calls(facts: Facts) -> tuple[str, str] | None:
    answered = [(tool, output) for tool, output in facts.found if not output.startswith("Error")]
    if facts.found and not answered:  # every call failed
        for check, notice in ((claimed_now, FAILED_NOW_NOTICE), (shown_after_failure, FAILED_NOTICE)):
            if (claim := check(facts.text)) is not None:
                return claim, notice.format(tool=facts.found[0][0])
    if (nothing := named_from_nothing(facts.text, facts.found, facts.said)) is not None:
        return nothing[1], NOTHING_NOTICE.format(tool=nothing[0], name=nothing[1])
    if (altered := altered_quote(facts.text, facts.found)) is not None:
        return altered[1], ALTERED_NOTICE.format(tool=altered[0], line=altered[1])
    if (misread := misread_time(facts.text, answered, facts.said)) is not None:
        return misread[0], TIME_NOTICE.format(told=misread[0], tool=misread[1], given=misread[2])
    dates = unsaid_dates(facts.text, answered, facts.said)
    return (dates[0], DATE_NOTICE.format(told=dates[0])) if dates else None


def _without_calls(facts: Facts) -> tuple[str, str] | None:
    if (now := claimed_now(facts.text)) is not None:
        return now, NOW_NOTICE
    if any(t.places for t in facts.offered) and (files := files_unread(facts.text, facts.asked, facts.said)):
        return files[0], UNREAD_NOTICE.format(files=", ".join(files[:3]) + (" …" if len(files) > 3 else ""))
    if (source := repeated_result(facts.text, facts.earlier)) is not None:
        return source, REPEAT_NOTICE.format(tool=source)
    if any(t.places for t in facts.offered) and (shown := file_shown_unread(facts.text, facts.asked)):
        return shown, CONTENT_NOTICE.format(thing="file")
    content = claimed_content(facts.text)
    return (content[0], CONTENT_NOTICE.format(thing=content[1])) if content is not None else None


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
