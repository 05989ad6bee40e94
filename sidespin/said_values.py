"""Values written as the conversation says them (for the route, `sidespin.route`).

A small model writes what it was told in its own form: "5%" as 5 where a tool takes 0.05, "8pm" as
18:00, "2023.10.2" as 2023-10-20, a number run on past what was said because its grammar allows only
digits next, a file's path without the folders the message gave, a list that goes round. `as_said`
puts each back as said, before `grounding` judges what is said and what is made up. Each rule is
counted on BFCL's right answers, which it changes none of (docs/tool-use.md, point 5).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

from loguru import logger

from sidespin.dates import dates_said, unsaid_date
from sidespin.edits import replacing_pair
from sidespin.gazetteer import country_code, state_known
from sidespin.grounding import mentioned, numbers_said, unit_asked
from sidespin.patterns import code_named, codes_of, state_abbreviated
from sidespin.tables import telling_words, words_of
from sidespin.tools import Tool
from sidespin.zones import as_zone, names_in, takes_a_zone, zones_of

__all__ = ["as_said", "files_said"]


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|percent\b|per cent\b)")
# "as a decimal", "e.g. 5% is 0.05"; not "a decimal value representing the score as a percentage"
_AS_DECIMAL = re.compile(r"(?:as an?|in|into) decimal|decimal form|fraction|\d%\s*(?:is|=|would be|becomes)\s*0\.\d|"
                         r"default\D{0,12}0\.\d")  # "The level of confidence. Default is 0.9."
_DECIMAL_EXAMPLE = re.compile(r"(?<![\d.])0\.\d+")  # 0.1, beside the 10% it stands for (`_a_percent_as_decimal`)
_PAIRS = 20  # of each looked at (a hostile description may hold thousands)
_AS_PERCENT = re.compile(r"percent|%")  # "the interest rate as a percentage"
_WORDS_LOOP = re.compile(r"(?<!\S)(\S+(?:\s+\S+){0,2}?)(?:\s+\1){3,}(?!\S)")  # `_words_loop_cut`
_RATE = re.compile(r"\b(?:rates?|yields?|returns?|growth|probabilit(?:y|ies)|prob|ratio|discount|inflation|interest|"
                   r"chance)\b")
_UNIT_SAID = re.compile(r"[^\W\d_]{3}")  # a unit said by its words: "kilometers", not "mi" (which "mile" begins)
# a time on the 24-hour clock; "5:30pm" is said as 17:30 too (`said_in`), and not as 05:30
_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?!\d)(?!\s?[ap]\.?m\b)")


def as_said(tool: Tool, arguments: dict[str, Any], said: str, asked: str = "") -> dict[str, Any]:
    """The arguments with sixteen kinds of value written as the conversation (`said`, from `said_in`) says them.

    - A number the message says as a percentage ("an annual interest rate of 5%"), written as that number (5) for a
      parameter of type number that takes a decimal, becomes the decimal (0.05). A parameter takes a decimal when
      its description says so ("as a decimal", "e.g. 5% is 0.05"), or, where it says nothing of percentages, when
      its name or description is a rate, a yield, a return, a probability …. Of BFCL's right answers (eight
      single-turn categories), 52 such values take the decimal and 2 the number as said; where the description says
      "percentage", they are left as written.
    - A whole number no one said whose first digits are a number said, and the rest run on, is that number: a
      number's grammar lets a small model go on only with digits, so for "a loan term of 15, 20 and 30 years" the
      0.5B wrote 152000. It is taken when it is the one number said that the digits begin with, of two digits or
      more (or of one digit, when what follows is another number said: 510 for "the factorial of 5,10 and 15"),
      and what follows is not zeros alone (a round number is a value: BFCL's right answers have `perPage`
      100 where "10" is said). For "10 years …, $10,000" the 0.5B wrote 1000000, the largest number allowed,
      which is left as it is (and refused as made up).
    - A path that ends with the last name of a relative path the message says ("notes/todo.md"), but leaves out
      the folders before it, has them put back: for "What's on my to-do list? It's in notes/todo.md." the 0.5B
      wrote "/…/files/todo.md", which does not exist. A path to a file whose name no one said, where the message
      says one file's path, is that path in the folder written, for a tool that only reads or replaces a text
      (`sidespin.edits.replacing_pair`): for 'In notes/meeting.md, change "Tuesday at 10:00" to …' the 0.5B wrote
      `edit_file` on "/…/files/myfile.txt", refused as made up. Not for one that writes a whole file: its
      "pay_the_electric_bill.txt" for "Put 'pay the electricity bill' on this week's list" became notes/todo.md,
      which "This is a test file." then replaced.
    - A time the model wrote that no one said becomes the one time the conversation says, when it says one and no
      other value of the call has it: for "Reschedule … to November 1, 2023 at 8pm" the 0.5B wrote 18:00, and for
      "… showing on 2023-04-22 at 19:00" 20:00, and for "… the 5:30pm show" 20:30 (a time said with "pm" is said
      as its 24-hour reading only). Of BFCL's right answers, the 11 times not said are said otherwise
      ("noon", "a minute") or follow from one said ("time 9:00, duration 3 hours" ends at 12:00, and the start has
      the 9:00).
    - So does a date whose day and month no one said (`unsaid_date`) become the one whole date the conversation
      says, in the form the model wrote it: for "… the midnight show at 23:00 on 2023.10.2?" the 0.5B wrote
      2023-10-20, and for "… in Seattle, WA on the 15th of May 2023?" 10/15/2023. None of BFCL's right dates is
      one no one said (see `unsaid_date`), so none is changed.
    - A text that lists items and goes round, an item written again (a small model's loop: `cast` "Tzi Ma, Jane
      Doe, Jane Smith, Jane Doe, Jane Smith, …" for "a family film with Tzi Ma"), is the items the conversation
      mentions, once each, when it mentions some. No right string of BFCL's repeats an item. Words written again
      and again are kept as many rounds as the conversation says them in a row (`_words_loop_cut`).
    - A number written without the minus the conversation gives it is negative again (`negatives_said`): for
      "longitude -122.2730" the 0.5B wrote 122.273, and for "37.8651 N, 119.5383 W" a longitude of 119.5383. Of
      BFCL's right answers, the 30 numbers said that way are negative.
    - A value chosen among a tool's allowed ones that the message does not name, where it names exactly one other (a
      word of it, or its first five letters), is that one (`_named_choice`): for "I need you to find me a Family
      Therapist in Walnut Creek." the 0.5B chose `type` "Psychiatrist" of "Psychologist", "Family Counselor" and
      "Psychiatrist". Of BFCL's right answers, each of the 220 required choices where the message names one allowed
      value is that value. An optional one the model chose unnamed was left out as made up (`grounded`): for "a
      regular drama movie at Regal Crow Canyon" the 0.5B's `genre` was not "Drama". An optional choice is named by
      every word of it ("attractions" does not name a `category` "Tourist Attraction": a search for attractions
      filters none). Of BFCL's right answers, 241 optional choices where the message names one allowed value so
      need that value, 43 may be it or left out, and 16 must be another or left out ("pricey" of "not too
      pricey"). Two right calls are changed: that one, and a first wave's "sine" ("sinusoidal") for the "square"
      of the second.
    - A time zone written as its place, or under the wrong area, for a parameter whose description gives a zone's
      IANA name as an example, is that place's zone (`sidespin.zones.as_zone`): with the reference time server the
      0.5B wrote "Los Angeles" for 'America/Los_Angeles', 'America/Mexico' for "Ciudad de México" and
      'Europe/Tokyo', and the server answered "Invalid timezone". Of BFCL's right answers, the 5 values of such
      parameters are zones already. A zone whose place the conversation does not mention, where the message names
      the place of one zone (`sidespin.zones.zones_of`), is that zone: for "What time is it in Lisbon?" the 0.5B wrote
      'Europe/London', the second example of the tool's text.
    - When the message (`asked`) opens by asking to keep something ("Remember that my sister's name is Ada."), a
      text of three words or more that a tool which changes things would keep, and that says a word of four letters
      or more no one said, is what the message asked to keep (`kept_said`): the 0.5B stored "Ada is a beautiful
      woman." with the reference memory server, and the next conversation answered that the sister was Lena.
    - A place ending in a state's name, for a parameter whose examples end in a state's two letters, ends in those
      letters (`sidespin.patterns.state_abbreviated`): "Lafayette, Louisiana" for 'Lafayette, LA'.
    - A place written with the state of its parameter's example, which no one said, where no place of that name
      is, is where the largest place of that name is (`sidespin.gazetteer.state_known`): for "… weather in Boston"
      the 0.5B wrote 'Boston, CA', taking the state of the tool's example 'San Francisco, CA', and 'Tel Aviv, CA'
      for Tel Aviv. Of BFCL's right answers, none is changed ('Vancouver, CA' is Canada's); of the 0.5B's calls in
      twenty samples, eight are right so.
    - A country written by its name, or as "UK", for a parameter whose description asks for its ISO two letters, is
      those letters (`sidespin.gazetteer.country_code`): for London's weather the 0.5B wrote 'UK' where the tool
      takes 'GB'. Of BFCL's right answers, the 4 values of such parameters are 'GB' (one may be 'UK' too).
    - A unit no one said, for a parameter named a unit that lists no allowed values, is the one unit the message
      wants a measure in (`unit_asked`): for "the distance in miles between Mars and Venus" the 0.5B wrote the
      description's default, kilometers. Of BFCL's right answers where the message asks so, 39 units are the one
      said and 5 are not (a message that wants two, a unit named otherwise: 'imperial', "temp_unit"). A unit is
      written as the description spells it, a letter or two longer ('miles' for "in mile"; the 0.5B wrote "mi",
      which no word says), which changes one of those right answers to right and none to wrong.
    - A required value the conversation does not mention, for a parameter whose description says which value to use
      when none is given ("Use 'Europe/Berlin' as local timezone if no timezone provided by the user."), is that
      value, when the message names nothing (`names_in`): for "What time is it?" the 0.5B wrote 'America/New_York',
      the example before it, refused as made up. For "What time is it in Tokyo and in Paris?" the second call's
      'Europe/London' stays a made-up value (and is mended: `sidespin.route`). No BFCL function's required
      parameter says so.
    - A number the parameter's description gives a thing ("1 for cleaning service, 2 for ironing service"), where
      the conversation names exactly one other of its things, is that thing's number
      (`sidespin.patterns.code_named`): for "Help find a housekeeper who provides ironing services in Chonburi
      Province." the 0.5B wrote `province_id` 1, the description's Bangkok, of "1 for Bangkok, 2 for Chiang Mai,
      3 for Chonburi". A thing is named by the words that tell it from the others ("ironing" of "ironing
      service"; "big cleaning" of "big cleaning service", which "cleaning service" then does not name), and one
      told by a letter ("Group B") by saying it whole. Of BFCL's right answers, each of the 61 such numbers where
      the message names one thing is its number.
    """
    percents = {float(n) for n in _PERCENT.findall(said)}
    times = {f"{int(hour):02d}:{minutes}" for hour, minutes in _CLOCK.findall(said)}
    dates = dates_said(said)
    whole = {str(int(n)) for n in numbers_said(said) if n.is_integer()}
    negatives = negatives_said(said)
    words = set(words_of(said))
    names = set(_NAME.findall(said))
    paths = [p for p in _RELATIVE_PATH.findall(said) if re.search(r"[^\W\d_]", p.rsplit("/", 1)[1])]  # not 05/12/2023
    fixed = dict(arguments)
    kept = "" if tool.read_only else kept_said(asked)
    named = names_in(asked)  # "What time is it?" names nothing: the tool's value for none given
    zones = zones_of(named)
    unit = unit_asked(said)
    for name, value in arguments.items():
        schema = tool.parameters.get(name)
        schema = schema if isinstance(schema, dict) else {}
        fixed[name] = _run_on_cut(value, whole)
        if isinstance(value, str):
            fixed[name] = _name_cut(_loop_cut(_words_loop_cut(value, said), said), names)
        if negatives:
            fixed[name] = _said_sign(fixed[name], negatives)
        if isinstance(value, str):
            fixed[name] = _named_choice(fixed[name], schema, words, wholly=name not in tool.required)
        if percents and _takes_a_decimal(name, schema):
            fixed[name] = _decimal(fixed[name], percents)
        if kept:
            fixed[name] = _as_kept(fixed[name], kept, words)
        if isinstance(value, str) and takes_a_zone(schema):
            fixed[name] = as_zone(fixed[name])
            if len(zones) == 1 and not mentioned(fixed[name], said):
                fixed[name] = next(iter(zones))
        fixed[name] = state_known(state_abbreviated(fixed[name], schema), schema, said)
        fixed[name] = country_code(fixed[name], schema)
        if isinstance(value, int) and not isinstance(value, bool) and value in codes_of(schema).values():
            fixed[name] = code_named(schema, said) or fixed[name]
        if name in tool.required and isinstance(value, str) and not named:
            fixed[name] = _instructed(fixed[name], schema, said)
        if paths and isinstance(value, str):
            fixed[name] = _said_path(fixed[name], paths, said, tool.read_only or replacing_pair(tool) is not None)
        others = [v for n, v in arguments.items() if n != name]
        if len(times) == 1 and isinstance(value, str):
            fixed[name] = _said_time(fixed[name], next(iter(times)), others)
        if len(dates) == 1 and isinstance(value, str) and unsaid_date(value, said):
            fixed[name] = _said_date(fixed[name], next(iter(dates)), others)
        if unit and isinstance(value, str) and set(words_of(name)) <= {"unit", "units"} and "enum" not in schema \
                and not (_UNIT_SAID.search(value) and mentioned(value, said)) \
                and not value.lower().startswith(unit):  # "miles" for "in mile"; "mi" is said by no word
            fixed[name] = _spelt(unit, schema)  # "the distance in miles": the 0.5B wrote the description's default
        if fixed[name] != value:
            logger.info("ROUTE_AS_SAID {}.{} {} -> {}", tool.name, name, json.dumps(value, ensure_ascii=False)[:40],
                        json.dumps(fixed[name], ensure_ascii=False)[:40])
    return fixed


_SEGMENT = r"[\w-](?:[\w.-]*[\w-])?"
_RELATIVE_PATH = re.compile(rf"(?<![\w./~-]){_SEGMENT}(?:/{_SEGMENT})+")  # notes/todo.md; not /etc/hosts, nor a URL's


def _said_path(value: str, paths: list[str], said: str, elsewhere: bool) -> str:
    """`value` with the folders of the path said that ends with its name put back; or, when `elsewhere` (the tool
    only reads or replaces a text: it fails rather than lose anything), the one file's path said for a file's name
    no one said."""
    if "/" not in value or "://" in value:  # a file's path, not an address
        return value
    ends = [p for p in paths if p not in value and value.endswith("/" + p.rsplit("/", 1)[1])]
    if len(set(ends)) == 1:
        return value[:-len(ends[0].rsplit("/", 1)[1])] + ends[0]
    files = set(p for p in paths if _EXTENSION.search(p)) if elsewhere else set()
    folder, _, name = value.rpartition("/")
    if len(files) != 1 or not _EXTENSION.search(name) or name.lower() in said:
        return value
    (file,) = files  # a file's name no one said, where the message says one file's path: that path, in its folder
    head, steps = folder + "/", file.split("/")
    for k in range(len(steps) - 1, 0, -1):  # the folders the model wrote of it: "…/files/notes" for "notes/…"
        prefix = "/".join(steps[:k]) + "/"
        if head == prefix or head.endswith("/" + prefix):
            head = head[:-len(prefix)]
            break
    return head + file


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")  # a file's: notes/meeting.md


def files_said(text: str) -> list[str]:
    """The paths of files in a folder that `text` says ("notes/ideas.md"; not 05/12/2023, nor a URL's), each once."""
    return list(dict.fromkeys(p for p in _RELATIVE_PATH.findall(text) if _EXTENSION.search(p)))


def _run_on_cut(value: Any, whole: set[str]) -> Any:
    if not isinstance(value, int) or isinstance(value, bool) or str(abs(value)) in whole:
        return value
    digits = str(abs(value))
    begun = [n for n in whole if digits.startswith(n) and digits[len(n):].strip("0")
             and (len(n) >= 2 or digits[len(n):] in whole)]  # 510 for "the factorial of 5,10 and 15": 5, then 10
    if len(begun) != 1:  # none, or a choice: 1000000 begins both the 10 and the 10000 of "10 years, $10,000"
        return value
    cut = int(begun[0])
    return -cut if value < 0 else cut


_MINUS = re.compile(r"(?<![\w.])[-−](\d+(?:\.\d+)?)")  # -122.2730; not 2023-10-01, nor x-1
_UNSIGNED = re.compile(r"(?<![\w.\-−])\d+(?:\.\d+)?")
# a place's coordinates, latitude then longitude: "37.8651 N, 119.5383 W", "33.9° S and 18.4° E"
# (one way to read the spaces around a degree sign: "\s*°?\s*" took 2.5 s on a number and 20,000 spaces)
_COORDINATES = re.compile(r"(\d+(?:\.\d+)?)\s*(?:°\s*)?([ns])\b[\s,;]*(?:and\s+)?(\d+(?:\.\d+)?)\s*(?:°\s*)?([ew])\b",
                          re.IGNORECASE)


def negatives_said(said: str) -> set[float]:
    """The sizes of the numbers `said` only with a minus sign (-5, and not 5 too), and of the latitudes south and the
    longitudes west of coordinates said with their compass letters."""
    negatives = {float(n) for n in _MINUS.findall(said)} - {float(n) for n in _UNSIGNED.findall(said)}
    for latitude, north_south, longitude, east_west in _COORDINATES.findall(said):
        negatives |= {float(latitude)} if north_south.lower() == "s" else set()
        negatives |= {float(longitude)} if east_west.lower() == "w" else set()
    return negatives


def _said_sign(value: Any, negatives: set[float]) -> Any:
    if isinstance(value, list):
        return [_said_sign(item, negatives) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and any(
            math.isclose(value, n) for n in negatives):
        return -value
    return value


def _spelt(unit: str, schema: dict[str, Any]) -> str:
    """A unit as the parameter's description spells it, when it spells it with a letter or two more ("mile" as
    'miles' or 'kilometers'); else as said."""
    described = schema.get("description")
    spelt = [word for word in words_of(described) if word.startswith(unit) and len(word) <= len(unit) + 2] \
        if isinstance(described, str) else []
    return spelt[0] if spelt else unit


def _named_choice(value: str, schema: dict[str, Any], words: set[str], *, wholly: bool = False) -> str:
    """The one allowed value `words` name, for a `value` they do not; `wholly`: named by every word of it."""
    allowed = [v for v in schema.get("enum") or [] if isinstance(v, str)]
    if len(allowed) < 2 or value not in allowed or _names(value, words):
        return value
    named = [v for v in allowed if _names(v, words, wholly=wholly)]
    return named[0] if len(named) == 1 else value


def _names(value: str, words: set[str], *, wholly: bool = False) -> bool:
    """Whether `words` (a message's) name a value: one of its words that tell something (not the "of" of "Place of
    Worship"), or every one when `wholly`, each as said or by the first five letters of a longer one."""
    named = [w in words or (len(w) >= 5 and any(len(s) >= 5 and s[:5] == w[:5] for s in words))
             for w in telling_words(value)]
    return bool(named) and (all(named) if wholly else any(named))


def _takes_a_decimal(name: str, schema: dict[str, Any]) -> bool:
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    if "number" not in (schema.get("type"), items.get("type")):
        return False
    described = str(schema.get("description") or "").lower()
    if _AS_DECIMAL.search(described) or _a_percent_as_decimal(described):
        return True
    return not _AS_PERCENT.search(described) and bool(_RATE.search(" ".join(words_of(name)) + " " + described))


def _a_percent_as_decimal(described: str) -> bool:
    """Whether a description gives a percentage and its decimal side by side, in either order and any language:
    "Ejemplo: 0.1 para un enganche del 10%" (the 0.5B wrote 20 for "un enganche del 20%")."""
    decimals = [(m.start(), float(m.group())) for m in itertools.islice(_DECIMAL_EXAMPLE.finditer(described), _PAIRS)]
    percents = [(m.start(), float(m.group(1))) for m in itertools.islice(_PERCENT.finditer(described), _PAIRS)]
    return any(abs(at - where) <= 40 and math.isclose(decimal * 100, percent)
               for at, decimal in decimals for where, percent in percents)


def _decimal(value: Any, percents: set[float]) -> Any:
    if isinstance(value, list):
        return [_decimal(item, percents) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and any(
            math.isclose(value, p) for p in percents):
        return value / 100
    return value


def _said_time(value: str, said_time: str, others: list[Any]) -> str:
    written = _CLOCK.findall(value)
    if len(written) != 1 or any(isinstance(o, str) and said_time in o for o in others):
        return value
    hour, minutes = written[0]
    if f"{int(hour):02d}:{minutes}" == said_time:
        return value
    said_hour, said_minutes = said_time.split(":")
    return _CLOCK.sub(said_time if len(hour) == 2 else f"{int(said_hour)}:{said_minutes}", value, count=1)


_WRITTEN_DATE = re.compile(r"^(\s*)(?:(\d{4})-\d{1,2}-\d{1,2}|(\d{1,2})([/.])\d{1,2}\4(\d{4}))")


def _said_date(value: str, said_date: str, others: list[Any]) -> str:
    written = _WRITTEN_DATE.match(value)
    if written is None or any(isinstance(o, str) and said_date in dates_said(o.lower()) for o in others):
        return value
    year, month, day = said_date.split("-")
    space, iso, first, mark = written.group(1), written.group(2), written.group(3), written.group(4)
    if iso is not None:
        date = said_date
    elif int(first) > 12:  # the day first, as written
        date = f"{day}{mark}{month}{mark}{year}"
    else:
        date = f"{month}{mark}{day}{mark}{year}"
    return space + date + value[written.end():]


# the value to use when the message gives none: "Use 'Europe/Berlin' as local timezone if no timezone provided …"
_INSTRUCTED = re.compile(r"(?i)\buse ['\"]([^'\"\n]{1,60})['\"](?: as [^'\".,\n]{1,40})? if (?:no|none)\b")


def _instructed(value: str, schema: dict[str, Any], said: str) -> str:
    found = _INSTRUCTED.search(str(schema.get("description") or ""))
    return found.group(1) if found and not mentioned(value, said) else value


# a message that opens by asking to keep something, and what it asks to keep (in a few languages)
_KEEP = re.compile(r"^\W*(?:(?:please|can you|could you|hey)[\s,]+)*(?:remember|memori[sz]e|keep in mind|don'?t forget|"
                   r"recuerda|merke? dir|souviens-toi|retiens|ricorda(?:ti)?|lembre(?:-se)?)\b[\s,:]*"
                   r"(?:(?:that|que|dass|de que|che)\b[\s,]*)?([^.!?\n]{3,300})", re.IGNORECASE)


def kept_said(asked: str) -> str:
    """What a message that opens by asking to keep something asks to keep: "my sister's name is Ada" for "Remember
    that my sister's name is Ada."; "" for any other message."""
    found = _KEEP.search(asked)
    return found.group(1).strip() if found else ""


def _as_kept(value: Any, kept: str, words: set[str]) -> Any:
    if isinstance(value, str):  # a text of three words or more, not a path nor an address
        if len(value.split()) < 3 or re.search(r"[/\\]", value):
            return value
        return kept if any(len(w) >= 4 and w not in words for w in words_of(value)) else value
    if isinstance(value, list):
        return list(dict.fromkeys(_as_kept(item, kept, words) for item in value)) if all(
            isinstance(item, str) for item in value) else [_as_kept(item, kept, words) for item in value]
    if isinstance(value, dict):
        return {key: _as_kept(item, kept, words) for key, item in value.items()}
    return value


# a name with digits in it, as said: release-1.0, v2, build_7; its run-on: digits, each after a dot, dash or line
_NAME = re.compile(r"(?<![\w.-])(?=[\w.-]*\d)(?=[\w.-]*[^\W\d])[\w-]+(?:\.[\w-]+)*")
_DIGITS_ON = re.compile(r"(?:[.\-_]\d+)+")


def _name_cut(value: str, names: set[str]) -> str:
    if value.strip().lower() in names:
        return value
    begun = [n for n in names if value.lower().startswith(n) and _DIGITS_ON.fullmatch(value[len(n):])]
    return value[:len(begun[0])] if len(begun) == 1 else value


def _words_loop_cut(value: str, said: str) -> str:
    """A text whose words go round (one to three written again and again, four times or more: a small model's loop,
    "Käärijächa cha cha cha cha …" to the length bound for "play me cha cha cha by käärijä") cut to as many rounds as
    the conversation says in a row, when it says them: a song's "la la la la" the model wrote is left as written."""
    loop = _WORDS_LOOP.search(value)
    if loop is None:
        return value
    unit = loop.group(1)
    rounds = re.compile(rf"(?i)(?<!\S){re.escape(unit)}(?:\s+{re.escape(unit)})*(?!\S)")
    said_rounds = max((len(m.group().split()) // len(unit.split()) for m in rounds.finditer(said)), default=0)
    if not said_rounds:
        return value
    return f"{value[:loop.start()]}{' '.join([unit] * said_rounds)}{value[loop.end():]}".strip()


def _loop_cut(value: str, said: str) -> str:
    items = [item.strip() for item in value.split(",")]
    if len(items) < 3 or len(set(items)) == len(items):
        return value
    kept = [item for item in dict.fromkeys(items) if item and mentioned(item, said)]
    return ", ".join(kept) if kept else value
