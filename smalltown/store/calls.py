"""The model call log in figures: how many calls, and how many another backend answered and why.

Since schema 4 each call records why a fallback answered it (`llm_calls.fallback`: "too long" when
the prompt could not fit the model's window, "cut off", "invalid", "failed"; '' when the backend's
own answer was used). An older save only noted it: a note starting "fallback" counts as "invalid"
(its migration fills the column so).
"""

from __future__ import annotations

import json
import sqlite3

from smalltown.store.packing import unpack_text

OLD_FALLBACK = "invalid"  # what a fallback an older smalltown only noted counts as
TOO_LONG = "too long"  # the prompt could not fit the model's window
_OLD_REASON = f"CASE WHEN note LIKE 'fallback%' THEN '{OLD_FALLBACK}' ELSE '' END"


def has_fallback_column(conn: sqlite3.Connection) -> bool:
    return any(r[1] == "fallback" for r in conn.execute("PRAGMA table_info(llm_calls)"))


def mark_old_fallbacks(conn: sqlite3.Connection) -> None:
    """Schema 4 (store/schema.py adds the fallback column): the fallbacks an older smalltown noted
    get their reason."""
    conn.execute(f"UPDATE llm_calls SET fallback = '{OLD_FALLBACK}' WHERE note LIKE 'fallback%'")


def has_attempts_column(conn: sqlite3.Connection) -> bool:
    return any(r[1] == "attempts" for r in conn.execute("PRAGMA table_info(llm_calls)"))


def attempts_of(conn: sqlite3.Connection, call_id: int) -> list[dict]:
    """The attempts of one call (store: attempt_record's dicts); [] when its first attempt
    answered, or the save is older than schema 9."""
    if not has_attempts_column(conn):
        return []
    row = conn.execute("SELECT attempts FROM llm_calls WHERE id = ?", (call_id,)).fetchone()
    try:
        found = json.loads(row[0]) if row and row[0] else []
    except ValueError:  # (a save check names it; a viewer shows none)
        return []
    return [a for a in found if isinstance(a, dict)] if isinstance(found, list) else []


def fallbacks_after(conn: sqlite3.Connection, after_tick: int) -> dict[str, int]:
    """{reason: calls} of the calls at ticks after `after_tick` that a fallback answered, most first."""
    reason = "fallback" if has_fallback_column(conn) else _OLD_REASON
    return _most_first({str(why): n for why, n in conn.execute(
        f"SELECT {reason}, count(*) FROM llm_calls WHERE tick > ? AND {reason} != '' GROUP BY 1", (after_tick,))})


def last_call_id(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(id), 0) FROM llm_calls").fetchone()[0]


def call_figures(conn: sqlite3.Connection, after_id: int = 0, upto_id: int | None = None) -> dict:
    """The calls logged (those with ids above `after_id`, and up to `upto_id`: a reader counting a
    little at a time counts a call committed meanwhile next time, and once):
    {"calls": n, "fallbacks": n, "too_long": n, "by_reason": {reason: n},
     "by_task": {task: {"calls": n, "fallbacks": n, "by_reason": {reason: n}}}}
    reasons most frequent first, tasks by name."""
    reason = "fallback" if has_fallback_column(conn) else _OLD_REASON
    by_task: dict[str, dict] = {}
    by_reason: dict[str, int] = {}
    for task, why, n in conn.execute(
            f"SELECT task, {reason}, count(*) FROM llm_calls WHERE id > ? AND id <= ? GROUP BY 1, 2 ORDER BY 1, 2",
            (after_id, upto_id if upto_id is not None else 2**63 - 1)):
        t = by_task.setdefault(str(task), {"calls": 0, "fallbacks": 0, "by_reason": {}})
        t["calls"] += n
        if why:
            t["fallbacks"] += n
            t["by_reason"][why] = t["by_reason"].get(why, 0) + n
            by_reason[why] = by_reason.get(why, 0) + n
    for t in by_task.values():
        t["by_reason"] = _most_first(t["by_reason"])
    attempts = retried = 0
    if has_attempts_column(conn):  # calls without a list were answered at their first attempt
        attempts, retried = conn.execute(
            "SELECT coalesce(sum(CASE WHEN json_valid(attempts) THEN json_array_length(attempts) ELSE 1 END), 0), "
            "coalesce(sum(json_valid(attempts) AND json_array_length(attempts) > 1), 0) "
            "FROM llm_calls WHERE id > ? AND id <= ?", (after_id, upto_id if upto_id is not None else 2**63 - 1)).fetchone()
    calls = sum(t["calls"] for t in by_task.values())
    return {"calls": calls, "fallbacks": sum(by_reason.values()),
            "too_long": by_reason.get(TOO_LONG, 0), "by_reason": _most_first(by_reason), "by_task": by_task,
            "attempts": attempts or calls, "retried": retried}


def _most_first(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def describe_reasons(counts: dict[str, int]) -> str:
    """{"invalid": 3, "too long": 1} -> "invalid 3, too long 1"."""
    return ", ".join(f"{why} {n:,}" for why, n in counts.items())


def describe_calls(figures: dict) -> str:
    """One line: "1,234 model calls; 12 answered by a fallback (invalid 9, too long 3); 3 prompts
    too long for the model's window"."""
    n, k = figures["calls"], figures["fallbacks"]
    text = f"{n:,} model call{'s' if n != 1 else ''}"
    if not n:
        return text
    text += f"; {k:,} answered by a fallback" + (f" ({describe_reasons(figures['by_reason'])})" if k else "")
    t = figures["too_long"]
    text += f"; {t:,} prompt{'s' if t != 1 else ''} too long for the model's window"
    r = figures.get("retried", 0)
    return text + (f"; {figures['attempts']:,} attempts, {r:,} call{'s' if r != 1 else ''} retried" if r else "")


def recorded(conn: sqlite3.Connection) -> list[tuple]:
    """(id, tick, task, key, prompt, parsed answer) of every call, in order: what a cassette
    replays. `key` is None in a save from before schema 4."""
    key = "key" if any(r[1] == "key" for r in conn.execute("PRAGMA table_info(llm_calls)")) else "NULL"
    return [(*r[:4], unpack_text(r[4], f"llm_calls row {r[0]}"), unpack_text(r[5], f"llm_calls row {r[0]}"))
            for r in conn.execute(f"SELECT id, tick, task, {key}, prompt, parsed_answer FROM llm_calls ORDER BY id")]
