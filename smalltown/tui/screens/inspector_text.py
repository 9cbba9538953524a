"""What the inspector shows of one agent, read from the save: its clock and counts, its state as
the mind's own types (`AgentState`: where its plan stands by `DayPlan`'s lookups, its action by
`Action.describe`), and a memory record as cells and lines. Times become text only here."""

from __future__ import annotations

from datetime import date, datetime

from rich.console import Group
from rich.table import Table
from rich.text import Text

from smalltown.lang import hhmm
from smalltown.state.plan import PlanItem
from smalltown.state.agent import Action, AgentState
from smalltown.shown import shown, shown_text
from smalltown.store.records import Memory
from smalltown.tui.reader import SaveReader, UnreadableState
from smalltown.tui.widgets.fit_table import Col
from smalltown.world.model import pretty

KINDS = ("observation", "reflection", "plan", "chat")
KIND_STYLE = {"observation": "", "reflection": "bold #e599f7", "plan": "#74c0fc", "chat": "#69db7c"}
SHORT_KIND = {"observation": "obs", "reflection": "refl", "plan": "plan", "chat": "chat"}
LABEL_CHARS = 240  # a tree label's description is cut here; the detail line below has it whole
# the tables' columns: the plan's blocks and a block's actions, the memory list
BLOCK_COLUMNS = (Col("mark", ""), Col("start", "start"), Col("min", "min", right=True), Col("activity", "activity", flex=3),
                 Col("place", "place", flex=2))
ACTION_COLUMNS = (Col("mark", ""), Col("start", "start"), Col("min", "min", right=True), Col("activity", "activity", flex=1))
MEMORY_COLUMNS = (Col("time", "time"), Col("kind", "kind"), Col("imp", "imp", right=True),
                  Col("description", "description", flex=1), Col("evidence", "evidence", cap=12))


# --- what is read from the save --------------------------------------------------------------


def save_clock(reader: SaveReader) -> tuple[int, datetime | None]:
    """The save's tick and game time, as of its last committed tick."""
    return reader.clock()


def clock_line(reader: SaveReader, tick: int, game_time: datetime | None, room: int | None = None) -> Text:
    """The screen's clock, in `room` columns if it is given (else long): the long form if it fits,
    else the short one (no "save at", no century), which wraps rather than being cut."""
    line = _clock_line(reader, tick, game_time, short=False)
    return line if room is None or line.cell_len <= room else _clock_line(reader, tick, game_time, short=True)


def _clock_line(reader: SaveReader, tick: int, game_time: datetime | None, short: bool) -> Text:
    """The save's clock, or replay's scrubbed time and, when the agents' state is kept only an
    hour at a time, which time the plan, action and summary shown are from."""
    clock = f"{game_time:{'%a %m-%d %H:%M:%S' if short else '%a %Y-%m-%d %H:%M:%S'}}" if game_time else "—"
    at = ("replay " if short else "replay at ") if reader.until else ("" if short else "save at ")
    line = Text.assemble((at, "dim"), clock, ("  tick ", "dim"), shown(tick))
    kept = reader.state_tick()
    if reader.until is not None and kept != tick:
        line.append_text(Text.assemble(("  state as kept at ", "dim"), (  # hourly, in snapshots
            f"{reader.until.time_of(kept):%a %H:%M:%S}" if kept is not None else "no time (none kept)",
            "bold #ffa94d")))
    return line.append_text(Text.assemble(("  ", ""), shown(reader.path.name)))


def memory_counts(reader: SaveReader, agent: str) -> dict[str, int]:
    return reader.memory_counts(agent)


def read_state(reader: SaveReader, agent: str) -> tuple[AgentState | None, str]:
    """The agent's state, decoded by the mind's codec, and "" — or None and why there is none to
    show (not in the save, or a state the codec cannot read: shown as a note, not a crash)."""
    try:
        state = reader.mind_state(agent)
    except UnreadableState as e:
        return None, f"{agent}'s state in this save cannot be read ({e})."
    return state, "" if state is not None else f"{agent} is not in this save."


# --- the plan ----------------------------------------------------------------------------------


def current_block(state: AgentState | None) -> PlanItem | None:
    """The block of the plan the current action is in (the mind's own lookup)."""
    if state is None or state.plan is None or state.action is None:
        return None
    return state.plan.block_during(state.action.start, state.action.end)


def plan_item(item: tuple[str, str]) -> str:
    """An item of the day in broad strokes: its time and activity (older saves kept text only)."""
    return shown(" ".join(map(str, item)).strip())


