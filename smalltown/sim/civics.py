"""Civics (Project Sid §5.2 and Appendix D): a constitution in force, tax seasons, the
constituents' feedback, the manager of the vote's amendments, a vote, the engine's tally, and the
revised constitution in force, on the game clock from the run's start.

The timeline is the world's `[civics.timeline]` in Sid's seconds times `civics_scale` game seconds.
A phase runs whole at the first tick at or after its time, asking everyone at once (sim/crowd.py),
so a save holds a phase entirely or not at all: on resume the phases whose time the save's clock
has reached are done, and what they decided is rebuilt from the save's events (`load`): the
constitution in force, the feedback, the amendments, the tally's draft, the stances, the unpaid
taxes. Tax seasons (sim/civics_tax.py) are asked and paid through the economy's ledger.

Events (the shapes `eval civics` reads): constitution, season, tax_due, tax_paid, feedback,
proposal, vote, tally, stance. The manager of the vote stays home and only does the civic tasks."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from smalltown.config import Settings
from smalltown.llm.tasks import Amendment, Amendments, ConstitutionFeedback, FeedbackSeen, ReviseConstitution, Vote
from smalltown.llm.tasks.base import Record
from smalltown.mind.civics import CivicView
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.civics_tax import Taxes
from smalltown.sim.crowd import Crowd
from smalltown.sim.economy import Economy
from smalltown.sim.movement import Movement
from smalltown.store.records import Event
from smalltown.store.schema import TIME_FMT
from smalltown.world.civics import PHASES
from smalltown.world.model import Persona, World

KINDS = ("constitution", "season", "tax_due", "tax_paid", "feedback", "proposal", "vote", "tally", "stance")
QUERY = "the constitution and the tax"  # what is retrieved before a civic question
K = 5  # records retrieved
NOTICE = 7  # importance of the world's notices (no call to rate them)
HOME_MINUTES = 60  # the manager of the vote's stay at home, renewed as it ends


def put(changes: Changes, agent: str | None, kind: str, shown: str, **data: object) -> None:
    """An event whose data has a "text" of its own (Changes.emit's third argument is the event's)."""
    changes.events.append(Event(changes.tick, changes.stamp, agent, kind, shown, {**data, **changes.tag}))


def tally(amendments: list[Amendment], ballots: list[list[str]]) -> list[dict]:
    """Each amendment's yes/no/abstain count; passed = more yes than no."""
    out = []
    for i, _ in enumerate(amendments):
        got = [b[i] for b in ballots if i < len(b)]
        yes, no = got.count("yes"), got.count("no")
        out.append({"amendment": i + 1, "yes": yes, "no": no, "abstain": got.count("abstain"), "passed": yes > no})
    return out


def new_rate(amendments: list[Amendment], results: list[dict], rate: int) -> int:
    """The rate in force after the vote: the passed amendment with a typed rate and the most yes
    votes (then the first in order); the old rate when none sets one."""
    typed = [(r["yes"], -i, amendments[i].rate) for i, r in enumerate(results)
             if r["passed"] and amendments[i].rate is not None]
    return max(typed)[2] if typed else rate


