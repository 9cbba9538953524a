"""The inspector's Social tab: what the PIANO modules keep of one agent, read from the
save. Its feelings toward others (sentiment 0..10, the relationship in a sentence, and how the
feeling moved conversation by conversation), its goal and the need behind it, the controller's
latest decision, its promises (open in the state; made, kept and broken in the event log) and
the places it found closed or taken.

Everything comes from the agent's state (the mind's own types) and its events; each module's
part is shown only when that module left something, and a run with them all off says so. Text
from a model or a world file goes through `shown_text`, never as markup."""

from __future__ import annotations

from datetime import date, datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from smalltown.state.agent import AgentState
from smalltown.shown import shown, shown_text
from smalltown.store.records import EventRow
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.inspector_text import stamp
from smalltown.world.model import pretty

# The settings of the modules this tab shows (config.py), named when the run had them all off.
MODULE_SETTINGS = ("social_awareness", "goal_generation", "controller_broadcast", "commitments", "action_awareness")
PROMISE_KINDS = ("committed", "kept", "broken")
PLACE_KINDS = ("unexpected", "blocked")
BAR = 10  # cells of a sentiment's bar: one a point
HISTORY = 8  # a feeling's last values shown
EVENT_LIMIT = 500  # events read per kind group (counts of more say "at least")
LISTED = 6  # kept / broken promises and places listed, newest first
HEAD = "bold #ffe066"


def sentiment_style(value: int) -> str:
    return "#ff6b6b" if value <= 3 else ("#69db7c" if value >= 7 else "#ffe066")


def sentiment_bar(value: int) -> Text:
    """ "7 ███████░░░": the value and a bar of it, coloured cold to warm."""
    v = max(0, min(BAR, value))
    return Text.assemble((f"{value:>2} ", "bold"), ("█" * v, sentiment_style(value)), ("░" * (BAR - v), "dim"))


def _int(value: object) -> int | None:
    """An event's number, as a stranger's save may hold anything there."""
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def trails(events: list[EventRow]) -> dict[str, list[int]]:
    """other -> the feeling's values, oldest first, from "sentiment" events (newest first): the
    first one's previous value, then each new value."""
    out: dict[str, list[int]] = {}
    for e in reversed(events):
        other, value = e.data.get("other"), _int(e.data.get("value"))
        if not isinstance(other, str) or value is None:
            continue
        trail = out.setdefault(other, [])
        previous = _int(e.data.get("previous"))
        if not trail and previous is not None:
            trail.append(previous)
        trail.append(value)
    return out


def trail_text(values: list[int]) -> Text:
    shown_values = values[-HISTORY:]
    text = Text("… " if len(values) > HISTORY else "", "dim")
    for i, v in enumerate(shown_values):
        if i:
            text.append(" → ", "dim")
        text.append(str(v), sentiment_style(v))
    return text


def _grid() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    return grid


def feelings(state: AgentState, history: dict[str, list[int]], today: date | None) -> RenderableType:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="dim", expand=True)
    table.add_column("person", style="bold", no_wrap=True)
    table.add_column("feeling", no_wrap=True)
    table.add_column("relationship", ratio=1)
    table.add_column("updated", style="dim", no_wrap=True)
    table.add_column("so far", no_wrap=True)
    for other, bond in sorted(state.social.items(), key=lambda kv: (-kv[1].sentiment, kv[0])):
        table.add_row(shown_text(other), sentiment_bar(bond.sentiment), shown_text(bond.summary or "—"),
                      stamp(bond.time, today), trail_text(history.get(other, [])))
    return table


def goal(state: AgentState, today: date | None) -> RenderableType:
    grid = _grid()
    grid.add_row("Goal", shown_text(state.goal) if state.goal else Text("— (none yet)", "dim"))
    if state.goal_need:
        grid.add_row("Need", shown_text(state.goal_need))
    if state.goal_asked is not None:
        grid.add_row("Asked", Text(stamp(state.goal_asked, today), "dim"))
    # the last ones, newest first, each once, the current left out
    earlier = [g for g in dict.fromkeys(reversed(state.goals)) if g != state.goal]
    if earlier:
        grid.add_row("Before", Text("\n").join(shown_text(g) for g in earlier))
    elif len(state.goals) > 1:
        grid.add_row("Before", Text(f"the same goal, its last {len(state.goals)} times asked", "dim"))
    for s in state.slow:
        grid.add_row("Waiting", Text(f"a {shown(s.task)} question asked at tick {shown(s.asked)}, "
                                     f"applied at tick {shown(s.due)}", "dim"))
    return grid


def decision(state: AgentState, today: date | None) -> RenderableType:
    d = state.decision
    grid = _grid()
    if d is None:
        grid.add_row("Decided", Text("— (nothing yet)", "dim"))
        return grid
    grid.add_row("Decided", Text.assemble(shown(d.intent), (f"  at {stamp(d.time, today)}", "dim")))
    if d.target:
        grid.add_row("Target", shown_text(pretty(d.target) if ":" in d.target else d.target))
    if d.reason:
        grid.add_row("Why", shown_text(d.reason))
    return grid