def span(b: PlanItem) -> str:
    """A block's minutes of the day: "09:00–10:00"."""
    return f"{hhmm(b.start)}–{hhmm(b.end)}"


def action_cell(a: PlanItem) -> str:
    """A planned action as its block lists it: "activity @ arena: object" (the sector is the
    block's)."""
    at = pretty(a.address.partition(":")[2])
    return a.activity + (f" @ {at}" if at else "")


def until(action: Action) -> str:
    fmt = "%H:%M" if action.start.date() == action.end.date() else "%a %H:%M"
    return f"from {action.start:%H:%M} until {action.end:{fmt}}"


# --- cells -------------------------------------------------------------------------------------


def stamp(created: str | datetime, today: date | None) -> str:
    """A record's time: the time of day on the save's day, with the date before it otherwise (a
    retrieval's time comes as the store's text)."""
    if isinstance(created, str):
        try:
            created = datetime.fromisoformat(created)
        except ValueError:
            return shown(created)
    return shown(f"{created:%H:%M:%S}" if created.date() == today else f"{created:%m-%d %H:%M}")


def importance_text(value: int) -> Text:
    style = "bold #ffa94d" if value >= 7 else ("" if value >= 4 else "dim")
    return Text(shown(value), style, justify="right")


def kind_text(kind: str, short: bool = False) -> Text:
    return Text(shown(SHORT_KIND.get(kind, kind) if short else kind), KIND_STYLE.get(kind, ""))


def score(value: float | None) -> Text:
    return Text("—" if value is None else f"{value:.3f}", justify="right")


def memory_label(m: Memory, today: date | None, note: str = "") -> Text:
    """A record as one line of the evidence tree."""
    text = Text.assemble((f"#{m.id} ", "dim"), kind_text(m.kind), " ", (stamp(m.created, today), "dim"),
                         " ", (f"★{m.importance}", "#ffa94d" if m.importance >= 7 else "dim"), " ")
    text.append(shown(m.description if len(m.description) <= LABEL_CHARS else m.description[:LABEL_CHARS] + "…"))
    if note:
        text.append(f"  {note}", "italic #ffa94d")
    return text


def memory_detail(m: Memory) -> Text:
    head = Text.assemble((f"#{m.id} ", "dim"), kind_text(m.kind), (f"  {shown(m.created)}", "dim"),
                         ("  importance ", "dim"), shown(m.importance))
    if m.evidence:
        head.append("  cites ", "dim")
        head.append(shown(" ".join(map(str, m.evidence))))
    return Text("\n").join([head, shown_text(m.description)])


def summary(agent: str, colour: str, state: AgentState | None, note: str, counts: dict[str, int]) -> Group:
    """The Summary tab: what the agent is doing now, in which block of its plan, how many records
    it holds, and its summary of itself. `note` says why there is no state to show."""
    action = state.action if state else None
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    if note:
        grid.add_row("", shown_text(note, "italic"))
    if action:
        grid.add_row("Now", Text.assemble(shown(action.describe()), ("\n" + shown(until(action)), "dim")))
    else:
        grid.add_row("Now", Text("— (no action yet)", "dim"))
    block = current_block(state)
    if block is not None:
        grid.add_row("Block", Text.assemble((f"{span(block)} ", "dim"), shown(block.activity)))
    grid.add_row("Memory", Text.assemble(
        f"{sum(counts.values())} records: ",
        ", ".join(f"{counts.get(k, 0)} {k}{'' if counts.get(k, 0) == 1 else 's'}" for k in KINDS),
        (f"\n{shown(state.since_reflection if state else 0)} importance since the last reflection", "dim")))
    grid.add_row("Summary", shown_text((state.summary if state else "") or "—", lines=True))
    if state and state.summary_date:
        grid.add_row("", shown_text(f"(as of {state.summary_date.isoformat()})", "dim"))
    return Group(shown_text(agent, f"bold {colour}"), "", grid)


def current_action(state: AgentState | None, block: PlanItem, now: datetime | None) -> int | None:
    """The index of the one current action of `block` (the current block): of those the current
    action covers (the mind's own lookup; the same action in a row is done as one), the last begun
    by the save's clock, else the first."""
    if state is None or state.plan is None or state.action is None:
        return None
    covered = state.plan.actions_during(block, state.action.start, state.action.end)
    actions = block.actions or []
    indexes = [j for j, a in enumerate(actions) if any(a is c for c in covered)]
    if not indexes:
        return None
    minute = state.plan.minute_in(now) if now is not None else -1
    begun = [j for j in indexes if actions[j].start <= minute]
    return begun[-1] if begun else indexes[0]
