"""One agent's cognition (SPEC 1-6): `Mind`, the front the engine calls, over its state
(`state.AgentState`) and the modules that act on it: `importance` (rating and filing what is
noted), `planning` and `plan` (the day, its blocks, actions just in time), `react`, `talk`,
`reflect`, `places`, `summary`. Those modules take the `MindCore` (core.py) that `Mind` extends.

The mind asks typed tasks through its Asker and knows nothing of who answers them. The
simulation calls it each tick: observe -> (reflect) -> (react) -> next action when due.
"""

from __future__ import annotations

from datetime import datetime

from smalltown.config import Settings
from smalltown.lang import gerund
from smalltown.llm.asker import Asker
from smalltown.llm.tasks import Block, Interview, ObjectState, Record
from smalltown.mind import importance, planning, reflect, summary
from smalltown.mind.core import MindCore
from smalltown.mind.memory import Memory, MemoryStream, Retrieval
from smalltown.mind.records import Lore, record
from smalltown.state.agent import Action, AgentState, Intention
from smalltown.world import model
from smalltown.world.model import World

__all__ = ["Action", "Mind"]


class Mind(MindCore):
    """The front the engine calls: each step of a tick, and the interventions, over the behaviour
    modules (which take the `MindCore` it extends)."""

    def __init__(self, spec: model.Persona, world: World, asker: Asker, memory: MemoryStream,
                 ratings: dict[str, int], settings: Settings, state: AgentState | dict | None = None,
                 lore: Lore | None = None):
        super().__init__(spec, world, asker, memory, ratings, settings, state, lore)
        self.reindex()

    # --- what it knows of the world's facts -------------------------------------------------------

    def reindex(self) -> None:
        """What the agent knows of the world's facts, from its memory stream and the records still
        waiting (after the stream is loaded from a save)."""
        # as learning every record in order would: each fact's latest record, in the order the
        # facts were first met, with one look per distinct text (a long stream repeats most)
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for text, first_id, last_id in self.memory.text_spans():
            for f in self.lore.facts_of(text):
                first[f] = min(first.get(f, first_id), first_id)
                last[f] = max(last.get(f, last_id), last_id)
        self.facts = {f: record(self.lore, self.memory.get(last[f])) for f in sorted(first, key=first.get)}
        for p in self.state.pending:
            self.learn(importance.waiting(self.lore, p))

    # --- asking and remembering ---------------------------------------------------------------

    def importance(self, records: list[Record]) -> list[int]:
        return importance.rate(self, records)

    def remember(self, kind: str, texts: list[str], now: datetime, evidence: list[int] = (),
                 ratings: list[int] | None = None) -> list[Memory]:
        return importance.remember(self, kind, texts, now, evidence, ratings)

    def settle(self, rated_only: bool = False) -> list[Memory]:
        return importance.settle(self, rated_only)

    # --- perceiving and reflecting --------------------------------------------------------------

    def enter(self, sector: str, arena: str, objects: list[str]) -> None:
        """Spatial memory grows: an arena the agent walks into becomes known, with its objects."""
        self.state.known.visit(sector, arena, objects)

    def observe(self, seen: list, now: datetime, object_states: dict[str, str]) -> None:
        """Note what was newly seen (rated and stored at the next settle), and object states
        as last seen. An object at rest ("bed is idle") is seen, not remembered (as the authors'
        code did): it would fill the stream and every retrieval with the same nothing."""
        for s in seen:
            if s.subject in object_states:
                self.state.known.states[s.subject] = object_states[s.subject]
        if self.settings.observation_memory:
            for s in seen:
                if not s.idle:
                    importance.note(self, "observation", s.description, now)

    def should_reflect(self, now: datetime) -> bool:
        return reflect.due(self, now)

    def reflect(self, now: datetime) -> list[Memory]:
        return reflect.reflect(self, now)

    def refresh_summary(self, now: datetime) -> None:
        summary.refresh(self, now)

    # --- acting ---------------------------------------------------------------------------------

    def due(self, now: datetime) -> bool:
        """Zero thinking mid-action: the mind is asked only when its action has ended."""
        return self.state.action is None or now >= self.state.action.end

    def next_action(self, now: datetime, current: str) -> tuple[Action, bool]:
        """The action for `now`, and whether it is new (False: the same action goes on)."""
        return planning.next_action(self, now, current)

    def plan_ahead(self, at: datetime, current: str) -> Action:
        """The action the plan has for `at` (its current action's end, still to come), decided now:
        the plan is made or decomposed as need be, but the action in progress stays; `take` it at `at`."""
        activity, address, end, op, calls = planning.action_at(self, at, current)
        return Action(activity, address, at, end, op, calls)

    def take(self, activity: str, address: str, end: datetime, op: dict | None, now: datetime,
             calls: list[dict] = ()) -> tuple[Action, bool]:
        """The plan's action for `now` taken up (and whether it is new: False, the same action goes on)."""
        return planning.take(self, activity, address, end, op, list(calls), now)

    def start(self, activity: str, address: str, now: datetime, end: datetime, op: dict | None = None) -> Action:
        """An action the engine's rules begin (no model call decided it)."""
        return planning.start(self, activity, address, now, end, op)

    def finish(self, now: datetime) -> None:
        """The action in progress ends now, before its planned end (an errand done early: the plan's
        next action is due)."""
        a = self.state.action
        if a is not None and a.end > now:
            self.state.action = Action(a.activity, a.address, a.start, now, a.op, a.calls)

    def object_state(self, obj: str, action: Action | None = None) -> str:
        """Asked once per (object, activity): the answer repeats (a bed is slept in every night).
        `action`: one decided ahead (default: the action in progress)."""
        action = action or self.state.action
        assert action is not None
        key = f"{obj}\x1f{action.activity}"
        answers = self.state.object_states
        if key not in answers:
            task = ObjectState(persona=self.persona, now=action.start, activity=action.activity, object=obj)
            answers[key] = self.ask(task).state
        return answers[key]

    def replan(self, now: datetime, reason: list[Record], reaction: str = "", first_address: str = "") -> bool:
        return planning.replan(self, now, reason, reaction, first_address)

    # --- interventions ----------------------------------------------------------------------------

    def whisper(self, text: str, now: datetime) -> tuple[Memory, bool]:
        """An inner voice: stored as the agent's own thought, kept as an intention, and acted on
        (the plan is redone; the flag says whether there was a plan of today's to redo)."""
        self.settle()
        thought = self.remember("reflection", [f"Thought: {text}"], now)[0]
        self.state.intentions = [*self.state.intentions, Intention(thought.id, now, text)][-10:]
        return thought, self.replan(now, [record(self.lore, thought, 1.0)])

    def interview(self, question: str, interviewer: str, now: datetime) -> tuple[str, Retrieval]:
        self.settle()
        retrieval = self.memory.retrieve(question, now, self.settings.interview_k, purpose="interview")
        plan = self.state.plan
        schedule = [Block(start=planning.hhmm(s[0].start), minutes=s[-1].end - s[0].start,
                          activity=s[0].activity[:60], place=s[0].place)
                    for s in plan.spans()] if plan and plan.date == now.date() else []
        doing = gerund(self.state.action.activity) if self.state.action else "just waking up"
        asks_about = tuple(f.name for f in self.lore.facts.values() if question == f.question or f.about(question))
        answer = self.ask(Interview(persona=self.persona, now=now, interviewer=interviewer, question=question,
                                    doing=doing, schedule=schedule, memories=self.records(retrieval),
                                    asks_about=asks_about)).answer
        self.remember("chat", [f"{interviewer} asked {self.name}: {question} {self.name} answered: {answer}"], now)
        return answer, retrieval

