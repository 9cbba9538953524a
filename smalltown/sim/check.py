"""`save check`: is a save whole, and does it agree with itself and with its world?

SQLite's own integrity check, then ours: the clock, the agents (each one of the world's, standing
on a walkable tile inside the map), the objects (each one of the world's), the memories (each
owned by an agent, its evidence ids existing), the conversations (JSON of the right shape, between
two agents of the world, each side's chat one of its own memories, nothing oversized: see
sim/check_conversations.py) and the logs (nothing from after the clock). The world is rebuilt from
the text the save holds, so a check needs nothing but the file.

Opening a save to continue it, inspect it or replay it calls `require`, the same checks without
SQLite's integrity check: a save from a stranger whose rows make no sense is refused with a
message instead of crashing mid-run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from smalltown.config import Settings, SettingsError
from smalltown.sim.check_conversations import check_conversations, read_time
from smalltown.sim.shapes import state_problem
from smalltown.store.errors import SaveError, SQLiteError
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.store.snapshots import decode_snapshot
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world_text
from smalltown.world.model import GAME_TIME_MAX, World

MAX_LISTED = 20  # problems of one kind listed before "... and N more"


@dataclass
class CheckReport:
    path: Path
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"save": str(self.path), "ok": self.ok, "problems": self.problems, "counts": self.counts}


class _Problems:
    """Problems grouped by kind, each kind capped at MAX_LISTED lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._kinds: dict[str, int] = {}

    def add(self, kind: str, message: str) -> None:
        n = self._kinds.get(kind, 0) + 1
        self._kinds[kind] = n
        if n <= MAX_LISTED:
            self.lines.append(message)

    def finish(self) -> list[str]:
        for kind, n in self._kinds.items():
            if n > MAX_LISTED:
                self.lines.append(f"... and {n - MAX_LISTED} more problems of this kind ({kind})")
        return self.lines


def check_save(path: str | Path, integrity: bool = True) -> CheckReport:
    """Every problem found in the save at `path`. A file that is not a save at all (or one this
    smalltown refuses to open) raises SaveError instead."""
    path = Path(path)
    report = CheckReport(path)
    # (a run may be writing it: one moment's rows); its rows are judged here, listed, not refused
    save = Save.open(path, readonly=True, rows=False).hold_still()
    p = _Problems()
    try:
        if integrity:
            try:
                rows = save.reader().integrity(50)
            except SQLiteError as e:  # damage the check itself trips over
                rows = [e.said]
            if rows != ["ok"]:
                for r in rows:
                    p.add("integrity", f"SQLite integrity check: {r}")
                report.problems = p.finish()
                return report  # the rows below cannot be trusted
        try:
            stored = list(save.reader().row_problems(save.meta("schema_version"), MAX_LISTED))
            for problem in stored:  # what every command refuses on (Save.open)
                p.add(problem.split(" ")[0], problem)
            if not stored:
                world = _check_rows(save, p, report.counts)
                _check_snapshots(save, world, p)
        except SQLiteError as e:
            p.add("sqlite", f"cannot read the save: {e.said}")
    finally:
        save.close()
    report.problems = p.finish()
    return report


