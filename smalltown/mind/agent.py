"""One agent's cognition: its memory stream, plans, reflections, reactions (SPEC 1-6).

The mind asks typed tasks through its Asker and knows nothing of who answers them. The
simulation calls it each tick: observe -> (reflect) -> (react) -> next action when due.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, time, timedelta

from smalltown.config import Settings
from smalltown.llm.backend import Asker
from smalltown.llm.tasks import (
    DailyPlan,
    Decompose,
    HourlySchedule,
    Interview,
    NextAction,
    ObjectState,
    Output,
    Persona,
    RateImportance,
    React,
    ReactOut,
    SummaryDescription,
    Task,
)
from smalltown.mind.memory import Memory, MemoryStream, Retrieval
from smalltown.mind.places import KnownTree, choose_place
from smalltown.mind.plan import SLEEPING, DayPlan, PlanItem, fit_actions, normalise_blocks
from smalltown.lang import gerund, hhmm
from smalltown.mind.reflect import reflect
from smalltown.world.model import AgentSpec, World, pretty
from smalltown.world.perception import Seen

TALKING = "talking with "


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


@dataclass
class Reaction:
    """What the mind decided about one observation."""

    observed: str  # an agent's name or an object's address
    is_agent: bool
    answer: ReactOut


def minute_of(now: datetime) -> int:
    return now.hour * 60 + now.minute


class Mind:
    def __init__(self, spec: AgentSpec, world: World, asker: Asker, memory: MemoryStream,
                 importance_cache: dict[str, int], settings: Settings, state: dict | None = None):
        self.name = spec.name
        self.spec = spec
        self.asker = asker
        self.memory = memory
        self.settings = settings
        self._importance = importance_cache
        state = state or {}
        self.persona = Persona(name=spec.name, age=spec.age, traits=spec.traits,
                               description=spec.description, home=spec.home,
                               summary=state.get("summary", ""))
        self.summary_date: str = state.get("summary_date", "")
        self.known = KnownTree(state["known"], state.get("states", {})) if "known" in state \
            else KnownTree.from_world(world, spec.knows)
        self.plan = DayPlan.from_json(state["plan"]) if state.get("plan") else None
        self.action = Action.from_json(state["action"]) if state.get("action") else None
        self.since_reflection: int = state.get("since_reflection", 0)
        self.last_chat: dict[str, str] = state.get("last_chat", {})
        self.declined: dict[str, str] = state.get("declined", {})
        self.object_states: dict[str, str] = state.get("object_states", {})  # answers that repeat
        self.place_answers: dict[str, str] = state.get("place_answers", {})
        # records waiting to be rated and stored: (kind, text, when, evidence)
        self.pending: list[tuple[str, str, str, list[int]]] = [tuple(p) for p in state.get("pending", [])]
        # ratings already known for waiting records (packed into an earlier answer)
        self._importance.update(state.get("pending_ratings", {}))
        self.schedule_memory: int | None = state.get("schedule_memory")

    def to_json(self) -> dict:
        return {
            "known": self.known.tree, "states": self.known.states,
            "plan": self.plan.to_json() if self.plan else None,
            "action": self.action.to_json() if self.action else None,
            "summary": self.persona.summary, "summary_date": self.summary_date,
            "since_reflection": self.since_reflection, "last_chat": self.last_chat,
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

    def importance(self, texts: list[str]) -> list[int]:
        """Ratings for new records: cached by description (identical texts score the same), the
        rest asked in one task. A missing or out-of-range rating is fixed and noted."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._importance))
        if todo:
            ratings = self.ask(RateImportance(persona=self.persona, memories=todo)).ratings
            if len(ratings) != len(todo):
                self.note(f"{len(ratings)} ratings for {len(todo)} memories; missing ones rated 3")
            for i, text in enumerate(todo):
                r = ratings[i] if i < len(ratings) else 3
                if not 1 <= r <= 10:
                    self.note(f"rating {r} for {text[:40]!r} clamped to 1-10")
                    r = max(1, min(10, r))
                self._importance[text] = r
        return [self._importance[t] for t in texts]

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
            self.importance([*(t for _, t, _, _ in self.pending), *texts])  # one question for all of them
            self.settle()
        ratings = self.importance(texts)  # cached now
        out = [self.memory.add(kind, t, now, r, evidence) for t, r in zip(texts, ratings)]
        if kind in ("observation", "chat"):
            self.since_reflection += sum(ratings)
        return out

    # --- perceiving and reflecting --------------------------------------------------------------

    def enter(self, sector: str, arena: str, objects: list[str]) -> None:
        """Spatial memory grows: an arena the agent walks into becomes known, with its objects."""
        self.known.visit(sector, arena, objects)

    def observe(self, seen: list[Seen], now: datetime, object_states: dict[str, str]) -> None:
        """Note what was newly seen (rated and stored at the next `settle`), and object states
        as last seen."""
        for s in seen:
            if s.subject in object_states:
                self.known.states[s.subject] = object_states[s.subject]
        if self.settings.observation_memory:
            stamp = now.isoformat(" ")
            self.pending += [("observation", s.description, stamp, []) for s in seen]

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
        ratings = self.importance([text for _, text, _, _ in batch])
        out = []
        for (kind, text, when, evidence), r in zip(batch, ratings):
            out.append(self.memory.add(kind, text, datetime.fromisoformat(when), r, evidence))
            if kind == "observation":
                self.since_reflection += r
        self.pending = rest
        return out

    def _settle_if_due(self, now: datetime) -> None:
        """Batch the rating: settle when enough has piled up, or the oldest record has waited
        `settle_hours`; a retrieval or a plan settles whatever is waiting anyway."""
        if len(self.pending) >= self.settings.settle_batch or (self.pending and now - datetime.fromisoformat(
                self.pending[0][2]) >= timedelta(hours=self.settings.settle_hours)):
            self.settle()

    def should_reflect(self) -> bool:
        """Checked every tick; counts only settled records, so it costs nothing in between."""
        return self.settings.reflection and self.since_reflection > self.settings.reflection_threshold

    def reflect(self, now: datetime) -> list[Memory]:
        self.settle()
        self.since_reflection = 0
        return reflect(self, now)

    # --- reacting -------------------------------------------------------------------------------

    def may_talk_to(self, other: str, now: datetime) -> bool:
        last = self.last_chat.get(other)
        return last is None or now - datetime.fromisoformat(last) >= timedelta(hours=self.settings.chat_cooldown_hours)

    def may_consider(self, subject: str, now: datetime) -> bool:
        """Having just decided not to react to someone or something, the agent does not weigh it
        again at once (the decision stands for `react_cooldown_hours`)."""
        last = self.declined.get(subject)
        return last is None or now - datetime.fromisoformat(last) >= timedelta(hours=self.settings.react_cooldown_hours)

    def consider(self, seen: Seen, is_agent: bool, now: datetime) -> Reaction:
        """SPEC 5: continue or react, given a context summary from two retrievals."""
        # no settle here: the context (the relationship, the observed's doing) lives in what is
        # already remembered, and a rating call per encounter would double the cost of reacting
        k = self.settings.react_k
        what = seen.description.removeprefix(f"{seen.subject} is ").strip() if is_agent else seen.description
        queries = [f"What is {self.name}'s relationship with {seen.subject}?" if is_agent else seen.description,
                   seen.description if is_agent else f"{self.name} and the {what}"]
        context: dict[int, str] = {}
        for q in queries:
            for s in self.memory.retrieve(q, now, k, purpose="react").results:
                context.setdefault(s.memory.id, s.memory.description)
        status = self.action.activity if self.action else "idle"
        answer = self.ask(React(persona=self.persona, time=now.strftime("%A %B %-d, %Y, %H:%M"),
                                status=status, observation=seen.description, observed=seen.subject,
                                observed_is_agent=is_agent, context=list(context.values())))
        if not answer.react:
            self.declined[seen.subject] = now.isoformat(" ")
        return Reaction(seen.subject, is_agent, answer)

    # --- acting ---------------------------------------------------------------------------------

    def due(self, now: datetime) -> bool:
        """Zero thinking mid-action: the mind is asked only when its action has ended."""
        return self.action is None or now >= self.action.end

    def next_action(self, now: datetime, current: str) -> tuple[Action, bool]:
        """The action for `now`, and whether it is new (False: the same action goes on)."""
        if not self.settings.planning:
            return self._unplanned(now, current)
        if self.plan is None or self.plan.date != now.date().isoformat():
            self.plan = self._plan_day(now)
        minute = minute_of(now)
        block = self.plan.block_at(minute)
        assert block is not None  # normalise_blocks covers the whole day
        new_block = self.action is None or self.plan.block_at(minute_of(self.action.start)) is not block
        midnight = datetime.combine(now.date(), time())
        if not block.address:
            before = self._block_before(block)
            if block.activity == SLEEPING and self.action and self.action.asleep:
                block.address = self.action.address  # sleep on through midnight, same bed
            elif before is not None and before.activity == block.activity and before.address:
                block.address = before.address  # the same activity goes on where it was
            else:
                block.address = choose_place(self.asker, self.name, self.persona, self.known,
                                             block.activity, current, self.place_answers)
        if block.activity == SLEEPING:  # sleep is not decomposed
            activity, end = SLEEPING, midnight + timedelta(minutes=block.end)
            if new_block:
                self._settle_if_due(now)
        else:
            if block.actions is None:
                self._decompose(block, now)  # rates what is waiting, in the same call
                self.settle(rated_only=True)
            elif new_block:
                self._settle_if_due(now)  # a new hour block: a good moment to file what was noted
            sub = next((a for a in block.actions if a.start <= minute < a.end), block.actions[-1])
            activity, end = sub.activity, midnight + timedelta(minutes=max(sub.end, minute + 1))
        if self.action and self.action.activity == activity and self.action.address == block.address:
            self.action = Action(activity, block.address, self.action.start, end)
            return self.action, False
        return self._start(activity, block.address, now, end), True

    def _start(self, activity: str, address: str, now: datetime, end: datetime) -> Action:
        self.action = Action(activity, address, now, end)
        if self.settings.observation_memory:
            self.pending.append(("observation", f"{self.name} is {gerund(activity)}", now.isoformat(" "), []))
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
            task = ObjectState(persona=self.persona, activity=self.action.activity, object=obj)
            self.object_states[key] = self.ask(task).state
        return self.object_states[key]

    # --- planning -------------------------------------------------------------------------------

    def _date(self, now: datetime) -> str:
        return now.strftime("%A %B %-d, %Y")

    def _plan_day(self, now: datetime) -> DayPlan:
        """The morning: refresh the summary description, plan the day, break it into hours."""
        self.settle()
        self.refresh_summary(now)
        date = self._date(now)
        places = list(self.known.tree)
        context = [s.memory.description for s in self.memory.retrieve(
            f"{self.name}'s plans, appointments and events on {date}", now,
            self.settings.plan_context_k, purpose="plan").results]
        yesterday = self.plan.items if self.plan else []
        daily = self.ask(DailyPlan(persona=self.persona, date=date, known_places=places,
                                   yesterday=yesterday, context=context))
        level1 = self.remember("plan", [f"{self.name}'s plan for {date}: wake up at "
                                        f"{daily.wake_up_hour}:00, then " + "; ".join(daily.items)], now)
        hourly = self.ask(HourlySchedule(persona=self.persona, date=date, wake_up_hour=daily.wake_up_hour,
                                         daily_plan=daily.items, known_places=places, context=context))
        blocks = normalise_blocks(self._raw(hourly.blocks, 0), daily.wake_up_hour * 60,
                                  sleep_until=daily.wake_up_hour * 60)
        plan = DayPlan(now.date().isoformat(), daily.wake_up_hour, daily.items, blocks)
        self._remember_schedule(plan, f"{self.name}'s schedule for {date}", now, [level1[0].id])
        return plan

    def _raw(self, blocks, from_minute: int) -> list[tuple[int, int, str]]:
        raw = []
        for b in blocks:
            h, m = map(int, b.start.split(":"))
            if h * 60 + m < from_minute:
                self.note(f"block at {b.start} is before {hhmm(from_minute)}: moved to it")
            raw.append((max(h * 60 + m, from_minute), b.minutes, b.activity))
        return raw

    def _remember_schedule(self, plan: DayPlan, title: str, now: datetime, evidence: list[int],
                           start: int = 0) -> None:
        lines = [f"{hhmm(b.start)} {b.activity} ({b.minutes} min)" for b in plan.blocks if b.start >= start]
        self.schedule_memory = self.remember("plan", [f"{title}: " + "; ".join(lines)], now, evidence)[0].id

    def _block_before(self, block: PlanItem) -> PlanItem | None:
        blocks = self.plan.blocks if self.plan else []
        i = next((i for i, b in enumerate(blocks) if b is block), 0)
        return blocks[i - 1] if i > 0 else None

    def _decompose(self, block: PlanItem, now: datetime) -> None:
        """Just in time: the hour about to start, into 5-15 minute actions."""
        if block.minutes <= 15:  # already an action of 5-15 minutes: nothing to break down
            block.actions = [PlanItem(block.start, block.minutes, block.activity)]
            return
        place = pretty(":".join(block.address.split(":")[:2])) if block.address else "home"
        rate = list(dict.fromkeys(t for _, t, _, _ in self.pending if t not in self._importance))
        out = self.ask(Decompose(persona=self.persona, activity=block.activity, start=hhmm(block.start),
                                 minutes=block.minutes, place=place, rate=rate))
        if len(out.ratings) == len(rate):
            self._importance.update(zip(rate, out.ratings))
        elif rate:
            self.note(f"{len(out.ratings)} ratings for {len(rate)} memories; they are asked again")
        block.actions, fixed = fit_actions([(a.activity, a.minutes) for a in out.actions], block)
        if fixed:
            self.note(fixed)
        steps = "; ".join(f"{a.activity} ({a.minutes} min)" for a in block.actions)
        # rated with the next batch: nothing cites this record at once
        self.pending.append(("plan", f"From {hhmm(block.start)} to {hhmm(block.end)} {self.name} will: {steps}",
                             now.isoformat(" "), [self.schedule_memory] if self.schedule_memory else []))

    def replan(self, now: datetime, context: list[str], evidence: list[int], first_address: str = "") -> bool:
        """After a reaction: the rest of the day is planned again from this moment (SPEC 4).
        False when there is no plan of today's to redo (planning ablated, or before the day's plan)."""
        if not self.settings.planning or self.plan is None or self.plan.date != now.date().isoformat():
            return False
        self.settle()
        minute = minute_of(now)
        done = []
        for b in self.plan.blocks:
            if b.start >= minute:
                break
            kept = PlanItem(b.start, min(b.minutes, minute - b.start), b.activity, b.address)
            if kept.minutes >= 5 or not done:
                done.append(kept)
            else:
                done[-1].minutes += kept.minutes
        # a thought whispered earlier today still holds when something else prompts a re-plan
        today = now.date()
        thoughts = [m.description for m in self.memory.recent(200, kinds=("reflection",))
                    if m.created.date() == today and m.description.startswith("Thought: ")]
        context = list(dict.fromkeys([*thoughts, *context]))
        hourly = self.ask(HourlySchedule(
            persona=self.persona, date=self._date(now), wake_up_hour=self.plan.wake_up_hour,
            daily_plan=self.plan.items, known_places=list(self.known.tree), from_time=hhmm(minute),
            done=[f"{hhmm(b.start)} {b.activity}" for b in done], context=context))
        self.plan.blocks = normalise_blocks(self._raw(hourly.blocks, minute), minute, before=done)
        if first_address:
            nxt = self.plan.block_at(minute)
            if nxt is not None and nxt.start == minute:
                nxt.address = first_address
        self._remember_schedule(self.plan, f"{self.name}'s revised schedule from {hhmm(minute)}", now,
                                evidence + ([self.schedule_memory] if self.schedule_memory else []), minute)
        if self.action is not None:
            self.action.end = now  # decide again now
        return True

    def _unplanned(self, now: datetime, current: str) -> tuple[Action, bool]:
        """The no-planning ablation: the next action from the moment only."""
        self.settle()
        recent = [m.description for m in self.memory.recent(10)]
        out = self.ask(NextAction(persona=self.persona, time=now.strftime("%A %B %-d, %Y, %H:%M"),
                                  status=self.action.activity if self.action else "just woke up",
                                  recent=recent, known_places=list(self.known.tree)))
        end = now + timedelta(minutes=out.minutes)
        if self.action and self.action.activity == out.activity:
            self.action.end = end
            return self.action, False
        where = choose_place(self.asker, self.name, self.persona, self.known, out.activity, current,
                             self.place_answers)
        return self._start(out.activity, where, now, end), True

    # --- the summary description (SPEC 6) -------------------------------------------------------

    def refresh_summary(self, now: datetime) -> None:
        """Regenerated once each game morning, then cached in the agent's state."""
        if self.summary_date == now.date().isoformat():
            return
        k = 10
        n = self.name
        parts = [[s.memory.description for s in self.memory.retrieve(q, now, k, purpose="summary").results]
                 for q in (f"{n}'s core characteristics", f"{n}'s current daily occupation",
                           f"{n}'s feeling about their recent progress in life")]
        out = self.ask(SummaryDescription(persona=self.persona, core=parts[0], occupation=parts[1], feeling=parts[2]))
        self.persona = self.persona.model_copy(update={"summary": (
            f"Name: {n} (age: {self.spec.age})\nInnate traits: {self.spec.traits}\n"
            f"{out.core}\n{out.occupation}\n{out.feeling}\nLives in: {self.spec.home}.")})
        self.summary_date = now.date().isoformat()

    # --- interventions ----------------------------------------------------------------------------

    def whisper(self, text: str, now: datetime) -> tuple[Memory, bool]:
        """An inner voice: stored as the agent's own thought, and acted on (the plan is redone;
        the flag says whether there was a plan of today's to redo)."""
        self.settle()
        thought = self.remember("reflection", [f"Thought: {text}"], now)[0]
        return thought, self.replan(now, [thought.description], [thought.id])

    def interview(self, question: str, interviewer: str, now: datetime) -> tuple[str, Retrieval]:
        self.settle()
        retrieval = self.memory.retrieve(question, now, self.settings.interview_k, purpose="interview")
        answer = self.ask(Interview(persona=self.persona, interviewer=interviewer, question=question,
                                    memories=[s.memory.description for s in retrieval.results])).answer
        self.remember("chat", [f"{interviewer} asked {self.name}: {question} {self.name} answered: {answer}"], now)
        return answer, retrieval
