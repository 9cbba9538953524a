"""An agent named by the user (on the command line, in a form): a full or a first name, any case;
a name that is none of the town's says which one the user probably meant."""

from __future__ import annotations

import difflib
from typing import Sequence


class NoSuchAgent(ValueError):
    """A name that is no agent's, or the first name of more than one: a usage error."""


def agent_named(name: str, names: Sequence[str]) -> str:
    """The full name of the agent `name` names: its full name or its first name, any case."""
    low = " ".join(name.split()).lower()
    hits = [n for n in names if n.lower() == low] or [n for n in names if n.split()[0].lower() == low]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise NoSuchAgent(f'"{name}" is the first name of '
                           + " and ".join(f'"{n}"' for n in hits)
                          + ": give the full name")
    guess = did_you_mean(low, names)
    if guess:
        raise NoSuchAgent(f'no agent "{name}"; did you mean "{guess}"?')
    raise NoSuchAgent(f'no agent "{name}" (agents: {", ".join(names)})')


def did_you_mean(name: str, names: Sequence[str]) -> str | None:
    """The agent whose full or first name is closest to `name` (misspelt, a letter dropped), if
    any is close enough."""
    spellings: dict[str, str] = {}
    for full in names:
        spellings.setdefault(full.lower(), full)
        spellings.setdefault(full.split()[0].lower(), full)
    close = difflib.get_close_matches(name.lower(), list(spellings), n=1, cutoff=0.6)
    return spellings[close[0]] if close else None
