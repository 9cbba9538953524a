"""The figures of a save with a real model's answers (benchmarks/real_hour.py runs it and explains
them): per task, copies of the prompt's example (raw and among the answers used), repeats of another
agent's answer, fallbacks by reason, contradictions stored, seconds per call; conversation lines
that are empty, only a name or repeated; sleeps begun away from home. Read-only."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.store.packing import unpack_text  # noqa: E402

NORM = re.compile(r"[^a-z0-9]+")
PLACEHOLDER = re.compile(r"<[^<>\"]{1,60}>")
SENTENCE = re.compile(r"(?<=[.!?])\s+")  # an example's text is also copied a sentence at a time
SLEEPING = "sleeping"


# --- text ---------------------------------------------------------------------------------------


def norm(text: str) -> str:
    return NORM.sub(" ", text.lower()).strip()


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def phrases(value: Any) -> set[str]:
    """The free-text string values of 3+ words, normalised."""
    return {n for n in map(norm, strings(value)) if len(n.split()) >= 3}


def as_json(text: str) -> Any:
    """A JSON answer, or the text itself where it is not JSON (an unusable answer)."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def number_lists(value: Any, key: str = "") -> Iterator[tuple[str, list]]:
    """(key, list) of every list of 2+ numbers in a JSON value (ratings)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from number_lists(v, k)
    elif isinstance(value, list):
        if len(value) >= 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            yield key, value
        else:
            for v in value:
                yield from number_lists(v, key)


Example = tuple[set[str], set[str], list[tuple[str, list]]]


def example_of(prompt: str) -> Example:
    """(the example's phrases, its placeholders, its lists of numbers) from the prompt's line
    starting with "Example"."""
    for line in prompt.splitlines():
        if line.startswith("Example"):
            body = line[line.find("{"):] if "{" in line else ""
            try:
                ex = json.loads(body)
            except ValueError:
                return set(), set(), []
            holders = {h.lower() for s in strings(ex) for h in PLACEHOLDER.findall(s)}
            sentences = [part for text in strings(ex) for part in SENTENCE.split(text)]
            return phrases(ex) | phrases(sentences), holders, list(number_lists(ex))
    return set(), set(), []


def copies(answer: Any, raw: str, example: Example) -> list[str]:
    """The example's phrases, placeholders or lists of numbers (its ratings, where the answer's list
    of the same name begins as the example's does, or is its start) that this answer reproduces."""
    ex, holders, numbers = example
    mine = phrases(answer)
    hits = [e for e in ex if any(f" {e} " in f" {m} " for m in mine)]
    low = raw.lower()
    hits += [h for h in holders if h in low]
    for key, got in number_lists(answer):
        for k, want in numbers:
            n = min(len(got), len(want))
            if k == key and got[:n] == want[:n]:
                hits.append(f"{key} {want}")
    return hits


# --- one save -----------------------------------------------------------------------------------


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _failed_raws(value: Any) -> list[str]:
    """The raw answers of a call's failed attempts, from its `attempts` column (a JSON list of
    records: {"attempt", tokens, "ms", and for a failed one "kind", "reason", "raw"}; NULL or ''
    when the first attempt answered). Tolerant of other shapes: a list of texts, a {"attempts": ...}."""
    if value in (None, ""):
        return []
    try:
        data = json.loads(unpack_text(value, "llm_calls.attempts") or "")
    except (ValueError, TypeError):
        return []
    data = data.get("attempts", [data]) if isinstance(data, dict) else data
    out = []
    for a in data if isinstance(data, list) else []:
        raw = a if isinstance(a, str) else a.get("raw") or a.get("raw_answer") if isinstance(a, dict) else None
        if isinstance(raw, str) and raw.strip():
            out.append(raw)
    return out


def raw_answers(raw: str, fallback: str, attempts: Any, per_attempt: bool) -> list[str]:
    """What the model said for one call: every attempt's answer where the call log keeps attempts
    (the failed ones in `attempts`; the one used is the call's raw answer), else the stored raw
    answer (the last attempt's). None for a question never asked (too long for the window)."""
    if fallback == "too long":
        return []
    if not per_attempt:
        return [raw] if raw.strip() else []
    failed = _failed_raws(attempts)
    # a fallback's stored raw is its last failed attempt's, already among the failed ones
    if fallback and failed:
        return failed
    return failed + ([raw] if raw.strip() else [])


def analyse(path: Path) -> dict:
    """The figures of one save (read only)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    world = tomllib.loads(meta.get("world_text", "")) if meta.get("world_text") else {}
    homes = {a["name"]: a["home"] for a in world.get("agents", [])}
    names = {norm(n) for n in homes} | {norm(n.split()[0]) for n in homes}
    cols = _columns(conn, "llm_calls")
    extra = ", attempts" if "attempts" in cols else ", NULL"
    answered = Counter(conn.execute("SELECT backend || ', ' || model FROM llm_calls WHERE fallback = ''").fetchall())
    rows = conn.execute("SELECT id, agent, task, prompt, raw_answer, parsed_answer, ms, fallback, backend"
                        f"{extra} FROM llm_calls ORDER BY id").fetchall()
    by: dict[str, dict] = defaultdict(lambda: {"calls": 0, "used": 0, "fallbacks": Counter(), "raw_answers": 0,
                                               "raw_copies": 0, "copies_used": 0, "repeats": 0, "ms": [],
                                               "copied": Counter(), "contradictions": Counter()})
    earlier: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)  # task -> (agent, phrases) used so far
    per_attempt = "attempts" in cols
    for cid, agent, task, prompt, raw, parsed, ms, fallback, backend, attempts in rows:
        t = by[task]
        t["calls"] += 1
        t["ms"].append(ms or 0.0)
        prompt = unpack_text(prompt, f"llm_calls row {cid}") or ""
        raw = unpack_text(raw, f"llm_calls row {cid}") or ""
        answer = as_json(unpack_text(parsed, f"llm_calls row {cid}") or "")
        example = example_of(prompt)
        if fallback:
            t["fallbacks"][fallback] += 1
        for text in raw_answers(raw, fallback, attempts, per_attempt):
            t["raw_answers"] += 1
            t["raw_copies"] += bool(copies(as_json(text), text, example))
        if not fallback:
            t["used"] += 1
            hits = copies(answer, json.dumps(answer), example)
            t["copies_used"] += bool(hits)
            t["copied"].update(hits)
            mine = phrases(answer)
            t["repeats"] += any(a != agent and mine & p for a, p in earlier[task])
            earlier[task].append((agent, mine))
        for reason in contradictions(task, answer, agent, homes):
            t["contradictions"][f"{reason} ({'model' if not fallback else 'stand-in'})"] += 1
    talk = conversation_faults(conn, names) if "conversations" in tables(conn) else Counter()
    slept = sleeps_away(conn, homes)
    span = conn.execute("SELECT min(time), max(time) FROM events").fetchone()  # the game time the run reached
    conn.close()
    return {"save": str(path), "world": meta.get("world"), "calls": len(rows), "per_attempt": per_attempt,
            "game_time": f"{span[0]} .. {span[1]}" if span and span[0] else "",
            "answered_by": answered.most_common(1)[0][0][0] if answered else "",
            "tasks": {k: {**v, "ms": v["ms"]} for k, v in by.items()},
            "conversation_faults": talk, "sleeps_away": slept}


def tables(conn: sqlite3.Connection) -> set[str]:
    return {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _home(place: str, home: str) -> bool:
    return norm(place).startswith(norm(home)) if place else False


def contradictions(task: str, answer: Any, agent: str, homes: dict[str, str]) -> list[str]:
    """What contradicts itself in one stored answer."""
    if not isinstance(answer, dict):
        return []
    out = []
    if task.startswith("react"):
        react, talk = answer.get("react"), answer.get("talk")
        reaction, opening = str(answer.get("reaction") or ""), str(answer.get("opening") or "")
        if react is False and talk is True:
            out.append("react false, talk true")
        if react is True and talk is False and len(norm(reaction).split()) <= 1:
            out.append("react true, no talk, reaction of <= 1 word")
        if talk is True and not opening.strip():
            out.append("talk true, empty opening")
    if task.startswith("hourly_schedule") and agent in homes:
        for b in answer.get("blocks", []) or []:
            if isinstance(b, dict) and norm(str(b.get("activity", ""))) == SLEEPING \
                    and not _home(str(b.get("place", "")), homes[agent]):
                out.append("sleeping block away from home")
    return out


def conversation_faults(conn: sqlite3.Connection, names: set[str]) -> Counter:
    """Stored conversation lines that are empty, only a name, or repeat an earlier line of theirs."""
    out: Counter = Counter()
    for (lines,) in conn.execute("SELECT lines FROM conversations"):
        seen: set[str] = set()
        for line in json.loads(lines or "[]"):
            text = norm(str(line.get("text", "")))
            out["lines"] += 1
            if not text:
                out["empty line"] += 1
            elif text in names:
                out["a name only"] += 1
            elif text in seen:
                out["repeats an earlier line"] += 1
            seen.add(text)
    return out


def sleeps_away(conn: sqlite3.Connection, homes: dict[str, str]) -> list[str]:
    """Sleeps the agents began (`started` events) at a place that is not their home."""
    out = []
    for agent, data in conn.execute("SELECT agent, data FROM events WHERE kind = 'started'"):
        d = json.loads(data or "{}")
        if d.get("activity") == SLEEPING and agent in homes and not _home(str(d.get("address", "")), homes[agent]):
            out.append(f"{agent} @ {d.get('address')}")
    return out
