"""The Simulation: the engine that owns the clock, runs the tick loop over its systems, applies
the user's commands between ticks, and commits each tick to the save.

A tick, in phases (sim/phases.py, each bound to the registry's modules it runs): perception and
memory → the world's systems → slow modules → reflection → encounters (reactions, the re-plans
after them, conversations) → thinking (each due agent's next action) → movement (and the objects
used on arrival) → the model-free modules on each tick → commitment checks → one commit. With
`think_every_ticks` G > 1 the three phases that ask the model run only on ticks that are multiples
of G, weighing what each agent saw since the last of them. Each phase that asks the model gathers
every agent's question and asks them at once (sim/crowd.py), then applies the answers in agent order.
Creating and opening a run (its save, its agents' minds) is `sim/open.py`, which builds the
Simulation; the engine knows nothing of how it was opened."""

from __future__ import annotations

from datetime import datetime, timedelta
from random import Random
from typing import Callable, Protocol

from smalltown.config import Settings
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Backend, CallRecord, Stopped
from smalltown.llm.embed import Embedder
from smalltown.mind.agent import Mind
from smalltown.mind.memory import Memory, MemoryStream, Retrieval, RetrievalWeights
from smalltown.mind.records import Lore
from smalltown.sim import commit, groups, passes, phases
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd
from smalltown.sim.economy import Economy
from smalltown.sim.civics import Civics
from smalltown.sim.encounters import Encounters
from smalltown.store.records import Event
from smalltown.sim.movement import Movement
from smalltown.sim.objects import Objects
from smalltown.sim.phases import Tick
from smalltown.sim.public import Public
from smalltown.sim.slow import SlowModules, running as slow_phase
from smalltown.sim.belief import Belief
from smalltown.sim.memes import Memes
from smalltown.sim.thinking import Thinking
from smalltown.store.records import TickChanges
from smalltown.store.schema import TIME_FMT
from smalltown.store.errors import SaveError
from smalltown.store.save import Save
from smalltown.world.model import Persona, World
from smalltown.world.paths import Paths
from smalltown.world.perception import Seen
from smalltown.world.sight import Sight

__all__ = ["Agent", "Simulation", "SNAPSHOT_EVERY", "TIME_FMT"]

SNAPSHOT_EVERY = 3600  # game seconds: a snapshot at the first tick of each game hour


class Applicable(Protocol):
    """An intervention (sim/commands.py), which applies itself to the simulation: named here by
    its shape, so that the engine does not import the commands, which call it."""

    def apply(self, sim: "Simulation") -> object: ...


