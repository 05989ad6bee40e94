"""The current time in a time zone."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from sidespin.errors import ToolFailed
from sidespin.tools import tool


@tool(read_only=True)
def get_time(timezone: str = "UTC") -> dict:
    """Get the current date and time in a time zone.

    Args:
        timezone: an IANA time zone name such as "Europe/Paris" or "America/New_York"
    """
    try:
        zone = ZoneInfo(timezone.strip())
    except (ZoneInfoNotFoundError, ValueError):
        close = sorted(z for z in available_timezones() if timezone.strip().lower() in z.lower())[:5]
        hint = f"; did you mean {', '.join(close)}?" if close else "; use a name like Europe/Paris"
        raise ToolFailed(f"unknown time zone {timezone!r}{hint}") from None
    now = datetime.now(zone)
    return {"timezone": str(zone), "iso": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A")}
