"""An agent's state as JSON text, its large and seldom-changed parts encoded again only when they
changed: an agent's row is written at every change of action (thousands a day), and most of
its ~8 KB are the places it knows and the object states and answers it remembers, which change
a few times a day.

The text is exactly `json.dumps(state)`: the dict's items are encoded in runs (one `json.dumps`
of each run of small items, braces cut off) and joined with its separator (", "). A large
value's text is reused only when its items are the same as when it was encoded, in the same
order, and of the types checked then (str only: `==` on them is equality of their JSON).
"""

from __future__ import annotations

import json

# the keys (of AgentState.to_json) whose values are large and seldom change
STR_MAPS = ("states", "object_states", "place_answers")  # {str: str}
TREE = "known"  # {sector: {arena: [object]}}


def _flat(value: object) -> tuple | None:
    """A dict's items as a tuple (None: not a dict)."""
    return tuple(value.items()) if type(value) is dict else None


def _tree(value: object) -> tuple | None:
    """A dict of dicts of lists as nested tuples (None: not that). Copies: the lists are the
    mind's, changed in place or replaced."""
    if type(value) is not dict:
        return None
    out = []
    for sector, arenas in value.items():
        if type(arenas) is not dict:
            return None
        out.append((sector, tuple((arena, tuple(objs) if type(objs) is list else objs)
                                  for arena, objs in arenas.items())))
    return tuple(out)


def _all_str(key: str, shape: tuple) -> bool:
    """Whether every key and leaf of a shape is a str (checked once, when its text is made)."""
    if key != TREE:
        return all(type(k) is str and type(v) is str for k, v in shape)
    return all(type(sector) is str and all(type(arena) is str and type(objs) is tuple
                                           and all(type(o) is str for o in objs) for arena, objs in arenas)
               for sector, arenas in shape)


class StateJSON:
    """One agent's: `text(state)` is `json.dumps(state)`, its large parts' text kept between calls."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple, str]] = {}  # key -> (its items then, their JSON)

    def _large(self, key: str, value: object) -> str | None:
        """The JSON of `value` (under `key`), reused while it is as it was; None: not a large part."""
        shape = _tree(value) if key == TREE else _flat(value)
        if shape is None:
            return None
        kept = self._kept.get(key)
        if kept is not None and kept[0] == shape:  # (equal to strs: the same strs, the same JSON)
            return kept[1]
        if not _all_str(key, shape):
            self._kept.pop(key, None)
            return None
        self._kept[key] = (shape, json.dumps(value))
        return self._kept[key][1]

    def text(self, state: dict) -> str:
        parts: list[str] = []
        run: dict = {}
        for key, value in state.items():
            big = self._large(key, value) if key == TREE or key in STR_MAPS else None
            if big is None:
                run[key] = value
                continue
            if run:
                parts.append(json.dumps(run)[1:-1])
                run = {}
            parts.append(f"{json.dumps(key)}: {big}")
        if run:
            parts.append(json.dumps(run)[1:-1])
        return "{" + ", ".join(parts) + "}"
