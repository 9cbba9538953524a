"""Creating, opening and upgrading a run: a new save for a world (a world file, or a shared pack
installed first), or a save continued from its last committed tick (its settings, its embedder,
every agent's mind and body restored), with what older saves lack (schema-1 memories' ratings
and vectors, a schema-2 save's first snapshot) filled in as it opens. A front end hands `open_run`
a path and `RunOptions` with the backend it chose (by name, above the engine); the backend,
embedder and fallback are made here for the run's seed, and the writer lock and a copy to another
save are taken here. A save is checked once as it opens (`sim/check.py`): the
opener checks it before anything is chosen, under its writer lock, and `resume` takes that check's
proof (`Sound`) instead of reading the rows again; without one, `resume` checks it itself."""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

import numpy as np

from smalltown.config import Settings, SettingsError, parse_sets
from smalltown.dirs import saves_dir
from smalltown.llm.backend import Backend, capabilities
from smalltown.llm.embed import Embedder, HashEmbedder
from smalltown.mind.agent import Mind
from smalltown.mind.memory import Memory
from smalltown.mind.records import record
from smalltown.shown import shown
from smalltown.sim.agent import Agent, ahead_from, sighted_from
from smalltown.sim.check import Sound, require, require_sound
from smalltown.sim.backends import BackendChoice, connect
from smalltown.sim.clock import clock_near
from smalltown.sim.files import require_folder
from smalltown.sim.civics import KINDS as CIVIC_KINDS
from smalltown.sim.simulation import Simulation
from smalltown.sim.streams import read_streams, restore_counts, saved_vector, sparse
from smalltown.state.saved import saved_at, world_of
from smalltown.store.records import TickChanges
from smalltown.store.copy import copy_save, remove_db
from smalltown.store.packing import pack_vector
from smalltown.store.schema import TIME_FMT
from smalltown.store.save import Save, SaveError, is_save, take_lock
from smalltown.world.load import load_world, parse_toml
from smalltown.world.model import World


class UntilError(ValueError):
    """The stop time names a time that cannot be run to."""


class SeedError(ValueError):
    """A seed asked of a save that runs under another."""


@dataclass
class RunOptions:
    """What a front end says about the run it opens (all optional but the backend)."""

    backend: BackendChoice  # chosen above the engine (cli/backends.py choose), made here for the run's seed
    save: Path | None = None  # where the run is saved: a copy of a save, or a new world's save
    overwrite: bool = False  # replace a file at `save`
    sets: list[str] = field(default_factory=list)  # --set NAME=VALUE settings
    until: str | None = None  # when to stop, as the user wrote it ("+1d", "18:00")
    say: Callable[[str], None] = lambda text: None  # a notice for the user (a pack installed)
    world_seed: int | None = None  # a new run of a world under this seed, not its file's (recorded in the save)
    started: Callable[[Simulation], None] = lambda sim: None  # given a new save's run before it asks anything


def open_run(target: Path, options: RunOptions) -> tuple[Simulation, datetime | None]:
    """The run of `target` (a save, a world or a world pack) and when to stop it. Everything that
    can refuse the start (the options, the save's soundness, the backend: a model that will not
    load, a server that does not answer) is checked before anything is written, so a start that
    fails leaves no file."""
    from smalltown.world.pack import is_pack, read_pack, unpack

    options.backend.check()
    sets = options.sets
    Settings().override(**parse_sets(sets))  # a --set that names no setting, or a value out of its range
    if options.save is not None:
        require_folder(options.save)  # (raises SavePathError)
    if is_save(target):
        return _continue(target, options)
    if target.suffix in (".sqlite", ".sqlite3", ".db"):
        raise SaveError(f"{target}: not a smalltown save (not an SQLite database)")
    world = read_pack(target).world if is_pack(target) else load_world(target)
    until = stop_time(options.until, world.start, world.start)
    seed = world.seed if options.world_seed is None else options.world_seed
    backend, embedder, fallback = _chosen(options.backend, seed)
    if is_pack(target):  # a shared world: validated and installed under worlds/ and maps/, then run
        target = unpack(target, ".")
        options.say(f"installed {shown(target)} (and its map)")
        world = load_world(target)
    path = options.save or default_save(target)
    return create(world, path, backend, None, options.overwrite, sets, embedder, fallback,
                  world_seed=options.world_seed, started=options.started), until