class Simulation:
    def __init__(self, world: World, save: Save, backend: Backend, settings: Settings, tick: int,
                 embedder: Embedder, fallback: Backend | None = None):
        """`embedder` is the run's (sim/open.py chooses it: the save's own, or the model-free
        default). `fallback` answers what `backend` cannot (an unusable answer, a prompt too long for its
        window), and the call log says so; without one such a question stops the run."""
        self.world = world
        self.save = save
        self.backend = backend
        self.settings = settings
        self.tick = tick
        self.dropped = False  # a tick was cut off mid-way (a stop): this state is not the save's, never commit it
        # the last whole tick, and whether the save's clock is behind it: a tick that changed nothing
        # is not written (see _flush); `write_clock` catches the save's clock up
        self.finished, self.clock_behind = tick, False
        self.paths = Paths(world.map.walkable)
        self.sight = Sight(world)
        self.embedder = embedder
        self.crowd = Crowd(backend, lambda: self.stopping)
        # (tick, the crowd's phase, call): written in the order of phase and agent (see _flush)
        self._calls: list[tuple[int, int, CallRecord]] = []
        self.asker = Asker(backend, self._record_call, fallback, tick=self._asked_at)
        self.lore = Lore(world)
        self.economy = Economy(world) if world.economy else None
        # each agent as the town knew it at the last tick's end (sim/public.py)
        self.public = Public(world, settings.memes, self.economy.holdings if self.economy else None,
                             kept=bool(self.economy) or settings.memes or settings.action_awareness or slow_phase(settings))
        self.agents: list[Agent] = []
        self._by_name: dict[str, Agent] = {}
        self._memory_counts: list[int] = []  # per agent: see _new_id
        self.importance: dict[str, dict[str, int]] = {a.name: {} for a in world.agents}  # per agent
        self.weights = RetrievalWeights(settings.weight_recency, settings.weight_importance,
                                        settings.weight_relevance, settings.recency_decay)
        # the systems, each with one job
        self.things = Objects(world)
        self.objects: dict[str, str] = self.things.states  # address -> state (what callers read)
        self.users: dict[str, set[str]] = self.things.users
        self.movement = Movement(world, self.paths, self.things)
        self.encounters = Encounters(world, self.lore, self.agents, self._by_name, self.things, self.movement,
                                     self.crowd)
        self.grid = settings.think_every_ticks  # the mind thinks on ticks that are multiples of it
        self.thinking = Thinking(world, self.crowd, self.movement, prefetch=self.grid > 1)
        self.think_ahead = settings.think_ahead and settings.planning  # (the no-planning ablation asks each action)
        # slow modules (mind/modules.py: those registered and on): answers applied `slow_lag_ticks` after
        # they were asked, on the grid
        self.slow = SlowModules(world, self.crowd, self.agents, settings, self.public, self.grid) \
            if slow_phase(settings) else None
        # (a world's economy, its [economy]: holdings and the ledger, the ops applied as actions end: above)
        # a world's civics (its [civics]): the constitution, tax seasons, the vote (sim/civics.py)
        self.civics = Civics(world, settings, self.crowd, self.agents, self.economy, self.movement) \
            if world.civics and self.economy else None
        if self.civics:  # those walking to pay a tax are on an errand: they do not stop to react
            self.encounters.errands = self.civics.taxes.pending
        # culture (Sid §5.3): belief levels in the world's doctrines, meme summaries per town
        self.belief = Belief(world, self.agents, settings.hearing_radius) if settings.belief and world.doctrines else None
        self.memes = Memes(world, self.agents, self.crowd, self.asker, settings.meme_every_minutes, self.public) \
            if settings.memes else None
        self.tick_phases = phases.TickPhases(self)  # the tick's phases that run (sim/phases.py)
        self.reach = groups.reach(settings)  # (a tick's groups: sim/groups.py)
        self.boxes = groups.sector_boxes(world) if self.economy else {}

    def _record_call(self, rec: CallRecord) -> None:
        job = self.slow.later.current() if self.slow else None
        if job is not None:  # a slow question's calls are logged at the tick it is applied
            job.calls.append(rec)
        elif (thought := self.thinking.calls()) is not None:  # logged in agent order when taken
            thought.append(rec)
        else:
            self._calls.append((self._tick(), self.crowd.phase, rec))

    def _tick(self) -> int:
        """The tick of the pass this thread runs (sim/passes.py), else the engine's (a command's)."""
        p = passes.current()
        return p.tick if p is not None else self.tick

    def _asked_at(self) -> int:
        """The tick a question's seed belongs to: a slow question's is the tick it was asked at."""
        job = self.slow.later.current() if self.slow else None
        return job.question.asked if job is not None else self._tick()

    def _new_id(self, index: int) -> int:
        """Memory ids interleaved by agent (agent i of n gets i+1, i+1+n, i+1+2n, …): unique, and
        the same whatever order agents thinking at once happen to finish in."""
        self._memory_counts[index] += 1
        return self._memory_counts[index] * len(self.world.agents) + index + 1

    def mind_for(self, spec: Persona, state: dict | None = None) -> Mind:
        """A mind for `spec` (from its saved `state`, if any), asking through this run's asker."""
        index = self.world.agents.index(spec)
        while len(self._memory_counts) <= index:
            self._memory_counts.append(-1)
        stream = MemoryStream(spec.name, self.embedder, lambda: self._new_id(index), self.weights)
        persona = self.civics.persona(spec) if self.civics else spec  # (an influencer's beliefs added)
        return Mind(persona, self.world, self.asker, stream, self.importance[spec.name], self.settings, state, self.lore)

    def add(self, agent: Agent) -> None:
        self.agents.append(agent)
        self._by_name[agent.name] = agent
        if self.economy:
            agent.mind.market = self.economy.market(agent, self.agents, self.public)
        if self.civics:
            agent.mind.civic = self.civics.view

    def stop(self) -> None:
        """End the tick in flight now, even mid-answer, and every later one (they raise Stopped;
        `run_until` returns): the save stays at the last whole tick. From any thread, or a signal
        handler (it only sets flags and cuts connections)."""
        self.asker.stop()

    @property
    def stopping(self) -> bool:
        return self.asker.stopping.is_set()

    def close(self) -> None:
        self.crowd.close()
        try:
            self.write_clock()
        except SaveError:
            pass  # (a full disk) the save stays whole at the last tick written, which it resumes from
        finally:
            self.save.close()
        self.embedder.close()

    # --- the clock ----------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        return self.world.start + timedelta(seconds=self.tick * self.world.step_seconds)

    def agent(self, name: str) -> Agent:
        return self._by_name[name]

    # --- the tick -----------------------------------------------------------------------------

    def step(self, order: Random | None = None) -> list[Event]:
        """Advance one tick and commit it: perceive and remember, reflect, react, act, move.
        Stopped (see `stop`) drops the tick in flight: the clock stays at the last committed one.
        With `order`, the tick runs as its groups (sim/groups.py), one after another in an order
        that `order` shuffles: the same tick as lock-step's, the ground an out-of-order run stands on."""
        if self.stopping or self.dropped:
            self.write_clock()  # (the state is the last whole tick's)
            raise Stopped
        try:
            return self._step(order)
        except Stopped:
            self.dropped = True
            self.tick = self.finished  # the last whole tick: the save holds it, or nothing has changed since
            self._calls.clear()
            self.write_clock()
            raise

    def _step(self, order: Random | None = None) -> list[Event]:
        self.public.fill(self.agents)  # (the first tick: the town as it was opened)
        self.tick += 1
        now = self.now
        changes = Changes(self.tick, now)
        parts = [self.agents]
        if order is not None and not (self.civics and self.civics.barrier(now)):
            parts = groups.groups(self.agents, self.reach, self.boxes)
            order.shuffle(parts)
        for i, agents in enumerate(parts):
            self._pass(passes.Pass(self.tick, now, changes, agents, first=i == 0))
        self._flush(changes, snapshot=self._snapshot_due())
        self.finished = self.tick
        return changes.events

    def _pass(self, p: passes.Pass) -> None:
        """The tick's phases over `p.agents` (sim/phases.py: the registry's modules, in the tick's order)."""
        token = passes.enter(p)
        try:
            phases.run(self, Tick(p.now, p.changes, p.agents, p.first))
        finally:
            passes.leave(token)

    # --- what the phases use (sim/phases.py) ----------------------------------------------------

    @property
    def by_name(self) -> dict[str, Agent]:
        return self._by_name

    @property
    def calls(self) -> list[tuple[int, int, CallRecord]]:
        """The tick's call log so far: (tick, the crowd's phase, call)."""
        return self._calls

    def join_ahead(self, changes: Changes) -> None:
        tick = self._tick()
        self.thinking.join(changes, lambda phase, c: self._calls.append((tick, phase, c)))

    def ahead(self, agents: list[Agent], involved: set[str]) -> None:
        p = passes.current()
        self.thinking.ahead(agents, involved, p.now if p else self.now, self.horizon())

    def horizon(self) -> datetime | None:
        """(`think_ahead`) The next grid tick's time: actions that begin by then are decided now."""
        p = passes.current()
        now = p.now if p is not None else self.now
        return now + timedelta(seconds=self.grid * self.world.step_seconds) if self.think_ahead else None

    def sighted(self, agents: list[Agent], changes: Changes) -> dict[str, list[Seen]]:
        """Per agent, what it newly saw since the last grid tick, taken (kept in its saved state till now,
        so a run stopped between grid ticks resumes to the same reactions)."""
        out = {}
        for agent in agents:
            if agent.sighted:
                out[agent.name], agent.sighted = agent.sighted, []
                changes.changed.add(agent.name)
        return out

    def _flush(self, changes: Changes, snapshot: bool = False) -> None:
        """Commit, in one transaction, everything this tick (or command) changed: its rows, the
        memories, retrievals and model calls made meanwhile, and the snapshot when one is due."""
        new_memories, touched, retrievals = [], [], []
        for agent in self.agents:
            n, t, r = agent.mind.memory.drain()
            new_memories += n
            touched += t
            retrievals += r
        # memories carry their own vectors; the cache table keeps the other texts (queries)
        described = {m.description for m, _ in new_memories}
        # (sorted: minds asking at once embed new texts in whatever order they run)
        fresh = sorted({t: v for t, v in self.embedder.take_fresh() if t not in described}.items())
        if self.dropped:  # the state after a cut-off tick is half of one: never written
            raise Stopped
        self.public.refresh(self._by_name[n] for n in changes.changed | changes.moved if n in self._by_name)
        if changes.ledger:
            self.public.refresh_holdings({n for t in changes.ledger for n in (t.giver, t.taker)})
        # the call log in the order of phase, then agent: each agent asks one after another within a
        # phase, so the log is the same whatever order the answers came back in
        order = {a.name: i for i, a in enumerate(self.agents)}
        calls = [(t, c) for t, _, c in sorted(self._calls, key=lambda x: (x[1], order.get(x[2].agent, -1)))]
        records = commit.records(changes, self.agents, self.objects, new_memories, touched, retrievals, fresh,
                                 calls)
        self._calls.clear()
        if commit.nothing(records) and not snapshot:
            # A tick that changed nothing writes nothing (42% of a scripted day): the save stays at the
            # last tick that changed something, and a run resumed from it re-makes these ticks exactly.
            # Its clock is caught up on a stop, a pause, or a close (write_clock).
            self.clock_behind = True
            return
        self.save.commit(records, snapshot)
        self.clock_behind = False

    def write_clock(self) -> None:
        """Bring the save's clock to the last whole tick, when ticks that changed nothing left it
        behind (a stop, a pause, the end of a run): its rows already are that tick's."""
        if self.clock_behind:
            tick = self.finished
            stamp = (self.world.start + timedelta(seconds=tick * self.world.step_seconds)).strftime(TIME_FMT)
            self.save.commit(TickChanges(tick, stamp, meta={"tick": tick, "game_time": stamp}))
            self.clock_behind = False

    def changes(self, **tag: object) -> Changes:
        """An empty record of changes at the current tick (for a command, or a load's upgrade)."""
        return Changes(self.tick, self.now, tag)

    def _snapshot_due(self) -> bool:
        """The first tick at or after each game hour (SNAPSHOT_EVERY)."""
        now = self.now
        seconds = now.hour * 3600 + now.minute * 60 + now.second
        return seconds % SNAPSHOT_EVERY < self.world.step_seconds

    def snapshot(self) -> int:
        """Record a snapshot of the state now (replacing this tick's, if it has one), so the run
        can be forked or replayed from this moment. Returns the tick."""
        stamp = self.now.strftime(TIME_FMT)
        self.save.commit(TickChanges(self.tick, stamp, meta={"tick": self.tick, "game_time": stamp}), snapshot=True)
        self.clock_behind = False
        return self.tick

    # --- commands: the user's hand in the town (committed at once; time does not move) ---------

    def apply(self, command: Applicable) -> object:
        """Apply a command between ticks (sim/commands.py); returns its result."""
        return command.apply(self)

    def whisper(self, name: str, text: str) -> Memory:
        """An inner voice: the agent takes `text` as its own thought and re-plans around it."""
        agent = self._by_name[name]
        thought, replanned = agent.mind.whisper(text, self.now)
        changes = self.changes()
        changes.emit(name, "whispered", f"{name} hears an inner voice: {text}", memory=thought.id)
        if replanned:
            changes.emit(name, "replanned", f"{name} re-plans the rest of the day", reason=thought.description)
        changes.changed.add(name)
        self._flush(changes)
        return thought

    def interview(self, name: str, question: str, interviewer: str = "the interviewer") -> tuple[str, Retrieval]:
        """Ask an agent a question in a persona; the answer comes from its memory and is
        remembered by it. The town does not advance."""
        agent = self._by_name[name]
        answer, retrieval = agent.mind.interview(question, interviewer, self.now)
        changes = self.changes()
        changes.emit(name, "interviewed", f"{interviewer} asks {name}: {question} — {answer}",
                     interviewer=interviewer, question=question, answer=answer)
        changes.changed.add(name)
        self._flush(changes)
        return answer, retrieval

    def edit_object(self, address: str, state: str) -> None:
        """The user rewrites an object's state ("stove is burning"); agents who see it notice."""
        changes = self.changes(by="user")
        self.things.edit(address, state, changes)
        changes.objects.add(address)
        self._flush(changes)

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
        self.write_clock()
