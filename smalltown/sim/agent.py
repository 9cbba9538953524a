"""An agent in the running town: its body (where it is, where it walks, what it uses) and its mind."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from smalltown.lang import doing
from smalltown.mind.agent import Mind
from smalltown.mind.awareness import Outcome
from smalltown.state.agent import Action
from smalltown.world.model import SLEEPING, Persona, Tile
from smalltown.world.perception import Body, Seen

_doing = lru_cache(maxsize=8192)(doing)  # asked for every body every tick; few distinct answers


@dataclass
class Agent:
    spec: Persona
    mind: Mind
    tile: Tile
    arena: int
    path: deque[Tile] = field(default_factory=deque)
    dest: Tile | None = None
    using: str | None = None  # the object it is acting on, once arrived
    recent: deque[str] = field(default_factory=deque)  # latest percepts (retention)
    # what it newly saw since the mind's last grid tick (`think_every_ticks` > 1), weighed there
    sighted: list[Seen] = field(default_factory=list)
    # (`think_ahead`) the action in progress when the next ones were decided, and those next
    # actions (decided on a grid tick, each taken up when the one before it ends)
    ahead: tuple[Action, list[Action]] | None = None
    # the plan last encoded, its edit count then, and its JSON: most state writes are action
    # changes with the plan as it was (93% at 25 agents), so its text is kept, not made again
    _plan_seen: tuple = field(default=(None, -1, None), init=False, repr=False, compare=False)
    # what stopped its action this tick (a closed arena, a taken object), for action awareness
    outcome: Outcome | None = field(default=None, repr=False, compare=False)
    # what others saw of it last tick, and what that was made of: most bodies stand still doing
    # the same thing tick after tick, so the same Body is given again (and compared by identity)
    _body: tuple = field(default=(None, None, False), init=False, repr=False, compare=False)
    # the look (world/sight.py's list, the same object while nothing in sight changes) whose every
    # percept was among `recent` when last perceived: looking again finds nothing new in it
    settled: list | None = field(default=None, init=False, repr=False, compare=False)
    # all it saw at its last look, new or not: one who seeks people out looks there again for
    # those it did not get to (sim/encounters.py `candidates`)
    look: list[Seen] = field(default_factory=list, init=False, repr=False, compare=False)

    name: str = field(init=False, repr=False, compare=False)  # the spec's (read all the time: not a property)

    def __post_init__(self) -> None:
        self.name = self.spec.name

    @property
    def action(self) -> Action | None:
        return self.mind.action

    @property
    def doing(self) -> str:
        """What others see it doing: "wiping the tables", "walking to the cafe to ..." """
        a = self.mind.action
        return _doing(a.activity if a else None, a.address if a else None, bool(self.path))

    def body(self) -> Body:
        """What others can see of it now (the same object as last time when nothing of it changed)."""
        return self.seen()[0]

    def seen(self) -> tuple[Body, bool]:
        """Its `body()`, and whether it is `asleep`, worked out again only when its tile, arena,
        action or walking changed."""
        a = self.mind.action
        key = (self.tile, self.arena, a.activity if a else None, a.address if a else None, bool(self.path))
        got = self._body
        if got[0] != key:
            got = self._body = (key, Body(self.name, self.tile, self.arena, _doing(key[2], key[3], key[4])),
                                key[2] == SLEEPING and not key[4])
        return got[1], got[2]

    @property
    def asleep(self) -> bool:
        a = self.mind.action
        return a is not None and a.asleep and not self.path

    def sight(self, seen: list[Seen]) -> None:
        """Keep what it newly saw for the next grid tick: the latest of each subject, last."""
        subjects = {s.subject for s in seen}
        self.sighted = [s for s in self.sighted if s.subject not in subjects] + seen

    def state_texts(self) -> tuple[str, str | None]:
        """The state's JSON with its "plan" null, and the plan's JSON (None: no plan): the save
        keeps the plan apart, written only when it changed (store/plans.py)."""
        # insertion order, not sorted: a resumed mind must list its known places in the same order
        state = {**self.mind.state.to_json(plan=False), "using": self.using, "recent": list(self.recent)}
        if self.sighted:  # (only between grid ticks: a run thinking every tick never writes it)
            state["sighted"] = [[s.subject, s.description, s.distance] for s in self.sighted]
        if self.ahead:  # (only with `think_ahead`, until it is taken up)
            state["ahead"] = [self.ahead[0].to_json()] + [a.to_json() for a in self.ahead[1]]
        return json.dumps(state), self.plan_text()

    def plan_text(self) -> str | None:
        """The plan's JSON, encoded again only when it is another plan or was edited since."""
        plan = self.mind.state.plan
        if plan is None:
            return None
        seen, edits, text = self._plan_seen
        if seen is not plan or edits != plan.edits:
            text = json.dumps(plan.to_json())
            self._plan_seen = (plan, plan.edits, text)
        return text


def sighted_from(saved: object) -> list[Seen]:
    """The saved state's "sighted" (a stranger's save: what is not [subject, text, distance] is dropped)."""
    out = []
    for row in saved if isinstance(saved, list) else []:
        if (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[1], str)
                and isinstance(row[2], int) and not isinstance(row[2], bool)):
            out.append(Seen(row[0], row[1], row[2]))
    return out


def ahead_from(saved: object) -> tuple[Action, list[Action]] | None:
    """The saved state's "ahead": the action then in progress, the next ones (checked with the
    rest of a stranger's state by sim/shapes.py)."""
    if not (isinstance(saved, list) and len(saved) >= 2):
        return None
    return Action.from_json(saved[0]), [Action.from_json(a) for a in saved[1:]]
