"""Catching an answer that claims a tool ran when it did not.

A small model that has seen tool results earlier in a conversation sometimes writes one
itself: "The tool read_file answered: …" in a turn where nothing ran (nothing was read,
nothing written). Such a claim is found in the answer's text and the turn says so with a
visible notice; the answer is kept as written, so the transcript stays what happened.

A claim is a sentence that has a tool (by the word "tool" or "function", or by a name that
is offered) answering, returning or being run, or that copies the way results are told to
the model ("The tool … was run with … and gave:", once "[result of the tool …"). It counts
when no call was made in the turn, or when the tool it names was not among the turn's calls.

An answer in a turn where no tool was called that gives the current time or today's date is
caught too (`claimed_now`): a model has no clock, so the time it states was made up ("The
current time in Tokyo is 10:00."), with a time tool offered or not. A sentence counts when it
has a word for now (current, currently, right now, at the moment, today, in five languages)
and a clock time (10:00, 3 PM) or a date (2024-05-14, May 14, Monday).

So is an answer in such a turn that repeats an earlier tool result (`repeated_result`): three of
its lines, or one of 80 characters or more. Asked "Now add bread to that list, in the same file"
after a `read_file`, the 0.5B made no call and answered with the file's lines and "- bread"
among them: the file looked changed, and nothing was written. The notice says where the lines
came from and that nothing was read or changed just now; a reminder of an earlier result gets it
too, and it is as true there.

So is one that gives it after calls that all failed: "The current time in Ciudad de México is 10:00 AM."
after `get_current_time` had failed on "America/Mexico". After calls that all failed, an answer that shows
content as a result (`shown_after_failure`: a fenced block, or three lines or more of a list or of
"name: value") is caught too: "Get the structured weather content for Chicago." had `read_file` fail on a
file that does not exist, and the 0.5B answered "The structured weather content for Chicago is as follows:"
with a JSON block of made-up readings.

An answer after calls that all found nothing (every result empty: `[]`, `{"entities": [], "relations": []}`,
blank) that names something no message and no result said is caught too (`named_from_nothing`): asked "What is
my sister's name?", the 0.5B searched the memory, found nothing, and answered "My sister's name is Alice." A
name is a capitalised word inside a sentence, or a number other than 0; the notice says which tool found nothing.

An answer in a turn where no tool was called that names files no message named (two or more: notes.txt, todo.md),
to a message that asks about a folder or files while a server that works in folders is connected, is caught too
(`files_unread`): asked "Which files are in the notes folder?", the 0.5B made no call and answered "The notes
folder contains several files, including: 1. **notes.txt** … 2. **notes.md** …". The notice says that nothing
was read from the person's folders, so the files named are not from them: true of a how-to answer too.

An answer that quotes a result of its turn (three of its lines or more) with a line of its own inside the
quote is caught too (`altered_quote`): "Now add bread to that grocery list" had the 0.5B read the file again and
answer with its lines, "- bread" among them. The file had not changed; the notice names the line no tool gave.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from sidespin.dates import MONTH_NAMES, WEEKDAY, dates_said

__all__ = ["claimed_tool", "claimed_now", "repeated_result", "named_from_nothing", "empty_result", "altered_quote",
           "unfounded", "files_unread", "NOTICE", "NOW_NOTICE", "REPEAT_NOTICE", "NOTHING_NOTICE", "ALTERED_NOTICE",
           "FAILED_NOW_NOTICE", "FAILED_NOTICE", "UNREAD_NOTICE", "TIME_NOTICE", "DATE_NOTICE", "shown_after_failure",
           "misread_time", "unsaid_dates"]

NOTICE = ("no tool ran for this answer: what it says a tool returned or did did not come from a tool, "
          "and nothing was done")
NOW_NOTICE = ("no tool ran for this answer: the model has no clock, so the current time or date it gives "
              "was made up")
REPEAT_NOTICE = ("no tool ran for this answer: it repeats what {tool} returned earlier in the conversation, so "
                 "nothing was read or changed just now")
# not "made up": after a call no one needed ("What's the capital of Portugal?" searched the memory), the 1.5B's
# "Lisbon" came from what it knows; what is sure is where it did not come from
NOTHING_NOTICE = "{tool} found nothing: \"{name}\" in this answer came from no tool result and no message"
FAILED_NOW_NOTICE = ("{tool} failed, and the model has no clock: the current time or date this answer gives was "
                     "made up")
FAILED_NOTICE = "{tool} failed: what this answer shows did not come from it, nor from any other tool"
UNREAD_NOTICE = ("no tool ran for this answer: nothing was read from your folders, so the files it names ({files}) "
                 "are not from them")
ALTERED_NOTICE = "this answer shows what {tool} returned with a line it did not return (\"{line}\"): no tool gave it"
TIME_NOTICE = "this answer gives the time \"{told}\", which {tool} did not return: it returned {given}"
DATE_NOTICE = "this answer gives the date {told}, which no tool returned and no one said"
_REPEATED_LINES = 3  # lines of one earlier result an answer repeats before it counts
_LONG_LINE = 80  # ... or characters of one line it repeats

# past tense only: "get_time returns the time" describes a tool, "get_time returned 12:00" reports a result
_VERBS = r"(?:answered|returned|responded|replied|reported|said|gave|showed|came back)"
_RAN = r"(?:I|I've|I have|we)\s+(?:just\s+)?(?:called|ran|run|used|executed|invoked|queried)"


def claimed_tool(text: str, offered: Iterable[str], called: Iterable[str]) -> str | None:
    """The tool the answer claims ran (or "a tool") though it was not called in the turn, or None."""
    names = sorted({n for n in offered if n}, key=len, reverse=True)
    made = set(called)
    name_pattern = "|".join(re.escape(n) for n in names) or r"(?!)"
    patterns = (
        rf"\[?result of the tool\s+`?({name_pattern}|\w[\w.\-]*)",
        rf"\bthe tool\s+`?({name_pattern}|\w[\w.\-]*)`?\s+was run\b",  # how results are told (`told_result`)
        rf"\b(?:the\s+)?(?:tool|function)\s+[`'\"]?({name_pattern})[`'\"]?\s+{_VERBS}",
        rf"\bthe\s+(tool)(?:'s)?\s+(?:{_VERBS}|result|output)",
        rf"[`'\"]?\b({name_pattern})\b[`'\"]?\s+(?:tool\s+)?{_VERBS}\b",
        rf"\b{_RAN}\s+(?:the\s+)?(?:tool\s+|function\s+)?[`'\"]?({name_pattern})\b",
        rf"\baccording to\s+(?:the\s+)?(?:tool\s+)?[`'\"]?({name_pattern})\b",
    )
    for pattern in patterns:
        for found in re.finditer(pattern, text, re.IGNORECASE):
            tool = found.group(1)
            if (tool not in made) if tool in names else not made:
                return tool
    return None


_NOW = (r"\b(?:current(?:ly)?|right now|now|at the moment|today|today's|this morning|tonight|"
        r"actuellement|actuelle?|maintenant|aujourd'hui|ahora|hora actual|fecha actual|actualmente|hoy|"
        r"jetzt|aktuelle?|gerade|heute|adesso|attuale|oggi)\b")
_CLOCK = r"(?<![\d:.,])(?:[01]?\d|2[0-3])(?::[0-5]\d(?::[0-5]\d)?(?:\s?[ap]\.?m\.?)?|\s?[ap]\.?m\.?)(?![\d:])"
_MONTHS = ("|".join(MONTH_NAMES) + "|"
           "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
           "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
           "januar|februar|märz|juni|juli|oktober|dezember")
_DATE = (rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTHS})\s+\d{{1,2}}\b|\d{{1,2}}\.?\s+(?:de\s+)?(?:{_MONTHS})\b|"
         rf"{WEEKDAY}\b)")


# "The time in Porto, Portugal, is 11:30 AM.", "the local time is 9:15": a place's time told as it is, no "now" needed
_TIME_IS = (r"\bthe (?:local |exact )?time (?:(?:in|at|for) [^.!?\n]{1,40}? )?(?:is|would be)\b[^.!?\n\d]{0,12}"
            + _CLOCK)


def claimed_now(text: str) -> str | None:
    """The sentence of an answer that gives the current time or today's date, or None."""
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        lowered = sentence.lower()
        if re.search(_NOW, lowered) and (re.search(_CLOCK, lowered) or re.search(_DATE, lowered)) or re.search(
                _TIME_IS, lowered):
            return sentence.strip()
    return None


