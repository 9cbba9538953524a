"""The Simulation: the clock, the tick loop, the event log, and the save it commits to."""

from __future__ import annotations

import json
from collections import deque
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable

import numpy as np

from smalltown.config import Settings, SettingsError, parse_sets
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Backend, CallRecord, Stopped, capabilities
from smalltown.llm.embed import Embedder, HashEmbedder
from smalltown.mind.agent import Action, Mind
from smalltown.mind.memory import Memory, MemoryStream, Retrieval, RetrievalWeights
from smalltown.mind.records import Lore, record
from smalltown.mind.talk import Conversation, consider, converse
from smalltown.lang import doing
from smalltown.seeded import stable_int
from smalltown.sim.events import Event
from smalltown.store.save import TIME_FMT, Save, SaveError
from smalltown.world.load import load_world_text
from smalltown.world.model import AgentSpec, Tile, World, pretty
from smalltown.world.paths import Paths
from smalltown.world.perception import Body, Seen, perceive
from smalltown.world.schema import object_state_problem

SNAPSHOT_EVERY = 3600  # game seconds: a snapshot at the first tick of each game hour


@dataclass
class Agent:
    """An agent in the running town: its body (where it is, where it walks) and its mind."""

    spec: AgentSpec
    mind: Mind
    tile: Tile
    arena: int
    path: deque[Tile] = field(default_factory=deque)
    dest: Tile | None = None
    using: str | None = None  # the object it is acting on, once arrived
    recent: deque[str] = field(default_factory=deque)  # latest percepts (retention)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def action(self) -> Action | None:
        return self.mind.action

    @property
    def doing(self) -> str:
        """What others see it doing: "wiping the tables", "walking to the cafe to ..." """
        a = self.mind.action
        return doing(a.activity if a else None, a.address if a else None, bool(self.path))

    @property
    def asleep(self) -> bool:
        a = self.mind.action
        return a is not None and a.asleep and not self.path

    def state_json(self) -> str:
        # insertion order, not sorted: a resumed mind must list its known places in the same order
        return json.dumps({**self.mind.to_json(), "using": self.using, "recent": list(self.recent)})


