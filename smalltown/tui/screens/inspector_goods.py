"""The inspector's Goods tab, in a world with an economy: what the agent holds (its
starting inventory with the save's ledger replayed, up to the tick shown in replay), its role
when one was inferred, and its latest transfers. Item and holder names come from a world file or
a save: shown as text, never markup."""

from __future__ import annotations

from datetime import date, datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from smalltown.state.agent import AgentState
from smalltown.shown import shown_text
from smalltown.tui.economy import EconomyView, TownGoods
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.inspector_text import stamp

HEAD = "bold #ffe066"
RECENT = 8  # the agent's latest ledger rows listed
IN, OUT = "#69db7c", "#ff8787"


def holdings_table(held: dict[str, int], items: tuple[str, ...]) -> RenderableType:
    if not held:
        return Text("— holds nothing", "dim")
    table = Table(box=None, padding=(0, 2), show_header=True, header_style="dim", show_edge=False)
    table.add_column("item", no_wrap=True)
    table.add_column("count", justify="right", style="bold")
    for item in items:  # the world file's order
        if held.get(item):
            table.add_row(shown_text(item), str(held[item]))
    return table


def moved(row: tuple, who: str) -> Text:
    """A ledger row as `who` saw it: "+2 wheat gather", "−1 bread give → Ann"."""
    _id, _tick, _time, kind, giver, taker, item, qty, note = row
    got = taker == who
    other = giver if got else taker
    text = Text.assemble((f"{'+' if got else '−'}{qty} ", IN if got else OUT), shown_text(item), (f"  {kind}", "dim"))
    if other:
        text.append_text(Text.assemble((" ← " if got else " → ", "dim"), shown_text(other)))
    if note:
        text.append_text(Text.assemble(("  ", ""), shown_text(note, "dim")))
    return text


def recent(rows: list[tuple], who: str, today: date | None) -> RenderableType:
    mine = [r for r in reversed(rows) if who in (r[4], r[5])][:RECENT]
    if not mine:
        return Text("— none yet", "dim")
    table = Table(box=None, padding=(0, 1), show_header=False, show_edge=False, expand=True)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for r in mine:
        table.add_row(stamp(str(r[2]), today), moved(r, who))
    return table


def goods(agent: str, goods_now: TownGoods | None, state: AgentState | None, now: datetime | None) -> Group:
    parts: list[RenderableType] = []
    if state is not None and state.role:
        parts += [Text.assemble(("Role  ", HEAD), shown_text(state.role)), ""]
    if goods_now is None:
        return Group(*parts, Text("This world has no economy.", "italic dim"))
    if goods_now.problem:
        parts += [Text("Holds", HEAD), shown_text(f"not shown: {goods_now.problem}", "#ff6b6b")]
    else:
        parts += [Text("Holds", HEAD), holdings_table(goods_now.holdings.get(agent, {}), goods_now.items)]
    parts += ["", Text("Latest transfers", HEAD), recent(goods_now.rows, agent, now.date() if now else None)]
    return Group(*parts)


class Goods(VerticalScroll):
    """The tab's body: one text, scrolled."""

    def __init__(self, reader: SaveReader, agent: str, **kw) -> None:
        super().__init__(**kw)
        self.view, self.agent = EconomyView(reader), agent

    def compose(self):  # type: ignore[override]
        yield Static(id="goods-text")

    def show(self, state: AgentState | None, now: datetime | None) -> None:
        self.query_one("#goods-text", Static).update(goods(self.agent, self.view.read(), state, now))