def repeated_result(text: str, results: Iterable[tuple[str, str]]) -> str | None:
    """The tool of `results` (earlier ones: name and output) whose output the answer repeats, or None."""
    said = _lines(text)
    for tool, output in results:
        common = said & _lines(output)
        if len(common) >= _REPEATED_LINES or any(len(line) >= _LONG_LINE for line in common):
            return tool
    return None


def empty_result(output: str) -> bool:
    """Whether a tool's output holds nothing: blank, or JSON whose every value is empty (`[]`, `{}`, `""`, null)."""
    text = output.strip()
    if not text:
        return True
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return _holds_nothing(value)


def _holds_nothing(value: Any) -> bool:
    if isinstance(value, dict):
        return all(_holds_nothing(item) for item in value.values())
    if isinstance(value, list):
        return not value
    return value is None or value == ""


def named_from_nothing(text: str, results: Sequence[tuple[str, str]], said: str) -> tuple[str, str] | None:
    """When every one of the turn's `results` (name and output) is empty: the first name of the answer (a
    capitalised word inside a sentence, or a number) that neither the results nor what was `said` hold, with
    the tool that found nothing; else None."""
    if not results or not all(empty_result(output) for _, output in results):
        return None
    known = " ".join([said, *(output for _, output in results)]).lower()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        words = re.findall(r"[\w'’-]+", sentence)
        for at, word in enumerate(words):
            name = word.strip("'’-")
            capital = at > 0 and name[:1].isupper() and name != "I" and len(name) > 1
            named = capital or (name.isdigit() and name != "0")  # "0 results" is what finding nothing says
            if named and not re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", known):
                return results[0][0], name
    return None


