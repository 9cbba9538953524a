"""A WHERE clause built from the conditions a reader asks for: one builder, so no query is
assembled by hand, and every value goes in as a parameter."""

from __future__ import annotations

from typing import Any, Iterable


class Where:
    """Conditions joined by AND; a condition whose value is None is left out (not asked for).
    Column names come from the caller's code, never from a save."""

    def __init__(self) -> None:
        self.clauses: list[str] = []
        self.args: list[Any] = []

    def add(self, clause: str, *args: Any) -> "Where":
        """A condition written out (for what the helpers below do not say), with its arguments."""
        self.clauses.append(clause)
        self.args.extend(args)
        return self

    def eq(self, column: str, value: Any) -> "Where":
        return self if value is None else self.add(f"{column} = ?", value)

    def among(self, column: str, values: Iterable[Any] | None) -> "Where":
        if values is None:
            return self
        values = list(values)
        return self.add(f"{column} IN ({','.join('?' * len(values))})", *values)

    def above(self, column: str, value: Any) -> "Where":
        return self if value is None else self.add(f"{column} > ?", value)

    def at_most(self, column: str, value: Any) -> "Where":
        return self if value is None else self.add(f"{column} <= ?", value)

    @property
    def sql(self) -> str:
        """" WHERE a AND b" (with its leading space), or "" when nothing was asked."""
        return " WHERE " + " AND ".join(self.clauses) if self.clauses else ""


def limited(limit: int | None) -> tuple[str, list[int]]:
    """The " LIMIT ?" clause and its argument, or nothing."""
    return (" LIMIT ?", [limit]) if limit is not None else ("", [])
