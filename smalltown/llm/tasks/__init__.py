"""The questions the mind asks (tasks): typed inputs, a prompt template file, a typed output.

Every input a task carries is typed: memories are `Record`s (id, time, kind, text, and the agents
and declared facts they concern), plans are steps and blocks with their times, conversations are
`TranscriptLine`s. The prompt templates (`llm/render.py`) alone turn them into prose for a model; the
scripted stand-in (`smalltown/scripted`) reads the typed fields and never parses prose the mind
wrote. Every backend answers every task with a validated instance of the task's `Output`,
checked against the task's own narrowed schema (`schema()`: the options of this question, the
count of ratings asked for).
"""

from smalltown.llm.tasks.base import (
    HHMM, RULES, Answer, Block, Done, LastTalk, Output, PersonaCard, PlanStep, Rating, Record, Task, TranscriptLine,
)
from smalltown.llm.tasks.base import Feeling
from smalltown.llm.tasks.memory import (
    Insight, RateImportance, RateImportanceOut, ReflectionInsights, ReflectionInsightsOut, ReflectionQuestions,
    ReflectionQuestionsOut, SummaryDescription, SummaryOut,
)
from smalltown.llm.tasks.plan import (
    ChoosePlace, ChoosePlaceOut, DailyPlan, DailyPlanOut, Decompose, DecomposeOut, HourlySchedule,
    HourlyScheduleOut, NextAction, NextActionOut, ObjectState, ObjectStateOut, SubAction,
)
from smalltown.llm.tasks.talk import (
    ConversationOut, Interview, InterviewOut, LearnedFact, React, ReactOut, SummarizeConversation, Utterance,
    UtteranceOut, CommittingUtterance, CommittingUtteranceOut,
)
from smalltown.llm.tasks.broadcast import Decided, Promise, PromiseOut
from smalltown.llm.tasks.goals import Other, SocialGoal, SocialGoalOut
from smalltown.llm.tasks.social import SocialConversationOut, SummarizeConversationSocial
from smalltown.world.model import SLEEPING  # the seam names the activity of sleep

TASKS: dict[str, type[Task]] = {t.name: t for t in (
    DailyPlan, HourlySchedule, Decompose, NextAction, ChoosePlace, ObjectState, RateImportance,
    ReflectionQuestions, ReflectionInsights, SummaryDescription, React, Utterance,
    SummarizeConversation, Interview, CommittingUtterance, SocialGoal, SummarizeConversationSocial)}

__all__ = [
    "CommittingUtterance", "CommittingUtteranceOut", "Decided", "Promise", "PromiseOut",
    "Answer",
    "Block",
    "ChoosePlace",
    "ChoosePlaceOut",
    "ConversationOut",
    "DailyPlan",
    "DailyPlanOut",
    "Decompose",
    "DecomposeOut",
    "Done",
    "HHMM",
    "HourlySchedule",
    "HourlyScheduleOut",
    "Insight",
    "Interview",
    "InterviewOut",
    "LastTalk",
    "LearnedFact",
    "NextAction",
    "NextActionOut",
    "ObjectState",
    "ObjectStateOut",
    "Output",
    "PersonaCard",
    "PlanStep",
    "RULES",
    "RateImportance",
    "RateImportanceOut",
    "Rating",
    "React",
    "ReactOut",
    "Record",
    "ReflectionInsights",
    "ReflectionInsightsOut",
    "ReflectionQuestions",
    "ReflectionQuestionsOut",
    "SLEEPING",
    "SubAction",
    "SummarizeConversation",
    "SummaryDescription",
    "SummaryOut",
    "TASKS",
    "Task",
    "TranscriptLine",
    "Utterance",
    "UtteranceOut",
    "Feeling",
    "Other",
    "SocialGoal",
    "SocialGoalOut",
    "SocialConversationOut",
    "SummarizeConversationSocial",
]

from smalltown.llm.tasks.rate import RatePerson, RatePersonOut  # noqa: E402  (eval social)

TASKS[RatePerson.name] = RatePerson
__all__ += ["RatePerson", "RatePersonOut"]

from smalltown.llm.tasks.economy import EconomyDecompose, EconomyDecomposeOut, Holding, Op, OpOutcome  # noqa: E402

TASKS[EconomyDecompose.name] = EconomyDecompose
__all__ += ["EconomyDecompose", "EconomyDecomposeOut", "Holding", "Op", "OpOutcome"]
from smalltown.llm.tasks.roles import GoalSeen, InferRole, InferRoleOut  # noqa: E402  (roles)

TASKS[InferRole.name] = InferRole
__all__ += ["GoalSeen", "InferRole", "InferRoleOut"]
from smalltown.llm.tasks.civics import (  # noqa: E402  (civics)
    CIVIC_TASKS, Amendment, Amendments, AmendmentsOut, ConstitutionFeedback, FeedbackOut, FeedbackSeen, PayTax,
    PayTaxOut, Payment, ReviseConstitution, ReviseOut, Vote, VoteOut,
)

TASKS.update({t.name: t for t in CIVIC_TASKS})
__all__ += ["Amendment", "Amendments", "AmendmentsOut", "ConstitutionFeedback", "FeedbackOut", "FeedbackSeen",
            "PayTax", "PayTaxOut", "Payment", "ReviseConstitution", "ReviseOut", "Vote", "VoteOut"]
from smalltown.llm.tasks.travel import TownSeen, Trip  # noqa: E402  (travel between towns)

__all__ += ["TownSeen", "Trip"]
from smalltown.llm.tasks.memes import MemeSummary, MemeSummaryOut, Topic, TownGoal  # noqa: E402  (memes)

TASKS[MemeSummary.name] = MemeSummary
__all__ += ["MemeSummary", "MemeSummaryOut", "Topic", "TownGoal"]
