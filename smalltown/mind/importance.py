"""Importance (SPEC 1): what the agent notes waits, unrated, until its memory is about to be used;
then everything waiting is rated in one task and filed in the stream at the times it was noted.

A text is rated once per agent, and ratings packed into another answer (a decomposition, a
conversation's summary, a reflection) cost no call of their own. A filed text's rating is the one
its records in the memory stream carry; the state keeps only the ratings of texts still waiting
(so what is kept by text does not grow with every text ever rated, over a week).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import RateImportance, Record
from smalltown.mind.memory import Memory
from smalltown.mind.records import Lore, pending, record
from smalltown.state.agent import Pending

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

RATE_BATCH = 16  # memories rated in one question at most: its prompt and answer stay small
COUNTED = ("observation", "chat")  # the kinds whose importance brings a reflection nearer


def waiting(lore: Lore, p: Pending) -> Record:
    """A waiting record as tasks carry it (no id, no rating yet)."""
    return pending(lore, p.kind, p.text, p.time)


def rating(mind: "MindCore", text: str) -> int | None:
    """This agent's rating of a text: given while it waits, or the one it was filed with."""
    r = mind.state.ratings.get(text)
    return r if r is not None else mind.memory.rating(text)


def queue(mind: "MindCore", p: Pending) -> None:
    """A record waits for the next settle; a text filed before keeps its rating beside it (the
    save keeps the ratings of what waits)."""
    mind.state.pending.append(p)
    if p.text not in mind.state.ratings and (r := mind.memory.rating(p.text)) is not None:
        mind.state.ratings[p.text] = r


def _forget_filed(mind: "MindCore") -> None:
    """Let go of the ratings of texts no longer waiting: the stream holds them now."""
    ratings = mind.state.ratings
    if len(ratings) > len(mind.state.pending):
        waiting_texts = {p.text for p in mind.state.pending}
        for text in [t for t in ratings if t not in waiting_texts]:
            del ratings[text]


def note(mind: "MindCore", kind: str, text: str, now: datetime, evidence: list[int] | None = None) -> None:
    """Note a record to be rated and filed at the next settle; what it says is known at once."""
    p = Pending(kind, text, now, evidence if evidence is not None else [])
    queue(mind, p)
    mind.learn(waiting(mind.lore, p))


def rate(mind: "MindCore", records: list[Record]) -> list[int]:
    """Ratings for new records: this agent's earlier rating of the same text, the rest asked
    in one task."""
    known = mind.state.ratings
    todo = list({r.text: r for r in records if rating(mind, r.text) is None}.values())
    while todo:
        batch = todo[:RATE_BATCH]
        ratings = mind.ask(RateImportance(persona=mind.persona, now=max(r.time for r in batch),
                                          memories=batch)).ratings
        asked = mind.asker.last_task.memories  # those the prompt had room for
        if not asked:  # a window too small for even one: rated as middling, and said so
            mind.note(f"no room in the prompt to rate {len(batch)} memories; rated 3")
            asked, ratings = batch, [3] * len(batch)
        if len(ratings) != len(asked):  # only a backend that skips validation gets here
            mind.note(f"{len(ratings)} ratings for {len(asked)} memories; missing ones rated 3")
        for i, r in enumerate(asked):
            known[r.text] = max(1, min(10, ratings[i])) if i < len(ratings) else 3
        todo = [r for r in todo if r.text not in known]
    return [rating(mind, r.text) for r in records]


def remember(mind: "MindCore", kind: str, texts: list[str], now: datetime, evidence: list[int] = (),
             ratings: list[int] | None = None) -> list[Memory]:
    """Store records of one kind, rated in one call together with any records still waiting
    (which are stored first, at the times they were noted). With `ratings` (packed into the
    answer that made the records) no call is made, and unrated waiting records keep waiting."""
    if not texts:
        return []
    if ratings is not None and len(ratings) == len(texts) and all(1 <= r <= 10 for r in ratings):
        for t, r in zip(texts, ratings):
            if rating(mind, t) is None:
                mind.state.ratings[t] = r
        rated = [rating(mind, t) for t in texts]  # before the settle lets go of what is not waiting
        settle(mind, rated_only=True)
    else:
        if ratings is not None:
            mind.note(f"{len(ratings)} packed ratings for {len(texts)} records: asked separately")
        rate(mind, [*(waiting(mind.lore, p) for p in mind.state.pending),
                    *(pending(mind.lore, kind, t, now) for t in texts)])
        rated = [rating(mind, t) for t in texts]
        settle(mind)
    out = [mind.memory.add(kind, t, now, r, evidence) for t, r in zip(texts, rated)]
    _forget_filed(mind)
    for m in out:
        mind.learn(record(mind.lore, m))
    if kind in COUNTED:
        mind.state.since_reflection += sum(m.importance for m in out)
    return out


def settle(mind: "MindCore", rated_only: bool = False) -> list[Memory]:
    """Rate the records noted since the last settle, in one task, and store them with the
    times they were noted. Called when the memory is about to be used (a retrieval, a plan)
    and when a new hour block starts: zero calls in between. `rated_only` files just the
    records whose rating is already known (no call) and leaves the rest waiting."""
    state = mind.state
    if rated_only:
        cut = next((i for i, p in enumerate(state.pending) if rating(mind, p.text) is None), len(state.pending))
        batch, rest = state.pending[:cut], state.pending[cut:]  # keep the order: ids follow time
    else:
        batch, rest = state.pending, []
    if not batch:
        return []
    rate(mind, [waiting(mind.lore, p) for p in batch])
    out = []
    for p in batch:
        m = mind.memory.add(p.kind, p.text, p.time, rating(mind, p.text), p.evidence)
        out.append(m)
        mind.learn(record(mind.lore, m))
        if p.kind == "observation":
            state.since_reflection += m.importance
    state.pending = rest
    _forget_filed(mind)
    return out


def settle_if_due(mind: "MindCore", now: datetime) -> None:
    """Batch the rating: settle when enough has piled up, or the oldest record has waited
    `settle_hours`; a retrieval or a plan settles whatever is waiting anyway."""
    waiting = mind.state.pending
    if len(waiting) >= mind.settings.settle_batch or (
            waiting and now - waiting[0].time >= timedelta(hours=mind.settings.settle_hours)):
        settle(mind)


def unrated(mind: "MindCore", limit: int = RATE_BATCH) -> list[Record]:
    """The first waiting records no rating is known for yet (to be rated, packed into an
    answer; the rest wait for the next settle)."""
    out: dict[str, Record] = {}
    for p in mind.state.pending:
        if p.text not in out and rating(mind, p.text) is None:
            out[p.text] = waiting(mind.lore, p)
            if len(out) == limit:
                break
    return list(out.values())


def packed(mind: "MindCore", asked: list[Record], ratings: list[int]) -> bool:
    """Ratings an answer brought for the records its prompt showed; False (none kept) when they
    do not match one for one."""
    if len(ratings) != len(asked):
        return False
    mind.state.ratings.update((r.text, x) for r, x in zip(asked, ratings))
    return True
