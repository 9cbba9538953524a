"""Tables whose columns fit the width they are given: one column type (`Col`) and one way of
fitting them (`fit_columns`), used by the inspector's tables (`FitTable`) and the debugger's
lists of rows (`RowTable`). The table never scrolls sideways: cells are cut to their column."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable

MIN_FLEX = 8  # a flex column is never narrower


@dataclass(frozen=True)
class Col:
    """A table column: `width` cells at least, up to `grow` more when there is room. When even
    the minimum widths do not fit, columns with a `drop` rank are left out, highest first. A
    `flex` column instead shares, by weight, the width the others leave (never under MIN_FLEX).
    A FitTable sizes a column of no `width` to its widest cell, up to `cap`."""
    key: str
    label: str
    width: int = 0
    grow: int = 0
    right: bool = False
    drop: int = 0
    flex: int = 0
    cap: int = 40


def fit_columns(cols: Sequence[Col], width: int, grow_order: Sequence[tuple[str, int | None]] = (),
                padding: int = 1) -> dict[str, int]:
    """Column key -> content width, in `cols` order, for a table `width` cells wide. The room
    left after the minimum widths goes by `grow_order`, step by step: (key, width) widens the
    column to that width if all of it fits, and when it does not, the steps after it are left
    out but for (key, None), which gives the column whatever is left. A column never gains
    more than its `grow`. Then the flex columns share what the others leave, by weight."""
    shown = list(cols)

    def need() -> int:
        return sum(c.width + 2 * padding for c in shown)

    while need() > width and any(c.drop for c in shown):
        shown.remove(max(shown, key=lambda c: c.drop))
    widths = {c.key: c.width for c in shown}
    spare = max(0, width - need())
    by_key = {c.key: c for c in shown}
    full = False
    for key, up_to in grow_order:
        c = by_key.get(key)
        if c is None or (full and up_to is not None):
            continue
        most = c.width + c.grow
        more = min(spare, most - widths[key]) if up_to is None else min(up_to, most) - widths[key]
        if more > spare:
            full = True
        elif more > 0:
            widths[key] += more
            spare -= more
    flex = [c for c in shown if c.flex]
    if flex:
        left = width - sum(widths[c.key] for c in shown if not c.flex) - 2 * padding * len(shown)
        weight = sum(c.flex for c in flex)
        shares = [left * c.flex // weight for c in flex]
        shares[-1] += left - sum(shares)
        for c, share in zip(flex, shares):
            widths[c.key] = max(MIN_FLEX, share)
    return widths


class FitTable(DataTable):
    """A row-cursor DataTable whose flexible columns share the width the others leave, cells cut
    with an ellipsis rather than the table scrolling sideways. Its rows are kept (`set_rows`) and
    laid out again when the width changes. Row keys are strings; `cursor_key` is the cursor's."""

    DEFAULT_CSS = """
    FitTable { scrollbar-gutter: stable; overflow-x: hidden; scrollbar-size-vertical: 1; }
    """
    CONTEXT_ROWS = 2  # rows shown above a row the cursor is put on

    def __init__(self, columns: Sequence[Col], *, id: str | None = None, classes: str | None = None,
                 show_header: bool = True) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", show_header=show_header,
                         cursor_foreground_priority="renderable")
        self._cols = tuple(columns)
        self._rows: list[tuple[str, tuple[Text, ...]]] = []
        self._laid_width = -1
        self._want: str | None = None  # the cursor's row while not laid out yet
        self._put = False  # and whether it was asked for

    @property
    def cursor_key(self) -> str | None:
        if self._laid_width < 0 or not self.row_count:
            return self._want if self._rows else None
        try:
            return self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value
        except Exception:
            return None

    @property
    def row_keys(self) -> list[str]:
        return [k for k, _ in self._rows]

    def set_rows(self, rows: Sequence[tuple[str, Sequence[str | Text]]], cursor: str | None = None) -> None:
        """Replace the rows; the cursor goes to row `cursor` if given, else stays on its row (by
        key) if that is still there, else goes to the first."""
        keep = cursor if cursor is not None else self.cursor_key
        self._rows = [(key, tuple(self._cell(c) for c in cells)) for key, cells in rows]
        self._lay_out(keep, put=cursor is not None)

    @staticmethod
    def _cell(value: str | Text) -> Text:
        text = value.copy() if isinstance(value, Text) else Text(value)
        text.no_wrap, text.overflow, text.end = True, "ellipsis", ""
        return text

    def _widths(self, total: int) -> list[int]:
        """A column of no `width` is as wide as its widest cell (up to its `cap`)."""
        sized = [c if c.width or c.flex else
                 replace(c, width=min(c.cap, max([cell_len(c.label), *(row[i].cell_len for _, row in self._rows)])))
                 for i, c in enumerate(self._cols)]
        widths = fit_columns(sized, total, padding=self.cell_padding)
        return [widths[c.key] for c in sized]

    def _lay_out(self, keep: str | None, put: bool = False) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:  # not laid out yet, or hidden: on_resize does it
            self._want, self._put, self._laid_width = keep, put, -1
            return
        self._laid_width, self._put = width, False
        scroll_y = self.scroll_y
        self.clear(columns=True)
        for c, w in zip(self._cols, self._widths(width)):
            self.add_column(Text(c.label, justify="right" if c.right else "left", no_wrap=True, overflow="ellipsis"), width=w)
        for key, cells in self._rows:
            self.add_row(*cells, key=key)
        keys = self.row_keys
        row = keys.index(keep) if keep in keys else 0
        if self._rows:
            self.move_cursor(row=row, scroll=False)
            self.call_after_refresh(self._reveal, put, scroll_y)
            # the cursor may not have moved (row 0 again), so say which row is highlighted now
            self.post_message(self.RowHighlighted(self, row, self.coordinate_to_cell_key(Coordinate(row, 0)).row_key))

    def _reveal(self, put: bool = False, y: float | None = None, tries: int = 20) -> None:
        """Scroll back to `y`, then so that the cursor's row shows, with a few rows above it (what
        comes after it shows too); a row asked for (`put`) is always scrolled to like that."""
        if self.virtual_size.height < self.row_count and tries:  # rows are measured when idle
            self.call_after_refresh(self._reveal, put, y, tries - 1)
            return
        if not self.row_count:
            return
        if y is not None and not put:
            self.scroll_to(y=y, animate=False, immediate=True)
        shown = self.scrollable_content_region.height - (self.header_height if self.show_header else 0)
        row, top = self.cursor_row, round(self.scroll_y)
        if put or not top <= row < top + shown:
            above = max(0, min(self.CONTEXT_ROWS, shown - 1))
            self.scroll_to(y=max(0, row - above), animate=False, immediate=True)

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._laid_width:
            self._lay_out(self.cursor_key, put=self._put)
        else:  # shorter or taller: keep the cursor in view
            self.call_after_refresh(self._reveal)
