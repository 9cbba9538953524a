"""Names: what a world file may call an agent or a place (checked by world/schema.py, their
uniqueness by world/load.py), and the agent a user names (on the command line, in a form): a full
or a first name, any case; a name that is none of the town's says which one the user probably meant.

Two names are one name when they read the same: compared after Unicode NFKC and case folding,
white space runs as one space ("Ada Byrne", "ada  byrne", "Ａｄａ Ｂｙｒｎｅ").
A name must show what it is: no invisible or format characters, not only white space, and no
letters from two look-alike scripts (a Latin name with a Cyrillic "е" in it)."""

from __future__ import annotations

import difflib
import unicodedata
from collections import Counter
from typing import Iterable, Iterator, Sequence


class NoSuchAgent(ValueError):
    """A name that is no agent's, or the first name of more than one: a usage error."""


# Letters that are not Cf yet show nothing (Default_Ignorable_Code_Point letters and marks, and
# blanks drawn as nothing): Hangul fillers, the combining grapheme joiner, Khmer inherent vowels,
# the Mongolian free variation selectors, variation selectors, the braille blank.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u034f\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800"
                       + "".join(map(chr, range(0xFE00, 0xFE10))) + "".join(map(chr, range(0xE0100, 0xE01F0))))
# Scripts whose letters pass for one another (Latin "a", Cyrillic "а", Greek "α"; "o", "о", "ο"):
# a name may use any one of them, with letters of other scripts (CJK, Arabic ...) if it likes.
LOOKALIKE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "CHEROKEE", "COPTIC")
# Cyrillic and Greek letters drawn as Latin ones: two names alike but for these look the same
# ("Tom" and "Том" do not; "TOP" and Cyrillic "ТОР" do), and are refused as one name.
_LOOKS_LATIN = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁһӏԛԝ" "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιν",
    "ABESIJKMHOPCTXYaesijopcxydhlqw" "ABEZHIKMNOPTYXoiv")


