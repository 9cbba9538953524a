"""The TUI's own widgets, one job each (as Textual's own `textual.widgets`)."""
