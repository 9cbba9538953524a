"""Reacting (SPEC 5): whether an agent is open to weighing what it sees, and whether to go on with
its action or react to it, from two retrievals (the relationship, what is seen), the last talk with
the one seen and the news not yet told them. Talking is one reaction (see `talk`); any other is
done by re-planning the rest of the day from the moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.lang import gerund
from smalltown.llm.tasks import React, ReactOut, Record
from smalltown.mind.commitments import narrowed
from smalltown.mind import belief, civics, planning, social
from smalltown.mind.talk import facts_of, news_for
from smalltown.world.perception import Seen

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


@dataclass
class Reaction:
    """What the mind decided about one observation."""

    observed: str  # an agent's name or an object's address
    is_agent: bool
    answer: ReactOut
    observation: str = ""  # what was noticed: a re-plan after the reaction says so
    call: dict = field(default_factory=dict)  # the React call that decided it (llm.asker.call_ref)

    @property
    def talks(self) -> bool:
        return self.answer.react and self.answer.talk and self.is_agent

    @property
    def acts(self) -> bool:
        """A reaction other than talking, done by re-planning."""
        return self.answer.react and bool(self.answer.reaction) and not self.talks


def may_talk_to(mind: "MindCore", other: str, now: datetime) -> bool:
    last = mind.state.last_chat.get(other)
    return last is None or now - last >= timedelta(hours=mind.settings.conversation_cooldown_hours)


def may_consider(mind: "MindCore", subject: str, now: datetime) -> bool:
    """Having just decided not to react to someone or something, the agent does not weigh it
    again at once (the decision stands for `react_cooldown_hours`)."""
    last = mind.state.declined.get(subject)
    return last is None or now - last >= timedelta(hours=mind.settings.react_cooldown_hours)


def attending(mind: "MindCore", other: str, now: datetime) -> bool:
    """Whether the agent weighs the person `other` now: having just weighed someone, it passes
    through a crowd without deliberating over each new face for `attention_minutes`, unless it is
    an influencer still to argue its case with `other`, or a priest of a
    doctrine `other` is not known to hold (seeking people out is their whole point)."""
    last = mind.state.weighed
    if last is None or now - last >= timedelta(minutes=mind.settings.attention_minutes):
        return True
    return civics.persuading(mind, other) or belief.seeking(mind, other)


def consider(mind: "MindCore", seen: Seen, is_agent: bool, now: datetime, place: str, state: str) -> Reaction:
    """SPEC 5: continue or react, given a context from two retrievals. `state`: what the other
    agent is doing, or the object's state."""
    # no settle here: the context (the relationship, the observed's doing) lives in what is
    # already remembered, and a rating call per encounter would double the cost of reacting
    k = mind.settings.react_k
    what = f"the {seen.subject.split(':')[-1]} is {state}" if not is_agent else seen.description
    queries = [f"What is {mind.name}'s relationship with {seen.subject}?" if is_agent else seen.description,
               seen.description if is_agent else f"{mind.name} and {what}"]
    context: dict[int, Record] = {}
    for q in queries:
        for r in mind.retrieve(q, now, k, "react"):
            if r.id not in context or context[r.id].score < r.score:
                context[r.id] = r
    news = news_for(mind, seen.subject) if is_agent else []
    action = mind.state.action
    status = gerund(action.activity) if action else "nothing in particular"
    answer = mind.ask(narrowed(mind, React(persona=mind.persona, now=now, status=status, place=place,
                            observation=seen.description, observed=seen.subject, observed_is_agent=is_agent,
                            observed_state=state, context=list(context.values()),
                            last_talk=mind.state.talks.get(seen.subject) if is_agent else None,
                            news=news, facts=facts_of(mind, news),
                            feeling=social.feeling(mind, seen.subject) if is_agent else None,
                            **(civics.talk_inputs(mind, True, seen.subject) if is_agent else {}),
                            **(belief.react_inputs(mind, seen.subject) if is_agent else {}))))
    if not answer.react:
        mind.state.declined[seen.subject] = now
    if is_agent and mind.settings.attention_minutes > 0:  # (kept only with attention on: saves as before)
        mind.state.weighed = now
    return Reaction(seen.subject, is_agent, answer, seen.description, mind.asker.last_ref)


def act_on(mind: "MindCore", reaction: Reaction, now: datetime) -> bool:
    """A reaction other than talking: the rest of the day planned again from now (to an object:
    begun at that object). True if there was a plan of today's to redo."""
    noticed = [Record(time=now, kind="observation", text=f"{mind.name} noticed: {reaction.observation}")] \
        if reaction.observation else []
    return planning.replan(mind, now, noticed, reaction=reaction.answer.reaction,
                           first_address="" if reaction.is_agent else reaction.observed, calls=[reaction.call] if reaction.call else [])
