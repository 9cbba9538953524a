"""One realistic question of every task, built by hand from typed inputs (a Smallville morning):
what a model backend is tested on. `rate(n)` is a rating question for n memories."""

from __future__ import annotations

from datetime import datetime, timedelta

from smalltown.llm.tasks.roles import GoalSeen, InferRole
from smalltown.llm.tasks.memes import MemeSummary, TownGoal
from smalltown.llm.tasks import Feeling, Other, RatePerson, SocialGoal, SummarizeConversationSocial
from smalltown.llm.tasks import EconomyDecompose, Holding, Op
from smalltown.llm.tasks import Amendment, Amendments, ConstitutionFeedback, FeedbackSeen, PayTax, ReviseConstitution, Vote
from smalltown.llm.tasks.civics import SummarizeConversationCivic, SummarizeConversationSocialCivic
from smalltown.llm.tasks import (
    TASKS,
    Block,
    ChoosePlace,
    DailyPlan,
    Decompose,
    Done,
    HourlySchedule,
    Interview,
    LastTalk,
    TranscriptLine,
    NextAction,
    ObjectState,
    PersonaCard,
    PlanStep,
    RateImportance,
    React,
    Record,
    ReflectionInsights,
    ReflectionQuestions,
    SummarizeConversation,
    SummaryDescription,
    Task,
    Utterance,
    CommittingUtterance,
    Block as _Block,
)
from smalltown.world.model import Fact, Gathering, RoutineItem

NOW = datetime(2023, 2, 13, 9, 30)
YESTERDAY = NOW - timedelta(days=1)
CAFE, HOME, COLLEGE, PARK = "Hobbs Cafe", "Isabella Rodriguez's apartment", "Oak Hill College", "Johnson Park"
PLACES = [CAFE, HOME, COLLEGE, PARK, "The Willows Market and Pharmacy", "Harvey Oak Supply Store"]
CAFE_OBJECTS = ["cafe: cafe customer seating", "cafe: cafe counter", "cafe: coffee machine", "cafe: piano",
                "cafe: refrigerator", "cafe: kitchen sink", "cafe: cooking area", "cafe: behind the cafe counter"]

ISABELLA = PersonaCard(
    name="Isabella Rodriguez", age=34, traits="friendly, outgoing, hospitable",
    description="Isabella Rodriguez is a cafe owner of Hobbs Cafe who loves to make people feel welcome. She is "
                "always looking for ways to make the cafe a place where people can come to relax and enjoy "
                "themselves. She is planning a Valentine's Day party at Hobbs Cafe on February 14th, from 5pm.",
    home=HOME,
    routine=(RoutineItem("06:00", 30, "wake up and get ready"), RoutineItem("06:30", 30, "eat breakfast"),
             RoutineItem("08:00", 720, "open and run Hobbs Cafe", CAFE, "work"),
             RoutineItem("20:00", 120, "relax and read at home"), RoutineItem("22:00", 480, "sleeping")))
KLAUS = PersonaCard(
    name="Klaus Mueller", age=20, traits="kind, inquisitive, passionate",
    description="Klaus Mueller is a student at Oak Hill College studying sociology. He is passionate about "
                "social justice and is writing a research paper on the effects of gentrification.",
    home="Oak Hill College Dorm",
    summary="Klaus Mueller is a kind and curious sociology student at Oak Hill College who spends his days "
            "in the library writing a paper on gentrification, and feels he is making steady progress.")

PARTY = Fact(name="party", text="Isabella Rodriguez is hosting a Valentine's Day party at Hobbs Cafe on "
             "February 14th, from 5pm to 7pm", keywords=("party",), question="Do you know of a party?",
             known_by=("Isabella Rodriguez",), subject="Isabella Rodriguez")
GATHERING = Gathering(name="Valentine's Day party", place=CAFE, start=datetime(2023, 2, 14, 17),
                      end=datetime(2023, 2, 14, 19), host="Isabella Rodriguez", fact="party")


