"""What the inspector shows of one agent, read from the save: its clock and counts, where its
plan stands (the block and actions the current action is in, by the mind's own `DayPlan`), and a
memory record as cells and lines."""

from __future__ import annotations

from datetime import date, datetime

from rich.console import Group
from rich.table import Table
from rich.text import Text

from smalltown.lang import hhmm
from smalltown.mind.plan import DayPlan
from smalltown.shown import shown, shown_text
from smalltown.store.records import Memory
from smalltown.tui.reader import SaveReader
from smalltown.world.model import pretty

KINDS = ("observation", "reflection", "plan", "chat")
KIND_STYLE = {"observation": "", "reflection": "bold #e599f7", "plan": "#74c0fc", "chat": "#69db7c"}
SHORT_KIND = {"observation": "obs", "reflection": "refl", "plan": "plan", "chat": "chat"}
LABEL_CHARS = 240  # a tree label's description is cut here; the detail line below has it whole


# --- what is read from the save --------------------------------------------------------------


def save_clock(reader: SaveReader) -> tuple[int, str]:
    """The save's tick and game time ("YYYY-MM-DD HH:MM:SS"), as of its last committed tick."""
    return reader.clock()


def memory_counts(reader: SaveReader, agent: str) -> dict[str, int]:
    return reader.memory_counts(agent)


# --- the plan ----------------------------------------------------------------------------------


def _minute_in(plan: dict, when: str) -> int | None:
    """`when` as minutes from the start of the plan's day (past 1440 on the next day)."""
    try:
        t = datetime.fromisoformat(when)
        day = date.fromisoformat(plan["date"])
    except (KeyError, TypeError, ValueError):
        return None
    return (t.date() - day).days * 1440 + t.hour * 60 + t.minute


def current_block(plan: dict | None, action: dict | None) -> int | None:
    """The index of the block containing the action's start minute, on the plan's own day: the
    mind's own lookup (`DayPlan.block_at`) over the plan as the save keeps it."""
    if not plan or not action:
        return None
    start = _minute_in(plan, action.get("start", ""))
    if start is None:
        return None
    end = _minute_in(plan, action.get("end", ""))
    if start < 0 and end is not None and end > 0:
        start = 0  # begun the day before (asleep since last night): the day's first block
    try:
        day = DayPlan.from_json(plan)
    except (KeyError, TypeError, ValueError):
        return None
    block = day.block_at(start)
    return day.index(block) if block is not None else None


def current_actions(plan: dict, block: dict, action: dict | None) -> set[int]:
    """The indexes of the block's actions that the current action covers: the one containing its
    start minute, and those after it that it runs over (equal actions in a row are done as one)."""
    if not action or not block.get("actions"):
        return set()
    start, end = _minute_in(plan, action.get("start", "")), _minute_in(plan, action.get("end", ""))
    if start is None:
        return set()
    end = max(end if end is not None else start + 1, start + 1)
    return {i for i, a in enumerate(block["actions"])
            if a["start"] < end and start < a["start"] + a["minutes"]}


def plan_item(item: object) -> str:
    """An item of the day in broad strokes: [time, activity] (or the text older saves kept)."""
    if isinstance(item, (list, tuple)) and len(item) == 2:
        return shown(f"{item[0]} {item[1]}".strip())
    return shown(item)


def describe_action(action: dict) -> str:
    """"activity @ sector: arena: object", as the paper shows an action."""
    return shown(f"{action['activity']} @ {pretty(action['address'])}" if action.get("address")
                 else action.get("activity", ""))


def until(action: dict) -> str:
    start, end = datetime.fromisoformat(action["start"]), datetime.fromisoformat(action["end"])
    fmt = "%H:%M" if start.date() == end.date() else "%a %H:%M"
    return f"from {start:%H:%M} until {end:{fmt}}"


# --- cells -------------------------------------------------------------------------------------


def stamp(created: str | datetime, today: str) -> str:
    """A record's time: the time of day on the save's day, with the date before it otherwise."""
    created = f"{created:%Y-%m-%d %H:%M:%S}" if isinstance(created, datetime) else created
    return shown(created[11:19] if created[:10] == today else created[5:16])


def importance_text(value: int) -> Text:
    style = "bold #ffa94d" if value >= 7 else ("" if value >= 4 else "dim")
    return Text(shown(value), style, justify="right")


def kind_text(kind: str, short: bool = False) -> Text:
    return Text(shown(SHORT_KIND.get(kind, kind) if short else kind), KIND_STYLE.get(kind, ""))


def score(value: float | None) -> Text:
    return Text("—" if value is None else f"{value:.3f}", justify="right")


def memory_label(m: Memory, today: str, note: str = "") -> Text:
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


def summary(agent: str, colour: str, state: dict, counts: dict[str, int]) -> Group:
    """The Summary tab: what the agent is doing now, in which block of its plan, how many records
    it holds, and its summary of itself."""
    action = state.get("action")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    if not state:
        grid.add_row("", shown_text(f"{agent} is not in this save.", "italic"))
    if action:
        grid.add_row("Now", Text.assemble(describe_action(action), ("\n" + shown(until(action)), "dim")))
    else:
        grid.add_row("Now", Text("— (no action yet)", "dim"))
    plan = state.get("plan")
    i = current_block(plan, action)
    if plan and i is not None:
        b = plan["blocks"][i]
        grid.add_row("Block", Text.assemble((f"{hhmm(b['start'])}–{hhmm(b['start'] + b['minutes'])} ", "dim"),
                                            shown(b["activity"])))
    grid.add_row("Memory", Text.assemble(
        f"{sum(counts.values())} records: ",
        ", ".join(f"{counts.get(k, 0)} {k}{'' if counts.get(k, 0) == 1 else 's'}" for k in KINDS),
        (f"\n{shown(state.get('since_reflection', 0))} importance since the last reflection", "dim")))
    grid.add_row("Summary", shown_text(state.get("summary") or "—", lines=True))
    if state.get("summary_date"):
        grid.add_row("", shown_text(f"(as of {state['summary_date']})", "dim"))
    return Group(shown_text(agent, f"bold {colour}"), "", grid)
