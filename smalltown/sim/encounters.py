"""The encounters system: an agent that sees someone, or something amiss, may react: talk (a
conversation, which both then spend their time in) or change its plans.

Every agent's reaction is weighed at once (the crowd), from the town as it was when the phase
began; the decisions are then carried out in agent order. A decision to talk is carried out
when both are still free: an agent already pulled into an earlier agent's talk this tick does
not carry out its own decision, and its call says so. The tick's conversations are then held
together, a step at a time: both sides settle, every conversation's next line at once, each
side's summary, the re-plans after."""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, field
from datetime import datetime

from smalltown.llm.backend import CallRecord
from smalltown.mind import talk
from smalltown.mind.agent import Mind
from smalltown.mind.belief import seeking, seeks_out
from smalltown.mind.controller import weigh as consider
from smalltown.mind.react import Reaction, act_on, attending, may_consider, may_talk_to
from smalltown.mind.records import Lore
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim import lines
from smalltown.sim.crowd import Crowd
from smalltown.sim.movement import Movement
from smalltown.sim.objects import Objects
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import World, pretty
from smalltown.world.perception import Seen


@dataclass
class Candidate:
    """The one observation an agent weighs this tick."""

    agent: Agent
    seen: Seen
    other: Agent | None  # the agent seen, if it is one
    state: str  # what the other is doing, or the object's state


@dataclass
class Talk:
    a: Agent  # who starts it
    b: Agent
    reason: str
    opening: str
    relationship: str
    script: list[tuple[str, str]] = field(default_factory=list)  # the world file's lines (sim/lines.py)
    calls: list[dict] = field(default_factory=list)  # the decision to talk (llm.asker.call_ref, with its agent)


