"""One agent's state as plain data: what a mind knows, plans and remembers between ticks, and the
one codec between it and the JSON the save keeps (the agents table's `state`).

Inside the program times are `datetime`s and days are `date`s; text only in the JSON. The JSON
written is what earlier versions wrote, key for key and in the same order (a resumed run and a
fresh one must give the same save), and what they wrote still loads: a missing key is its
default (`sim/shapes.py` checks a stranger's save against the same fields before it gets here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from smalltown.llm.tasks import LastTalk
from smalltown.state.commitments import Commitment, Decision
from smalltown.state.known import KnownTree
from smalltown.state.plan import DayPlan
from smalltown.state.social import Bond
from smalltown.world.model import SLEEPING, pretty

_TALKING = "talking with "  # how a conversation is spelt as an activity; read back only here


def talking_with(other: str) -> str:
    """The activity of talking with `other`."""
    return f"{_TALKING}{other}"


def partner_of(activity: str | None) -> str | None:
    """Whom an activity is a conversation with (None: it is not one)."""
    if activity and activity.startswith(_TALKING):
        return activity[len(_TALKING):]
    return None


def stamp(t: datetime) -> str:
    """A game time as the save keeps it."""
    return t.isoformat(" ")


@dataclass
class Action:
    activity: str
    address: str  # sector:arena:object where it is done
    start: datetime
    end: datetime
    op: dict | None = None  # an economy op it does, applied (and cleared) when it ends (sim/economy.py)
    # the model calls that decided it (llm.asker.call_ref: {"tick", "key"}), in the order asked;
    # [] when none did (an engine rule, a bed slept in): what `smalltown why` follows
    calls: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        """"<activity> @ sector: arena: object", as the paper shows an action (a conversation
        happens where the two stand: no object)."""
        return f"{self.activity} @ {pretty(self.address)}" if self.address else self.activity

    def to_json(self) -> dict:
        d = {"activity": self.activity, "address": self.address, "start": stamp(self.start), "end": stamp(self.end)}
        if self.op:  # (only in a world with an economy)
            d["op"] = self.op
        if self.calls:
            d["calls"] = self.calls
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Action":
        return cls(d["activity"], d["address"], datetime.fromisoformat(d["start"]),
                   datetime.fromisoformat(d["end"]), d.get("op"), list(d.get("calls") or []))

    @property
    def asleep(self) -> bool:
        return self.activity == SLEEPING

    @property
    def partner(self) -> str | None:
        """Whom the agent is talking with (None: it is not in a conversation)."""
        return partner_of(self.activity)

    @property
    def talking(self) -> bool:
        return self.partner is not None


@dataclass
class Intention:
    """An inner voice the agent was whispered, kept while it stands."""

    id: int  # the memory that holds it
    time: datetime
    text: str


@dataclass
class Pending:
    """A record noted but not yet rated and filed in the memory stream."""

    kind: str
    text: str
    time: datetime
    evidence: list[int] = field(default_factory=list)


@dataclass
class Slow:
    """A slow module's question asked but not yet applied (sim/later.py): its task's inputs as
    JSON, fixed when it was asked, and the ticks it was asked at and is applied at; kept in the
    state so a stop, a crash or a fork in between asks it again identically."""

    module: str  # who applies the answer ("goal")
    task: str  # the task's name (llm.tasks.TASKS)
    inputs: dict
    asked: int
    due: int
    # the retrievals made for it when it was asked (their query, purpose, time and scored results:
    # store.records.Retrieval as JSON), logged with its calls at the tick it is applied
    retrievals: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        d = {"module": self.module, "task": self.task, "inputs": self.inputs, "asked": self.asked, "due": self.due}
        if self.retrievals:
            d["retrievals"] = self.retrievals
        return d


@dataclass
class AgentState:
    known: KnownTree = field(default_factory=lambda: KnownTree({}))  # places and objects' states as seen
    plan: DayPlan | None = None
    action: Action | None = None
    summary: str = ""  # the summary description (SPEC 6), regenerated each morning
    summary_date: date | None = None  # the day it was made
    since_reflection: int = 0  # importance filed since the last reflection
    last_chat: dict[str, datetime] = field(default_factory=dict)  # other -> when they last talked
    talks: dict[str, LastTalk] = field(default_factory=dict)  # other -> the last talk with them
    told: dict[str, dict[str, datetime]] = field(default_factory=dict)  # other -> {fact: when told}
    heard: dict[str, str] = field(default_factory=dict)  # fact -> who told it
    intentions: list[Intention] = field(default_factory=list)
    declined: dict[str, datetime] = field(default_factory=dict)  # subject -> when it chose not to react
    object_states: dict[str, str] = field(default_factory=dict)  # "object\x1factivity" -> state: answers that repeat
    place_answers: dict[str, str] = field(default_factory=dict)  # a place question -> its answer
    pending: list[Pending] = field(default_factory=list)
    # this agent's importance ratings of the texts still pending (rated in an earlier answer, or
    # filed before: filed at the next settle); a filed text's rating is its records' in the stream
    ratings: dict[str, int] = field(default_factory=dict)
    schedule_memory: int | None = None  # the memory holding today's schedule
    # places found closed or taken (an arena's or object's address) -> until when (mind/awareness.py)
    unavailable: dict[str, datetime] = field(default_factory=dict)
    # the controller's (mind/controller.py): its latest decision (broadcast on) and the promises
    # still open; each kept in the JSON only when there is one (a run without them is unchanged)
    decision: Decision | None = None
    commitments: list[Commitment] = field(default_factory=list)
    # (kind, text, data) of what the controller did, for the engine to emit: never saved
    outbox: list[tuple[str, str, dict]] = field(default_factory=list, repr=False, compare=False)
    social: dict[str, Bond] = field(default_factory=dict)  # other -> feeling (mind/social.py; when on)
    # goal generation (mind/goals.py): the current goal, the need it serves, the last goals (a
    # rolling window, newest last) and when one was last asked; slow questions out (sim/later.py)
    goal: str = ""
    goal_need: str = ""
    goals: list[str] = field(default_factory=list)
    goal_asked: datetime | None = None
    slow: list[Slow] = field(default_factory=list)
    goal_until: datetime | None = None  # when the goal's plan block ends (mind/goals.py: its success)
    # role inference (mind/roles.py; setting `roles`): the needs of the goals window (aligned with
    # `goals` from the end), the role inferred last, whether the window changed since it was asked,
    # and when it was last asked
    goal_needs: list[str] = field(default_factory=list)
    role: str = ""
    role_due: bool = False
    role_asked: datetime | None = None
    # attention (mind/react.py `attending`; setting `attention_minutes` > 0): when it last weighed a person
    weighed: datetime | None = None
    # each registered module's own saved state, by module name (mind/module.py: plain JSON)
    modules: dict[str, dict] = field(default_factory=dict)

    def to_json(self, plan: bool = True) -> dict:
        """The state as JSON's data; `plan` False leaves "plan" None (the save keeps it apart)."""
        out = {
            "known": self.known.tree, "states": self.known.states,
            "plan": self.plan.to_json() if plan and self.plan else None,
            "action": self.action.to_json() if self.action else None,
            "summary": self.summary,
            "summary_date": self.summary_date.isoformat() if self.summary_date else "",
            "since_reflection": self.since_reflection,
            "last_chat": {k: stamp(t) for k, t in self.last_chat.items()},
            "talks": {k: {"time": stamp(t.time), "summary": t.summary} for k, t in self.talks.items()},
            "told": {k: {f: stamp(t) for f, t in facts.items()} for k, facts in self.told.items()},
            "heard": self.heard,
            "intentions": [{"id": i.id, "time": stamp(i.time), "text": i.text} for i in self.intentions],
            "declined": {k: stamp(t) for k, t in self.declined.items()},
            "pending": [(p.kind, p.text, stamp(p.time), p.evidence) for p in self.pending],
            "object_states": self.object_states,
            "place_answers": self.place_answers,
            "pending_ratings": {p.text: self.ratings[p.text] for p in self.pending if p.text in self.ratings},
            "schedule_memory": self.schedule_memory,
            **({"decision": self.decision.to_json()} if self.decision else {}),
            **({"commitments": [c.to_json() for c in self.commitments]} if self.commitments else {}),
            **({"social": {k: b.to_json() for k, b in self.social.items()}} if self.social else {}),
            **self._goal_json(),
            **self._role_json(),
            **({"weighed": stamp(self.weighed)} if self.weighed is not None else {}),
            **({"modules": self.modules} if self.modules else {}),  # (only when some: other saves' JSON stays)
        }
        if self.unavailable:  # (written only when some: older saves' JSON stays as it was)
            out["unavailable"] = {k: stamp(t) for k, t in self.unavailable.items()}
        return out

    def _goal_json(self) -> dict:
        """Goal generation's keys, written only when set (a run without it writes what it did before)."""
        out: dict = {}
        if self.goal:
            out.update(goal=self.goal, goal_need=self.goal_need, goals=self.goals)
        if self.goal_asked is not None:
            out["goal_asked"] = stamp(self.goal_asked)
        if self.slow:
            out["slow"] = [q.to_json() for q in self.slow]
        if self.goal_until is not None:
            out["goal_until"] = stamp(self.goal_until)
        return out

    def _role_json(self) -> dict:
        """Role inference's keys, written only when set (a run without it writes what it did before)."""
        out: dict = {}
        if self.goal_needs:
            out["goal_needs"] = self.goal_needs
        if self.role:
            out["role"] = self.role
        if self.role_due:
            out["role_due"] = True
        if self.role_asked is not None:
            out["role_asked"] = stamp(self.role_asked)
        return out

    @classmethod
    def from_json(cls, d: dict, known: KnownTree | None = None) -> "AgentState":
        """The state a save keeps; `known` is the tree to start from when it has none (a save from
        before spatial memory)."""
        when = datetime.fromisoformat
        return cls(
            known=KnownTree(d["known"], d.get("states", {})) if "known" in d else known or KnownTree({}),
            plan=DayPlan.from_json(d["plan"]) if d.get("plan") else None,
            action=Action.from_json(d["action"]) if d.get("action") else None,
            summary=d.get("summary", ""),
            summary_date=date.fromisoformat(d["summary_date"]) if d.get("summary_date") else None,
            since_reflection=d.get("since_reflection", 0),
            last_chat={k: when(t) for k, t in d.get("last_chat", {}).items()},
            talks={k: LastTalk(time=when(t["time"]), summary=t["summary"]) for k, t in d.get("talks", {}).items()},
            told={k: {f: when(t) for f, t in facts.items()} for k, facts in d.get("told", {}).items()},
            heard=dict(d.get("heard", {})),
            intentions=[Intention(i["id"], when(i["time"]), i["text"]) for i in d.get("intentions", [])],
            declined={k: when(t) for k, t in d.get("declined", {}).items()},
            object_states=dict(d.get("object_states", {})),
            place_answers=dict(d.get("place_answers", {})),
            pending=[Pending(k, t, when(w), list(e)) for k, t, w, e in d.get("pending", [])],
            ratings=dict(d.get("pending_ratings", {})),
            schedule_memory=d.get("schedule_memory"),
            unavailable={k: when(t) for k, t in d.get("unavailable", {}).items()},
            decision=Decision.from_json(d["decision"]) if d.get("decision") else None,
            commitments=[Commitment.from_json(c) for c in d.get("commitments", [])],
            social={k: Bond.from_json(b) for k, b in d.get("social", {}).items()},
            goal=d.get("goal", ""),
            goal_need=d.get("goal_need", ""),
            goals=list(d.get("goals", [])),
            goal_asked=when(d["goal_asked"]) if d.get("goal_asked") else None,
            slow=[Slow(q["module"], q["task"], dict(q["inputs"]), q["asked"], q["due"], list(q.get("retrievals") or []))
                  for q in d.get("slow", [])],
            goal_until=when(d["goal_until"]) if d.get("goal_until") else None,
            goal_needs=list(d.get("goal_needs", [])),
            role=d.get("role", ""),
            role_due=bool(d.get("role_due", False)),
            role_asked=when(d["role_asked"]) if d.get("role_asked") else None,
            weighed=when(d["weighed"]) if d.get("weighed") else None,
            modules={k: dict(v) for k, v in d.get("modules", {}).items()},
        )
