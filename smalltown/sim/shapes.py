"""The shape of the JSON a simulation stores about an agent (the agents table's `state`), checked
before a save's agents are brought back to life: a stranger's save whose state has a plan that is
a number, or an intention without a time, is refused naming the agent and the field, instead of
crashing a resume, an inspect or an interview half-way.

Mirrors AgentState's codec and Agent.state_texts (state/agent.py, sim/agent.py). Keys may be missing
(older saves), unknown keys are ignored; what is there must have the type the code reads."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from smalltown.world.model import GAME_TIME_MAX, GAME_TIME_MIN


def _stamp(text: str) -> str:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError("not a time (YYYY-MM-DD HH:MM:SS)") from None
    if not GAME_TIME_MIN <= t.replace(tzinfo=None) < GAME_TIME_MAX:
        raise ValueError(f"not a time of the game ({GAME_TIME_MIN:%Y} to {GAME_TIME_MAX:%Y})")
    return text


def _day(text: str) -> str:
    return _stamp(text + " 00:00:00")[:10] if text else text


Stamp = Annotated[str, AfterValidator(_stamp)]
Day = Annotated[str, AfterValidator(_day)]  # a game day (YYYY-MM-DD); "" for none where allowed
Minute = Annotated[int, Field(ge=-2 * 1440, le=2 * 1440)]  # within a day (a night's work counts back)
Id = Annotated[int, Field(ge=0)]


def _empty(value: object) -> object:
    if value:
        raise ValueError("neither empty nor of its shape")
    return value


Empty = Annotated[list[int] | dict[str, int] | str | int | bool, AfterValidator(_empty)]  # read as none (Mind)


class _Shape(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class OpShape(_Shape):
    """An economy op on an action (llm.tasks.Op's fields); sim/economy.py checks it again when applied."""
    op: str
    item: str
    qty: Annotated[int, Field(ge=1, le=10 ** 6)]
    other: str = ""
    get: str = ""
    get_qty: Annotated[int, Field(ge=0, le=10 ** 6)] = 0
    minutes: Annotated[int, Field(ge=0, le=1440)] = 0


class CallRefShape(_Shape):
    """A model call an action or plan item names as its maker (llm.asker.call_ref)."""
    tick: Annotated[int, Field(ge=0)]
    key: Annotated[str, Field(min_length=1, max_length=64)]
    agent: str = ""  # another agent's call (the initiator's decision to talk); "": the agent's own


class PlanItemShape(_Shape):
    start: Minute
    minutes: Annotated[int, Field(ge=0, le=2 * 1440)]
    activity: str
    address: str = ""
    actions: Optional[list["PlanItemShape"]] = None
    place: str = ""
    runs_on: int = 0
    op: Optional["OpShape"] = None
    calls: list[CallRefShape] = []


class PlanShape(_Shape):
    date: Annotated[str, Field(min_length=1), AfterValidator(_day)]
    wake_up_hour: Annotated[int, Field(ge=0, le=23)]
    items: list[tuple[str, str] | str]
    blocks: list[PlanItemShape]
    carried: list[PlanItemShape] = []


class ActionShape(_Shape):
    activity: str
    address: str
    start: Stamp
    end: Stamp
    op: Optional["OpShape"] = None
    calls: list[CallRefShape] = []


class TalkShape(_Shape):
    time: Stamp
    summary: str


class IntentionShape(_Shape):
    id: Id
    time: Stamp
    text: str


class DecisionShape(_Shape):
    intent: str
    target: str = ""
    reason: str = ""
    time: Stamp
    observed: bool = False


class CommitmentShape(_Shape):
    what: str
    to: str
    by: Stamp
    where: str
    made: Stamp


class BondShape(_Shape):
    sentiment: Annotated[int, Field(ge=0, le=10)]
    summary: str = ""
    time: Stamp
class ScoredShape(_Shape):
    id: Id
    recency: float
    importance: float
    relevance: float
    total: float


class RetrievalShape(_Shape):
    """A retrieval made for a slow question, logged when it is applied (state.agent.Slow)."""
    query: str
    purpose: str
    time: Stamp
    results: list[ScoredShape] = []


class SlowShape(_Shape):
    module: str
    task: str
    inputs: dict
    asked: Annotated[int, Field(ge=0)]
    due: Annotated[int, Field(ge=0)]
    retrievals: list[RetrievalShape] = []


class AgentStateShape(_Shape):
    known: dict[str, dict[str, list[str]]] = {}
    states: dict[str, str] = {}
    plan: Optional[PlanShape | Empty] = None
    action: Optional[ActionShape | Empty] = None
    summary: str = ""
    summary_date: Day = ""
    since_reflection: int = 0
    last_chat: dict[str, Stamp] = {}
    talks: dict[str, TalkShape] = {}
    told: dict[str, dict[str, Stamp]] = {}
    heard: dict[str, str] = {}
    intentions: list[IntentionShape] = []
    declined: dict[str, Stamp] = {}
    object_states: dict[str, str] = {}
    place_answers: dict[str, str] = {}
    pending: list[tuple[str, str, Stamp, list[Id]]] = []
    pending_ratings: dict[str, Annotated[int, Field(ge=0, le=10)]] = {}
    schedule_memory: Optional[Id] = None
    using: Optional[str] = None
    recent: list[str] = []
    unavailable: dict[str, Stamp] = {}
    decision: Optional[DecisionShape] = None
    commitments: list[CommitmentShape] = []
    social: dict[str, BondShape] = {}
    goal: str = ""
    goal_need: str = ""
    goals: list[str] = []
    goal_asked: Optional[Stamp] = None
    slow: list[SlowShape] = []
    goal_until: Optional[Stamp] = None
    goal_needs: list[str] = []
    role: str = ""
    role_due: bool = False
    role_asked: Optional[Stamp] = None
    weighed: Optional[Stamp] = None
    modules: dict[str, dict] = {}  # each module's own state (mind/module.py)
    ahead: Optional[Annotated[list[ActionShape], Field(min_length=2)]] = None


def state_problem(text: str) -> str | None:
    """What is wrong with an agent's stored state (JSON text), or None: the first field that is
    not as the simulation writes it, by its path."""
    try:
        AgentStateShape.model_validate_json(text)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(the whole state)"
        return f"{where}: {err['msg']}"
    return None
