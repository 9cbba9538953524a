"""The TUI's screens, one module each (a group of small modal forms shares one): each pushed over
the town view, with its CSS in a .tcss file beside it."""