class Civics:
    def __init__(self, world: World, settings: Settings, crowd: Crowd, agents: list[Agent], economy: Economy,
                 movement: Movement):
        assert world.civics is not None and economy is not None
        self.world, self.spec, self.settings, self.crowd = world, world.civics, settings, crowd
        self.agents = agents  # the simulation's list, in agent order
        self.side = settings.influencer_side if settings.influencer_side != "none" else ""
        self.movement = movement
        self.version, self.rate, self.text = 0, self.spec.tax_rate, self.spec.constitution
        self.since: datetime | None = None  # when the version in force began
        self.feedback: list[FeedbackSeen] = []
        self.amendments: list[Amendment] = []
        self.draft: dict | None = None  # the tally's: the new text and rate, in force at `in_force`
        self.stances: dict[str, int] = {}
        self.ballots: list[list[str]] = []
        self.done: set[str] = set()
        self.taxes = Taxes(world, economy, movement, self)

    # --- who is who --------------------------------------------------------------------------

    def at(self, sid_seconds: float) -> datetime:
        return self.world.start + timedelta(seconds=sid_seconds * self.settings.civics_scale)

    def constituents(self) -> list[Agent]:
        """Everyone but the manager of the vote (influencers included)."""
        return [a for a in self.agents if a.name != self.spec.manager]

    def persona(self, spec: Persona) -> Persona:
        """The persona its mind is made from: an influencer's beliefs join its self-description (the
        world's own spec stays as its file has it, so a world used by several runs is never changed)."""
        if not self.side_of(spec.name):
            return spec
        return replace(spec, description=f"{spec.description} {self.spec.stance(self.side)}")

    def side_of(self, name: str) -> str:
        return self.side if name in self.spec.influencers else ""

    def stance_text(self, name: str) -> str:
        return self.spec.stance(self.side) if self.side_of(name) else ""

    def view(self, me: str, other: str) -> CivicView:
        """Mind.civic (read only): what `me` knows of the tax, talking with `other` ("": nobody yet)."""
        return CivicView(self.rate, self.text, self.stances.get(me), self.side_of(me), self.stance_text(me),
                         self.side_of(other) if other else "", self.spec.persuasion_step, "vote" not in self.done,
                         self.since)

    def heard(self, changes: Changes) -> None:
        """The stances this tick's talks formed (their "stance" events)."""
        for e in changes.events:
            if e.kind == "stance" and e.agent:
                self.stances[e.agent] = e.data["value"]

    def memories(self, agent: Agent, now: datetime) -> list[Record]:
        return agent.mind.retrieve(QUERY, now, K, purpose="civics")

    def notice(self, agent: Agent, text: str, now: datetime, changes: Changes) -> None:
        """The world's notice, remembered (rated here: no call)."""
        agent.mind.remember("observation", [text], now, ratings=[NOTICE])
        changes.changed.add(agent.name)

    # --- the tick ---------------------------------------------------------------------------

    def barrier(self, now: datetime) -> bool:
        """Whether the tick at `now` holds something town-wide (the first constitution, a phase of the
        timeline, a tax season's beginning): it runs whole, never group by group (sim/groups.py)."""
        return (self.version == 0 or self.taxes.begins(now)
                or any(p not in self.done and now >= self.at(getattr(self.spec.timeline, p)) for p in PHASES))

    def step(self, now: datetime, changes: Changes, agents: list[Agent]) -> None:
        """The tick's civics for `agents`: the whole town on a `barrier` tick, else the town or a group of it."""
        if self.version == 0:
            self._enact(1, self.spec.tax_rate, self.spec.constitution, now, changes)
        if any(a.name == self.spec.manager for a in agents):
            self._stay_home(now, changes)
        for phase in PHASES:
            if phase not in self.done and now >= self.at(getattr(self.spec.timeline, phase)):
                self.done.add(phase)
                getattr(self, "_" + phase)(now, changes)
        self.taxes.step(now, changes, agents)

    def _enact(self, version: int, rate: int, text: str, now: datetime, changes: Changes) -> None:
        self.version, self.rate, self.text, self.since = version, rate, text, now
        put(changes, None, "constitution", f"Constitution version {version} is in force: the tax is {rate}%",
                     version=version, rate=rate, text=text, in_force=now.strftime(TIME_FMT))

    def _stay_home(self, now: datetime, changes: Changes) -> None:
        """Sid's manager of the vote takes no actions: it keeps to its home, doing the civic tasks."""
        agent = next((a for a in self.agents if a.name == self.spec.manager), None)
        if agent is None or not agent.mind.due(now):
            return
        home = agent.mind.spec.home
        address = next((o for o in self.world.objects if o.split(":")[0] == home), None)
        if address is None:
            return
        action = agent.mind.start("keep the town's vote records", address, now,
                                  now + timedelta(minutes=HOME_MINUTES))
        self.movement.start(agent, action, True, changes)
        changes.changed.add(agent.name)

    def _feedback(self, now: datetime, changes: Changes) -> None:
        people = self.constituents()
        for agent in people:
            self.notice(agent, "The manager of the vote asks everyone for feedback on the constitution.", now, changes)
        outs = self.crowd.each(people, lambda a: a.mind.ask(ConstitutionFeedback(
            persona=a.mind.persona, now=now, constitution=self.text, rate=self.rate, memories=self.memories(a, now),
            stance=self.stances.get(a.name), stance_text=self.stance_text(a.name), side=self.side_of(a.name))))
        for agent, out in zip(people, outs):
            self.feedback.append(FeedbackSeen(who=agent.name, rate=out.rate, text=out.text.strip()))
            put(changes, agent.name, "feedback", f"{agent.name}'s feedback (wants {out.rate}%): {out.text.strip()}",
                         rate=out.rate, text=out.text.strip())

    def _amendments(self, now: datetime, changes: Changes) -> None:
        manager = next((a for a in self.agents if a.name == self.spec.manager), None)
        if manager is None:
            return
        out = manager.mind.ask(Amendments(persona=manager.mind.persona, now=now, constitution=self.text,
                                          rate=self.rate, feedback=self.feedback))
        changes.changed.add(manager.name)
        for i, a in enumerate(out.amendments, 1):
            self.amendments.append(Amendment(text=a.text.strip(), rate=a.rate))
            put(changes, manager.name, "proposal", f"Amendment {i}: {a.text.strip()}", amendment=i,
                         text=a.text.strip(), rate=a.rate)

    def _vote(self, now: datetime, changes: Changes) -> None:
        if not self.amendments:
            return
        people = self.constituents()
        for agent in people:
            self.notice(agent, "The town votes on amendments to the constitution.", now, changes)
        outs = self.crowd.each(people, lambda a: a.mind.ask(Vote(
            persona=a.mind.persona, now=now, constitution=self.text, rate=self.rate, amendments=self.amendments,
            memories=self.memories(a, now), stance=self.stances.get(a.name), stance_text=self.stance_text(a.name),
            side=self.side_of(a.name))))
        for agent, out in zip(people, outs):
            self.ballots.append(list(out.votes))
            changes.emit(agent.name, "vote", f"{agent.name} votes: " + ", ".join(out.votes), votes=list(out.votes))

    def _tally(self, now: datetime, changes: Changes) -> None:
        results = tally(self.amendments, self.ballots)
        frozen = self.settings.constitution_frozen
        passed = [a for a, r in zip(self.amendments, results) if r["passed"]]
        draft = None
        if passed and not frozen:
            rate = new_rate(self.amendments, results, self.rate)
            manager = next((a for a in self.agents if a.name == self.spec.manager), None)
            text = self.text
            if manager is not None:
                text = manager.mind.ask(ReviseConstitution(persona=manager.mind.persona, now=now, constitution=self.text,
                                                           rate=self.rate, passed=passed, new_rate=rate)).text.strip()
            draft = {"text": text, "rate": rate}
        self.draft = draft
        changes.emit(None, "tally", f"The vote: {sum(r['passed'] for r in results)} of {len(results)} amendments pass"
                     + (" (the constitution is frozen)" if frozen else ""), results=results, frozen=frozen,
                     draft=draft)

    def _in_force(self, now: datetime, changes: Changes) -> None:
        if self.draft is None:  # nothing passed, or frozen: version 1 stays
            return
        self._enact(self.version + 1, self.draft["rate"], self.draft["text"], now, changes)
        for agent in self.constituents():
            self.notice(agent, f"A new constitution is in force: the tax is now {self.rate}% per season.", now, changes)

    def _end(self, now: datetime, changes: Changes) -> None:
        """Sid's run ends here: no more seasons (the town goes on)."""

    # --- resuming -----------------------------------------------------------------------------

    def load(self, events: list[tuple[str, str | None, str, dict]], now: datetime) -> None:
        """The state a run reached, from its save's events (oldest first) and its clock."""
        for when, agent, kind, data in events:
            if kind == "constitution":
                self.version, self.rate, self.text = data["version"], data["rate"], data["text"]
                self.since = datetime.strptime(str(data.get("in_force", when)), TIME_FMT)  # (the event's own time)
            elif kind == "feedback":
                self.feedback.append(FeedbackSeen(who=agent, rate=data["rate"], text=data["text"]))
            elif kind == "proposal":
                self.amendments.append(Amendment(text=data["text"], rate=data["rate"]))
            elif kind == "vote":
                self.ballots.append(list(data["votes"]))
            elif kind == "tally":
                self.draft = data.get("draft")
            elif kind == "stance" and agent:
                self.stances[agent] = data["value"]
        self.taxes.load(events)
        self.done = {p for p in PHASES if now >= self.at(getattr(self.spec.timeline, p))}