def rec(text: str, minutes_ago: int = 30, kind: str = "observation", score: float = 1.0, i: int = 0,
        about=(), facts=()) -> Record:
    return Record(id=i, time=NOW - timedelta(minutes=minutes_ago), kind=kind, text=text, score=score,
                  about=tuple(about), facts=tuple(facts))


MEMORIES = [
    "the coffee machine is brewing coffee",
    "Klaus Mueller is sitting at the cafe customer seating, reading a book",
    "Isabella Rodriguez is planning a Valentine's Day party at Hobbs Cafe for tomorrow at 5pm",
    "the refrigerator is idle",
    "Maria Lopez told Isabella she has a crush on Klaus Mueller",
    "the piano is idle",
    "Tom Moreno is buying coffee at the cafe counter",
    "the kitchen sink is full of dirty cups",
    "Ayesha Khan said she is writing a thesis on Shakespeare's comedies",
]


def rate(n: int) -> RateImportance:
    """A rating question for the first n of nine typical memories (n <= 9)."""
    return RateImportance(persona=ISABELLA, now=NOW,
                          memories=[rec(t, 60 - 5 * i, i=i + 1) for i, t in enumerate(MEMORIES[:n])])


def realistic_tasks() -> dict[str, Task]:
    """One question of every task, as the mind would ask it on a morning at Hobbs Cafe."""
    context = [rec(t, 90 - 7 * i, score=2.0 - i / 10, i=20 + i) for i, t in enumerate(MEMORIES)]
    schedule = [Block(start="00:00", minutes=360, activity="sleeping", place=HOME),
                Block(start="06:00", minutes=60, activity="wake up, wash and have breakfast", place=HOME),
                Block(start="07:00", minutes=60, activity="walk to the cafe and open it", place=CAFE),
                Block(start="08:00", minutes=240, activity="serve customers at the counter", place=CAFE)]
    transcript = [TranscriptLine(speaker="Isabella Rodriguez", text="Good morning, Klaus! The usual coffee?"),
                  TranscriptLine(speaker="Klaus Mueller", text="Yes please. I have a long day at the library ahead.")]
    tasks = [
        DailyPlan(persona=ISABELLA, now=NOW.replace(hour=6, minute=0), known_places=PLACES,
                  yesterday=[rec("served customers at Hobbs Cafe all day", 60 * 24, kind="plan", i=1),
                             rec("talked with Maria Lopez about the party", 60 * 20, kind="chat", i=2)],
                  context=context[:4], gatherings=[GATHERING],
                  intentions=[rec("Isabella wants to buy decorations for the party", 60 * 15, i=3)]),
        HourlySchedule(persona=ISABELLA, now=NOW.replace(hour=6, minute=0), wake_up_hour=6,
                       daily_plan=[PlanStep(time="06:00", activity="wake up and have breakfast"),
                                   PlanStep(time="07:00", activity="open Hobbs Cafe"),
                                   PlanStep(time="12:00", activity="have lunch at the cafe"),
                                   PlanStep(time="13:00", activity="serve customers and plan the party"),
                                   PlanStep(time="20:00", activity="relax at home"),
                                   PlanStep(time="22:00", activity="go to bed")],
                       known_places=PLACES, gatherings=[GATHERING]),
        Decompose(persona=ISABELLA, now=NOW, activity="serve customers at the counter", start="09:30",
                  minutes=30, place=CAFE, objects=CAFE_OBJECTS, activity_start="08:00", activity_minutes=240,
                  done=[Done(time="09:00", activity="brew a fresh pot of coffee", object="cafe: coffee machine"),
                        Done(time="09:15", activity="take an order from Tom", object="cafe: cafe counter")],
                  minutes_left=120, before=schedule[2], after=Block(start="12:00", minutes=60,
                                                                   activity="have lunch at the cafe", place=CAFE),
                  gatherings=[GATHERING], rate=[rec(t, 10 - i, i=40 + i) for i, t in enumerate(MEMORIES[:3])]),
        NextAction(persona=ISABELLA, now=NOW, status="serving customers at the counter",
                   recent=context[:5], known_places=PLACES),
        ChoosePlace(persona=KLAUS, now=NOW, activity="write his research paper", level="sector", within="",
                    current="Oak Hill College Dorm: Klaus Mueller's room", options=PLACES),
        ObjectState(persona=ISABELLA, now=NOW, activity="brew coffee for a customer", object="coffee machine"),
        rate(4),
        ReflectionQuestions(persona=ISABELLA, now=NOW, statements=context),
        ReflectionInsights(persona=ISABELLA, now=NOW,
                           questions=["What is Isabella looking forward to?",
                                      "How does Isabella feel about her customers?"],
                           statements=context[:6]),
        SummaryDescription(persona=KLAUS, now=NOW,
                           core=[rec("Klaus helped a classmate with her essay", 600, i=50)],
                           occupation=[rec("Klaus is writing a research paper on gentrification", 120, i=51)],
                           feeling=[rec("Klaus feels his paper is coming along well", 60, i=52)]),
        React(persona=ISABELLA, now=NOW, status="serving customers at the counter", place="Hobbs Cafe: cafe",
              observation="Klaus Mueller is sitting at the cafe customer seating, reading a book",
              observed="Klaus Mueller", observed_is_agent=True, observed_state="reading a book",
              context=context[:4], last_talk=LastTalk(time=YESTERDAY.replace(hour=10),
                                                      summary="Klaus told Isabella about his research paper"),
              news=[rec(PARTY.text, 60 * 24, i=60, facts=("party",))], facts=[PARTY]),
        Utterance(persona=ISABELLA, now=NOW, listener="Klaus Mueller", place="Hobbs Cafe: cafe",
                  initiator="Isabella Rodriguez", reason="Klaus Mueller is sitting at the cafe, reading a book",
                  speaker_doing="serving customers at the counter", listener_doing="reading a book",
                  relationship="", last_talk=None, news=[rec(PARTY.text, 60 * 24, i=60, facts=("party",))],
                  facts=[PARTY], gatherings=[GATHERING], memories=context[:3], transcript=transcript),
        CommittingUtterance(persona=ISABELLA, now=NOW, listener="Klaus Mueller", place="Hobbs Cafe: cafe",
                            initiator="Isabella Rodriguez", reason="Klaus Mueller is sitting at the cafe",
                            speaker_doing="serving customers at the counter", listener_doing="reading a book",
                            gatherings=[GATHERING], memories=context[:3], transcript=transcript,
                            known_places=["Hobbs Cafe", "Johnson Park"],
                            plan_next=_Block(start="17:00", minutes=60, activity="go for a walk",
                                             place="Johnson Park")),
        SummarizeConversation(persona=KLAUS, now=NOW, other="Isabella Rodriguez", place="Hobbs Cafe: cafe",
                              lines=transcript + [TranscriptLine(speaker="Isabella Rodriguez", facts=("party",),
                                                       text="I'm hosting a Valentine's Day party here tomorrow "
                                                            "at 5pm. You should come!")],
                              facts=[PARTY], gatherings=[GATHERING]),
        Interview(persona=KLAUS, now=NOW, interviewer="a news reporter", question="What are you working on?",
                  doing="writing his research paper", schedule=schedule[:2],
                  memories=[rec("Klaus is writing a research paper on gentrification", 120, i=51)]),
        SocialGoal(persona=ISABELLA, now=NOW, community_goal="make Smallville a friendly place to live",
                   needs=["food", "company", "safety"], goal="",
                   others=[Other(name="Klaus Mueller", activity="writing his research paper", need="company"),
                           Other(name="Maria Lopez", activity="studying at the library")]),
        RatePerson(persona=KLAUS, now=NOW, other="Isabella Rodriguez", quality="likeable",
                   relationship="Isabella is warm and always invites me to things; I like her.", sentiment=7),
        SummarizeConversationSocial(
            persona=KLAUS, now=NOW, other="Isabella Rodriguez", place="Hobbs Cafe: cafe", lines=transcript,
            facts=[PARTY], gatherings=[GATHERING],
            feeling=Feeling(other="Isabella Rodriguez", sentiment=6, summary="a friendly cafe owner he sees daily"),
            other_traits="friendly, outgoing, hospitable", tones=["kind"]),
        EconomyDecompose(persona=ISABELLA, now=NOW, activity="bake pastries", start="09:30", minutes=30, place=CAFE,
                         objects=CAFE_OBJECTS, activity_start="09:30", activity_minutes=60, minutes_left=30,
                         ops=[Op(op="craft", item="pastry", qty=2, minutes=10),
                              Op(op="give", item="coffee", qty=1, other="Klaus Mueller"),
                              Op(op="trade", item="coffee", qty=1, other="Klaus Mueller", get="book", get_qty=1)],
                         inventory=[Holding(item="flour", qty=2), Holding(item="coffee", qty=1)], need="food"),
        InferRole(persona=ISABELLA, now=NOW, community_goal="make Smallville a friendly place to live",
                  goals=[GoalSeen(goal="bake extra bread to share with the neighbours", need="food"),
                         GoalSeen(goal="bring neighbours together for a chat and a meal", need="company")]),
        *_civic(transcript),
        MemeSummary(persona=PersonaCard(name="town Smallville", age=0, traits="", description="", home="Smallville"),
                    now=NOW, town="Smallville",
                    goals=[TownGoal(agent="Isabella Rodriguez", goal="bake extra bread to share with the neighbours",
                                    need="food"),
                           TownGoal(agent="Klaus Mueller", goal="start a reading club at the library", need="knowledge")]),
    ]
    out = {t.name: t for t in tasks}
    assert set(out) == set(TASKS)
    return out