class Encounters:
    def __init__(self, world: World, lore: Lore, agents: list[Agent], by_name: dict[str, Agent],
                 objects: Objects, movement: Movement, crowd: Crowd):
        self.world = world
        self.lore = lore
        self.agents = agents
        self.by_name = by_name
        self.objects = objects
        self.movement = movement
        self.crowd = crowd
        # the agents on a timed errand (a walk with a deadline, e.g. a tax season's, sim/civics_tax.py):
        # they do not stop to weigh what they see (others may still stop them to talk: the errand
        # resumes after the talk)
        self.errands: Container[str] = ()

    def candidates(self, agents: list[Agent], seen: dict[str, list[Seen]], now: datetime) -> list[Candidate]:
        """Each awake agent's one new observation to weigh: another agent it may talk to, or an
        object doing something with nobody tending it (a burning stove). No question asked.
        One who seeks people out (a doctrine's priest, mind/belief.py `seeks_out`) with nothing
        new to weigh looks again at those in sight it seeks and did not get to: arriving in a
        square it sees several at once and weighs one a tick, and the rest are no longer new
        (retention). The cooldowns bound it: one talked with or passed over is not weighed again
        for hours."""
        out = []
        for agent in agents:
            new = seen.get(agent.name)
            seeks = bool(agent.look) and seeks_out(agent.mind)
            if not new and not seeks:  # (most agents most ticks: nothing new to weigh)
                continue
            # not before its first action: an agent that has not woken into its day does not react
            if agent.action is None or agent.asleep or agent.action.talking or agent.name in self.errands:
                continue
            c = self._first(agent, new or [], now)
            if c is None and seeks:
                c = self._first(agent, [s for s in agent.look if s.subject in self.by_name
                                        and seeking(agent.mind, s.subject)], now)
            if c is not None:
                out.append(c)
        return out

    def _first(self, agent: Agent, percepts: list[Seen], now: datetime) -> Candidate | None:
        """The one of `percepts` the agent weighs this tick, if any."""
        # something going on with nobody tending it (a burning stove) comes before people
        for s in sorted(percepts, key=lambda s: s.subject in self.by_name):
            other = self.by_name.get(s.subject)
            if other is not None:
                if (other.action is None or other.asleep or other.action.talking
                        or not may_talk_to(agent.mind, other.name, now) or not attending(agent.mind, other.name, now)):
                    continue
            elif not self.objects.unusual(s.subject, self.by_name):
                continue
            if not may_consider(agent.mind, s.subject, now):
                continue
            state = other.doing if other is not None else self.objects.states[s.subject]
            return Candidate(agent, s, other, state)  # one observation considered per tick
        return None

    def react(self, agents: list[Agent], seen: dict[str, list[Seen]], now: datetime, changes: Changes,
              meanwhile: Callable[[set[str]], None] | None = None) -> None:
        """Every agent of `agents` (the town, or a group of it: sim/groups.py) weighs its observation
        at once; the decisions are carried out in agent order.
        `meanwhile` is told twice whose minds the encounters may use (its work may run beside
        theirs on other minds): before the weighing, every agent that weighs, may be spoken to or
        has scripted lines; once the decisions are known, those who act or talk on them."""
        def weigh(c: Candidate) -> tuple[Reaction, CallRecord]:
            reaction = consider(c.agent.mind, c.seen, c.other is not None, now, self.place(c.agent), c.state)
            return reaction, c.agent.mind.asker.last  # this thread's call: a note may follow

        found = self.candidates(agents, seen, now)
        talks: list[Talk] = []
        acts: list[tuple[Agent, Reaction]] = []
        partner: dict[str, str] = {}  # who talks with whom this tick
        if self.world.lines:  # the world file's scripted lines come first; those in them weigh nothing else
            names = {a.name for a in agents}  # (a line's listener is within sight of its speaker: in the group)
            mine = [x for x in self.world.lines if x.speaker in names]
            for a, b, said in lines.due(mine, self.by_name, now, a_radius(agents), set()):
                talks.append(Talk(a, b, f"{b.name} is nearby", said[0][0], "", said))
                partner[a.name], partner[b.name] = b.name, a.name
            found = [c for c in found if c.agent.name not in partner and (c.other is None or c.other.name not in partner)]
        if meanwhile is not None:
            meanwhile({c.agent.name for c in found} | {c.other.name for c in found if c.other} | set(partner))
        for c, (reaction, call) in zip(found, self.crowd.each(found, weigh)):
            agent, answer = c.agent, reaction.answer
            changes.changed.add(agent.name)
            if not (reaction.talks or reaction.acts):
                continue
            busy = next((n for n in (agent.name, c.other.name if reaction.talks else "") if n in partner), None)
            if busy is not None:  # decided on the town as the phase began: an earlier talk came first
                _note(call, f"not carried out: {busy} was already talking with {partner[busy]}")
                continue
            if reaction.talks:
                talks.append(Talk(agent, c.other, c.seen.description, answer.opening, answer.context_summary,
                                  calls=[{**reaction.call, "agent": agent.name}]))
                partner[agent.name], partner[c.other.name] = c.other.name, agent.name
            else:
                changes.emit(agent.name, "reacted", f"{agent.name} reacts to {c.seen.description}: {answer.reaction}",
                             observed=c.seen.subject, reaction=answer.reaction)
                acts.append((agent, reaction))
        if meanwhile is not None:
            meanwhile({a.name for a, _ in acts} | {n for t in talks for n in (t.a.name, t.b.name)})
        for (agent, reaction), replanned in zip(acts, self.crowd.each(acts, lambda x: act_on(x[0].mind, x[1], now))):
            if replanned:
                changes.emit(agent.name, "replanned", f"{agent.name} re-plans the rest of the day",
                             reason=reaction.answer.reaction)
        self.converse(talks, now, changes)

    def place(self, agent: Agent) -> str:
        arena = self.world.arena_at(agent.tile)
        return pretty(arena.address) if arena else "the street"

    def converse(self, talks: list[Talk], now: datetime, changes: Changes) -> None:
        """The tick's conversations, held together (mind/talk.py's steps, each over all of them at
        once); each touches only its own two minds, and no agent is in two."""
        if not talks:
            return
        # (conversation, me, the other): the initiators first, then the others
        sides: list[tuple[int, Mind, Mind]] = ([(i, t.a.mind, t.b.mind) for i, t in enumerate(talks)]
                                               + [(i, t.b.mind, t.a.mind) for i, t in enumerate(talks)])
        start = self.crowd.phase
        self.crowd.each(sides, lambda s: s[1].settle())
        convs = [talk.begin(t.a.mind, t.b.mind, now, self.place(t.a), t.reason, {t.a.name: t.a.doing, t.b.name: t.b.doing},
                            t.opening, t.relationship) for t in talks]
        for t, conv in zip(talks, convs):
            conv.calls = t.calls
            if t.script:
                lines.script(conv, t.script)
        going = [i for i, c in enumerate(convs) if c.going]
        while going:  # line k of every conversation still going, at once
            said = self.crowd.each(going, lambda i: talk.say(convs[i], talks[i].a.mind, talks[i].b.mind))
            going = [i for i, on in zip(going, said) if on]
        # (the steps after the lines at a fixed place in the call log, however many lines were said)
        self.crowd.phase = start + TAIL
        for (i, me, _), got in zip(sides, self.crowd.each(sides, lambda s: talk.remember(s[1], s[2], convs[s[0]]))):
            talk.settle_memory(convs[i], me.name, got)
        for (i, me, _), again in zip(sides, self.crowd.each(sides, lambda s: talk.carry_on(s[1], s[2], convs[s[0]]))):
            convs[i].replanned[me.name] = again
        for t, conv in zip(talks, convs):
            self._emit(t, conv, changes)

    def _emit(self, t: Talk, conv: talk.Conversation, changes: Changes) -> None:
        changes.conversations.append(conv)
        index = len(changes.conversations) - 1  # the row id is known when the tick is written
        for line in conv.lines:
            listener = t.b.name if line.speaker == t.a.name else t.a.name
            changes.emit(line.speaker, "said", f"{line.speaker}: {line.text}", to=listener, place=conv.place,
                         conversation=index, tells=line.tells)
        for name, f in conv.feelings.items():  # social awareness: the feeling each side came away with
            changes.emit(name, "sentiment", f"{name} feels {f.value}/10 toward {f.other} (was {f.previous})",
                         other=f.other, value=f.value, previous=f.previous, summary=f.summary, conversation=index)
        for name, st in conv.stances.items():  # civics: the desired tax rate each side came away with
            changes.emit(name, "stance", f"{name} now wants a {st.value}% tax (was {st.previous})", value=st.value,
                         previous=st.previous, other=st.other, conversation=index)
        for me in (t.a, t.b):
            if conv.replanned[me.name]:  # what was said changed the day: planned again from here
                changes.emit(me.name, "replanned", f"{me.name} re-plans the rest of the day",
                             reason=conv.chats[me.name].description)
            self.movement.halt(me)  # both stand talking (the mind set the action)
            action = me.mind.action
            changes.emit(me.name, "started", f"{me.name}: {action.activity}", activity=action.activity,
                         address=action.address, end=action.end.strftime(TIME_FMT), calls=action.calls)
            changes.changed.add(me.name)


TAIL = 10**5  # the crowd's phases after a talk's lines: past any number of lines


def a_radius(agents: list[Agent]) -> int:
    """How near two agents are for a scripted line: within sight (the town's one setting)."""
    return agents[0].mind.settings.vision_radius if agents else 0


def _note(call: CallRecord, text: str) -> None:
    call.note = f"{call.note}; {text}" if call.note else text
