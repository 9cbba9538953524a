"""The scripted backend: every task answered deterministically from its typed inputs, no model.

It lets the whole architecture run offline and fast: the town's routines, gatherings and
declared facts (world data) drive plans and talk; records are read by their typed fields
(kind, time, importance, whom and which facts they concern), never by the prose in them. Same
seed and inputs, same answers. One module per family of tasks: `plan` (day, schedule, next
action), `steps` (decomposition), `objects` (places, object states), `memory` (importance,
reflection, summary), `talk` (reacting, conversation lines and summary), `interview`.
"""

from __future__ import annotations

from typing import Callable

from smalltown.llm.tasks import (
    Answer,
    ChoosePlace,
    CommittingUtterance,
    DailyPlan,
    Decompose,
    HourlySchedule,
    Interview,
    NextAction,
    ObjectState,
    Output,
    RateImportance,
    React,
    ReflectionInsights,
    ReflectionQuestions,
    SummarizeConversation,
    SummaryDescription,
    Task,
    Utterance,
)
from smalltown.llm.tasks import SocialGoal
from smalltown.llm.tasks.social import SummarizeConversationSocial
from smalltown.llm.tasks.rate import RatePerson
from smalltown.llm.tasks import EconomyDecompose, InferRole
from smalltown.scripted import rate, roles, trade
from smalltown.llm.tasks import Amendments, ConstitutionFeedback, PayTax, ReviseConstitution, Vote
from smalltown.llm.tasks.civics import SummarizeConversationCivic, SummarizeConversationSocialCivic
from smalltown.scripted import civics
from smalltown.scripted import commit, goals, interview, memory, objects, plan, social, steps, talk


class ScriptedBackend:
    """A backend like any other (`answer(task, prompt) -> Answer`); the prompt is ignored."""

    name = "scripted"
    model = "scripted"
    # declares no capabilities (llm.backend.capabilities: nothing beyond answering): it answers
    # anything at once from the typed inputs, needs no window, and imports nothing but the seam

    def __init__(self, seed: int = 0):
        self.seed = seed
        s = seed
        self._handlers: dict[type[Task], Callable[[Task], Output]] = {
            DailyPlan: lambda t: plan.daily_plan(s, t),
            HourlySchedule: lambda t: plan.hourly_schedule(s, t),
            Decompose: lambda t: steps.decompose(t, memory.rate),
            NextAction: lambda t: plan.next_action(s, t),
            ChoosePlace: objects.choose_place,
            ObjectState: objects.object_state,
            RateImportance: memory.rate_importance,
            ReflectionQuestions: memory.reflection_questions,
            ReflectionInsights: memory.reflection_insights,
            SummaryDescription: lambda t: memory.summary_description(s, t),
            React: lambda t: civics.react(talk.react(s, t), t),
            Utterance: lambda t: talk.utterance(s, t),
            SummarizeConversation: lambda t: talk.summarize(s, t),
            Interview: lambda t: interview.interview(s, t),
            CommittingUtterance: lambda t: commit.with_promise(t, talk.utterance(s, t)),
            SummarizeConversationSocial: lambda t: social.summarize_social(t, talk.summarize(s, t)),
            SocialGoal: lambda t: goals.social_goal(s, t),
            RatePerson: rate.rate_person,
            EconomyDecompose: lambda t: trade.decompose(t, memory.rate),
            InferRole: roles.infer_role,
            ConstitutionFeedback: civics.feedback,
            Amendments: civics.amendments,
            Vote: civics.vote,
            ReviseConstitution: civics.revise,
            PayTax: lambda t: civics.pay_tax(s, t),
            SummarizeConversationCivic: lambda t: civics.summary(t, talk.summarize(s, t)),
            SummarizeConversationSocialCivic: lambda t: civics.summary(
                t, social.summarize_social(t, talk.summarize(s, t))),
        }

    def answer(self, task: Task, prompt: str = "") -> Answer:
        out = self._handlers[type(task)](task)
        out = type(out).model_validate(out.model_dump())  # what a model's answer goes through
        return Answer(output=out, raw=out.model_dump_json())
