"""The day view's marks: the PIANO modules' events on the cells they happened in. A
new goal taken up, a feeling moved, a promise made, kept or broken, a place found closed or taken
each puts its sign on the cell (in place of the activity's symbol; the colour stays the
activity's), as do the economy ops, role and civics events, and the cursor's cell lists them under the grid. "decided" is left out: an agent
decides before nearly every action it starts, so it would mark every cell."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text

from smalltown.shown import shown
from smalltown.store.day import Day
from smalltown.store.records import EventRow
from smalltown.store.schema import TIME_FMT

# kind -> (sign, colour), the most telling first: a cell with several shows the first one's sign
MARKS: dict[str, tuple[str, str]] = {
    "broken": ("✗", "#ff6b6b"), "unexpected": ("?", "#ff922b"), "kept": ("✓", "#69db7c"),
    "committed": ("✎", "#4dabf7"), "sentiment": ("♥", "#f783ac"), "goal": ("◆", "#ffd43b"),
    "blocked": ("⊘", "#ffa94d"),
    "role": ("★", "#94d82d"),  # a role taken up (mind/roles.py)
    # the civics (a kind this version's event list may not name is marked all the same)
    "refused": ("⊗", "#ff8787"), "constitution": ("§", "#ffd43b"), "tally": ("Σ", "#e599f7"),
    "season": ("☼", "#ffa94d"), "proposal": ("¶", "#74c0fc"), "vote": ("☐", "#74c0fc"),
    "stance": ("⚑", "#66d9e8"), "feedback": ("≈", "#adb5bd"),
    # and the economy's ops (sim/economy.py)
    "trade": ("⇄", "#63e6be"), "give": ("→", "#63e6be"), "deposit": ("↓", "#c0eb75"),
    "craft": ("⊕", "#c0eb75"), "gather": ("↑", "#c0eb75"),
}
MARK_KINDS = tuple(MARKS)
SHOWN = 3  # events of a cell described under the grid

Marks = dict[tuple[str, int], list[EventRow]]  # (agent, cell column) -> its events, in order


def by_cell(events: list[EventRow], day: Day, minutes: int) -> Marks:
    """The day's events of the marked kinds (`events` oldest first, every day's), by agent and
    cell of `minutes`; a goal only when it differs from the one before it."""
    out: Marks = {}
    goals: dict[str, object] = {}  # agent -> its goal as last taken up: asked again, the same is no news
    for e in events:
        if e.kind not in MARKS or not e.agent:
            continue
        if e.kind == "goal":
            same = goals.get(e.agent, None) == e.data.get("goal", "")
            goals[e.agent] = e.data.get("goal", "")
            if same:
                continue
        try:
            when = datetime.strptime(e.time, TIME_FMT)
        except (TypeError, ValueError):  # a stranger's save: a time that is not one is not marked
            continue
        if day.start <= when < day.end:
            col = int((when - day.start).total_seconds() // 60 // minutes)
            out.setdefault((e.agent, col), []).append(e)
    return out


def sign(events: list[EventRow]) -> tuple[str, str]:
    """The sign and colour of a cell's most telling event."""
    return MARKS[min((e.kind for e in events), key=MARK_KINDS.index)]


def described(events: list[EventRow]) -> Text:
    """A cell's events in one line: each sign, its time and what happened (its agent's name left
    out: the line above names it)."""
    text = Text()
    for e in events[:SHOWN]:
        glyph, colour = MARKS[e.kind]
        what = e.text[len(e.agent) + 1:] if e.agent and e.text.startswith(e.agent + " ") else e.text
        if text:
            text.append(" · ", "dim")
        text.append_text(Text.assemble((glyph + " ", f"bold {colour}"), (shown(e.time[11:16]) + " ", "dim"),
                                       shown(what)))
    if len(events) > SHOWN:
        text.append(f" · {len(events) - SHOWN} more", "dim")
    return text
