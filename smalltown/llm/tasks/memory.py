"""Memory tasks: importance (SPEC 2), reflection (SPEC 3), the summary description (SPEC 6)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from smalltown.llm.tasks.base import Record, Output, Task, Rating, _enum, _count


# --- memory -----------------------------------------------------------------------------------


class RateImportanceOut(Output):
    ratings: list[Rating] = Field(description="1 (mundane) to 10 (poignant), one per memory, in order")


class RateImportance(Task):
    """SPEC 2's poignancy rating, for a batch of an agent's new memories at once."""

    name: ClassVar[str] = "rate_importance"
    output: ClassVar[type[Output]] = RateImportanceOut
    numbered: ClassVar[tuple[str, ...]] = ("memories",)
    trim: ClassVar[tuple[str, ...]] = ("memories",)  # what does not fit is asked in the next batch
    unretrieved: ClassVar[dict[str, str]] = {"memories": "record{s} to rate"}
    memories: list[Record]

    def schema(self) -> dict:
        return _count(super().schema(), ("properties", "ratings"), len(self.memories), len(self.memories))

    def check(self, out: Output) -> str:
        n = len(self.memories)
        return "" if len(out.ratings) == n else f"{len(out.ratings)} ratings for {n} memories"


class ReflectionQuestionsOut(Output):
    questions: list[Annotated[str, Field(min_length=1, max_length=120)]] = Field(min_length=3, max_length=3)
    ratings: list[Rating] = Field(default=[], description="one importance rating per memory to rate, in order")


class ReflectionQuestions(Task):
    """The same call rates the records noted since the last rating, which are among the
    statements too (packed: one call instead of two)."""

    name: ClassVar[str] = "reflection_questions"
    output: ClassVar[type[Output]] = ReflectionQuestionsOut
    numbered: ClassVar[tuple[str, ...]] = ("rate",)
    trim: ClassVar[tuple[str, ...]] = ("statements", "rate")  # what is not rated here is asked on its own
    unretrieved: ClassVar[dict[str, str]] = {"statements": "latest record{s}", "rate": "record{s} to rate"}
    budgets: ClassVar[dict[str, int]] = {"statements": 950, "rate": 300}
    statements: list[Record]  # the most recent records (scored by recency: the oldest go first)
    rate: list[Record] = []  # the newest, not rated yet: memories to rate on SPEC 2's scale

    def schema(self) -> dict:
        return _count(super().schema(), ("properties", "ratings"), len(self.rate), len(self.rate))

    def check(self, out: Output) -> str:
        n = len(self.rate)
        return "" if len(out.ratings) == n else f"{len(out.ratings)} ratings for {n} memories"


class Insight(BaseModel):
    model_config = ConfigDict(extra="forbid")
    insight: str = Field(min_length=1, max_length=160)
    because: list[int] = Field(min_length=1, max_length=5, description="numbers of the statements it rests on")
    importance: Rating = Field(default=5, description="1 mundane .. 10 poignant, as a memory")


class ReflectionInsightsOut(Output):
    insights: list[Insight] = Field(min_length=5, max_length=5)


class ReflectionInsights(Task):
    name: ClassVar[str] = "reflection_insights"
    output: ClassVar[type[Output]] = ReflectionInsightsOut
    trim: ClassVar[tuple[str, ...]] = ("statements",)
    budgets: ClassVar[dict[str, int]] = {"statements": 750}
    numbered: ClassVar[tuple[str, ...]] = ("statements",)
    questions: list[str]
    statements: list[Record]

    def schema(self) -> dict:
        n = max(1, len(self.statements))
        return _enum(super().schema(), ("$defs", "Insight", "properties", "because", "items"), list(range(1, n + 1)))

    def check(self, out: Output) -> str:
        n = len(self.statements)
        bad = [i for ins in out.insights for i in ins.because if not 1 <= i <= n]
        return f"statement {bad[0]} does not exist (there are {n})" if bad else ""


class SummaryOut(Output):
    core: str = Field(min_length=1, max_length=150)
    occupation: str = Field(min_length=1, max_length=150)
    feeling: str = Field(min_length=1, max_length=150)


class SummaryDescription(Task):
    """SPEC 6: three retrievals summarised into the paragraph that opens most prompts."""

    name: ClassVar[str] = "summary_description"
    output: ClassVar[type[Output]] = SummaryOut
    trim: ClassVar[tuple[str, ...]] = ("core", "occupation", "feeling")
    budgets: ClassVar[dict[str, int]] = {"core": 200, "occupation": 200, "feeling": 200}
    core: list[Record]  # retrieved for "<name>'s core characteristics"
    occupation: list[Record]  # "<name>'s current daily occupation"
    feeling: list[Record]  # "<name>'s feeling about their recent progress in life"