def promises(state: AgentState, events: list[EventRow], today: date | None) -> RenderableType:
    counts = {k: sum(e.kind == k for e in events) for k in PROMISE_KINDS}
    more = "at least " if len(events) >= EVENT_LIMIT else ""
    parts: list[RenderableType] = [Text.assemble(
        (f"{more}{counts['committed']} made, ", ""), (f"{counts['kept']} kept", "#69db7c"), ", ",
        (f"{counts['broken']} broken", "#ff6b6b"), f", {len(state.commitments)} open")]
    rows = Table(box=None, padding=(0, 1), show_header=False, show_edge=False, expand=True)
    rows.add_column(no_wrap=True)
    rows.add_column(no_wrap=True)
    rows.add_column(ratio=1)
    for c in sorted(state.commitments, key=lambda c: c.by):
        rows.add_row(Text("open", "bold #74c0fc"), Text(f"by {c.by:%H:%M}", "dim"),
                     Text.assemble(("to ", "dim"), shown(c.to), ": ", shown(c.what), (" at ", "dim"), shown(c.where),
                                   (f"  (said {stamp(c.made, today)})", "dim")))
    # the same promise made in several talks is kept or broken once each: listed once, counted
    done: dict[tuple[str, ...], tuple[EventRow, int]] = {}
    for e in events:
        if e.kind != "committed":
            key = (e.kind, *(shown(e.data.get(k, "")) for k in ("to", "what", "where", "by")))
            first, n = done.get(key, (e, 0))
            done[key] = (first, n + 1)
    for (kind, to, what, where, by), (e, n) in list(done.items())[:LISTED]:
        rows.add_row(Text(kind, "#69db7c" if kind == "kept" else "#ff6b6b"), Text(stamp(e.time, today), "dim"),
                     Text.assemble(("to ", "dim"), to, ": ", what, (" at ", "dim"), where, (f"  by {by}", "dim"),
                                   (f"  ×{n}" if n > 1 else "", "bold")))
    if rows.row_count:
        parts.append(rows)
    return Group(*parts)


def places(state: AgentState, events: list[EventRow], now: datetime | None, today: date | None) -> RenderableType:
    rows = Table(box=None, padding=(0, 1), show_header=False, show_edge=False, expand=True)
    rows.add_column(no_wrap=True)
    rows.add_column(ratio=1)
    for address, until in sorted(state.unavailable.items(), key=lambda kv: kv[1]):
        still = now is None or until > now
        rows.add_row(Text("avoids" if still else "avoided", "bold #ffa94d" if still else "dim"),
                     Text.assemble(shown(pretty(address)), (f"  until {stamp(until, today)}", "dim")))
    for e in events[:LISTED]:
        rows.add_row(Text(e.kind, "#ffa94d" if e.kind == "unexpected" else "dim"),
                     Text.assemble((stamp(e.time, today) + " ", "dim"), shown(_without_name(e))))
    return rows if rows.row_count else Text("— (none)", "dim")


def _without_name(e: EventRow) -> str:
    return e.text[len(e.agent) + 1:] if e.agent and e.text.startswith(e.agent + " ") else e.text


def modules_on(reader: SaveReader) -> list[str]:
    """Which of the modules the save's settings have on (a stranger's settings may be anything)."""
    settings = reader.settings()
    return [name for name in MODULE_SETTINGS if settings.get(name) is True]


def social(reader: SaveReader, agent: str, state: AgentState | None, note: str, now: datetime | None) -> Group:
    """The tab's content: a section per module that left something, or why there is nothing."""
    today = now.date() if now else None
    if state is None:
        return Group(shown_text(note or "No state to show.", "italic"))
    feel = reader.events(agent, ("sentiment",), limit=EVENT_LIMIT)
    kept = reader.events(agent, PROMISE_KINDS, limit=EVENT_LIMIT)
    found = reader.events(agent, PLACE_KINDS, limit=LISTED)
    sections: list[tuple[str, RenderableType]] = []
    if state.social or feel:
        sections.append(("Feelings toward others", feelings(state, trails(feel), today)))
    if state.goal or state.goals or state.slow:
        sections.append(("Goal", goal(state, today)))
    if state.role:  # the role inferred from its goals (mind/roles.py)
        sections.append(("Role", shown_text(state.role)))
    if state.decision is not None:
        sections.append(("Latest decision", decision(state, today)))
    if state.commitments or kept:
        sections.append(("Promises", promises(state, kept, today)))
    if state.unavailable or found:
        sections.append(("Places found unavailable", places(state, found, now, today)))
    on = modules_on(reader)
    if not sections:
        why = (f"The run has {', '.join(on)} on, but nothing is recorded for {agent} yet." if on else
               "Nothing here: the PIANO modules were off in this run (" + ", ".join(MODULE_SETTINGS) + ").")
        return Group(shown_text(why, "italic dim"))
    parts: list[RenderableType] = []
    for title, body in sections:
        parts += [Text(title, HEAD), body, ""]
    return Group(*parts[:-1])


class Social(VerticalScroll):
    """The tab's body: one text, scrolled."""

    def compose(self):  # type: ignore[override]
        yield Static(id="social-text")

    def show(self, reader: SaveReader, agent: str, state: AgentState | None, note: str, now: datetime | None) -> None:
        self.query_one("#social-text", Static).update(social(reader, agent, state, note, now))