def _continue(target: Path, options: RunOptions) -> tuple[Simulation, datetime | None]:
    """A save continued, in place (under its writer lock) or in a copy at `options.save`."""
    path = target
    if options.save and os.path.realpath(options.save) != os.path.realpath(target):  # (a loop of links: no raise)
        path = options.save
        if path.exists() and not options.overwrite:
            raise FileExistsError(f"{path}: a file is already there (pass --overwrite)")
    hold = take_lock(path) if path == target else None  # one writer: refused now if another writes it
    try:
        fresh = unborn(target)  # killed while it was being created: nothing had happened yet
        if options.world_seed is not None and options.world_seed != peek_seed(target):
            raise SeedError(f"{target} runs under seed {peek_seed(target)}, not {options.world_seed}: "
                            "a save keeps the seed it was started with")
        sound = None
        if not fresh:
            sound = require_sound(target)  # a save from a stranger whose rows make no sense stops here
        _tick, now, start = saved_at(target)
        until = stop_time(options.until, now, start)
        backend, embedder, fallback = _chosen(options.backend, peek_seed(target))
        if path != target:
            hold = take_lock(path, building=True)  # the copy (built aside) is ours until it runs
            copy_save(target, path)  # (built aside: whole, or nothing)
        try:
            if fresh:
                return recreate(path, backend, embedder, fallback, options.sets), until
            # in place, the lock held since the check: its rows are the ones checked. A copy is
            # checked as it opens (the original, not locked by us, may have run on meanwhile)
            return resume(path, backend, sets=options.sets, embedder=embedder, fallback=fallback,
                          sound=sound if path == target else None), until
        except BaseException:
            if path != target:
                remove_db(path)  # a copy that did not start is not left behind
            raise
    finally:
        if hold is not None:
            hold.release()


def _chosen(choice: BackendChoice, seed: int) -> tuple[Backend, Embedder | None, Backend | None]:
    """The run's backend, once it has shown it can answer (a server that is down is refused here,
    before a save is written, not at the first question), its embedder and its fallback."""
    backend = choice.backend(seed)
    connect(backend)
    return backend, choice.embedder(), choice.fallback(seed)


def stop_time(until: str | None, now: datetime, start: datetime) -> datetime | None:
    """The stop time, read against the run's current time (a bare clock time is its next
    occurrence after `now`, as the TUI's "run until" reads it; "day 2 9:00" counts from the day of
    `start`, the world's start); refused before anything is written."""
    if not until:
        return None
    try:
        when = clock_near(until, now, start)
    except ValueError as e:
        raise UntilError(str(e)) from None
    if when < now:  # "-1h", or a time already past: nothing would run
        raise UntilError(f"{until.strip()[:40]!r} is {when:%Y-%m-%d %H:%M:%S}, before the save's "
                         f"time {now:%Y-%m-%d %H:%M:%S}: nothing to run (a later time, or +1h)")
    return when


def default_save(world_path: Path) -> Path:
    """Where a new run of a world is saved unless told: the user's saves folder (made here if it
    is not there yet), named for the world and the time, never an existing file."""
    folder = saves_dir()
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{world_path.stem}-{datetime.now():%Y%m%d-%H%M%S}"
    path = folder / f"{stem}.sqlite"
    for i in range(2, 1000):  # two runs started in one second
        if not path.exists():
            break
        path = folder / f"{stem}-{i}.sqlite"
    return path


