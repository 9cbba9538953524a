"""One agent's cognition for the day: plan it, follow it block by block, pick where to act."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, time, timedelta

from smalltown.llm.backend import Asker
from smalltown.llm.tasks import DailyPlan, HourlySchedule, ObjectState, Persona
from smalltown.mind.places import KnownTree, choose_place
from smalltown.mind.plan import DayPlan, normalise_blocks
from smalltown.world.model import AgentSpec, World, pretty


@dataclass
class Action:
    activity: str
    address: str  # sector:arena:object where it is done
    start: datetime
    end: datetime

    def describe(self) -> str:
        """"<activity> @ sector: arena: object", as the paper shows an action."""
        return f"{self.activity} @ {pretty(self.address)}"

    def to_json(self) -> dict:
        d = asdict(self)
        d["start"], d["end"] = self.start.isoformat(" "), self.end.isoformat(" ")
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Action":
        return cls(d["activity"], d["address"], datetime.fromisoformat(d["start"]),
                   datetime.fromisoformat(d["end"]))

    @property
    def asleep(self) -> bool:
        return self.activity == "sleeping"


class Mind:
    def __init__(self, spec: AgentSpec, world: World, asker: Asker, state: dict | None = None):
        self.name = spec.name
        self.asker = asker
        self.persona = Persona(name=spec.name, age=spec.age, traits=spec.traits,
                               description=spec.description, home=spec.home)
        state = state or {}
        self.known = KnownTree(state["known"]) if "known" in state else KnownTree.from_world(world, spec.knows)
        self.plan = DayPlan.from_json(state["plan"]) if state.get("plan") else None
        self.action = Action.from_json(state["action"]) if state.get("action") else None

    def to_json(self) -> dict:
        return {
            "known": self.known.to_json(),
            "plan": self.plan.to_json() if self.plan else None,
            "action": self.action.to_json() if self.action else None,
        }

    def due(self, now: datetime) -> bool:
        """Zero thinking mid-action: the mind is asked only when its action has ended."""
        return self.action is None or now >= self.action.end

    def next_action(self, now: datetime, current: str) -> tuple[Action, bool]:
        """The action for `now`, and whether it is new (False: the same activity goes on)."""
        today = now.date().isoformat()
        if self.plan is None or self.plan.date != today:
            self.plan = self._plan_day(now)
        minute = now.hour * 60 + now.minute
        block = self.plan.block_at(minute)
        assert block is not None  # normalise_blocks covers the whole day
        midnight = datetime.combine(now.date(), time())
        end = midnight + timedelta(minutes=block.end)
        if self.action and self.action.activity == block.activity:
            self.action = Action(block.activity, self.action.address, self.action.start, end)
            return self.action, False
        where = choose_place(self.asker, self.name, self.persona, self.known, block.activity, current)
        self.action = Action(block.activity, where, now, end)
        return self.action, True

    def object_state(self, obj: str) -> str:
        assert self.action is not None
        task = ObjectState(persona=self.persona, activity=self.action.activity, object=obj)
        return self.asker.ask(self.name, task).state

    def _plan_day(self, now: datetime) -> DayPlan:
        date = now.strftime("%A %B %-d, %Y")
        places = self.known.describe()
        daily = self.asker.ask(self.name, DailyPlan(persona=self.persona, date=date, known_places=places))
        hourly = self.asker.ask(self.name, HourlySchedule(
            persona=self.persona, date=date, wake_up_hour=daily.wake_up_hour,
            daily_plan=daily.items, known_places=places))
        raw = []
        for b in hourly.blocks:
            h, m = map(int, b.start.split(":"))
            raw.append((h * 60 + m, b.minutes, b.activity))
        blocks = normalise_blocks(raw, daily.wake_up_hour * 60)
        return DayPlan(now.date().isoformat(), daily.wake_up_hour, daily.items, blocks)
