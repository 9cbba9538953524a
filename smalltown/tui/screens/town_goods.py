"""The town screen: the economy and civics of the whole town, read from the save (up to
the tick shown in replay). The town chest's holdings, every agent's in a table, the ledger newest
first (a filters it by agent, giver or taker; k by kind of transfer) and, when the save has
civics' events, the constitution in force and the latest tally. In a world without an economy it
says so. Item, holder and constitution text come from files, a save or a model: shown as text."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from smalltown.shown import shown, shown_text
from smalltown.store.validate import LEDGER_KINDS
from smalltown.tui.economy import EconomyView, TownGoods, latest
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.debug import DebugScreen, bound, cycle, keys_line, stamp, title_line
from smalltown.tui.widgets.fit_table import Col, FitTable

LEDGER_LIMIT = 500  # ledger rows listed, newest first
HEAD = "bold #ffe066"
TEXT_CHARS = 600  # a constitution's text is cut here on this screen
LEDGER_COLUMNS = (Col("time", "time", 8), Col("kind", "kind", 8), Col("giver", "giver", cap=24),
                  Col("taker", "taker", cap=24), Col("qty", "qty", right=True), Col("item", "item"),
                  Col("note", "note", flex=1))


def _value(data: dict, key: str) -> str:
    v = data.get(key)
    return shown(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str))


def civics(reader: SaveReader) -> RenderableType | None:
    """The constitution in force and the latest tally, when the save has civics' events."""
    law, tally = latest(reader, "constitution"), latest(reader, "tally")
    if law is None and tally is None:
        return None
    parts: list[RenderableType] = []
    if law is not None:
        raw = law.data.get("text")  # the constitution's articles keep their lines
        text = shown(raw, lines=True) if isinstance(raw, str) else _value(law.data, "text")
        parts += [Text.assemble(("Constitution ", HEAD), (f"v{_value(law.data, 'version')}", "bold"),
                                ("  tax rate ", "dim"), _value(law.data, "rate"), (f"  since {shown(law.time)}", "dim")),
                  Text(text[:TEXT_CHARS] + ("…" if len(text) > TEXT_CHARS else ""))]
    if tally is not None:
        frozen = tally.data.get("frozen")
        parts.append(Text.assemble(("Latest tally ", HEAD), (shown(tally.time), "dim"), "  ",
                                   _value(tally.data, "results"),
                                   ("  (frozen: " + _value(tally.data, "frozen") + ")" if frozen else "", "#ffa94d")))
    return Group(*parts)


def chest_line(goods: TownGoods) -> Text:
    held = goods.holdings.get(goods.chest, {})
    items = ", ".join(f"{n} {item}" for item, n in held.items()) or "empty"
    return Text.assemble(("Town chest  ", HEAD), shown(items))


class TownScreen(DebugScreen):
    """The town's goods and laws; `reload()` re-reads the save (after ticks, on coming back)."""

    BINDINGS = [
        Binding("a", "agent(1)", "Agent", show=False),
        Binding("A", "agent(-1)", "Agent back", show=False),
        Binding("k", "kind(1)", "Kind", show=False),
        Binding("K", "kind(-1)", "Kind back", show=False),
    ]
    CSS_PATH = ["debug.tcss", "town_goods.tcss"]  # DebugScreen's and its own

    def __init__(self, reader: SaveReader, agent: str | None = None) -> None:
        super().__init__()
        self.reader, self.agent, self.kind = reader, agent, None
        self.view = EconomyView(reader)
        world = self.view.world
        self._agents = [a.name for a in world.agents] if world else reader.agent_names()
        self._items = tuple(world.economy.items) if world and world.economy else ()
        self._goods: TownGoods | None = None
        self._seen: tuple[int, int] | None = None  # (ledger rows, newest event) last shown

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        yield Static(id="town-top")
        if self.view.on:
            yield FitTable((Col("holder", "holder", cap=30), *(Col(f"i{n}", shown(i), right=True, cap=12)
                                                                for n, i in enumerate(self._items))), id="holdings")
            yield FitTable(LEDGER_COLUMNS, id="ledger")
        yield Static(classes="status", id="status")
        yield Static(keys_line(("a", "agent"), ("k", "kind"), ("esc", "back")) if self.view.on
                     else keys_line(("esc", "back")), classes="keys")

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        if not self.is_mounted:
            return
        goods = self.view.read()
        seen = (len(goods.rows) if goods else 0, self.reader.newest_id("events"))
        if seen == self._seen:
            return
        self._seen, self._goods = seen, goods
        self._show()

    def _show(self) -> None:
        goods = self._goods
        self.query_one("#title", Static).update(title_line("Town", *((("agent", self.agent), ("kind", self.kind))
                                                                     if goods else ()), *bound(self.reader)))
        top: list[RenderableType] = []
        if goods is None:
            why = self.reader.world_problem or "no [economy] in its file"
            top.append(shown_text(f"This world has no economy ({why}): nothing is held or traded.", "italic"))
        elif goods.problem:
            top.append(shown_text(f"Holdings not shown: {goods.problem}", "#ff6b6b"))
        else:
            top.append(chest_line(goods))
        law = civics(self.reader)
        if law is not None:
            top += [Text(""), law]
        self.query_one("#town-top", Static).update(Group(*top))
        if goods is None:
            self.query_one("#status", Static).update("")
            return
        self.query_one("#holdings", FitTable).set_rows(
            [(h, [shown(h) if h != goods.chest else "town chest", *(str(goods.holdings.get(h, {}).get(i, 0) or "·") for i in goods.items)])
             for h in goods.holders])
        rows = [r for r in reversed(goods.rows) if (self.agent is None or self.agent in (r[4], r[5]))
                and (self.kind is None or r[3] == self.kind)][:LEDGER_LIMIT]
        self.query_one("#ledger", FitTable).set_rows(
            [(str(r[0]), [stamp(shown(r[2]), 8), shown(r[3]), shown(r[4] or "—"), shown(r[5] or "—"), str(r[7]),
                          shown(r[6]), shown(r[8])]) for r in rows])
        n = len(rows)
        self.query_one("#status", Static).update(
            f"{n:,} ledger row{'' if n == 1 else 's'}" + (f" (the newest {LEDGER_LIMIT})" if n >= LEDGER_LIMIT else "")
            + f" of {len(goods.rows):,}")

    def action_agent(self, step: int) -> None:
        if self._goods is not None:
            self.agent = cycle(self._agents, self.agent, step)
            self._show()

    def action_kind(self, step: int) -> None:
        if self._goods is not None:
            self.kind = cycle(LEDGER_KINDS, self.kind, step)
            self._show()
