"""Game times as a user writes them (command line, TUI): absolute, a clock time, or relative."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from smalltown.world.model import GAME_TIME_MAX, GAME_TIME_MIN

_REL = re.compile(r"^([+-])(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_UNITS = ("days", "hours", "minutes", "seconds")
_CLOCK = re.compile(r"^(?:day\s*(\d+)\s*)?(?:(\d{1,2}):(\d{2})(?::(\d{2}))?)?$", re.IGNORECASE)
_BARE_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


def parse_when(text: str, now: datetime, start: datetime | None = None) -> datetime:
    """"2023-02-14 08:00" (or with seconds, or a bare date); "+6h", "+1d6h30m" after `now`, "-30m"
    before it; a clock time "9:00" on the first day (`start`'s date; without `start`, now's date);
    "day 2 9:00" (or "day 2": its midnight) counting days from `start`'s (or now's). A time outside
    the game's range (GAME_TIME_MIN to GAME_TIME_MAX: "+99999999d", "day 99999999999") is refused
    with a ValueError as an unreadable one is."""
    try:
        when = _parse(text.strip(), now, start)
    except OverflowError:  # past what a datetime holds (year 9999)
        when = None
    return _bounded(text, when)


def _bounded(text: str, when: datetime | None) -> datetime:
    if when is None or not GAME_TIME_MIN <= when < GAME_TIME_MAX:
        raise ValueError(f"the time {text.strip()[:40]!r} is out of range: game times are from "
                         f"{GAME_TIME_MIN:%Y-%m-%d} to before {GAME_TIME_MAX:%Y-%m-%d}")
    return when


def _number(digits: str) -> int:
    if len(digits) > 12:  # (and int() refuses over 4300 digits with a message of its own)
        raise OverflowError
    return int(digits)


def _parse(text: str, now: datetime, start: datetime | None) -> datetime:
    m = _REL.match(text)
    if m and any(m.groups()[1:]):
        delta = timedelta(**{u: _number(v) for u, v in zip(_UNITS, m.groups()[1:]) if v})
        return now + delta if m.group(1) == "+" else now - delta
    m = _CLOCK.match(text)
    if m and any(m.groups()):
        day, hour, minute, second = m.groups()
        first = (start or now).replace(hour=0, minute=0, second=0, microsecond=0)
        if day is not None and _number(day) < 1:
            raise ValueError(f"cannot read the time {text!r}: days count from 1")
        if hour is not None and (int(hour) > 23 or int(minute) > 59 or int(second or 0) > 59):
            raise ValueError(f"cannot read the time {text!r}: not a clock time")
        return first + timedelta(days=_number(day or "1") - 1, hours=int(hour or 0), minutes=int(minute or 0),
                                 seconds=int(second or 0))
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            pass
    raise ValueError(f"cannot read the time {text[:40]!r}: use 'YYYY-MM-DD HH:MM', '9:00', 'day 2 9:00', "
                     f"or '+6h', '+1d', '-30m'")


def clock_near(text: str, now: datetime, start: datetime | None = None, *, last: bool = False) -> datetime:
    """As `parse_when`, except that a bare clock time ("17:30") is the next time the clock says so
    after `now` (run until it), or with `last` the latest at or before `now` (rewind to it)."""
    m = _BARE_CLOCK.match(text.strip())
    if not m:
        return parse_when(text, now, start)
    hour, minute, second = int(m[1]), int(m[2]), int(m[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{text!r} is not a time of day")
    when = now.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if last:
        return _bounded(text, when if when <= now else when - timedelta(days=1))
    return _bounded(text, when if when > now else when + timedelta(days=1))
