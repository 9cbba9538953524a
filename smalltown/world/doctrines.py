"""Finding a doctrine's keywords (and memes) in text: the one matcher the mind, eval and the
stand-in's checks use, so that a level computed anywhere is the same level.

A keyword matches as a whole word or phrase, in any case: "Pasta" is found in "pasta!", "Pasta's"
and "pasta-themed" but not inside "Pastafarian"; "Spaghetti Monster" is found across any run of
white space ("spaghetti\\n monster") but not as "Spaghetti-Monster" or "Monster Spaghetti"."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from smalltown.world.model import Doctrine


@lru_cache(maxsize=4096)
def _pattern(keyword: str) -> re.Pattern[str] | None:
    words = keyword.split()
    if not words:
        return None  # a blank keyword matches nothing (world check refuses one)
    # (?<!\w) / (?!\w) rather than \b: a keyword that starts or ends with a sign ("C++") still
    # has to stand alone, and one of letters cannot match inside a longer word
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)


def keywords_in(keywords: Iterable[str], text: str) -> list[str]:
    """The keywords that occur in `text` (whole words, any case, phrases across white space), in
    the order given, each once."""
    found: list[str] = []
    for k in keywords:
        pattern = _pattern(k)
        if pattern is not None and k not in found and pattern.search(text):
            found.append(k)
    return found


def level_in(doctrine: Doctrine, text: str) -> int:
    """The highest level of `doctrine` a keyword of which occurs in `text`; 0 for none."""
    for level in range(len(doctrine.levels), 0, -1):
        if keywords_in(doctrine.levels[level - 1], text):
            return level
    return 0


def level_name(doctrine: Doctrine, level: int) -> str:
    """The name of a level ("" for 0, the unconverted)."""
    return doctrine.level_names[level - 1] if 0 < level <= len(doctrine.level_names) else ""
