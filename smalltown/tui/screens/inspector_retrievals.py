"""The inspector's Retrievals tab: an agent's newest retrievals (what it looked up, and why), and
the records one returned with their scores. Choosing a record opens its evidence in the Memory
tab: the `DataTable.RowSelected` of `#ret-results` bubbles up to the screen, which owns that tab."""

from __future__ import annotations

from datetime import date

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import DataTable, Static

from smalltown.shown import shown, shown_text
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.inspector_text import kind_text, score, stamp
from smalltown.tui.widgets.fit_table import Col, FitTable

RETRIEVAL_LIMIT = 30  # retrievals in the list, newest first
RETRIEVAL_COLUMNS = (Col("time", "time"), Col("purpose", "purpose"), Col("n", "n", right=True), Col("query", "query", flex=1))
RESULT_COLUMNS = (Col("id", "id", right=True), Col("kind", "kind"),
                  Col("recency", "recency", right=True), Col("importance", "importance", right=True),
                  Col("relevance", "relevance", right=True), Col("total", "total", right=True),
                  Col("description", "description", flex=1))


class Retrievals(Container):
    """The list of retrievals and, beside or under it, the one under the cursor."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._retrievals: dict[str, dict] | None = None  # as listed, by row key; None: not yet

    def compose(self) -> ComposeResult:
        yield FitTable(RETRIEVAL_COLUMNS, id="ret-list")
        with Vertical(id="ret-detail", classes="part"):
            yield Static(id="ret-query")
            yield FitTable(RESULT_COLUMNS, id="ret-results")

    def on_mount(self) -> None:
        self.query_one("#ret-detail").border_title = "Returned records"

    def show(self, reader: SaveReader, agent: str, today: date | None) -> None:
        """List the agent's newest retrievals; the cursor stays on the newest unless moved off it."""
        table = self.query_one("#ret-list", FitTable)
        following = table.cursor_key in (None, *table.row_keys[:1])
        rows = reader.retrievals(agent, RETRIEVAL_LIMIT)
        if self._retrievals is not None and [str(r["id"]) for r in rows] == list(self._retrievals):
            return
        self._retrievals = {str(r["id"]): r for r in rows}
        table.set_rows([(str(r["id"]), [Text(stamp(r["time"], today), "dim"), shown_text(r["purpose"]),
                                        Text(str(len(r["results"])), justify="right"), shown_text(r["query"])])
                        for r in rows], cursor=str(rows[0]["id"]) if following and rows else None)
        table.border_title = f"{len(rows)} retrievals"
        self._show_retrieval(table.cursor_key)

    def _show_retrieval(self, key: str | None) -> None:
        r = (self._retrievals or {}).get(key or "")
        results = self.query_one("#ret-results", FitTable)
        if r is None:
            self.query_one("#ret-query", Static).update(Text("No retrievals yet.", "dim"))
            results.set_rows([])
            return
        self.query_one("#ret-query", Static).update(Text.assemble(
            (f"#{r['id']} ", "dim"), (shown(r["purpose"]), "bold"),
            (f"  {shown(r['time'])}  tick {shown(r['tick'])}\n", "dim"), ("query: ", "dim"), shown(r["query"])))
        results.set_rows([(f"{n}:{x['id']}", [Text(str(x["id"]), "dim", justify="right"),
                                              kind_text(x.get("kind", ""), short=True),
                                              score(x.get("recency")), score(x.get("importance")),
                                              score(x.get("relevance")), score(x.get("total")),
                                              shown_text(x.get("description", ""))])
                          for n, x in enumerate(r["results"])], cursor="0:" + str(r["results"][0]["id"])
                         if r["results"] else None)

    @on(DataTable.RowHighlighted, "#ret-list")
    def _retrieval_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_retrieval(event.row_key.value)