def altered_quote(text: str, results: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The tool of `results` (name and output) whose output the answer quotes, three of its lines or more, with a
    line of its own between two quoted ones, and that line as the answer wrote it; else None."""
    written = [line.strip() for line in text.splitlines()]
    for tool, output in results:
        theirs = _lines(output)
        quoted = [i for i, line in enumerate(written) if _line(line) in theirs]
        if len({_line(written[i]) for i in quoted}) < _REPEATED_LINES:
            continue
        for line in written[quoted[0]:quoted[-1]]:
            if len(_line(line)) >= 3 and _line(line) not in theirs:
                return tool, line
    return None


# a file's name: a word, a dot, an extension with a letter (todo.md, notes.txt); not a web address's
_FILE_NAMED = re.compile(r"(?<![\w./@-])([\w-]+(?:\.[\w-]+)*\.(?!(?:com|org|net|io|dev)\b)[a-z][a-z0-9]{1,4})"
                         r"(?![\w/@-]|\.\w)", re.IGNORECASE)
_FILES_ASKED = re.compile(r"(?i)\b(?:files?|folders?|director(?:y|ies)|subfolders?|dossiers?|répertoires?|dateien|"
                          r"datei|ordner|verzeichnis(?:se)?|archivos?|carpetas?|directorios?|cartell[ae])\b")
_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def files_unread(text: str, asked: str, said: str) -> list[str]:
    """The files an answer names outside code (a name with an extension) that nothing `said` names, when they are
    two or more and the message (`asked`) asks about files or a folder; else []."""
    if not _FILES_ASKED.search(asked):
        return []
    known = said.lower()
    named = dict.fromkeys(name for name in _FILE_NAMED.findall(_FENCED.sub(" ", text))
                          if not re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", known))
    return list(named) if len(named) >= 2 else []


_SHOWN_LINE = re.compile(r"^\s*(?:[-*•+]|\d+[.)]|\"?[\w ]{1,40}\"?\s*:)\s*\S")  # a list item, or "name: value"


def shown_after_failure(text: str) -> str | None:
    """What an answer shows as content (a fenced block, or three lines or more of a list or of "name: value"),
    its first line; None when it shows none. Read after calls that all failed: no tool gave it."""
    lines = [line for line in text.splitlines() if line.strip()]
    fenced = next((i for i, line in enumerate(lines) if line.lstrip().startswith("```")), None)
    if fenced is not None and fenced + 1 < len(lines):
        return lines[fenced + 1].strip()
    shown = [line for line in lines if _SHOWN_LINE.match(line)]
    return shown[0].strip() if len(shown) >= _REPEATED_LINES else None


def _line(line: str) -> str:
    """A line as compared: lowercase, spaces collapsed, list and diff marks dropped."""
    return " ".join(line.split()).lstrip("-+*•# ").lower()


def _lines(text: str) -> set[str]:
    """A text's lines as compared (`_line`), three characters at least."""
    lines = (_line(line) for line in text.splitlines())
    return {line for line in lines if len(line) >= 3}


# a moment a result gives as it is somewhere, with its offset: 2026-11-27T22:59:01+09:00, 2025-03-11 09:30:00+01:00
_RESULT_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]([01]\d|2[0-3]):([0-5]\d)(?::\d{2}(?:\.\d+)?)?"
                          r"(Z|[+-]\d{2}:?\d{2})(?![\d:])")