CONSTITUTION = ("Every resident pays 20% of what they hold each tax season into the town chest. The chest feeds "
                "those in need. Amendments are proposed by the election manager and passed by a majority vote.")


def _civic(transcript: list) -> list[Task]:
    """Issue 17's civic questions (llm/tasks/civics.py), as a world with civics asks them."""
    memories = [rec("Tax season 1 has begun: the constitution asks 20% of what each holds", 60, i=70)]
    amendments = [Amendment(text="Lower the tax to 10% of what each holds per season.", rate=10),
                  Amendment(text="The chest's bread goes first to those in need.", rate=None)]
    civ = dict(constitution=CONSTITUTION, rate=20)
    summary = dict(persona=KLAUS, now=NOW, other="Isabella Rodriguez", place="Hobbs Cafe: cafe", lines=transcript,
                   facts=[PARTY], gatherings=[GATHERING], rate=20, stance=15, other_side="anti")
    return [
        ConstitutionFeedback(persona=KLAUS, now=NOW, **civ, memories=memories, stance=15),
        Amendments(persona=ISABELLA, now=NOW, **civ, feedback=[FeedbackSeen(who="Klaus Mueller", rate=10,
                                                                            text="The tax is too high for students.")]),
        Vote(persona=KLAUS, now=NOW, **civ, amendments=amendments, memories=memories, stance=15),
        ReviseConstitution(persona=ISABELLA, now=NOW, **civ, passed=amendments[:1], new_rate=10),
        PayTax(persona=KLAUS, now=NOW, **civ, memories=memories, season=1,
               holdings=[Holding(item="coffee", qty=3), Holding(item="book", qty=1)]),
        SummarizeConversationCivic(**summary),
        SummarizeConversationSocialCivic(**summary, feeling=Feeling(other="Isabella Rodriguez", sentiment=6),
                                         other_traits="friendly, outgoing", tones=[]),
    ]


class Spy:
    """Wraps a llama backend's completions: what each was asked (prompt length, its keyword
    arguments, max_tokens among them), how it ended and its completion tokens."""

    def __init__(self, backend):
        self.calls: list[dict] = []
        create = backend._llm.create_completion

        def spy(tokens, **kw):
            out = create(tokens, **kw)
            self.calls.append({"prompt": len(tokens), **kw, "finish": out["choices"][0]["finish_reason"],
                               "completion": out["usage"]["completion_tokens"]})
            return out

        backend._llm.create_completion = spy
