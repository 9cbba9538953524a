"""The encounters system: an agent that sees someone, or something amiss, may react: talk (a
conversation, which both then spend their time in) or change its plans."""

from __future__ import annotations

from datetime import datetime

from smalltown.mind.react import act_on, consider, may_consider, may_talk_to
from smalltown.mind.records import Lore
from smalltown.mind.talk import hold_conversation
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.movement import Movement
from smalltown.sim.objects import Objects
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import World, pretty
from smalltown.world.perception import Seen


class Encounters:
    def __init__(self, world: World, lore: Lore, agents: list[Agent], by_name: dict[str, Agent],
                 objects: Objects, movement: Movement):
        self.world = world
        self.lore = lore
        self.agents = agents
        self.by_name = by_name
        self.objects = objects
        self.movement = movement

    def react(self, seen: dict[str, list[Seen]], now: datetime, changes: Changes) -> None:
        """Each awake agent may react to one new observation: another agent it may talk to, or an
        object doing something with nobody tending it (a burning stove)."""
        talked: set[str] = set()
        for agent in self.agents:
            # not before its first action: an agent that has not woken into its day does not react
            if agent.action is None or agent.asleep or agent.name in talked or agent.action.talking:
                continue
            # something going on with nobody tending it (a burning stove) comes before people
            new = sorted(seen.get(agent.name, []), key=lambda s: s.subject in self.by_name)
            for s in new:
                other = self.by_name.get(s.subject)
                if other is not None:
                    if (other.action is None or other.asleep or other.name in talked or other.action.talking
                            or not may_talk_to(agent.mind, other.name, now)):
                        continue
                elif not self.objects.unusual(s.subject, self.agents):
                    continue
                if not may_consider(agent.mind, s.subject, now):
                    continue
                state = other.doing if other is not None else self.objects.states[s.subject]
                reaction = consider(agent.mind, s, other is not None, now, self.place(agent), state)
                changes.changed.add(agent.name)
                answer = reaction.answer
                if reaction.talks and other is not None:
                    self.hold_conversation(agent, other, now, changes, s.description, answer.opening,
                                  answer.context_summary)
                    talked |= {agent.name, other.name}
                elif reaction.acts:
                    changes.emit(agent.name, "reacted", f"{agent.name} reacts to {s.description}: {answer.reaction}",
                                 observed=s.subject, reaction=answer.reaction)
                    if act_on(agent.mind, reaction, now):
                        changes.emit(agent.name, "replanned", f"{agent.name} re-plans the rest of the day",
                                     reason=answer.reaction)
                break  # one observation considered per tick

    def place(self, agent: Agent) -> str:
        arena = self.world.arena_at(agent.tile)
        return pretty(arena.address) if arena else "the street"

    def hold_conversation(self, a: Agent, b: Agent, now: datetime, changes: Changes, reason: str,
                 opening: str = "", relationship: str = "") -> None:
        place = self.place(a)
        doing = {a.name: a.doing, b.name: b.doing}
        conv = hold_conversation(a.mind, b.mind, now, place, reason, doing, opening, relationship)
        changes.conversations.append(conv)
        index = len(changes.conversations) - 1  # the row id is known when the tick is written
        for line in conv.lines:
            listener = b.name if line.speaker == a.name else a.name
            changes.emit(line.speaker, "said", f"{line.speaker}: {line.text}", to=listener, place=place,
                         conversation=index, tells=line.tells)
        for me in (a, b):
            if conv.replanned[me.name]:  # what was said changed the day: planned again from here
                changes.emit(me.name, "replanned", f"{me.name} re-plans the rest of the day",
                             reason=conv.chats[me.name].description)
            self.movement.halt(me)  # both stand talking (the mind set the action)
            action = me.mind.action
            changes.emit(me.name, "started", f"{me.name}: {action.activity}", activity=action.activity,
                         address=action.address, end=action.end.strftime(TIME_FMT))
            changes.changed.add(me.name)