# a clock time an answer or a message gives, with minutes: 22:59, 22:59:01, 7:59 PM, 10:59 p.m. UTC
_TOLD_TIME = re.compile(r"(?<![\d:.,])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?![\d:])(?:\s?([ap])(?:\.m\.|\.?m\b))?"
                        r"(?:\s?(UTC|GMT)\b)?", re.IGNORECASE)


def misread_time(text: str, results: Sequence[tuple[str, str]], said: str) -> tuple[str, str, str] | None:
    """A clock time the answer gives that the turn's `results` (name and output), which give moments with their
    offsets (the reference time server's `datetime`, a commit's date), do not, nor what was `said`: the time as
    the answer wrote it, the tool, and what it returned. A time is theirs at its own offset or as UTC; told with
    "UTC" or "GMT" it must be the UTC one. The 0.5B answered "The time in Tokyo is 22:59:01 UTC." for 22:59 at
    +09:00, and "7:59 PM" in Ciudad de México for 07:59. Times without minutes ("3 PM") are not read. None when
    no result gives a moment."""
    moments = [(tool, int(h), int(m), offset) for tool, output in results
               for h, m, offset in _RESULT_TIME.findall(output)]
    if not moments:
        return None
    told = {(hour, minute) for found in _TOLD_TIME.finditer(said) for hour, minute in _readings(found)}
    local = {(h, m) for _, h, m, _ in moments} | told
    utc = {_as_utc(h, m, offset) for _, h, m, offset in moments}
    for found in _TOLD_TIME.finditer(text):
        known = utc if found.group(4) else local | utc
        if not _readings(found) & known:
            tool, h, m, offset = moments[0]
            return found.group(0).strip(), tool, f"{h:02d}:{m:02d} at {_offset_name(offset)}"
    return None


def _readings(found: re.Match[str]) -> set[tuple[int, int]]:
    """The hours and minute a clock time found by `_TOLD_TIME` may mean: "7:59 PM" is 19:59, "7:59" 07:59 or
    19:59, "22:59" only itself."""
    hour, minute, half = int(found.group(1)), int(found.group(2)), found.group(3)
    hours = {hour % 12 + (12 if half.lower() == "p" else 0)} if half and hour <= 12 else (
        {hour, hour + 12} if hour < 12 else {hour})
    return {(h % 24, minute) for h in hours}