def _world(save: Save, p: _Problems) -> World | None:
    texts = [save.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")]
    if not all(isinstance(t, str) for t in texts):
        p.add("meta", "meta: the world and map texts (world_text, map_text) are missing")
        return None
    try:
        return load_world_text(*texts)
    except WorldError as e:
        for problem in e.problems:
            p.add("world", f"the world it holds: {problem}")
        return None


def problems(save: Save, snapshots: bool = False) -> list[str]:
    """What is wrong in a save opened (and so its rows checked, store/validate.py) against the
    world it holds: what a resume, an inspect or a replay (`snapshots`) needs to hold."""
    p = _Problems()
    world = _check_rows(save, p, {})
    if snapshots:
        _check_snapshots(save, world, p)
    return p.finish()


def require(save: Save, snapshots: bool = False, doing: str = "open") -> None:
    """Refuse (SaveError, closing the save) a save whose rows make no sense against its world.
    The rows are read as of one moment: a run may be writing the save meanwhile (a reader's check
    must not see a tick's events before its clock)."""
    held = save.held()
    try:
        save.hold_still()
        found = problems(save, snapshots)
    except BaseException:
        save.close()
        raise
    if not held:
        save.let_go()  # (only read: a reader then follows the run again)
    if found:
        save.close()
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        raise SaveError(f"{save.path}: refusing to {doing}: " + "; ".join(found[:5]) + more
                        + f"; see `smalltown save check {save.path}`")


def _check_rows(save: Save, p: _Problems, counts: dict[str, int]) -> World | None:
    counts["schema_version"] = save.meta("schema_version")  # a known one: Save.open refuses others
    world = _world(save, p)
    try:
        Settings().saved(save.meta("settings"))  # each in its range: a resume does arithmetic with them
    except SettingsError as e:
        p.add("meta", f"meta settings: {e}")
    tick, game_time = save.meta("tick"), save.meta("game_time")
    if not isinstance(tick, int) or isinstance(tick, bool) or tick < 0:
        p.add("meta", f"meta tick {tick!r} is not a tick number")
        tick = None
    if world is not None and tick is not None and tick * world.step_seconds >= (GAME_TIME_MAX - world.start).total_seconds():
        p.add("meta", f"meta tick {tick:,}: past the game's last time ({GAME_TIME_MAX:%Y-%m-%d})")
        tick = None
    if world is not None and tick is not None:
        expected = (world.start + timedelta(seconds=tick * world.step_seconds)).strftime(TIME_FMT)
        if game_time != expected:
            p.add("meta", f"meta game_time {game_time!r} does not match tick {tick} "
                          f"(the world's clock says {expected})")
        if save.meta("world") != world.name:
            p.add("meta", f"meta world {save.meta('world')!r} is not the name of the world it holds "
                          f"({world.name!r})")
    now = read_time(game_time)

    names = _check_agents(save, world, p)
    counts["agents"] = len(names)
    counts["objects"] = _check_objects(save, world, p)
    counts["memories"] = _check_memories(save, names, now, p)
    reader = save.reader()
    tables = reader.tables()
    if "conversations" in tables:
        check_conversations(save, world, {a.name for a in world.agents} if world else names, now, p.add)
    for table in ("events", "llm_calls", "retrievals", "conversations"):
        if table not in tables:
            continue  # retrievals: since schema 2; conversations: since schema 4
        n, last = reader.log_extent(table)
        counts[table] = n
        if tick is not None and last is not None and last > tick:
            p.add(table, f"{table}: rows from tick {last}, after the save's tick {tick}")
    for agent, n in reader.event_counts_by_agent():
        if names and agent not in names:
            p.add("events", f"events: {n} events of an unknown agent {agent!r}")
    if world is not None:
        for eid, kind in reader.events_off_map(world.map.width, world.map.height):
            p.add("events", f"events row {eid}: data: a {kind!r} event's tile is outside the map")
    _check_embeddings(save, p)
    return world


def _check_embeddings(save: Save, p: _Problems) -> None:
    """The vectors are as long as the save's embedder makes them (a retrieval multiplies them)."""
    m = re.fullmatch(r"hash-ngram-(\d+)-v\d+", str(save.meta("embedder")))
    dims = save.reader().embedding_dims()
    if m and dims and dims[0][0] != int(m[1]):
        p.add("embeddings", f"memories: embedding: vectors of {dims[0][0]} numbers; the save's "
                            f"embedder {save.meta('embedder')} makes {m[1]}")


def _check_snapshots(save: Save, world: World | None, p: _Problems) -> None:
    """Each snapshot decodes to the format a replay, a fork or a rewind reads, with the world's
    agents on tiles of its map."""
    names = {a.name for a in world.agents} if world else None
    for tick, blob in save.reader().snapshot_rows():
        try:
            snap = decode_snapshot(blob, f"snapshots row {tick}")
        except SaveError as e:
            p.add("snapshots", str(e))
            continue
        if snap["tick"] != tick:
            p.add("snapshots", f"snapshots row {tick}: state: its tick is {snap['tick']}")
        if names is None:
            continue
        if {a[0] for a in snap["agents"]} != names:
            p.add("snapshots", f"snapshots row {tick}: agents: not the world's agents")
        for name, x, y, dest, *_ in snap["agents"]:
            try:
                ok = world.map.in_bounds((x, y)) and (dest is None or world.map.in_bounds(tuple(json.loads(dest))))
            except (ValueError, TypeError, RecursionError):
                ok = False
            if not ok:
                p.add("snapshots", f"snapshots row {tick}: agents: {name!r} is not on a tile of the map")


def _check_agents(save: Save, world: World | None, p: _Problems) -> set[str]:
    rows = save.reader().agent_rows(by_name=True)
    names = {r.name for r in rows}
    if world is None:
        return names
    declared = [a.name for a in world.agents]
    for name in declared:
        if name not in names:
            p.add("agents", f"agent {name!r}: in the world, missing from the save")
    for r in rows:
        name, x, y, dest, address, state = r.name, r.x, r.y, r.dest, r.address, r.state
        if name not in declared:
            p.add("agents", f"agent {name!r}: in the save, not in its world")
            continue
        if not (isinstance(x, int) and isinstance(y, int)) or not world.map.in_bounds((x, y)):
            p.add("agents", f"agent {name!r}: position [{x}, {y}] is outside the map "
                            f"({world.map.width}x{world.map.height})")
        elif not world.map.walkable[y, x]:
            p.add("agents", f"agent {name!r}: position [{x}, {y}] is not walkable "
                            f"({world.map.rows[y][x]!r})")
        if dest is not None:
            try:
                dx, dy = json.loads(dest)
                ok = isinstance(dx, int) and isinstance(dy, int) and world.map.in_bounds((dx, dy)) \
                    and bool(world.map.walkable[dy, dx])
            except (ValueError, TypeError):
                ok = False
            if not ok:
                p.add("agents", f"agent {name!r}: destination {dest!r} is not a walkable tile of the map")
        if address is not None and address not in world.objects:
            p.add("agents", f"agent {name!r}: its action's address {address!r} is not an object of the world")
        wrong = state_problem(state)
        if wrong:
            p.add("agents", f"agents row {name!r}: state: {wrong}")
    return names


def _check_objects(save: Save, world: World | None, p: _Problems) -> int:
    rows = save.reader().object_rows()
    for address, state in rows:
        if world is not None and address not in world.objects:
            p.add("objects", f"object {address!r}: not an object of the world")
        if not isinstance(state, str) or not state:
            p.add("objects", f"object {address!r}: its state {state!r} is not text")
    return len(rows)


def _check_memories(save: Save, names: set[str], now: datetime | None, p: _Problems) -> int:
    """Owners, times and evidence, in SQL (the rows' types are checked when the save is opened)."""
    reader = save.reader()
    for agent, n in reader.memory_agents():
        if names and agent not in names:
            p.add("memory agents", f"memories: {n:,} belonging to {agent!r}, who is not an agent of the save")
    if now is not None:
        for mid, label, stamp in reader.memories_after(now.strftime(TIME_FMT)):
            p.add("memory times", f"memory {mid}: {label} at {stamp}, after the save's clock")
    for mid, cited in reader.missing_evidence():
        p.add("evidence", f"memory {mid}: evidence id {cited!r} does not exist")
    return save.count("memories")


@dataclass(frozen=True)
class Sound:
    """`require_sound`'s proof that the save at `path` was found sound. It stays true while no one
    writes the file: the opener holds its writer lock from before the check until the run is open,
    so that opening it need not read every row again (`sim/open.py`, `resume`)."""
    path: Path

    def covers(self, path: str | Path) -> bool:
        """Whether this check was of the file at `path`."""
        return Path(path).resolve() == self.path


def require_sound(path: str | Path, doing: str = "continue") -> Sound:
    """Before continuing a save: refuse one whose rows make no sense (a quick check, without
    SQLite's page-by-page integrity check), snapshots included (a run may rewind to one)."""
    save = Save.open(path, readonly=True).hold_still()
    require(save, snapshots=True, doing=doing)
    save.close()
    return Sound(Path(path).resolve())
