"""Agents' day plans, kept apart from the rest of their state (schema 5).

A plan is most of an agent's state (~18 KB of JSON) and changes a few times a day, while the
action beside it changes every few game minutes: written in the same row, each action change
rewrote the plan's pages (81% of the bytes a day wrote). So a tick writes an agent's state with
its "plan" null into `agents.state` and the plan into `plans`, where it is rewritten only when
its text changed.

Readers see the state whole: `joined` puts the plan back where the state has it. A row whose
plan is NULL (or that has none: a save from before schema 5, a row a rewind wrote from a
snapshot) holds its plan, if any, in `state` itself.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

# the agents rows with their plans, for readers: (name, x, y, dest, action, address, state, plan)
AGENT_ROWS = ("SELECT a.name, a.x, a.y, a.dest, a.action, a.address, a.state, p.plan "
              "FROM agents a LEFT JOIN plans p ON p.agent = a.name")


def has_plans(conn: sqlite3.Connection) -> bool:
    """Whether the save has the plans table (an older one read before its migration does not)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='plans'").fetchone() is not None


def agent_rows(conn: sqlite3.Connection, order: str = "rowid", name: str | None = None) -> list[tuple]:
    """(name, x, y, dest, action, address, state) of the agents rows (of `name` only, if given),
    ordered by `order` ("rowid" or "name"), each state whole."""
    return [(*r[:6], joined(r[6], r[7])) for r in apart_rows(conn, order, name)]


def apart_rows(conn: sqlite3.Connection, order: str = "rowid", name: str | None = None) -> list[tuple]:
    """(name, x, y, dest, action, address, state, plan) of the agents rows as the save keeps
    them: the state and its plan apart (the plan None when the row holds it in its state)."""
    assert order in ("rowid", "name")
    where, args = (" WHERE a.name = ?", (name,)) if name is not None else ("", ())
    if not has_plans(conn):
        sql = f"SELECT a.name, a.x, a.y, a.dest, a.action, a.address, a.state, NULL FROM agents a{where}"
    else:
        sql = AGENT_ROWS + where
    return conn.execute(f"{sql} ORDER BY a.{order}", args).fetchall()


def joined(state: str | None, plan: str | None) -> str | None:
    """The whole state: `state` with the plan `plan` (JSON) in its "plan". A state that does not
    parse is given as it is (a check judges it, and says why)."""
    if plan is None or state is None:
        return state
    try:
        whole = json.loads(state)
    except ValueError:
        return state
    if not isinstance(whole, dict):
        return state
    whole["plan"] = json.loads(plan)
    return json.dumps(whole)


def joined_parsed(state: str | None, plan: str | None) -> tuple[str | None, object, bool]:
    """(`joined(state, plan)`, that text parsed (None: it does not parse), whether the text is
    exactly `json.dumps` of the parsed value): one parse instead of joining then parsing again."""
    if state is None:
        return None, None, False
    try:
        whole = json.loads(state)
    except (TypeError, ValueError) as e:
        if plan is not None and isinstance(e, TypeError):
            raise  # (as `joined` does)
        return state, None, False
    if plan is None or not isinstance(whole, dict):
        return state, whole, False  # (the text as stored: not known to be json.dumps's own)
    whole["plan"] = json.loads(plan)
    return json.dumps(whole), whole, True


def write(conn: sqlite3.Connection, plans: Iterable[tuple[str, str | None]]) -> None:
    """Set each (agent, plan JSON or None) whose text differs from what the save holds; an
    unchanged plan writes nothing."""
    conn.executemany(
        "INSERT INTO plans(agent, plan) VALUES (?, ?) ON CONFLICT(agent) DO UPDATE SET plan=excluded.plan "
        "WHERE plan IS NOT excluded.plan", plans)
