"""Breakpoints: conditions that pause a running town at the end of the tick where they happen.

A tick is one transaction, so a run pauses between ticks: what the breakpoint caught is committed
and can be inspected (its event, its model call, its memory) while the town stands still.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator, Mapping
from typing import Iterable

from smalltown.mind.modules import event_kinds
from smalltown.store.records import Event

# kind -> what it catches, as the interface says it: the engine's own; the registered modules'
# kinds with a description are added (BREAK_KINDS, below), each caught as its event kind
ENGINE_BREAKS: dict[str, str] = {
    "talk": "starts a conversation",
    "reflect": "reflects",
    "replan": "re-plans",
    "call": "makes a model call",
    "enter": "enters a place",
    "memory": "gets a memory matching a text",
    "event": "does anything",  # its next event, as a step to it (`next_event`) waits for
    "decided": "decides what to do next",  # the cognitive controller (mind/controller.py), broadcast on
    "unexpected": "finds its action's place closed or taken, or the one it promised to meet gone",
    "committed": "promises something in a conversation",
    "kept": "keeps a promise",
    "broken": "breaks a promise",
    "sentiment": "changes its feeling toward someone",  # social awareness (mind/social.py)
    # the economy (sim/economy.py), each caught as its event kind
    "gather": "gathers an item", "craft": "crafts an item", "give": "gives an item", "trade": "trades",
    "deposit": "deposits into the town chest", "refused": "has an economy op refused",
    # civics (sim/civics.py)
    "constitution": "a constitution comes into force", "season": "a tax season begins",
    "tax_paid": "pays (or misses) a tax", "feedback": "gives feedback on the constitution",
    "proposal": "proposes an amendment", "vote": "votes", "tally": "the vote is tallied",
    "stance": "changes its view of the tax",
}
# what `text` means for each kind (empty text: anything)
TEXT_MEANS = {"call": "task", "enter": "place", "memory": "text", "sentiment": "toward"}
QUIET_KINDS = frozenset({"perceived"})  # every agent perceives every tick: not "an event" to stop at
# the engine's kinds caught as their event kind
ENGINE_EVENT_BREAKS = frozenset({"decided", "unexpected", "committed", "kept", "broken",
                                 "gather", "craft", "give", "trade", "deposit", "refused",
                                 "constitution", "season", "tax_paid", "feedback", "proposal", "vote", "tally",
                                 "stance"})


def _modules() -> dict[str, str]:
    """The registered modules' breakable kinds (those with a description) -> what each catches."""
    return {k: what for k, what in event_kinds().items() if what and k not in ENGINE_BREAKS}


class BreakKinds(Mapping[str, str]):
    """Every breakpoint kind -> what it catches: the engine's, then the registered modules' (a
    live view of the registry: a module registered later is in it)."""

    def _all(self) -> dict[str, str]:
        return {**ENGINE_BREAKS, **_modules()}

    def __getitem__(self, kind: str) -> str:
        return self._all()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


BREAK_KINDS = BreakKinds()


def caught_as_event(kind: str) -> bool:
    """Whether a breakpoint of `kind` is caught by an event of the same kind."""
    return kind in ENGINE_EVENT_BREAKS or kind in _modules()


@dataclass(frozen=True)
class Breakpoint:
    id: int
    kind: str  # one of BREAK_KINDS
    agent: str | None = None  # None: any agent
    text: str = ""  # call: a task name; enter: part of the place; memory: part of the record
    once: bool = False  # cleared when it fires

    def __post_init__(self) -> None:
        if self.kind not in BREAK_KINDS:
            raise ValueError(f"unknown breakpoint kind {self.kind!r} (one of {', '.join(BREAK_KINDS)})")
        if self.kind == "memory" and not self.text.strip():
            raise ValueError("a memory breakpoint needs the text to match")

    def describe(self) -> str:
        who = self.agent or "any agent"
        what = BREAK_KINDS[self.kind]
        if self.kind == "memory":
            what = f"gets a memory containing {self.text!r}"
        elif self.text:
            what += f" ({TEXT_MEANS.get(self.kind, 'text')} {self.text!r})"
        return f"#{self.id} when {who} {what}" + (" — once" if self.once else "")


@dataclass(frozen=True)
class Hit:
    breakpoint: Breakpoint
    agent: str | None
    detail: str  # what happened, for the note that says why the town paused

    def describe(self) -> str:
        return f"Breakpoint #{self.breakpoint.id}: {self.detail}"


def _mine(bp: Breakpoint, *agents: str | None) -> bool:
    return bp.agent is None or bp.agent in agents


def _contains(text: str, part: str) -> bool:
    return part.strip().lower() in text.lower()


def check(breakpoints: Iterable[Breakpoint], events: list[Event], calls: list[tuple[str, str]],
          memories: list[tuple[str, str]]) -> list[Hit]:
    """The breakpoints one tick sets off, each at most once. `calls` are the tick's model calls
    (agent, task); `memories` the records it created (agent, description)."""
    hits: list[Hit] = []
    for bp in breakpoints:
        hit = _first_hit(bp, events, calls, memories)
        if hit is not None:
            hits.append(hit)
    return hits


def next_event(agent: str, events: list[Event]) -> Event | None:
    """The agent's first event of a tick that is "an event" to stop at (not a perception): what
    a step to its next event waits for."""
    return next((e for e in events if e.agent == agent and e.kind not in QUIET_KINDS), None)


def _first_hit(bp: Breakpoint, events: list[Event], calls: list[tuple[str, str]],
               memories: list[tuple[str, str]]) -> Hit | None:
    if bp.kind == "call":
        for agent, task in calls:
            if _mine(bp, agent) and (not bp.text or task == bp.text.strip()):
                return Hit(bp, agent, f"{agent} asked the model a {task!r} question")
        return None
    if bp.kind == "memory":
        for agent, description in memories:
            if _mine(bp, agent) and _contains(description, bp.text):
                return Hit(bp, agent, f"{agent} remembers: {description}")
        return None
    for e in events:
        if bp.kind == "talk" and e.kind == "said":
            # the first line of a conversation: the speaker started it, the listener is in it
            if _mine(bp, e.agent, e.data.get("to")):
                return Hit(bp, e.agent, f"{e.agent} talks with {e.data.get('to')}: {e.text}")
        elif bp.kind == "reflect" and e.kind == "reflected" and _mine(bp, e.agent):
            return Hit(bp, e.agent, e.text)
        elif bp.kind == "replan" and e.kind == "replanned" and _mine(bp, e.agent):
            return Hit(bp, e.agent, f"{e.text} ({e.data.get('reason', '')})")
        elif bp.kind == "enter" and e.kind == "entered" and _mine(bp, e.agent):
            if not bp.text or _contains(e.text, bp.text):
                return Hit(bp, e.agent, e.text)
        elif bp.kind == "event" and e.kind not in QUIET_KINDS and _mine(bp, e.agent):
            return Hit(bp, e.agent, e.text)
        elif e.kind == bp.kind and caught_as_event(bp.kind) and _mine(bp, e.agent):
            return Hit(bp, e.agent, e.text)
        elif bp.kind == "sentiment" and e.kind == "sentiment" and _mine(bp, e.agent):
            if not bp.text or _contains(str(e.data.get("other", "")), bp.text):
                return Hit(bp, e.agent, e.text)
    return None
