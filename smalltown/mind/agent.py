"""One agent's cognition: its memory stream, plans, reflections, reactions (SPEC 1-6).

The mind asks typed tasks through its Asker and knows nothing of who answers them. The
simulation calls it each tick: observe -> (reflect) -> (react) -> next action when due. Planning
is in `planning`, reacting and talking in `talk`, reflection in `reflect`, places in `places`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta

from smalltown.config import Settings
from smalltown.lang import gerund
from smalltown.llm.asker import Asker
from smalltown.llm.tasks import (
    SLEEPING,
    Block,
    Interview,
    ObjectState,
    Output,
    Persona,
    RateImportance,
    Record,
    SummaryDescription,
    Task,
)
from smalltown.mind import planning
from smalltown.mind.memory import Memory, MemoryStream, Retrieval
from smalltown.mind.places import KnownTree
from smalltown.mind.plan import DayPlan
from smalltown.mind.records import Lore, pending, record, scored
from smalltown.mind.reflect import reflect
from smalltown.world.model import AgentSpec, Gathering, World, pretty

TALKING = "talking with "
RATE_BATCH = 16  # memories rated in one question at most: its prompt and answer stay small


@dataclass
class Action:
    activity: str
    address: str  # sector:arena:object where it is done
    start: datetime
    end: datetime

    def describe(self) -> str:
        """"<activity> @ sector: arena: object", as the paper shows an action (a conversation
        happens where the two stand: no object)."""
        return f"{self.activity} @ {pretty(self.address)}" if self.address else self.activity

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
        return self.activity == SLEEPING

    @property
    def talking(self) -> bool:
        return self.activity.startswith(TALKING)


def minute_of(now: datetime) -> int:
    return now.hour * 60 + now.minute


class Mind:
    def __init__(self, spec: AgentSpec, world: World, asker: Asker, memory: MemoryStream,
                 importance: dict[str, int], settings: Settings, state: dict | None = None,
                 lore: Lore | None = None):
        self.name = spec.name
        self.spec = spec
        self.asker = asker
        self.memory = memory
        self.settings = settings
        self.lore = lore or Lore(world)
        self._importance = importance  # this agent's ratings by text: rated once, per agent
        state = state or {}
        self.persona = Persona(name=spec.name, age=spec.age, traits=spec.traits, description=spec.description,
                               home=spec.home, summary=state.get("summary", ""), routine=spec.routine)
        self.summary_date: str = state.get("summary_date", "")
        self.known = KnownTree(state["known"], state.get("states", {})) if "known" in state \
            else KnownTree.from_world(world, spec.knows)
        self.plan = DayPlan.from_json(state["plan"]) if state.get("plan") else None
        self.action = Action.from_json(state["action"]) if state.get("action") else None
        self.since_reflection: int = state.get("since_reflection", 0)
        self.last_chat: dict[str, str] = state.get("last_chat", {})  # other -> when they last talked
        self.talks: dict[str, dict] = state.get("talks", {})  # other -> {"time", "summary"} of the last talk
        self.told: dict[str, dict[str, str]] = state.get("told", {})  # other -> {fact: when told}
        self.heard: dict[str, str] = state.get("heard", {})  # fact -> who told it
        self.intentions: list[dict] = state.get("intentions", [])  # inner voices: {"id", "time", "text"}
        self.declined: dict[str, str] = state.get("declined", {})
        self.object_states: dict[str, str] = state.get("object_states", {})  # answers that repeat
        self.place_answers: dict[str, str] = state.get("place_answers", {})
        # records waiting to be rated and stored: (kind, text, when, evidence)
        self.pending: list[tuple[str, str, str, list[int]]] = [tuple(p) for p in state.get("pending", [])]
        # ratings already known for waiting records (packed into an earlier answer)
        self._importance.update(state.get("pending_ratings", {}))
        self.schedule_memory: int | None = state.get("schedule_memory")
        self._facts: dict[str, Record] = {}  # fact -> the latest record about it
        self.reindex()

    def reindex(self) -> None:
        """What the agent knows of the world's facts, from its memory stream and the records still
        waiting (after the stream is loaded from a save)."""
        self._facts = {}
        for m in self.memory:
            self._learn_facts(record(self.lore, m))
        for kind, text, when, _ in self.pending:
            self._learn_facts(pending(self.lore, kind, text, when))

    def to_json(self) -> dict:
        return {
            "known": self.known.tree, "states": self.known.states,
            "plan": self.plan.to_json() if self.plan else None,
            "action": self.action.to_json() if self.action else None,
            "summary": self.persona.summary, "summary_date": self.summary_date,
            "since_reflection": self.since_reflection, "last_chat": self.last_chat, "talks": self.talks,
            "told": self.told, "heard": self.heard, "intentions": self.intentions,
            "declined": self.declined, "pending": self.pending, "object_states": self.object_states,
            "place_answers": self.place_answers,
            "pending_ratings": {t: self._importance[t] for _, t, _, _ in self.pending if t in self._importance},
            "schedule_memory": self.schedule_memory,
        }

    # --- asking -------------------------------------------------------------------------------

    def ask(self, task: Task) -> Output:
        return self.asker.ask(self.name, task)

    def note(self, text: str) -> None:
        self.asker.note(text)

    def importance(self, records: list[Record]) -> list[int]:
        """Ratings for new records: this agent's earlier rating of the same text, the rest asked
        in one task."""
        todo = list({r.text: r for r in records if r.text not in self._importance}.values())
        while todo:
            batch = todo[:RATE_BATCH]
            ratings = self.ask(RateImportance(persona=self.persona, now=max(r.time for r in batch),
                                              memories=batch)).ratings
            asked = self.asker.last_task.memories  # those the prompt had room for
            if not asked:  # a window too small for even one: rated as middling, and said so
                self.note(f"no room in the prompt to rate {len(batch)} memories; rated 3")
                asked, ratings = batch, [3] * len(batch)
            if len(ratings) != len(asked):  # only a backend that skips validation gets here
                self.note(f"{len(ratings)} ratings for {len(asked)} memories; missing ones rated 3")
            for i, r in enumerate(asked):
                self._importance[r.text] = max(1, min(10, ratings[i])) if i < len(ratings) else 3
            todo = [r for r in todo if r.text not in self._importance]
        return [self._importance[r.text] for r in records]

    def remember(self, kind: str, texts: list[str], now: datetime, evidence: list[int] = (),
                 ratings: list[int] | None = None) -> list[Memory]:
        """Store records of one kind, rated in one call together with any observations still
        waiting (which are stored first, at the times they were made). With `ratings` (packed
        into the answer that made the records) no call is made, and unrated waiting records
        keep waiting."""
        if not texts:
            return []
        if ratings is not None and len(ratings) == len(texts) and all(1 <= r <= 10 for r in ratings):
            self._importance.update((t, r) for t, r in zip(texts, ratings) if t not in self._importance)
            self.settle(rated_only=True)
        else:
            if ratings is not None:
                self.note(f"{len(ratings)} packed ratings for {len(texts)} records: asked separately")
            stamp = now.isoformat(" ")
            self.importance([*(pending(self.lore, k, t, w) for k, t, w, _ in self.pending),
                             *(pending(self.lore, kind, t, stamp) for t in texts)])
            self.settle()
        out = [self.memory.add(kind, t, now, self._importance[t], evidence) for t in texts]
        for m in out:
            self._learn_facts(record(self.lore, m))
        if kind in ("observation", "chat"):
            self.since_reflection += sum(m.importance for m in out)
        return out

    def _learn_facts(self, r: Record) -> None:
        for f in r.facts:
            self._facts[f] = r

    def known_facts(self) -> set[str]:
        return set(self._facts)

    def records(self, retrieval: Retrieval) -> list[Record]:
        return scored(self.lore, retrieval.results)

    def retrieve(self, query: str, now: datetime, k: int, purpose: str) -> list[Record]:
        return self.records(self.memory.retrieve(query, now, k, purpose=purpose))

    # --- perceiving and reflecting --------------------------------------------------------------

    def enter(self, sector: str, arena: str, objects: list[str]) -> None:
        """Spatial memory grows: an arena the agent walks into becomes known, with its objects."""
        self.known.visit(sector, arena, objects)

    def observe(self, seen: list, now: datetime, object_states: dict[str, str]) -> None:
        """Note what was newly seen (rated and stored at the next `settle`), and object states
        as last seen. An object at rest ("bed is idle") is seen, not remembered (as the authors'
        code did): it would fill the stream and every retrieval with the same nothing."""
        for s in seen:
            if s.subject in object_states:
                self.known.states[s.subject] = object_states[s.subject]
        if self.settings.observation_memory:
            stamp = now.isoformat(" ")
            for s in seen:
                if not s.idle:
                    self.pending.append(("observation", s.description, stamp, []))
                    self._learn_facts(pending(self.lore, "observation", s.description, stamp))

    def settle(self, rated_only: bool = False) -> list[Memory]:
        """Rate the records noted since the last settle, in one task, and store them with the
        times they were made. Called when the memory is about to be used (a retrieval, a plan)
        and when a new hour block starts: zero calls in between. `rated_only` files just the
        records whose rating is already known (no call) and leaves the rest waiting."""
        if rated_only:
            cut = next((i for i, p in enumerate(self.pending) if p[1] not in self._importance), len(self.pending))
            batch, rest = self.pending[:cut], self.pending[cut:]  # keep the order: ids follow time
        else:
            batch, rest = self.pending, []
        if not batch:
            return []
        self.importance([pending(self.lore, k, t, w) for k, t, w, _ in batch])
        out = []
        for kind, text, when, evidence in batch:
            m = self.memory.add(kind, text, datetime.fromisoformat(when), self._importance[text], evidence)
            out.append(m)
            self._learn_facts(record(self.lore, m))
            if kind == "observation":
                self.since_reflection += m.importance
        self.pending = rest
        return out

    def settle_if_due(self, now: datetime) -> None:
        """Batch the rating: settle when enough has piled up, or the oldest record has waited
        `settle_hours`; a retrieval or a plan settles whatever is waiting anyway."""
        if len(self.pending) >= self.settings.settle_batch or (self.pending and now - datetime.fromisoformat(
                self.pending[0][2]) >= timedelta(hours=self.settings.settle_hours)):
            self.settle()

    def unrated(self, limit: int = RATE_BATCH) -> list[Record]:
        """The first waiting records no rating is known for yet (to be rated, packed into an
        answer; the rest wait for the next settle)."""
        out = {}
        for k, t, w, _ in self.pending:
            if t not in self._importance and t not in out:
                out[t] = pending(self.lore, k, t, w)
                if len(out) == limit:
                    break
        return list(out.values())

    def should_reflect(self) -> bool:
        """Checked every tick; counts only settled records, so it costs nothing in between."""
        return self.settings.reflection and self.since_reflection > self.settings.reflection_threshold

    def reflect(self, now: datetime) -> list[Memory]:
        self.settle()
        self.since_reflection = 0
        return reflect(self, now)

    # --- what the agent knows of the town ---------------------------------------------------------

    def gatherings_on(self, day: date) -> list[Gathering]:
        """The gatherings of that day the agent knows of: it hosts them, they are public (no fact
        announces them), or it knows the fact that announces them."""
        known = self.known_facts()
        out = [g for g in self.lore.gatherings if g.start.date() == day
               and (g.host == self.name or g.fact is None or g.fact in known)]
        for g in out:  # knowing of a gathering is knowing where it is
            sector = g.place.split(":")[0]
            if sector not in self.known.tree and sector in self.lore.sectors:
                for arena, objects in self.lore.sectors[sector].items():
                    self.known.visit(sector, arena, objects)
        return out

    def intention_records(self, now: datetime) -> list[Record]:
        """Inner voices whispered today (or since yesterday morning): intentions that still stand."""
        since = (now - timedelta(days=1)).date()
        return [Record(id=i["id"], time=datetime.fromisoformat(i["time"]), kind="reflection", text=i["text"],
                       score=1.0) for i in self.intentions if datetime.fromisoformat(i["time"]).date() >= since]

    # --- reacting -------------------------------------------------------------------------------

    def may_talk_to(self, other: str, now: datetime) -> bool:
        last = self.last_chat.get(other)
        return last is None or now - datetime.fromisoformat(last) >= timedelta(hours=self.settings.chat_cooldown_hours)

    def may_consider(self, subject: str, now: datetime) -> bool:
        """Having just decided not to react to someone or something, the agent does not weigh it
        again at once (the decision stands for `react_cooldown_hours`)."""
        last = self.declined.get(subject)
        return last is None or now - datetime.fromisoformat(last) >= timedelta(hours=self.settings.react_cooldown_hours)

    # --- acting ---------------------------------------------------------------------------------

    def due(self, now: datetime) -> bool:
        """Zero thinking mid-action: the mind is asked only when its action has ended."""
        return self.action is None or now >= self.action.end

    def next_action(self, now: datetime, current: str) -> tuple[Action, bool]:
        """The action for `now`, and whether it is new (False: the same action goes on)."""
        if not self.settings.planning:
            return planning.unplanned(self, now, current)
        activity, address, end = planning.action_at(self, now, current)
        if self.action and self.action.activity == activity and self.action.address == address:
            self.action = Action(activity, address, self.action.start, end)
            return self.action, False
        return self.start(activity, address, now, end), True

    def start(self, activity: str, address: str, now: datetime, end: datetime) -> Action:
        self.action = Action(activity, address, now, end)
        if self.settings.observation_memory:
            text = f"{self.name} is {gerund(activity)}"
            self.pending.append(("observation", text, now.isoformat(" "), []))
            self._learn_facts(pending(self.lore, "observation", text, now.isoformat(" ")))
        return self.action

    def talk(self, other: str, now: datetime, minutes: int) -> Action:
        """Stop for a conversation; the plan picks up again when it ends."""
        address = self.action.address if self.action else ""
        self.last_chat[other] = now.isoformat(" ")
        self.action = Action(f"{TALKING}{other}", address, now, now + timedelta(minutes=minutes))
        return self.action

    def object_state(self, obj: str) -> str:
        """Asked once per (object, activity): the answer repeats (a bed is slept in every night)."""
        assert self.action is not None
        key = f"{obj}\x1f{self.action.activity}"
        if key not in self.object_states:
            task = ObjectState(persona=self.persona, now=self.action.start, activity=self.action.activity, object=obj)
            self.object_states[key] = self.ask(task).state
        return self.object_states[key]

    def replan(self, now: datetime, reason: list[Record], reaction: str = "", first_address: str = "") -> bool:
        return planning.replan(self, now, reason, reaction, first_address)

    # --- the summary description (SPEC 6) -------------------------------------------------------

    def refresh_summary(self, now: datetime) -> None:
        """Regenerated once each game morning, then cached in the agent's state."""
        if self.summary_date == now.date().isoformat():
            return
        n = self.name
        parts = [self.retrieve(q, now, 10, "summary")
                 for q in (f"{n}'s core characteristics", f"{n}'s current daily occupation",
                           f"{n}'s feeling about their recent progress in life")]
        out = self.ask(SummaryDescription(persona=self.persona, now=now, core=parts[0], occupation=parts[1],
                                          feeling=parts[2]))
        self.persona = self.persona.model_copy(update={"summary": (
            f"Name: {n} (age: {self.spec.age})\nInnate traits: {self.spec.traits}\n"
            f"{out.core}\n{out.occupation}\n{out.feeling}\nLives in: {self.spec.home}.")})
        self.summary_date = now.date().isoformat()

    # --- interventions ----------------------------------------------------------------------------

    def whisper(self, text: str, now: datetime) -> tuple[Memory, bool]:
        """An inner voice: stored as the agent's own thought, kept as an intention, and acted on
        (the plan is redone; the flag says whether there was a plan of today's to redo)."""
        self.settle()
        thought = self.remember("reflection", [f"Thought: {text}"], now)[0]
        self.intentions.append({"id": thought.id, "time": now.isoformat(" "), "text": text})
        self.intentions = self.intentions[-10:]
        return thought, self.replan(now, [record(self.lore, thought, 1.0)])

    def interview(self, question: str, interviewer: str, now: datetime) -> tuple[str, Retrieval]:
        self.settle()
        retrieval = self.memory.retrieve(question, now, self.settings.interview_k, purpose="interview")
        schedule = [Block(start=planning.hhmm(s[0].start), minutes=s[-1].end - s[0].start,
                          activity=s[0].activity[:60], place=s[0].place)
                    for s in self.plan.spans()] if self.plan and self.plan.date == now.date().isoformat() else []
        doing = gerund(self.action.activity) if self.action else "just waking up"
        answer = self.ask(Interview(persona=self.persona, now=now, interviewer=interviewer, question=question,
                                    doing=doing, schedule=schedule, memories=self.records(retrieval))).answer
        self.remember("chat", [f"{interviewer} asked {self.name}: {question} {self.name} answered: {answer}"], now)
        return answer, retrieval