class Simulation:
    def __init__(self, world: World, save: Save, backend: Backend, settings: Settings, tick: int,
                 embedder: Embedder | None = None, fallback: Backend | None = None):
        """`fallback` answers what `backend` cannot (an unusable answer, a prompt too long for its
        window), and the call log says so; without one such a question stops the run."""
        self.world = world
        self.save = save
        self.backend = backend
        self.settings = settings
        self.tick = tick
        self.dropped = False  # a tick was cut off mid-way (a stop): this state is not the save's, never commit it
        self.paths = Paths(world.map.walkable)
        self.embedder = embedder or HashEmbedder()
        self._calls: list[tuple[int, CallRecord]] = []
        self._conversations: list[Conversation] = []  # this tick's, written with it
        self.asker = Asker(backend, lambda rec: self._calls.append((self.tick, rec)), fallback)
        self.lore = Lore(world)
        self.objects: dict[str, str] = {a: o.initial_state for a, o in world.objects.items()}
        self.users: dict[str, set[str]] = {}
        self.agents: list[Agent] = []
        self._by_name: dict[str, Agent] = {}
        self._memory_counts: list[int] = []  # per agent: see _new_id
        self.importance: dict[str, dict[str, int]] = {a.name: {} for a in world.agents}  # per agent
        self._pool: ThreadPoolExecutor | None = None
        self.weights = RetrievalWeights(settings.weight_recency, settings.weight_importance,
                                        settings.weight_relevance, settings.recency_decay)

    def _new_id(self, index: int) -> int:
        """Memory ids interleaved by agent (agent i of n gets i+1, i+1+n, i+1+2n, …): unique, and
        the same whatever order agents thinking at once happen to finish in."""
        self._memory_counts[index] += 1
        return self._memory_counts[index] * len(self.world.agents) + index + 1

    def _complete_legacy(self, mind: Mind, mems: list[Memory], embs: list, todo: list[int]) -> None:
        """A schema-1 save's seed memories have no importance and no vector: the agent's own mind
        rates them (one task) and the embedder embeds them; both are written back."""
        texts = [mems[i].description for i in todo]
        ratings = mind.importance([record(self.lore, mems[i]) for i in todo])
        vectors = self.embedder.embed(texts)
        rows = []
        for i, rating, vec in zip(todo, ratings, vectors):
            m = mems[i]
            mems[i] = Memory(m.id, m.agent, m.kind, m.description, m.created, m.last_accessed, rating, m.evidence)
            embs[i] = vec
            rows.append((rating, vec.astype(np.float32).tobytes(), m.id))
        with self.save.transaction():
            self.save.complete_memories(rows)

    def _restore_counts(self, streams: dict[str, tuple[list[Memory], list]], last_id: int) -> list[int]:
        """Each agent's id counter, from its own latest id (so a resumed run allocates exactly the
        ids an unbroken one would). A save whose ids are not interleaved by agent (made before
        they were) continues above its highest id instead."""
        n = len(self.world.agents)
        counts = []
        for i, spec in enumerate(self.world.agents):
            mems = streams.get(spec.name, ([], []))[0]
            if any((m.id - 1) % n != i for m in mems):
                return [last_id // n] * n
            counts.append((mems[-1].id - 1) // n if mems else -1)
        return counts

    def _mind(self, spec: AgentSpec, state: dict | None = None) -> Mind:
        index = self.world.agents.index(spec)
        while len(self._memory_counts) <= index:
            self._memory_counts.append(-1)
        stream = MemoryStream(spec.name, self.embedder, lambda: self._new_id(index), self.weights)
        return Mind(spec, self.world, self.asker, stream, self.importance[spec.name], self.settings, state, self.lore)

    def _add(self, agent: Agent) -> None:
        self.agents.append(agent)
        self._by_name[agent.name] = agent

    # --- creating and opening -----------------------------------------------------------------

    @classmethod
    def create(cls, world: World, path: str | Path, backend: Backend, settings: Settings | None = None,
               overwrite: bool = False, sets: list[str] = (), embedder: Embedder | None = None,
               fallback: Backend | None = None) -> "Simulation":
        """A new run of `world`. Settings: the defaults (or `settings`), then the world file's
        [settings], then `--set` options; the result is recorded in the save."""
        settings = (settings or Settings()).override(**world.settings).override(**parse_sets(sets))
        save = Save.create(path, {
            "world": world.name, "world_source": world.source, "world_text": world.text,
            "map_source": world.map_source, "map_text": world.map_text,
            "tick": 0, "game_time": world.start.strftime(TIME_FMT),
            "created_with": backend.name, "settings": settings.changes(),
        }, overwrite=overwrite, publish=False)
        try:  # built aside: the save appears at `path` only once its first state is whole
            sim = cls(world, save, backend, settings, tick=0, embedder=embedder, fallback=fallback)
            with save.transaction():
                save.set_meta({"embedder": sim.embedder.name})
            for spec in world.agents:
                arena = world.arena_at(spec.spawn)
                agent = Agent(spec, sim._mind(spec), spec.spawn, arena.index if arena else -1)
                sim._add(agent)
                agent.mind.remember("observation", spec.seed_memories, sim.now)  # seed memories
                if arena:
                    agent.mind.enter(arena.sector, arena.name, list(arena.objects))
            sim._flush([], {a.name for a in sim.agents}, set(), set(sim.objects), snapshot=True)
            save.publish()
        except BaseException:
            save.close()  # (nothing is left behind)
            raise
        return sim

    @staticmethod
    def peek_seed(path: str | Path) -> int:
        """The seed of the world a save was started from (to seed its backend before opening)."""
        save = Save.open(path, readonly=True)
        try:
            from smalltown.world.load import parse_toml

            text = save.meta("world_text")
            if not isinstance(text, str):
                return 0  # (Simulation.open refuses the save, saying why)
            return int(parse_toml(save.meta("world_source"), text).get("seed", 0))
        finally:
            save.close()

    @classmethod
    def open(cls, path: str | Path, backend: Backend, settings: Settings | None = None,
             sets: list[str] = (), embedder: Embedder | None = None, fallback: Backend | None = None,
             readonly: bool = False) -> "Simulation":
        """Continue a save from its last committed tick, with the settings it was run with
        (plus `--set` options, which are then recorded). `readonly`: to look at it (inspect),
        without its writer lock; nothing is written to the file (an older save is migrated in
        memory, see Save.current)."""
        extra = parse_sets(sets)
        if readonly and extra:
            raise SaveError(f"{path}: opened to be read: settings cannot be changed")
        from smalltown.sim.check import require  # (sim/check.py reads the save; it imports no simulation)

        # rows that make no sense against the world are refused here, not mid-resume, and before
        # anything is written (opening to write puts the file in WAL mode)
        look = Save.open(path, readonly=True)
        look = look.current() if readonly else look.hold_still()
        require(look, snapshots=not readonly)  # a run writes after them: it may need to rewind to one
        if readonly:
            save = look
        else:
            look.close()
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
        world = load_world_text(save.meta("world_source"), save.meta("world_text"),
                                save.meta("map_source"), save.meta("map_text"))
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
        sim = cls(world, save, backend, settings, tick=save.meta("tick"), embedder=embedder, fallback=fallback)
        sim.objects.update(save.objects())
        embedder.preload((text, np.frombuffer(vec, dtype=np.float32)) for text, vec in save.embeddings())
        streams: dict[str, tuple[list[Memory], list[np.ndarray]]] = {}
        last_id = 0
        legacy: dict[str, list[int]] = {}  # records a schema-1 save kept without importance or vector
        for mid, agent_name, kind, desc, created, accessed, importance, emb, evidence in save.memories():
            mems, embs = streams.setdefault(agent_name, ([], []))
            mems.append(Memory(mid, agent_name, kind, desc, datetime.fromisoformat(created),
                               datetime.fromisoformat(accessed), importance or 0, tuple(json.loads(evidence or "[]"))))
            if emb is None or importance is None:
                legacy.setdefault(agent_name, []).append(len(mems) - 1)
                embs.append(None)
            else:
                vec = np.frombuffer(emb, dtype=np.float32)
                embs.append(vec)
                embedder.preload([(desc, vec)])
                sim.importance.setdefault(agent_name, {}).setdefault(desc, importance)
            last_id = max(last_id, mid)
        sim._memory_counts = sim._restore_counts(streams, last_id)
        if legacy:  # what the migration could not know (it has no model): now rated and embedded
            sim._flush([], set(), set(), set())
        rows = {r[0]: r for r in save.agents()}
        for spec in world.agents:
            name, x, y, dest, _action, _address, state = rows[spec.name]
            state = json.loads(state)
            tile = (x, y)
            arena = world.arena_at(tile)
            agent = Agent(spec, sim._mind(spec, state), tile,
                          arena.index if arena else -1, using=state.get("using"),
                          recent=deque(state.get("recent", [])))
            mems, embs = streams.get(spec.name, ([], []))
            if spec.name in legacy:
                sim._complete_legacy(agent.mind, mems, embs, legacy[spec.name])
            agent.mind.memory.load(mems, np.vstack(embs) if embs else np.zeros((0, embedder.dim), np.float32))
            agent.mind.reindex()
            if dest:
                agent.dest = tuple(json.loads(dest))
                agent.path = deque(sim.paths.path(tile, agent.dest))
            if agent.using:
                sim.users.setdefault(agent.using, set()).add(agent.name)
            sim._add(agent)
        if not save.snapshots() and not readonly:  # a save from before snapshots (schema 2): its first one, now
            sim.snapshot()
        start_after = capabilities(backend).start_after
        if start_after is not None:  # a cassette replays only what was recorded after this tick
            start_after(sim.tick)
        return sim

    def stop(self) -> None:
        """End the tick in flight now, even mid-answer, and every later one (they raise Stopped;
        `run_until` returns): the save stays at the last whole tick. From any thread, or a signal
        handler (it only sets flags and cuts connections)."""
        self.asker.stop()

    @property
    def stopping(self) -> bool:
        return self.asker.stopping.is_set()

    def close(self) -> None:
        if self._pool is not None:  # a stopped run does not wait on a worker stuck in a backend
            self._pool.shutdown(wait=not self.stopping, cancel_futures=True)
        self.save.close()
        self.embedder.close()

    # --- the clock ----------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        return self.world.start + timedelta(seconds=self.tick * self.world.step_seconds)

    def agent(self, name: str) -> Agent:
        return self._by_name[name]

    # --- the tick -----------------------------------------------------------------------------

    def step(self) -> list[Event]:
        """Advance one tick and commit it: perceive and remember, reflect, react, act, move.
        Stopped (see `stop`) drops the tick in flight: the clock stays at the last committed one."""
        if self.stopping or self.dropped:
            raise Stopped
        try:
            return self._step()
        except Stopped:
            self.dropped = True
            self.tick = int(self.save.meta("tick"))  # what the save holds: the last whole tick
            self._calls.clear()
            self._conversations.clear()
            raise

    def _step(self) -> list[Event]:
        self.tick += 1
        now = self.now
        stamp = now.strftime(TIME_FMT)
        events: list[Event] = []
        changed: set[str] = set()
        moved: set[str] = set()
        dirty_objects: set[str] = set()

        def emit(agent: str | None, kind: str, text: str, **data: object) -> None:
            events.append(Event(self.tick, stamp, agent, kind, text, data))

        seen = self._perceive(emit, changed)
        for agent in self.agents:
            if seen.get(agent.name):
                agent.mind.observe(seen[agent.name], now, self.objects)
            if agent.mind.should_reflect():
                insights = agent.mind.reflect(now)
                emit(agent.name, "reflected", f"{agent.name} reflects: " + " / ".join(m.description for m in insights),
                     memories=[m.id for m in insights])
                changed.add(agent.name)
        self._react(seen, now, emit, changed)
        due = [a for a in self.agents if a.mind.due(now)]
        for agent, (action, new) in zip(due, self._think(due, now)):
            self._apply(agent, action, new, emit, dirty_objects)
            changed.add(agent.name)
        for agent in self.agents:
            if agent.path:
                self._walk(agent, emit, dirty_objects)
                moved.add(agent.name)
                if not agent.path:
                    changed.add(agent.name)
        self._flush(events, changed, moved, dirty_objects, snapshot=self._snapshot_due())
        return events

    def _flush(self, events: list[Event], changed: set[str], moved: set[str], dirty_objects: set[str],
               snapshot: bool = False) -> None:
        """One transaction: everything this tick (or intervention) changed, and the snapshot of
        the state when one is due."""
        stamp = self.now.strftime(TIME_FMT)
        new_memories, touched, retrievals = [], [], []
        for agent in self.agents:
            n, t, r = agent.mind.memory.drain()
            new_memories += n
            touched += t
            retrievals += r
        # memories carry their own vectors; the cache table keeps the other texts (queries)
        described = {m.description for m, _ in new_memories}
        fresh = [(t, v) for t, v in self.embedder.take_fresh() if t not in described]
        if self.dropped:  # the state after a cut-off tick is half of one: never written
            raise Stopped
        with self.save.transaction():
            if self._conversations:
                ids = self.save.add_conversations(self._conversation_row(c) for c in self._conversations)
                for e in events:
                    if e.kind == "said" and "conversation" in e.data:
                        e.data["conversation"] = ids[e.data["conversation"]]
            self.save.upsert_agents(self._agent_row(self._by_name[n]) for n in sorted(changed))
            self.save.move_agents((a.tile[0], a.tile[1], a.name) for a in self.agents
                                  if a.name in moved and a.name not in changed)
            self.save.set_objects((o, self.objects[o]) for o in sorted(dirty_objects))
            self.save.add_events((e.tick, e.time, e.agent, e.kind, e.text, json.dumps(e.data))
                                 for e in events)
            self.save.add_memories(
                (m.id, m.agent, m.kind, m.description, m.created.strftime(TIME_FMT),
                 m.last_accessed.strftime(TIME_FMT), m.importance, emb.astype(np.float32).tobytes(),
                 json.dumps(list(m.evidence))) for m, emb in new_memories)
            self.save.touch_memories((when.strftime(TIME_FMT), mid) for mid, when in touched)
            self.save.add_retrievals(
                (self.tick, r.time.strftime(TIME_FMT), r.agent, r.purpose, r.query, json.dumps([
                    {"id": s.memory.id, "recency": round(s.recency, 4), "importance": round(s.importance, 4),
                     "relevance": round(s.relevance, 4), "total": round(s.total, 4)} for s in r.results]))
                for r in retrievals)
            self.save.add_embeddings((text, vec.astype(np.float32).tobytes()) for text, vec in fresh)
            self.save.add_calls(
                (t, stamp, c.agent, c.task, c.prompt, c.raw_answer, c.parsed_answer, c.prompt_tokens,
                 c.completion_tokens, c.cached_tokens, c.ms, c.backend, c.model, c.note, c.key, c.fallback)
                for t, c in self._calls)
            self.save.set_meta({"tick": self.tick, "game_time": stamp})
            if snapshot:
                self.save.write_snapshot(self.tick, stamp)
        self._calls.clear()
        self._conversations.clear()

    def _conversation_row(self, c: Conversation) -> tuple:
        end = c.start + timedelta(minutes=c.minutes)
        lines = [{"speaker": x.speaker, "text": x.text, "tells": x.tells, "facts": list(x.facts)} for x in c.lines]
        return (self.tick, c.start.strftime(TIME_FMT), end.strftime(TIME_FMT), c.place, c.initiator, c.other,
                c.reason, json.dumps(lines), json.dumps({n: m.id for n, m in c.chats.items()}),
                json.dumps(c.relationships))

    def _snapshot_due(self) -> bool:
        """The first tick at or after each game hour (SNAPSHOT_EVERY)."""
        now = self.now
        seconds = now.hour * 3600 + now.minute * 60 + now.second
        return seconds % SNAPSHOT_EVERY < self.world.step_seconds

    def snapshot(self) -> int:
        """Record a snapshot of the state now (replacing this tick's, if it has one), so the run
        can be forked or replayed from this moment. Returns the tick."""
        with self.save.transaction():
            self.save.write_snapshot(self.tick, self.now.strftime(TIME_FMT))
        return self.tick

    def _perceive(self, emit, changed: set[str]) -> dict[str, list[Seen]]:
        """What each awake agent newly sees this tick (retention drops what it just saw)."""
        s = self.settings
        bodies = [Body(a.name, a.tile, a.arena, a.doing) for a in self.agents]
        new: dict[str, list[Seen]] = {}
        for agent, body in zip(self.agents, bodies):
            if agent.asleep:
                continue
            for seen in perceive(self.world, body, bodies, self.objects, s.vision_radius,
                                 s.attention_bandwidth):
                if seen.description in agent.recent:
                    continue  # retention: already among the latest percepts
                agent.recent.append(seen.description)
                while len(agent.recent) > s.retention:
                    agent.recent.popleft()
                new.setdefault(agent.name, []).append(seen)
                emit(agent.name, "perceived", f"{agent.name} sees: {seen.description}",
                     subject=seen.subject, distance=seen.distance)
                changed.add(agent.name)
        return new

    def _react(self, seen: dict[str, list[Seen]], now: datetime, emit, changed: set[str]) -> None:
        """Each awake agent may react to one new observation: another agent it may talk to, or an
        object doing something with nobody tending it (a burning stove)."""
        talked: set[str] = set()
        for agent in self.agents:
            # not before its first action: an agent that has not woken into its day does not react
            if agent.action is None or agent.asleep or agent.name in talked or agent.action.talking:
                continue
            # something going on with nobody tending it (a burning stove) comes before people
            new = sorted(seen.get(agent.name, []), key=lambda s: s.subject in self._by_name)
            for s in new:
                other = self._by_name.get(s.subject)
                if other is not None:
                    if (other.action is None or other.asleep or other.name in talked or other.action.talking
                            or not agent.mind.may_talk_to(other.name, now)):
                        continue
                elif not self._unusual(s.subject):
                    continue
                if not agent.mind.may_consider(s.subject, now):
                    continue
                state = other.doing if other is not None else self.objects[s.subject]
                reaction = consider(agent.mind, s, other is not None, now, self._place(agent), state)
                changed.add(agent.name)
                answer = reaction.answer
                if answer.react and answer.talk and other is not None:
                    self._converse(agent, other, now, emit, changed, s.description, answer.opening,
                                   answer.context_summary)
                    talked |= {agent.name, other.name}
                elif answer.react and answer.reaction:
                    emit(agent.name, "reacted", f"{agent.name} reacts to {s.description}: {answer.reaction}",
                         observed=s.subject, reaction=answer.reaction)
                    if agent.mind.replan(now, [], reaction=answer.reaction,
                                         first_address="" if other else s.subject):
                        emit(agent.name, "replanned", f"{agent.name} re-plans the rest of the day",
                             reason=answer.reaction)
                break  # one observation considered per tick

    def _place(self, agent: Agent) -> str:
        arena = self.world.arena_at(agent.tile)
        return pretty(arena.address) if arena else "the street"

    def _unusual(self, address: str) -> bool:
        """An object in a state that neither rest nor anyone's use of it explains (a stove burning):
        worth reacting to. What use does to an object is what the minds were told it does (their
        object states, kept in their saved state), so the test holds after a resume."""
        state = self.objects[address]
        if state == self.world.objects[address].initial_state:
            return False
        key = self.world.objects[address].name + "\x1f"
        return not any(v == state for a in self.agents for k, v in a.mind.object_states.items() if k.startswith(key))

    def _converse(self, a: Agent, b: Agent, now: datetime, emit, changed: set[str], reason: str,
                  opening: str = "", relationship: str = "") -> None:
        place = self._place(a)
        doing = {a.name: a.doing, b.name: b.doing}
        conv = converse(a.mind, b.mind, now, place, reason, doing, opening, relationship)
        self._conversations.append(conv)
        index = len(self._conversations) - 1  # the row id is known when the tick is written
        for line in conv.lines:
            listener = b.name if line.speaker == a.name else a.name
            emit(line.speaker, "said", f"{line.speaker}: {line.text}", to=listener, place=place,
                 conversation=index, tells=line.tells)
        for me, other in ((a, b), (b, a)):
            if conv.plan_changes.get(me.name):  # what was said changes the day: planned again from here
                chat = conv.chats[me.name]
                reason_records = [record(self.lore, m, 1.0) for m in [chat, *conv.learned[me.name]]]
                if me.mind.replan(now, reason_records):
                    emit(me.name, "replanned", f"{me.name} re-plans the rest of the day",
                         reason=chat.description)
            me.path.clear()
            me.dest = None
            action = me.mind.talk(other.name, now, conv.minutes)
            emit(me.name, "started", f"{me.name}: {action.activity}", activity=action.activity,
                 address=action.address, end=action.end.strftime(TIME_FMT))
            changed.add(me.name)

    def _think(self, agents: list[Agent], now: datetime) -> list[tuple[Action, bool]]:
        """Each agent's next action: the model-heavy part of a tick. Agents think at once, up to
        the backend's `max_concurrency` (a server answering many requests); their results are
        applied in agent order, so the run is the same whatever order they finish in."""
        def think(agent: Agent) -> tuple[Action, bool]:
            here = self.world.arena_at(agent.tile)
            return agent.mind.next_action(now, here.address if here else "")

        workers = min(len(agents), capabilities(self.backend).max_concurrency)
        if workers <= 1:
            return [think(a) for a in agents]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mind")
        futures = [self._pool.submit(think, a) for a in agents]
        while wait(futures, timeout=0.1).not_done:  # a stop does not wait on a stuck worker
            if self.stopping:
                raise Stopped
        return [f.result() for f in futures]

    def _apply(self, agent: Agent, action: Action, new: bool, emit, dirty: set[str]) -> None:
        if new:
            emit(agent.name, "started", f"{agent.name}: {action.describe()}",
                 activity=action.activity, address=action.address, end=action.end.strftime(TIME_FMT))
        if agent.using == action.address:
            return  # the next step of the same activity, in the same place
        self._release(agent, emit, dirty)
        goal = self._tile_for(agent, action.address)
        if agent.path and agent.dest == goal:
            return  # still on the way there
        agent.dest = goal
        agent.path = deque(self.paths.path(agent.tile, goal))
        if agent.path:
            emit(agent.name, "moved", f"{agent.name} walks to {pretty(action.address)}",
                 src=list(agent.tile), dst=list(goal), steps=len(agent.path))
        else:
            self._arrive(agent, emit, dirty)

    def _tile_for(self, agent: Agent, address: str) -> Tile:
        """A tile of the object: objects with several tiles seat several agents."""
        tiles = self.world.objects[address].tiles
        return tiles[stable_int(self.world.seed, agent.name, address) % len(tiles)]

    def _walk(self, agent: Agent, emit, dirty: set[str]) -> None:
        agent.tile = agent.path.popleft()
        arena = self.world.arena_at(agent.tile)
        index = arena.index if arena else -1
        if index != agent.arena:
            agent.arena = index
            if arena:
                agent.mind.enter(arena.sector, arena.name, list(arena.objects))
            where = pretty(arena.address) if arena else "the street"
            emit(agent.name, "entered", f"{agent.name} enters {where}",
                 arena=arena.address if arena else None)
        if not agent.path:
            self._arrive(agent, emit, dirty)

    def _arrive(self, agent: Agent, emit, dirty: set[str]) -> None:
        action = agent.action
        assert action is not None
        agent.dest = None
        emit(agent.name, "arrived", f"{agent.name} arrives at {pretty(action.address)}",
             address=action.address, activity=action.activity, tile=list(agent.tile))
        obj = self.world.objects[action.address]
        agent.using = action.address
        self.users.setdefault(action.address, set()).add(agent.name)
        state = agent.mind.object_state(obj.name)
        self._set_object(action.address, state, agent.name, emit, dirty)

    def _release(self, agent: Agent, emit, dirty: set[str]) -> None:
        if agent.using is None:
            return
        users = self.users.get(agent.using, set())
        users.discard(agent.name)
        if not users:
            self._set_object(agent.using, self.world.objects[agent.using].initial_state,
                             agent.name, emit, dirty)
        agent.using = None

    def _set_object(self, address: str, state: str, by: str | None, emit, dirty: set[str]) -> None:
        if self.objects[address] == state:
            return
        self.objects[address] = state
        dirty.add(address)
        emit(by, "object", f"{pretty(address)} is {state}", address=address, state=state)

    def _agent_row(self, a: Agent) -> tuple:
        act = a.action
        return (a.name, a.tile[0], a.tile[1], json.dumps(list(a.dest)) if a.dest else None,
                act.describe() if act else None, act.address if act else None, a.state_json())

    # --- interventions: the user's hand in the town (committed at once; time does not move) ---

    def whisper(self, name: str, text: str) -> Memory:
        """An inner voice: the agent takes `text` as its own thought and re-plans around it."""
        agent = self._by_name[name]
        stamp = self.now.strftime(TIME_FMT)
        thought, replanned = agent.mind.whisper(text, self.now)
        events = [Event(self.tick, stamp, name, "whispered", f"{name} hears an inner voice: {text}",
                        {"memory": thought.id})]
        if replanned:
            events.append(Event(self.tick, stamp, name, "replanned", f"{name} re-plans the rest of the day",
                                {"reason": thought.description}))
        self._flush(events, {name}, set(), set())
        return thought

    def interview(self, name: str, question: str, interviewer: str = "the interviewer") -> tuple[str, Retrieval]:
        """Ask an agent a question in a persona; the answer comes from its memory and is
        remembered by it. The town does not advance."""
        agent = self._by_name[name]
        answer, retrieval = agent.mind.interview(question, interviewer, self.now)
        event = Event(self.tick, self.now.strftime(TIME_FMT), name, "interviewed",
                      f"{interviewer} asks {name}: {question} — {answer}",
                      {"interviewer": interviewer, "question": question, "answer": answer})
        self._flush([event], {name}, set(), set())
        return answer, retrieval

    def edit_object(self, address: str, state: str) -> None:
        """The user rewrites an object's state ("stove is burning"); agents who see it notice."""
        if address not in self.objects:
            raise KeyError(f"no object {address!r} (addresses look like 'sector:arena:object')")
        problem = object_state_problem(state)  # the world file's rule for a state
        if problem:
            raise ValueError(f"the state {str(state)[:60]!r}: {problem}")
        events: list[Event] = []
        self._set_object(address, state, None,
                         lambda agent, kind, text, **data: events.append(
                             Event(self.tick, self.now.strftime(TIME_FMT), agent, kind, text, {**data, "by": "user"})),
                         set())
        self._flush(events, set(), set(), {address})

    # --- running ------------------------------------------------------------------------------

    def run_until(self, when: datetime, stop: Callable[[], bool] = lambda: False,
                  on_tick: Callable[[list[Event]], None] | None = None) -> None:
        """Tick until game time `when`, or `stop()` says so (checked between ticks), or the run is
        stopped mid-tick (`Simulation.stop`: that tick is dropped)."""
        while self.now < when and not stop():
            try:
                events = self.step()
            except Stopped:
                return
            if on_tick:
                on_tick(events)
