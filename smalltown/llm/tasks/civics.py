"""Civics' part of the seam (Project Sid §5.2 and Appendix D): a constitution, tax
seasons, feedback, amendments, a vote and a revised text. Only a world with a [civics] asks these.

Rates are whole percents (0-100) of what each holds, paid each tax season. A `stance` is the
asker's desired rate as it stands (None: it has formed none, it goes by the rate in force).
`side` is the world file's side an influencer argues ("anti"/"pro"; "" for a constituent): typed
world data the stand-in reads; a model reads the stance text instead."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from smalltown.llm.tasks.base import Output, Quiet, Record, Task, _Data, _count, _enum, _schema
from smalltown.llm.tasks.economy import Holding
from smalltown.llm.tasks.social import SocialConversationOut, SummarizeConversationSocial
from smalltown.llm.tasks.talk import ConversationOut, SummarizeConversation

Ballot = Literal["yes", "no", "abstain"]
Side = Literal["", "anti", "pro"]
MAX_AMENDMENTS = 5
TEXT_MAX = 1500


class Amendment(_Data):
    text: str
    rate: int | None = None  # the rate it sets, or None (it changes no rate)


class FeedbackSeen(_Data):
    who: str
    rate: int
    text: str


class _Civic(Task):
    constitution: str
    rate: int  # in force


class FeedbackOut(Output):
    text: str = Field(min_length=1, max_length=400, description="the person's feedback on the constitution, in the first person")
    rate: int = Field(ge=0, le=100, description="the tax rate, in percent, the person wants")


class ConstitutionFeedback(_Civic):
    """Each constituent's feedback on the constitution, with the rate it wants."""

    name: ClassVar[str] = "constitution_feedback"
    output: ClassVar[type[Output]] = FeedbackOut
    trim: ClassVar[tuple[str, ...]] = ("memories",)
    memories: list[Record] = []  # retrieved about the constitution and the tax
    stance: int | None = None
    stance_text: str = ""  # an influencer's beliefs (world-file text; "" for a constituent)
    side: Side = ""


class AmendmentOut(_Data):
    text: str = Field(min_length=1, max_length=200, description="the amendment, in one or two sentences")
    rate: int | None = Field(default=None, ge=0, le=100, description="the tax rate in percent it sets, or null when it sets none")


class AmendmentsOut(Output):
    amendments: list[AmendmentOut] = Field(min_length=1, max_length=MAX_AMENDMENTS)


class Amendments(_Civic):
    """The manager of the vote turns every feedback into 1-5 amendments."""

    name: ClassVar[str] = "amendments"
    output: ClassVar[type[Output]] = AmendmentsOut
    feedback: list[FeedbackSeen] = []


class VoteOut(Output):
    votes: list[Ballot] = Field(min_length=1, max_length=MAX_AMENDMENTS, description="one vote per amendment, in order")


class Vote(_Civic):
    """Each constituent's vote on every amendment."""

    name: ClassVar[str] = "vote"
    output: ClassVar[type[Output]] = VoteOut
    trim: ClassVar[tuple[str, ...]] = ("memories",)
    amendments: list[Amendment]
    memories: list[Record] = []
    stance: int | None = None
    stance_text: str = ""
    side: Side = ""

    def schema(self) -> dict:
        n = len(self.amendments)
        return _count(_schema(self.output), ("properties", "votes"), n, n)

    def check(self, out: Output) -> str:
        n = len(getattr(out, "votes", []))
        return "" if n == len(self.amendments) else f"{n} votes for {len(self.amendments)} amendments"


class ReviseOut(Output):
    text: str = Field(min_length=1, max_length=TEXT_MAX, description="the whole new constitution")


class ReviseConstitution(_Civic):
    """The manager of the vote writes the constitution with the passed amendments in; `new_rate` is
    the rate the engine put in force from the amendments' typed rates (the text should say it)."""

    name: ClassVar[str] = "revise_constitution"
    output: ClassVar[type[Output]] = ReviseOut
    passed: list[Amendment]
    new_rate: int


class Payment(_Data):
    item: str = Field(max_length=60, description="an item the person holds")
    qty: int = Field(ge=1, le=1_000_000, description="how many of it")


class PayTaxOut(Output):
    payments: list[Payment] = Field(default=[], max_length=10, description="what to deposit in the town chest")


class PayTax(_Civic):
    """A tax season: what the person deposits in the town chest (checked then: never more than held)."""

    name: ClassVar[str] = "pay_tax"
    output: ClassVar[type[Output]] = PayTaxOut
    trim: ClassVar[tuple[str, ...]] = ("memories",)
    holdings: list[Holding] = []
    memories: list[Record] = []
    season: int = 1

    def schema(self) -> dict:
        items = [h.item for h in self.holdings]
        s = _schema(self.output)
        return _enum(s, ("$defs", "Payment", "properties", "item"), items) if items else s

    def check(self, out: Output) -> str:
        held = {h.item for h in self.holdings}
        bad = [p.item for p in getattr(out, "payments", []) if p.item not in held]
        return f"{bad[0]!r} is not held" if bad else ""


# --- stance, packed into the conversation summary (worlds with civics only: no extra call) ----


class _Stance(Quiet):
    rate: int = 0  # in force
    stance: int | None = None  # the person's desired rate before the talk
    other_side: Side = ""  # the other's side, when it is an influencer (world data, for the stand-in)
    step: int = 5  # percent a talk with an influencer moves a listener ([civics] persuasion_step, for the stand-in)
    quiet: ClassVar[tuple[str, ...]] = ()


class CivicConversationOut(ConversationOut):
    desired_rate: int | None = Field(default=None, ge=0, le=100, description="only if the talk touched the tax: the tax rate in percent the person now wants; else null")


class CivicSocialConversationOut(SocialConversationOut):
    desired_rate: int | None = Field(default=None, ge=0, le=100, description="only if the talk touched the tax: the tax rate in percent the person now wants; else null")


class SummarizeConversationCivic(_Stance, SummarizeConversation):
    name: ClassVar[str] = "summarize_conversation_civic"
    template_name: ClassVar[str] = "summarize_conversation"
    output: ClassVar[type[Output]] = CivicConversationOut


class SummarizeConversationSocialCivic(_Stance, SummarizeConversationSocial):
    name: ClassVar[str] = "summarize_conversation_social_civic"
    template_name: ClassVar[str] = "summarize_conversation"
    output: ClassVar[type[Output]] = CivicSocialConversationOut


CIVIC_TASKS = (ConstitutionFeedback, Amendments, Vote, ReviseConstitution, PayTax, SummarizeConversationCivic,
               SummarizeConversationSocialCivic)