def create(world: World, path: str | Path, backend: Backend, settings: Settings | None = None,
           overwrite: bool = False, sets: list[str] = (), embedder: Embedder | None = None,
           fallback: Backend | None = None, *, world_seed: int | None = None, started: Callable = lambda s: None) -> Simulation:
    """A new run of `world`. Settings: the defaults (or `settings`), then the world file's
    [settings], then `--set` options; the result is recorded in the save. `world_seed`: the run's
    seed instead of the world file's (meta world_seed; the backend is seeded by the caller)."""
    settings = (settings or Settings()).override(**world.settings).override(**parse_sets(sets))
    reseeded = {} if world_seed is None else {"world_seed": world_seed}
    if world_seed is not None:
        world.seed = world_seed
    save = Save.create(path, {**reseeded,
        "world": world.name, "world_source": world.source, "world_text": world.text,
        "map_source": world.map_source, "map_text": world.map_text,
        "tick": 0, "game_time": world.start.strftime(TIME_FMT),
        "created_with": backend.name, "settings": settings.changes(),
    }, overwrite=overwrite, publish=False)
    try:  # built aside: the save appears at `path` only once its first state is whole
        sim = Simulation(world, save, backend, settings, tick=0, embedder=embedder or HashEmbedder(), fallback=fallback)
        started(sim)  # (a stop from now on cuts off the questions below: they raise Stopped, nothing is saved)
        with save.transaction():
            save.set_meta({"embedder": sim.embedder.name})
        for spec in world.agents:
            arena = world.arena_at(spec.spawn)
            agent = Agent(spec, sim.mind_for(spec), spec.spawn, arena.index if arena else -1)
            sim.add(agent)
            agent.mind.remember("observation", agent.mind.spec.seed_memories, sim.now)  # seed memories
            if arena:
                agent.mind.enter(arena.sector, arena.name, list(arena.objects))
        first = sim.changes()
        first.changed |= {a.name for a in sim.agents}
        first.objects |= set(sim.objects)
        sim._flush(first, snapshot=True)
        save.publish()
    except BaseException:
        save.close()  # (nothing is left behind)
        raise
    return sim


def unborn(path: str | Path) -> bool:
    """A save whose first commits (schema and meta, then agents) a crash cut off: tick 0, no agents."""
    save = Save.open(path, readonly=True)
    try:
        return save.meta("tick") == 0 and save.count("agents") == 0
    finally:
        save.close()


def recreate(path: str | Path, backend: Backend, embedder: Embedder | None, fallback: Backend | None,
             sets: list[str]) -> Simulation:
    """Start an unborn save again (made by an older smalltown), from the world and settings it recorded."""
    save = Save.open(path)  # (refused if the file is read-only)
    try:
        world = world_of(save)
        settings = Settings().saved(save.meta("settings"))
        seed = save.meta("world_seed")
    finally:
        save.close()
    return create(world, path, backend, settings, True, sets, embedder, fallback,
                  world_seed=seed if isinstance(seed, int) else None)


def peek_seed(path: str | Path) -> int:
    """The seed of the world a save was started from (to seed its backend before opening)."""
    save = Save.open(path, readonly=True)
    try:
        if isinstance(seed := save.meta("world_seed"), int):  # run under another seed than its file's
            return seed
        text = save.meta("world_text")
        if not isinstance(text, str):
            return 0  # (resume refuses the save, saying why)
        return int(parse_toml(save.meta("world_source"), text).get("seed", 0))
    finally:
        save.close()


