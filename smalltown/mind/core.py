"""What every behaviour module needs of a mind (`MindCore`): who the agent is, its state, memory
stream and settings, what it knows of the world's facts, and how it asks a question and looks up
memories. The behaviour modules (importance, planning, react, talk, reflect, ...) take a
`MindCore` and call each other's functions directly; `agent.Mind` extends it as the front the
engine calls, so no behaviour module imports the front that imports it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from smalltown.config import Settings
from smalltown.llm.asker import Asker
from smalltown.llm.tasks import Holding, Op, Output, PersonaCard, Record, Task
from smalltown.mind.memory import MemoryStream, Retrieval
from smalltown.mind.records import Lore, scored
from smalltown.state.agent import Action, AgentState
from smalltown.state.known import KnownTree
from smalltown.state.plan import DayPlan
from smalltown.world import model
from smalltown.world.model import World


class MindCore:
    def __init__(self, spec: model.Persona, world: World, asker: Asker, memory: MemoryStream,
                 ratings: dict[str, int], settings: Settings, state: AgentState | dict | None = None,
                 lore: Lore | None = None):
        self.name = spec.name
        self.spec = spec
        self.asker = asker
        self.memory = memory
        self.settings = settings
        self.lore = lore or Lore(world)
        if not isinstance(state, AgentState):
            state = AgentState.from_json(state or {}, known=KnownTree.from_world(world, spec.knows))
        # the ratings by text are the run's, per agent (rated once): the saved ones join them
        ratings.update(state.ratings)
        state.ratings = ratings
        self.state = state
        self.persona = PersonaCard(name=spec.name, age=spec.age, traits=spec.traits, description=spec.description,
                                   home=spec.home, summary=state.summary, routine=spec.routine)
        self.facts: dict[str, Record] = {}  # declared fact -> the latest record about it
        # a world with an economy: (the ops feasible in a sector now, the inventory), set by the engine
        self.market: Callable[[str], tuple[list[Op], list[Holding]]] | None = None
        self.civic: Callable[[str, str], tuple] | None = None  # a world with civics: the tax view a talk's summary asks with

    # the parts of the state every layer reads
    @property
    def action(self) -> Action | None:
        return self.state.action

    @property
    def plan(self) -> DayPlan | None:
        return self.state.plan

    @plan.setter
    def plan(self, plan: DayPlan | None) -> None:
        self.state.plan = plan

    @property
    def known(self) -> KnownTree:
        return self.state.known

    def to_json(self) -> dict:
        return self.state.to_json()

    def set_summary(self, text: str) -> None:
        self.state.summary = text
        self.persona = self.persona.model_copy(update={"summary": text})

    # --- what it knows of the world's facts -------------------------------------------------------

    def learn(self, r: Record) -> None:
        for f in r.facts:
            self.facts[f] = r

    def known_facts(self) -> set[str]:
        return set(self.facts)

    # --- asking and looking up ----------------------------------------------------------------

    def ask(self, task: Task) -> Output:
        return self.asker.ask(self.name, task)

    def note(self, text: str) -> None:
        self.asker.note(text)

    def records(self, retrieval: Retrieval) -> list[Record]:
        return scored(self.lore, retrieval.results)

    def retrieve(self, query: str, now: datetime, k: int, purpose: str) -> list[Record]:
        return self.records(self.memory.retrieve(query, now, k, purpose=purpose))
