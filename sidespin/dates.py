"""Dates as a conversation says them and as a small model writes them (for `sidespin.grounding` and
`sidespin.said_values`).

- **A whole date said** is a day, a month and a year, in any of the forms people write
  (`dates_said`): 2023-04-22, 2023.10.2, 05/15/2023 (the day first when the first number cannot be a
  month), "April 22nd, 2023", "the 15th of May 2023"; not a version number's 1.2023.10.2.
- **A date no one said** is a value whose day and month the conversation does not say, where it
  says no date relative to another (`unsaid_date`).
- **A day said relative to today** ("tomorrow", "next month", "this weekend", "in 3 days", "on
  Friday") leaves a required date to the model to work out (`relative_date`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MONTHS", "MONTH_NAMES", "WEEKDAY", "dates_said", "unsaid_date", "relative_date"]

MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()  # a month's first letters say it
MONTH_NAMES = ("january february march april may june july august september october november december").split()
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"  # a day of the week, as a pattern

# 2023-04-22, 2023.10.2, 2023/10/02; not a version's 1.2023.10.2
_ISO_DATE = re.compile(r"(?<!\d)(?<!\d\.)(\d{4})([-./])(\d{1,2})\2(\d{1,2})(?!\.?\d)")
_SLASHED_DATE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")  # 05/15/2023, or 15/05/2023
_MONTH = rf"({'|'.join(MONTHS)})[a-z]*\.?"
_NAMED_DATE = re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b")  # April 22nd, 2023
_DAY_FIRST_DATE = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH},? (\d{{4}})\b")  # 15th of May 2023
# a date, alone or with a time: 2023-04-07, 2023-04-07T10:00:00Z, 04/07/2023 (either order), 7.4.2023
_DATE = re.compile(r"^\s*(?:(\d{4})-(\d{1,2})-(\d{1,2})|(\d{1,2})[/.](\d{1,2})[/.](\d{2,4}))(?:[ T][\d:.+-]*Z?)?\s*$")
# a date said relative to another ("tomorrow", "next week", "for 3 nights"): any date may be meant
_RELATIVE = re.compile(r"\b(?:today|tomorrow|yesterday|tonight|now|next|last|this|upcoming|coming|later|ago|since|"
                       r"until|till|after|before|following|past|within|days?|nights?|weeks?|weekends?|months?|years?|"
                       r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|hoy|mañana|ayer|demain|hier|"
                       r"aujourd'hui|heute|morgen|gestern)\b")
# a day said relative to today: "tomorrow", "next month", "this weekend", "in 3 days", "on Friday"
_RELATIVE_DAY = re.compile(rf"\b(?:today|tomorrow|yesterday|tonight|(?:next|this|last|coming|upcoming|following) "
                           rf"(?:week|weekend|month|year|{WEEKDAY})|in \d+ (?:days?|weeks?|months?)|on {WEEKDAY})\b")


def dates_said(text: str) -> set[str]:
    """The whole dates `text` (lower case) says, as YYYY-MM-DD: "2023-04-22", "2023.10.2", "05/15/2023" (the day
    first when the first number cannot be a month), "April 22nd, 2023", "the 15th of May 2023"."""
    dates = {(int(y), int(m), int(d)) for y, _, m, d in _ISO_DATE.findall(text)}
    dates |= {(int(y), int(a), int(b)) if int(a) <= 12 else (int(y), int(b), int(a))
              for a, b, y in _SLASHED_DATE.findall(text)}
    dates |= {(int(y), MONTHS.index(m) + 1, int(d)) for m, d, y in _NAMED_DATE.findall(text)}
    dates |= {(int(y), MONTHS.index(m) + 1, int(d)) for d, m, y in _DAY_FIRST_DATE.findall(text)}
    return {f"{y}-{m:02d}-{d:02d}" for y, m, d in dates if 1 <= m <= 12 and 1 <= d <= 31}


def unsaid_date(value: Any, said: str) -> bool:
    """Whether a value is a date whose day and month the conversation (`said`, lower case) does not say (as numbers,
    or the month by name), where it says no date relative to another. For "the weather forecast for Paris from April
    1st" the 0.5B wrote an end date of 2023-04-07, and "04", "2023" counted as said. Of the 350 dates of BFCL's right
    answers (eight single-turn categories) none is refused: the 26 not said are said relative to another
    ("tomorrow", "a week later", "for 3 nights") or are a value the tool takes when none is given."""
    match = _DATE.match(value) if isinstance(value, str) else None
    if match is None or _RELATIVE.search(said):
        return False
    iso = match.group(1) is not None
    first, second = (int(match.group(2)), int(match.group(3))) if iso else (int(match.group(4)), int(match.group(5)))
    numbers = {int(n) for n in re.findall(r"\d+", said)}

    def says(month: int, day: int) -> bool:
        return 1 <= month <= 12 and day in numbers and (
            month in numbers or re.search(rf"\b{MONTHS[month - 1]}", said) is not None)

    return not (says(first, second) or (not iso and says(second, first)))


def relative_date(value: Any, said: str) -> bool:
    """Whether a value is a date, where the conversation (`said`, lower case) says a day relative to today ("next
    month", "tomorrow"): a required date is then the model's to work out ("the pop concerts in New York for next
    month": 2023-04-01)."""
    return isinstance(value, str) and _DATE.match(value) is not None and _RELATIVE_DAY.search(said) is not None