def resume(path: str | Path, backend: Backend, settings: Settings | None = None, sets: list[str] = (),
           embedder: Embedder | None = None, fallback: Backend | None = None, readonly: bool = False,
           *, sound: Sound | None = None) -> Simulation:
    """Continue a save from its last committed tick, with the settings it was run with
    (plus `--set` options, which are then recorded). `readonly`: to look at it (inspect),
    without its writer lock; nothing is written to the file (an older save is migrated in
    memory, see Save.current). `sound`: `require_sound`'s proof that this very file was just
    checked under the lock its caller still holds; without it (or for another file) the save's
    rows are checked here."""
    extra = parse_sets(sets)
    if readonly and extra:
        raise SaveError(f"{path}: opened to be read: settings cannot be changed")
    if readonly:  # an older save is migrated in memory and checked there
        save = Save.open(path, readonly=True).current()
        require(save)
    else:
        if not (sound and sound.covers(path)):
            # rows that make no sense against the world are refused here, not mid-resume, and before
            # anything is written (opening to write puts the file in WAL mode)
            require_sound(path, doing="open")  # a run writes after snapshots: it may rewind to one
        save = Save.open(path)
    try:
        settings = (settings or Settings()).saved(save.meta("settings"))
    except SettingsError as e:  # a stranger's save: refused, naming the setting
        save.close()
        raise SaveError(f"{path}: refusing to open it: meta settings: {e}") from None
    try:
        settings = settings.override(**extra)
    except SettingsError:
        save.close()
        raise
    if extra:
        with save.transaction():
            save.set_meta({"settings": settings.changes()})
    world = world_of(save)
    embedder = embedder or HashEmbedder()
    if save.meta("embedder") is None and not readonly:  # a save from before memories had embeddings (schema 1)
        with save.transaction():
            save.set_meta({"embedder": embedder.name})
    if (save.meta("embedder") or embedder.name) != embedder.name:
        used = save.meta("embedder")
        hint = (f"pass --embed-model with the model {used.split(':')[1]!r}" if used.startswith("llama-embed:")
                else "run it without --embed-model")
        save.close()
        raise SaveError(f"{path}: its memories were embedded with {used!r}, not {embedder.name!r}; "
                        f"embeddings of two embedders cannot be mixed in one save ({hint})")
    sim = Simulation(world, save, backend, settings, tick=save.meta("tick"), embedder=embedder, fallback=fallback)
    sim.objects.update(save.objects())
    embedder.preload(save.embeddings())
    last_id, unrated = save.memory_extent()
    streams: dict[str, tuple[list[Memory], list[np.ndarray]]] | None = None  # (a schema-1 save's, whole)
    legacy: dict[str, list[int]] = {}  # records a schema-1 save kept without importance or vector
    if unrated:
        streams = read_streams(save, embedder, legacy)
        sim._memory_counts = restore_counts(world, {a: [m.id for m in ms] for a, (ms, _) in streams.items()},
                                             last_id)
        sim._flush(sim.changes())  # what the migration could not know (it has no model): now rated and embedded
    ids: dict[str, np.ndarray] = {}
    rows = {r[0]: r for r in save.agents()}
    for spec in world.agents:
        name, x, y, dest, _action, _address, state = rows[spec.name]
        state = json.loads(state)
        tile = (x, y)
        arena = world.arena_at(tile)
        agent = Agent(spec, sim.mind_for(spec, state), tile,
                      arena.index if arena else -1, using=state.get("using"),
                      recent=deque(state.get("recent", [])), sighted=sighted_from(state.get("sighted")),
                      ahead=ahead_from(state.get("ahead")))
        if streams is None:  # one agent's rows at a time, kept as columns (mind/memory.py)
            try:
                agent.mind.memory.load_saved(save.agent_memories(spec.name), sparse(path, embedder.dim))
            except ValueError as e:  # (the checks read no vector's positions: one that cannot be held)
                save.close()
                raise SaveError(f"{path}: refusing to open it: memories: {e}; the save is damaged: "
                              "continue a copy made before it was") from None
            ids[spec.name] = agent.mind.memory.ids()
        else:
            mems, embs = streams.get(spec.name, ([], []))
            if spec.name in legacy:
                _complete_legacy(sim, agent.mind, mems, embs, legacy[spec.name])
            agent.mind.memory.load(mems, np.vstack(embs) if embs else np.zeros((0, embedder.dim), np.float32))
        agent.mind.reindex()
        if dest:
            agent.dest = tuple(json.loads(dest))
            agent.path = deque(sim.paths.path(tile, agent.dest))
        if agent.using:
            sim.users.setdefault(agent.using, set()).add(agent.name)
        sim.add(agent)
    if streams is None:
        sim._memory_counts = restore_counts(world, ids, last_id)
        if hasattr(embedder, "backing"):  # a text the town has filed is embedded as it was saved
            embedder.backing = saved_vector([a.mind.memory for a in sim.agents])
    if sim.economy:  # holdings: the starting inventories and the ledger (a ledger that does not add up refuses)
        sim.economy.load(save.ledger(), str(path), sim.tick)
    if sim.civics:  # the constitution in force, the amendments, the phase: from the save's events
        sim.civics.load(save.events_since(-1, CIVIC_KINDS), sim.now)
    if not save.snapshots() and not readonly:  # a save from before snapshots (schema 2): its first one, now
        sim.snapshot()
    start_after = capabilities(backend).start_after
    if start_after is not None:  # a cassette replays only what was recorded after this tick
        start_after(sim.tick)
    return sim


def _complete_legacy(sim: Simulation, mind: Mind, mems: list[Memory], embs: list, todo: list[int]) -> None:
    """A schema-1 save's seed memories have no importance and no vector: the agent's own mind
    rates them (one task) and the embedder embeds them; both are written back."""
    texts = [mems[i].description for i in todo]
    ratings = mind.importance([record(sim.lore, mems[i]) for i in todo])
    vectors = sim.embedder.embed(texts)
    rows = []
    for i, rating, vec in zip(todo, ratings, vectors):
        m = mems[i]
        mems[i] = Memory(m.id, m.agent, m.kind, m.description, m.created, m.last_accessed, rating, m.evidence)
        embs[i] = vec
        rows.append((mems[i], pack_vector(vec)))
    sim.save.commit(TickChanges(completed=tuple(rows)))
