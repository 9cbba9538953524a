"""Small pieces of English the stand-in builds its answers with: clock times in plain words,
word stems for matching a step against an object's name, clipping to a field's limit, and a
seeded pick so that answers vary between agents and days yet repeat exactly for the same inputs.

Everything here works on strings the stand-in derived itself or on world data (names of places
and objects, routine steps, a fact's text); nothing reads prose the mind wrote.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Sequence, TypeVar

from smalltown.lang import gerund
from smalltown.seeded import stable_int
from smalltown.world.model import DAY


T = TypeVar("T")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
STOP = frozenset({"a", "an", "the", "at", "in", "on", "of", "and", "to", "for", "with", "up", "his", "her",
                  "their", "my", "your", "some", "from", "by", "into", "out", "over", "about", "it", "its"})


def minute(hhmm_text: str) -> int:
    """"09:05" -> 545 (a typed HH:MM field; anything else counts as midnight)."""
    try:
        h, m = hhmm_text.split(":")
        return int(h) % 24 * 60 + int(m) % 60
    except ValueError:
        return 0


def minute_of(t: datetime) -> int:
    return t.hour * 60 + t.minute


def clock(m: int) -> str:
    """545 -> "9:05 am", 1080 -> "6 pm": how a person says a time."""
    m %= DAY
    h, mm = divmod(m, 60)
    suffix = "am" if h < 12 else "pm"
    h12 = h % 12 or 12
    return f"{h12}:{mm:02d} {suffix}" if mm else f"{h12} {suffix}"


def when(t: datetime, now: datetime) -> str:
    """A record's time in plain words, as seen from `now`: "this morning at 9 am", "yesterday"."""
    days = (now.date() - t.date()).days
    part = "morning" if t.hour < 12 else "afternoon" if t.hour < 18 else "evening"
    if days == 0:
        return f"this {part} at {clock(minute_of(t))}"
    if days == 1:
        return f"yesterday {part}"
    if 1 < days < 7:
        return f"on {t.strftime('%A')}"
    return f"on {t.strftime('%B')} {t.day}"


def part_of_day(m: int) -> str:
    return "morning" if m < 12 * 60 else "afternoon" if m < 18 * 60 else "evening"


def clip(text: str, n: int) -> str:
    """At most n characters, cut at a word boundary (a field's max_length)."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[: n - 1].rsplit(" ", 1)[0] if " " in text[: n - 1] else text[: n - 1]
    return cut.rstrip(",;:") + "…"


def fit(text: str, n: int) -> str:
    """At most n characters without an ellipsis: plan activities are names of things to do."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n]
    if " " in cut and text[n:n + 1] not in ("", " "):
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:")


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else text + "."


VERBS = frozenset("""eat wipe read write clean tidy wash cook serve chat talk relax watch study work make get take
have drink play listen rest walk sit prepare go check answer help pay sweep paint draw plan rehearse practice
practise sing dance shop buy browse restock sort meet greet welcome stretch brush shower dress sleep call visit
feed water run jog think reflect review teach grade set put open close lock order bake chop stir do fix mend
tend weed pack unpack clear lay mop dust iron fold hang decorate arrange thank say""".split())


def ing(phrase: str) -> str:
    """`gerund` for each verb of a plan phrase: "cook and eat dinner" -> "cooking and eating
    dinner" (a verb after "and" is turned only when it is a common verb)."""
    parts = gerund(phrase).split(" and ")
    out = parts[:1]
    for part in parts[1:]:
        head = part.split(" ", 1)[0].lower()
        out.append(gerund(part) if head in VERBS else part)
    return " and ".join(out)


def first_name(name: str) -> str:
    return name.split()[0] if name.split() else name


def pick(seed: int, options: Sequence[T], *key: object) -> T:
    """A seeded choice: the same key always picks the same option."""
    return options[stable_int(seed, *key) % len(options)]


def stems(word: str) -> set[str]:
    """The forms a word may be matched by: "cooking" -> {"cooking", "cook", "cooke"}, "dishes" ->
    {"dishes", "dishe", "dish"}. Matching by sets of stems (not prefixes) keeps "ready" from
    matching "read" and "bedside" from matching "bed"."""
    w = word.lower().removesuffix("'s")
    out = {w}
    if w.endswith("ies") and len(w) > 4:
        out.add(w[:-3] + "y")
    if w.endswith("es") and len(w) > 3:
        out.add(w[:-2])
    if w.endswith("s") and not w.endswith("ss") and len(w) > 2:
        out.add(w[:-1])
    if w.endswith("ing") and len(w) > 4:
        base = w[:-3]
        out |= {base, base + "e"}
        if len(base) > 2 and base[-1] == base[-2]:
            out.add(base[:-1])
    if w.endswith("ed") and len(w) > 3:
        out |= {w[:-2], w[:-1]}
    return out


def words(text: str) -> list[str]:
    """Content words, lower case, without possessive endings."""
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower().replace("’", "'")) if w not in STOP]


@lru_cache(maxsize=8192)
def stem_set(text: str) -> frozenset[str]:
    """The stems of a text's words; cached, since the same object names and steps are matched
    again and again (frozen, as the cache shares it)."""
    out: set[str] = set()
    for w in words(text):
        out |= stems(w)
    return frozenset(out)


def names_person(text: str, name: str) -> bool:
    """World text (a fact, a place) names this agent: the full name, or the first name as a word."""
    if name in text:
        return True
    first = first_name(name)
    return bool(first) and re.search(rf"\b{re.escape(first)}\b", text) is not None
