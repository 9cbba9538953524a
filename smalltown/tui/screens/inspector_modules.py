"""The inspector's tabs for the registered modules' panels (mind/module.py `Panel`): one tab per
module with a panel that the run has on, drawn from the module's own saved state
(`AgentState.modules[name]`) as rows of label and text. Both come from a save: shown as text,
never markup."""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text
from textual.binding import BindingsMap
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static, TabPane

from smalltown.shown import shown, shown_text
from smalltown.sim.modules import panels
from smalltown.tui.reader import SaveReader


def bind_tab_keys(bindings: BindingsMap, tabs: list[str]) -> int:
    """Bind 1, 2, … to the tabs shown, in order, with one footer hint that counts them ("1-5
    Tabs"); a number past the last says so. How many are bound."""
    count = min(len(tabs), 9)
    past = f"{count} tabs here: 1-{count} (Goods with an economy, a module's panel when the run has it on)."
    for n in range(1, 10):
        action = f"tab({tabs[n - 1]!r})" if n <= count else f"app.notify({past!r})"
        bindings.bind(str(n), action, "Tabs" if n == 1 else "", show=n == 1, key_display=f"1-{count}" if n == 1 else None)
    return count


def tab_id(name: str) -> str:
    return "module-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


class ModuleTabs:
    """The module panels' tabs of one inspector: made once, drawn when shown."""

    def __init__(self, reader: SaveReader) -> None:
        self.panels = {tab_id(name): (name, panel) for name, panel in panels(reader.settings())}

    def ids(self) -> set[str]:
        return set(self.panels)

    def __contains__(self, tab: str) -> bool:
        return tab in self.panels

    def tabs(self) -> list[TabPane]:
        return [TabPane(Content(shown(panel.title)), VerticalScroll(Static(id=f"{tab}-text"), id=f"{tab}-scroll"),
                        id=tab) for tab, (_, panel) in self.panels.items()]

    def show(self, query_one, tab: str, modules: dict[str, dict] | None) -> None:
        """Draw `tab` from the agent's modules' states (`AgentState.modules`; None: no state read)."""
        name, panel = self.panels[tab]
        own = (modules or {}).get(name, {})
        query_one(f"#{tab}-text", Static).update(rows(panel.rows(own)) if own else Text("— nothing yet", "dim"))


def rows(items: list[tuple[str, str]]) -> Table | Text:
    if not items:
        return Text("— nothing to show", "dim")
    table = Table(box=None, padding=(0, 2), show_header=False, show_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for label, text in items:
        table.add_row(shown_text(str(label)), shown_text(str(text)))
    return table