def name_key(name: str) -> str:
    """What two names that are one name share: NFKC, case folded, white space runs as one space."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return " ".join(folded.split())


def looks_key(name: str) -> str:
    """What two names that look the same share: their key, Cyrillic and Greek look-alikes of Latin
    letters read as the Latin ones."""
    return name_key(unicodedata.normalize("NFKC", name).translate(_LOOKS_LATIN))


def _script(c: str) -> str | None:
    """The look-alike script of a letter, or None (not a letter, or another script)."""
    if not unicodedata.category(c).startswith("L"):
        return None
    word = unicodedata.name(c, "").split(" ")[0]
    return word if word in LOOKALIKE_SCRIPTS else None


def name_problem(name: str) -> str | None:
    """What is wrong with `name` as an agent's or a place's name, or None."""
    for c in name:
        cat = unicodedata.category(c)
        if cat in ("Cc", "Zl", "Zp") or c in '"\\':
            return (f"{c!r} is not allowed in a name: names are one line, without control characters, "
                    f"double quotes or backslashes")
        if cat in ("Cf", "Cn", "Co", "Cs") or c in _INVISIBLE:
            what = unicodedata.name(c, "unassigned" if cat == "Cn" else "private use" if cat == "Co" else "")
            return (f"U+{ord(c):04X} ({what or 'a format character'}) is not allowed in a name: it is "
                    f"invisible (or shows differently in different places); type the name without it")
    if not any(unicodedata.category(c)[0] in "LNPS" for c in name):
        return "blank: a name needs a letter, a digit or a sign, not only white space"
    if name != name.strip():
        return f"{name!r} starts or ends with white space: remove it"
    letters = [(c, s) for c in unicodedata.normalize("NFKC", name) if (s := _script(c))]
    scripts = Counter(s for _, s in letters)
    if len(scripts) > 1:
        main = scripts.most_common(1)[0][0]
        odd = ", ".join(f"{c!r} ({unicodedata.name(c).lower()})" for c in dict.fromkeys(c for c, s in letters if s != main))
        return (f"{_said(name)!r} mixes letters of look-alike scripts ({', '.join(s.title() for s in scripts)}): "
                f"{odd[:300]} among {main.title()} letters; write the name in one script")
    return None


def _first(name: str) -> str:
    words = name_key(name).split(" ")
    return words[0]


def _said(name: str) -> str:
    """A name the user typed, as a message quotes it: bounded (a command line may be long), what
    shows nothing or passes for a space as its code ("\\u200b", "\\u3000")."""
    def seen(c: str) -> str:
        hidden = c != " " and (unicodedata.category(c) in ("Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp")
                               or c in _INVISIBLE)
        return c.encode("ascii", "backslashreplace").decode("ascii") if hidden else c
    return "".join(map(seen, name[:80])) + ("…" if len(name) > 80 else "")


def agent_named(name: str, names: Sequence[str]) -> str:
    """The full name of the agent `name` names: its full name or its first name, any case (as
    name_key compares names). Any other answer is a NoSuchAgent."""
    want = name_key(name)
    if not want:
        raise NoSuchAgent(f'no agent "{_said(name)}": give an agent\'s name (agents: {", ".join(names)})')
    hits = [n for n in names if name_key(n) == want] or [n for n in names if _first(n) == want]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise NoSuchAgent(f'"{_said(name)}" is the first name of '
                          + " and ".join(f'"{n}"' for n in hits)
                          + ": give the full name")
    guess = did_you_mean(want, names) if len(want) <= 200 else None  # (no name is longer than 120)
    if guess:
        raise NoSuchAgent(f'no agent "{_said(name)}"; did you mean "{guess}"?')
    raise NoSuchAgent(f'no agent "{_said(name)}" (agents: {", ".join(names)})')


def suggestion(word: str, choices: Iterable[str]) -> str:
    """'; did you mean "X"?' when one of `choices` (a world's keys, sectors, arenas, objects) is
    close to a misspelt `word`, any case, as for agents' names; else ''."""
    options = {name_key(c): c for c in choices}
    close = difflib.get_close_matches(name_key(word), list(options), n=1, cutoff=0.6) if len(word) <= 200 else []
    return f'; did you mean "{options[close[0]]}"?' if close else ""


def places(sectors: dict) -> list[str]:
    """Every place a world file may name: each sector, and each 'sector:arena'."""
    return [p for name, s in sectors.items() for p in (name, *(f"{name}:{a}" for a in s.arenas))]


def did_you_mean(name: str, names: Sequence[str]) -> str | None:
    """The agent whose full or first name is closest to `name` (misspelt, a letter dropped), if
    any is close enough."""
    spellings: dict[str, str] = {}
    for full in names:
        if name_key(full):
            spellings.setdefault(name_key(full), full)
            spellings.setdefault(_first(full), full)
    close = difflib.get_close_matches(name_key(name), list(spellings), n=1, cutoff=0.6)
    return spellings[close[0]] if close else None


def clashes(names: Sequence[str]) -> Iterator[tuple[int, int]]:
    """(i, j) for each name i that is one with an earlier name j (read the same, or look the same)."""
    seen: dict[str, int] = {}
    looks: dict[str, int] = {}
    for i, name in enumerate(names):
        key, look = name_key(name), looks_key(name)
        if key in seen or look in looks:
            yield i, seen.get(key, looks.get(look, 0))
        seen.setdefault(key, i)
        looks.setdefault(look, i)


def _escaped(name: str) -> str:
    """A name with every character beyond ASCII as its code (to tell two that print alike apart)."""
    return "'" + name.encode("ascii", "backslashreplace").decode("ascii") + "'"


def clash_message(kind: str, name: str, other: str, line: int | None, where: str = "") -> str:
    """Why `name` (of a `kind`, `where`: " in sector") is refused as the same name as `other` (at `line`)."""
    at = f" (line {line})" if line else ""
    if name == other:
        return f"duplicate {kind} name {name!r}{where}" + (f" (first at line {line})" if line else "")
    if name_key(name) == name_key(other):
        spelt = ""
        if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", other):  # (they print alike)
            spelt = f" (spelt {_escaped(name)} and {_escaped(other)})"
        return (f"duplicate {kind} name {name!r}{where}: the same name as {other!r}{at}{spelt} once case, width, "
                f"spacing and Unicode composition are set aside; rename one")
    return (f"duplicate {kind} name {name!r}{where}: it looks the same as {other!r}{at} (letters of another "
            f"script that look Latin); rename one")
