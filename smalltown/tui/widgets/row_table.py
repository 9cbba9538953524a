"""A list of a save's rows, newest first, its columns fitted to its width (`fit_columns`)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from smalltown.tui.widgets.fit_table import Col, fit_columns


class Keyed:
    """A cell that renders as its text and knows its row's id: the table sorts rows by it."""

    __slots__ = ("id", "text")

    def __init__(self, row_id: int, text: Text) -> None:
        self.id = row_id
        self.text = text

    def __rich__(self) -> Text:
        return self.text


class RowTable(DataTable):
    """Rows of the save, newest (highest id) first, one per item, at most `limit`.

    Columns are fitted to the table's width (`fit_columns`) and laid out again when it changes.
    `cells(item, widths)` gives an item's cells in column order, the first a `Keyed`.
    `replace` shows a new list; `add_newer` puts newer items on top without redrawing the rest.
    The cursor stays on its item, or on the newest one when it was there."""

    BINDINGS = [  # a row cursor: home and end go to the newest and the oldest row
        Binding("home", "scroll_top", "Newest", show=False),
        Binding("end", "scroll_bottom", "Oldest", show=False),
    ]
    DEFAULT_CSS = """
    RowTable { height: 1fr; scrollbar-size-vertical: 1; scrollbar-gutter: stable;
               background: $background; }
    """

    def __init__(self, cols: Sequence[Col], grow_order: Sequence[tuple[str, int | None]],
                 cells: Callable[[Any, dict[str, int]], list], item_id: Callable[[Any], int],
                 limit: int, wrap: bool = False, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self._cols = tuple(cols)
        self._grow_order = tuple(grow_order)
        self._cells = cells
        self._item_id = item_id
        self.limit = limit
        self._wrap = wrap  # rows as tall as their wrapped text, else one line
        self.items: list[Any] = []  # newest first, as shown
        self._widths: dict[str, int] = {}

    @property
    def current(self) -> Any | None:
        """The item under the cursor."""
        if not self.items or not self.row_count:
            return None
        row = min(self.cursor_row, len(self.items) - 1)
        return self.items[row]

    def replace(self, items: Iterable[Any]) -> None:
        keep, newest = self._cursor()
        self.items = list(items)[: self.limit]
        self._fill()
        self._restore(keep, newest)

    def add_newer(self, items: Sequence[Any]) -> None:
        """`items`, newest first, are all newer than what is shown."""
        known = {self._item_id(i) for i in self.items[:len(items)]} if self.items else set()
        items = [i for i in items if self._item_id(i) not in known]
        if not items:
            return
        keep, newest = self._cursor()
        if self._widths:
            for item in reversed(items):
                self._add(item)
        self.items = [*items, *self.items]
        for old in self.items[self.limit:]:
            if self._widths:
                self.remove_row(str(self._item_id(old)))
        del self.items[self.limit:]
        if self._widths:
            self.sort(self.ordered_columns[0].key, key=lambda cell: cell.id, reverse=True)
        self._restore(keep, newest)

    def _cursor(self) -> tuple[int | None, bool]:
        item = self.current
        return (self._item_id(item) if item is not None else None), self.cursor_row <= 0

    def _restore(self, keep: int | None, newest: bool) -> None:
        if not self.items or not self._widths:
            return
        ids = [self._item_id(i) for i in self.items]
        row = 0 if newest or keep not in ids else ids.index(keep)
        self.move_cursor(row=row, animate=False)

    def _fill(self) -> None:
        self.clear(columns=not self._widths)
        if not self._widths:
            return
        if not self.columns:
            for c in self._cols:
                if c.key in self._widths:
                    self.add_column(Text(c.label, justify="right" if c.right else "left"),
                                    width=self._widths[c.key], key=c.key)
        for item in self.items:
            self._add(item)

    def _add(self, item: Any) -> None:
        cells = self._cells(item, self._widths)
        height = 1
        if self._wrap:  # as tall as the longest wrapped cell: cheaper than DataTable's auto height
            console = self.app.console
            for cell, width in zip(cells, self._widths.values()):
                if isinstance(cell, Text) and cell.cell_len > width:
                    height = max(height, len(cell.wrap(console, width)))
        self.add_row(*cells, height=height, key=str(self._item_id(item)))

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        widths = fit_columns(self._cols, width, self._grow_order, self.cell_padding)
        if widths != self._widths:
            keep, newest = self._cursor()
            self._widths = widths
            self.clear(columns=True)
            self._fill()
            self._restore(keep, newest)
