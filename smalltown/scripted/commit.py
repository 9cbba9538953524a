"""The stand-in's promises: an utterance that may carry a commitment promises, on the
speaker's first line, something from its typed inputs only. With the controller's broadcast it
knows what it has planned next (`plan_next`) and promises that; without it, it has only what the
talk gives it: a gathering today it knows of, or to meet the listener here again in two hours (a
promise its plan knows nothing of: said, not done, unless the plan happens to bring it back).
Its re-plan honours open promises given as inputs (`promise_labels`, used by `day.plan`)."""

from __future__ import annotations

from smalltown.llm.tasks import CommittingUtterance, CommittingUtteranceOut, Promise, PromiseOut, UtteranceOut
from smalltown.scripted.words import first_name, minute, minute_of
import smalltown.scripted.talk as talk
from smalltown.scripted.registry import answers
from smalltown.world.model import DAY

LATEST = 21 * 60  # no promise for later than this
BEFORE, AFTER = 30, 30  # a promise's block in a re-plan: from this before its time to this after


def promise(task: CommittingUtterance) -> PromiseOut | None:
    if sum(x.speaker == task.persona.name for x in task.transcript) > 1:
        return None  # in the speaker's first lines only (an initiator's opening came with its decision)
    now = minute_of(task.now)
    known = task.known_places
    b = task.plan_next
    if b is not None and b.place in known and now < minute(b.start) <= LATEST:
        return PromiseOut(what=b.activity, by=b.start, where=b.place)
    for g in sorted(task.gatherings, key=lambda g: (g.start, g.name)):
        where = g.place.split(":")[0].strip()
        at = minute_of(g.start)
        if g.start.date() == task.now.date() and now < at <= LATEST and where in known:
            return PromiseOut(what=f"go to {g.name}"[:60], by=f"{at // 60:02d}:{at % 60:02d}", where=where)
    here = task.place.split(":")[0].strip()
    at = (now // 60 + 2) * 60
    if here in known and at <= LATEST:
        return PromiseOut(what=f"meet {first_name(task.listener)} here again"[:60], by=f"{at // 60:02d}:00", where=here)
    return None


def with_promise(task: CommittingUtterance, out: UtteranceOut) -> CommittingUtteranceOut:
    """The line as said, and the promise it carries said in it too."""
    p = promise(task)
    text = out.utterance
    if p is not None:
        where = "" if p.where.lower() in p.what.lower() else f" at {p.where}"
        said = f"I'll {p.what}{where} at {p.by}."
        text = f"{said} {text}" if len(said) + 1 + len(text) <= 300 else said[:300]
    return CommittingUtteranceOut(**{**out.model_dump(), "utterance": text}, commitment=p)


def promise_labels(promises: list[Promise], from_min: int | None) -> list[tuple[int, int, str, str]]:
    """(start, end, activity, sector) for each open promise still ahead: the agent is at the
    place from a little before its time to a little after."""
    out = []
    for p in promises:
        at = minute(p.by)
        if from_min is not None and at + AFTER <= from_min:
            continue
        out.append((max(at - BEFORE, from_min or 0), min(DAY, at + AFTER), p.what[:60] or "-", p.where))
    return out


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(CommittingUtterance)(lambda t, seed: with_promise(t, talk.utterance(seed, t)))