def unsaid_dates(text: str, results: Sequence[tuple[str, str]], said: str) -> list[str]:
    """The whole dates (day, month and year) an answer gives that no result of the turn (name and output) and
    nothing `said` gives, in any form (`dates_said`), as YYYY-MM-DD: asked "Wie groß ist die Datei budget.csv und
    wann wurde sie zuletzt geändert?", the 0.5B read the file, not its details, and answered that it was changed
    "on February 29, 2023". [] when the turn has no result."""
    if not results:
        return []
    known = dates_said(" ".join([said, *(output for _, output in results)]).lower())
    return sorted(dates_said(text.lower()) - known)


def _as_utc(hour: int, minute: int, offset: str) -> tuple[int, int]:
    if offset.upper() == "Z":
        return hour, minute
    sign = -1 if offset.startswith("-") else 1
    digits = offset[1:].replace(":", "")
    shift = sign * (int(digits[:2]) * 60 + int(digits[2:] or 0))
    total = (hour * 60 + minute - shift) % (24 * 60)
    return total // 60, total % 60


def _offset_name(offset: str) -> str:
    return "UTC" if offset.upper() == "Z" or offset.replace(":", "") in ("+0000", "-0000") else f"UTC{offset}"


def unfounded(text: str, offered: Iterable[str], called: Iterable[str],
              earlier: Iterable[tuple[str, str]] = (), found: Sequence[tuple[str, str]] = (),
              said: str = "", asked: str = "", folders: bool = False) -> tuple[str, str] | None:
    """What an answer says that did not happen or cannot be known, with the notice to show; None when nothing:
    a tool's result without its call (`claimed_tool`); when calls were made, the time now or content shown after
    calls that all failed (`claimed_now`, `shown_after_failure`), a name no one `said` after results
    that all found nothing (`found`: the turn's, name and output; `named_from_nothing`), or a quote of one of them
    with a line of its own (`altered_quote`), or a clock time or a date none of them gave (`misread_time`,
    `unsaid_dates`); when nothing was called, the time now (`claimed_now`), files a message (`asked`) about files or
    a folder got named while a server works in `folders` (`files_unread`), or an `earlier` result (name and output)
    repeated (`repeated_result`)."""
    made = list(called)
    tool = claimed_tool(text, offered, made)
    if tool is not None:
        return tool, NOTICE
    if made:
        answered = [(tool, output) for tool, output in found if not output.startswith("Error")]
        if found and not answered:  # every call failed
            now = claimed_now(text)
            if now is not None:
                return now, FAILED_NOW_NOTICE.format(tool=found[0][0])
            shown = shown_after_failure(text)
            if shown is not None:
                return shown, FAILED_NOTICE.format(tool=found[0][0])
        nothing = named_from_nothing(text, found, said)
        if nothing is not None:
            return nothing[1], NOTHING_NOTICE.format(tool=nothing[0], name=nothing[1])
        altered = altered_quote(text, found)
        if altered is not None:
            return altered[1], ALTERED_NOTICE.format(tool=altered[0], line=altered[1])
        misread = misread_time(text, answered, said)
        if misread is not None:
            return misread[0], TIME_NOTICE.format(told=misread[0], tool=misread[1], given=misread[2])
        dates = unsaid_dates(text, answered, said)
        return (dates[0], DATE_NOTICE.format(told=dates[0])) if dates else None
    now = claimed_now(text)
    if now is not None:
        return now, NOW_NOTICE
    files = files_unread(text, asked, said) if folders else []
    if files:
        return files[0], UNREAD_NOTICE.format(files=", ".join(files[:3]) + (" …" if len(files) > 3 else ""))
    source = repeated_result(text, earlier)
    return (source, REPEAT_NOTICE.format(tool=source)) if source is not None else None
