"""Reacting, conversations and interviews (SPEC 5, 9)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from smalltown.llm.tasks.base import Record, Block, Feeling, TranscriptLine, LastTalk, Output, Quiet, Task, Rating, _enum, _count
from smalltown.llm.tasks.belief import Faith
from smalltown.llm.tasks.broadcast import Decided, Promise, PromiseOut
from smalltown.world.model import Fact, Gathering


# --- reacting and talking ---------------------------------------------------------------------


class ReactOut(Output):
    context_summary: str = Field(max_length=200, description="what the person knows that bears on this, in a sentence or two")
    react: bool = Field(description="true to stop and react, false to go on with the plan")
    talk: bool = Field(description="true if the reaction is to start a conversation with the person seen")
    reaction: str = Field(default="", max_length=60, description="when reacting without talking: what to do instead")
    opening: str = Field(default="", max_length=200, description="when talking: the first thing said, in the first person")


class React(Quiet, Task):
    """SPEC 5: go on with the plan, or react to an observation (talk, or do something else)."""

    name: ClassVar[str] = "react"
    output: ClassVar[type[Output]] = ReactOut
    trim: ClassVar[tuple[str, ...]] = ("context",)
    budgets: ClassVar[dict[str, int]] = {"context": 180}
    status: str  # what the agent is doing
    place: str  # where: "sector: arena"
    observation: str
    observed: str  # the agent's name, or the object's address
    observed_is_agent: bool
    observed_state: str = ""  # an object's state, or what the other agent is doing
    context: list[Record]  # retrieved for the relationship and for what is seen
    last_talk: LastTalk | None = None  # with the agent seen
    news: list[Record] = []  # the world's news the agent knows and has not told the one seen
    facts: list[Fact] = []  # the declared facts the news is about
    feeling: Feeling | None = None  # social awareness: toward the agent seen (None: off, or an object)
    quiet: ClassVar[tuple[str, ...]] = ("feeling", "constitution", "stance_text", "persuading", "faiths")
    # civics (mind/civics.py; "" / False in a world without [civics]): the constitution in
    # force, an influencer's beliefs (world-file text) and whether it sets out to win people over
    constitution: str = ""
    stance_text: str = ""
    persuading: bool = False
    # belief (mind/belief.py `react_inputs`): the doctrines the agent seeks to spread (as their
    # priest), each with `listener_level` the level it has heard the one seen
    # speak at ([] with belief off, or for anyone else)
    faiths: list[Faith] = []


class UtteranceOut(Output):
    relationship: str = Field(default="", max_length=200, description="only when asked for: the speaker's view of the listener, in a sentence")
    utterance: str = Field(min_length=1, max_length=300, description="what the speaker says next, in the first person")
    end: bool = Field(description="true only if this line ends the conversation")
    tells: list[int] = Field(default=[], max_length=3, description="numbers of the remembered items this line passes on")


class Utterance(Quiet, Task):
    """SPEC 5: the next line of a conversation, with its situation: what both are doing, why
    they are talking, the speaker's view of the listener, their last talk, what the speaker
    already told the listener, what it remembers, and what was said so far."""

    name: ClassVar[str] = "utterance"
    output: ClassVar[type[Output]] = UtteranceOut
    trim: ClassVar[tuple[str, ...]] = ("memories",)
    budgets: ClassVar[dict[str, int]] = {"memories": 220}
    numbered: ClassVar[tuple[str, ...]] = ("news", "memories")
    listener: str
    place: str
    initiator: str  # who started the conversation
    reason: str  # what the initiator saw that started it
    speaker_doing: str  # what each was doing when the talk began
    listener_doing: str
    relationship: str = ""  # the speaker's view of the listener ("" = asked for in this answer)
    last_talk: LastTalk | None = None
    already_told: list[Record] = []  # what the speaker has told this listener before
    news: list[Record] = []  # what the speaker knows of the world's news, not yet told to the listener
    facts: list[Fact] = []  # the declared facts the news, and the lines so far, are about
    gatherings: list[Gathering] = []  # events those facts announce
    memories: list[Record] = []  # retrieved about the listener and the last line
    transcript: list[TranscriptLine] = []  # the conversation so far
    # a speaker's next line repeats its prompt through the transcript, whichever kind either is
    grows: ClassVar[str] = "transcript"
    shares_state: ClassVar[str] = "utterance"
    quiet: ClassVar[tuple[str, ...]] = ("decision", "promises", "feeling", "constitution", "stance_text", "faiths",
                                        "goal", "goal_need")
    shrinkable: ClassVar[tuple[str, ...]] = ("promises",)  # (llm/fit.py: a prompt too long otherwise)
    decision: Decided | None = None  # the controller's decision (broadcast on)
    promises: list[Promise] = []  # the speaker's open commitments (broadcast on)
    feeling: Feeling | None = None  # social awareness: the speaker's toward the listener (None: off)
    constitution: str = ""  # civics: the constitution in force ("" without [civics])
    stance_text: str = ""  # civics: the speaker's beliefs, when an influencer (world-file text)
    faiths: list[Faith] = []  # belief: the doctrines the speaker holds or has heard (mind/belief.py)
    # goal generation (mind/goals.py): the speaker's social goal and the need it serves ("" without one)
    goal: str = ""
    goal_need: str = ""

    def schema(self) -> dict:
        n = len(self.news) + len(self.memories)
        if n == 0:
            return _count(super().schema(), ("properties", "tells"), 0, 0)
        return _enum(super().schema(), ("properties", "tells", "items"), list(range(1, n + 1)))

    def check(self, out: Output) -> str:
        n = len(self.news) + len(self.memories)
        bad = [i for i in out.tells if not 1 <= i <= n]
        return f"item {bad[0]} does not exist (there are {n})" if bad else ""


class CommittingUtteranceOut(UtteranceOut):
    commitment: PromiseOut | None = Field(default=None, description="only when the line promises something: what, when and where (else null)")


class CommittingUtterance(Utterance):
    """An utterance that may carry a commitment (`commitments` on): the places it may name, and
    with the broadcast what the speaker has planned next."""

    name: ClassVar[str] = "utterance_commit"
    template_name: ClassVar[str] = "utterance"  # the utterance's template, with its parts for a promise
    output: ClassVar[type[Output]] = CommittingUtteranceOut
    known_places: list[str] = []
    plan_next: Block | None = None  # the speaker's next planned block (broadcast on)

    def schema(self) -> dict:
        s = super().schema()
        if self.known_places:
            s = _enum(s, ("$defs", "PromiseOut", "properties", "where"), self.known_places)
        return s

    def check(self, out: Output) -> str:
        c = getattr(out, "commitment", None)
        if c is not None and self.known_places and c.where not in self.known_places:
            return f"place {c.where!r} is not a place the person knows"
        return super().check(out)


class LearnedFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fact: str = Field(min_length=1, max_length=200)
    importance: Rating = Field(description="1 mundane .. 10 poignant, as a memory")


class ConversationOut(Output):
    summary: str = Field(min_length=1, max_length=200, description="the conversation in one sentence, from the person's side")
    importance: Rating = Field(default=5, description="1 mundane .. 10 poignant: the conversation as a memory")
    learned: list[LearnedFact] = Field(default=[], max_length=3, description="new facts heard from the other")
    plan_changes: bool = Field(default=False, description="true if what was said changes the person's plans for today")


class SummarizeConversation(Task):
    name: ClassVar[str] = "summarize_conversation"
    output: ClassVar[type[Output]] = ConversationOut
    other: str
    place: str
    lines: list[TranscriptLine]
    facts: list[Fact] = []  # the declared facts the lines passed on
    known_facts: list[str] = []  # of those, the ones this agent knew before
    gatherings: list[Gathering] = []  # events the passed-on facts announce


class InterviewOut(Output):
    answer: str = Field(min_length=1, max_length=600)


class Interview(Quiet, Task):
    """The user talks to an agent in a persona of their choosing; the town does not advance."""

    name: ClassVar[str] = "interview"
    output: ClassVar[type[Output]] = InterviewOut
    trim: ClassVar[tuple[str, ...]] = ("memories",)
    budgets: ClassVar[dict[str, int]] = {"memories": 700}
    interviewer: str  # "a news reporter"
    question: str
    doing: str  # what the agent is doing now
    schedule: list[Block] = []  # today's plan
    memories: list[Record] = []
    # the world's declared facts the question is about (their names: its keywords are in it, or it
    # is the fact's own question), so that a yes comes only from a memory of the fact asked about
    asks_about: tuple[str, ...] = ()
    quiet: ClassVar[tuple[str, ...]] = ("asks_about",)
