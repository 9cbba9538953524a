"""What every prompt is made of: how a typed input is shown (`quote`, `records`, `card`, ...), and
the table of renderers, one per task that needs more than its fields shown one by one.

A task's prompt is its template (`$name` placeholders) filled by llm/render.py: each of the task's
fields is shown by its type, then the task's renderer, when it has one, adds or replaces values.
To give a task a prompt (a task defined anywhere: llm/tasks, a module of the mind, a test):
- its template: a file `llm/prompts/<template_name or name>.txt`, or the class attribute
  `template_text` (the template itself, for a task that brings its own);
- its renderer, when the template needs parts the fields alone do not give:
  `@extra("task_name") def fill(task) -> dict[str, str]`, in the module that defines the task or
  one imported with it (`renderer(name)` finds it; a second renderer for one task is an error);
- its answer's example: `EXAMPLES[name]` in llm/examples.py (shapes, not answers).
This module imports no renderer: the renderer modules import it (llm/render.py imports them all).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from functools import lru_cache
from typing import Callable

from smalltown.llm.tasks.base import Block, Feeling, LastTalk, PersonaCard, Record, Task
from smalltown.world.model import Gathering, RoutineItem

Renderer = Callable[[Task], dict[str, str]]
_RENDERERS: dict[str, Renderer] = {}


def extra(*names: str) -> Callable[[Renderer], Renderer]:
    """Decorator: the function fills the extra placeholders of the prompts of the tasks `names`."""
    def put(fill: Renderer) -> Renderer:
        for name in names:
            if name in _RENDERERS:
                have = _RENDERERS[name]
                raise ValueError(f"two renderers for the task {name!r}: {have.__module__}.{have.__qualname__} "
                                 f"and {fill.__module__}.{fill.__qualname__}")
            _RENDERERS[name] = fill
        return fill
    return put


def _nothing(task: Task) -> dict[str, str]:
    return {}


def renderer(name: str) -> Renderer:
    """The renderer of the task `name` (one that adds nothing when it has none)."""
    return _RENDERERS.get(name, _nothing)


# --- how inputs are shown ---------------------------------------------------------------------

_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029]")  # line breaks json.dumps leaves as they are
NONE = "(none)"


@lru_cache(maxsize=16384)  # the same memories, names and plans are quoted prompt after prompt
def quote(text: str) -> str:
    """Text as a JSON string literal: its line breaks and quotes escaped, so that text from a
    world file, a user or a model cannot pose as part of the prompt around it (an injected
    "\\n\\nSYSTEM: ..." stays inside its quotes)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def day(t: datetime) -> str:
    return t.strftime("%A %B %-d, %Y")


def moment(t: datetime) -> str:
    """The time of a question: "Monday February 13, 2023, 08:30"."""
    return t.strftime("%A %B %-d, %Y, %H:%M")


def stamp(t: datetime, today: date | None = None) -> str:
    """When a memory was made, as every memory line shows it: "08:30" today, "Feb 12 08:30" on
    another day (the prompt says what day it is)."""
    return t.strftime("%H:%M") if t.date() == today else t.strftime("%b %-d %H:%M")


def record(r: Record, today: date | None = None) -> str:
    return f"({stamp(r.time, today)}) {quote(r.text)}"


def records(rs: list[Record], start: int | None = None, today: date | None = None) -> str:
    """Memories one a line, with their times; numbered from `start + 1` when `start` is given."""
    if not rs:
        return NONE
    if start is None:
        return "\n".join(f"- {record(r, today)}" for r in rs)
    return "\n".join(f"{start + i}. {record(r, today)}" for i, r in enumerate(rs, 1))


def bullets(items: list[str], plain: bool = False) -> str:
    return "\n".join(f"- {x if plain else quote(x)}" for x in items) or NONE


def hhmm_end(start: str, minutes: int) -> str:
    h, m = map(int, start.split(":"))
    end = h * 60 + m + minutes
    return f"{end // 60 % 24:02d}:{end % 60:02d}"


def block(b: Block) -> str:
    where = f" at {b.place}" if b.place else ""
    return f"{b.start}-{hhmm_end(b.start, b.minutes)} {quote(b.activity)}{where}"


@lru_cache(maxsize=1024)  # an agent's routine, shown in each of its prompts
def routine(items: tuple[RoutineItem, ...], home: str) -> str:
    return "\n".join(f"- {i.start}-{hhmm_end(i.start, i.minutes)} {quote(i.activity)} at {i.place or home}"
                     for i in items) or NONE


def gathering(g: Gathering) -> str:
    host = f", hosted by {g.host}" if g.host else ""
    return f"- {quote(g.name)} at {g.place}, {stamp(g.start)} to {g.end.strftime('%H:%M')}{host}"


def last_talk(t: LastTalk | None, today: date | None = None) -> str:
    return f"{stamp(t.time, today)}: {quote(t.summary)}" if t else "none before"


@lru_cache(maxsize=1024)
def card(p: PersonaCard) -> str:
    """Who "the person" of the task's instructions is (stable through a day): it follows the
    instructions, which are the same for every agent, so both stay evaluated in a model's cache."""
    if p.summary:
        lines = "\n".join(quote(line) for line in p.summary.splitlines() if line.strip())
        return f"The person: {p.name}, age {p.age}.\nSummary description:\n{lines}"
    return (f"The person: {p.name}, age {p.age}.\nInnate traits: {quote(p.traits)}\n"
            f"Description: {quote(p.description)}\nLives in: {p.home}.")


def feeling_line(name: str, f: Feeling | None) -> str:
    """Social awareness: the feeling toward the other, when the setting is on ("" when off)."""
    if f is None:
        return ""
    about = f" — {quote(f.summary)}" if f.summary else ""
    return f"{name}'s feeling toward {f.other}: {f.sentiment}/10 (0 hate .. 10 love){about}"
