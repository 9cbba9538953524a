"""Parse game times given on the command line: absolute or relative to now."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_REL = re.compile(r"^\+(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
_UNITS = ("days", "hours", "minutes", "seconds")


def parse_when(text: str, now: datetime) -> datetime:
    """"2023-02-14 08:00" (or with seconds, or a bare date) or "+6h", "+1d", "+1d6h30m"."""
    text = text.strip()
    m = _REL.match(text)
    if m and any(m.groups()):
        return now + timedelta(**{u: int(v) for u, v in zip(_UNITS, m.groups()) if v})
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            pass
    raise ValueError(f"cannot read the time {text!r}: use 'YYYY-MM-DD HH:MM' or '+6h', '+1d', '+30m'")
