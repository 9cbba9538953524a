"""The stand-in's civics: from typed inputs only (rates, stances, sides, holdings,
the amendments' typed rates), never the constitution's or anyone's words.

- A stance is the rate a person wants (None: the rate in force). An influencer wants its side's:
  SIDE_STEP below ("anti") or above ("pro") the rate in force; a listener's stance moves the world's
  typed step ([civics] persuasion_step) toward the side of an influencer it talked with (the world
  file's side, typed), never past what that side wants.
- An influencer's react question is `persuading` (typed): it talks with whoever it sees (the mind
  and the engine keep the cooldowns); its opening names its side's wish from the typed rate.
- Feedback asks for the stance; the manager proposes the rates asked for, most asked first.
- A vote is yes when the amendment's rate is nearer the voter's stance than the rate in force, no
  when farther, abstain when as near or when it sets no rate.
- Constituents follow the law: each pays the rate in force of each item held, rounded by a
  seeded coin (a small spread)."""

from __future__ import annotations

from collections import Counter

from smalltown.llm.tasks import (Amendments, AmendmentsOut, ConstitutionFeedback, FeedbackOut, Output, PayTax,
                                 PayTaxOut, React, ReactOut, ReviseConstitution, ReviseOut, Vote, VoteOut)
from smalltown.llm.tasks.civics import CivicConversationOut, CivicSocialConversationOut, SummarizeConversationCivic
from smalltown.seeded import stable_int
from smalltown.llm.tasks.civics import SummarizeConversationSocialCivic
import smalltown.scripted.social as social
import smalltown.scripted.talk as talk
from smalltown.scripted.registry import answers

SIDE_STEP = 10  # how far from the rate in force an influencer's side wants it
PULL = {"anti": -1, "pro": 1}


def _clip(r: int) -> int:
    return max(0, min(100, r))


def wanted(rate: int, stance: int | None, side: str) -> int:
    if side:
        return _clip(rate + PULL[side] * SIDE_STEP)
    return rate if stance is None else stance


def feedback(t: ConstitutionFeedback) -> FeedbackOut:
    r = wanted(t.rate, t.stance, t.side)
    how = "lower" if r < t.rate else "higher" if r > t.rate else "kept as it is"
    return FeedbackOut(text=f"I want the tax {how}: {r}% of what each holds per season.", rate=r)


def amendments(t: Amendments) -> AmendmentsOut:
    asked = Counter(f.rate for f in t.feedback if f.rate != t.rate)
    rates = sorted(asked, key=lambda r: (-asked[r], r))[:5]
    if not rates:
        return AmendmentsOut(amendments=[{"text": f"Keep the tax at {t.rate}% of what each holds per season.",
                                          "rate": t.rate}])
    return AmendmentsOut(amendments=[{"text": f"Set the tax to {r}% of what each holds per season.", "rate": r}
                                     for r in rates])


def vote(t: Vote) -> VoteOut:
    me = wanted(t.rate, t.stance, t.side)
    votes = []
    for a in t.amendments:
        if a.rate is None:
            votes.append("abstain")
            continue
        new, old = abs(a.rate - me), abs(t.rate - me)
        votes.append("yes" if new < old else "no" if new > old else "abstain")
    return VoteOut(votes=votes)


def revise(t: ReviseConstitution) -> ReviseOut:
    amended = " ".join(a.text for a in t.passed)  # the manager's own typed amendments, appended whole
    return ReviseOut(text=f"{t.constitution}\n\nAmended: {amended} The tax in force is {t.new_rate}% of what each "
                          "holds per season.")


def pay_tax(seed: int, t: PayTax) -> PayTaxOut:
    pays = []
    for h in t.holdings:
        exact = h.qty * t.rate / 100
        coin = stable_int(seed, t.persona.name, t.season, h.item) % 100 / 100
        qty = min(h.qty, int(exact + coin))
        if qty > 0:
            pays.append({"item": h.item, "qty": qty})
    return PayTaxOut(payments=pays)


def summary(t: SummarizeConversationCivic, base: Output) -> Output:
    """`base` (the summary without the stance) with the desired rate, moved toward the side of an
    influencer talked with (None when the other argues no side: the talk did not touch the tax)."""
    cls = CivicSocialConversationOut if hasattr(base, "sentiment") else CivicConversationOut
    desired = None
    if t.other_side:
        before = t.rate if t.stance is None else t.stance
        target = wanted(t.rate, None, t.other_side)
        moved = before + PULL[t.other_side] * t.step
        desired = max(moved, target) if t.other_side == "anti" else min(moved, target)
        desired = before if (desired - before) * PULL[t.other_side] < 0 else _clip(desired)  # never away
    return cls(**dict(base), desired_rate=desired)


def react(base: ReactOut, t: React) -> ReactOut:
    """`base` (the stand-in's usual decision), or for a persuading influencer seeing someone, a talk."""
    if not (t.persuading and t.observed_is_agent) or base.talk:
        return base
    return base.model_copy(update={"react": True, "talk": True, "reaction": "",
                                   "opening": "Have you a minute? I'd like to talk about the town's tax."})


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(ConstitutionFeedback)(lambda t, seed: feedback(t))
answers(Amendments)(lambda t, seed: amendments(t))
answers(Vote)(lambda t, seed: vote(t))
answers(ReviseConstitution)(lambda t, seed: revise(t))
answers(PayTax)(lambda t, seed: pay_tax(seed, t))
answers(React)(lambda t, seed: react(talk.react(seed, t), t))
answers(SummarizeConversationCivic)(lambda t, seed: summary(t, talk.summarize(seed, t)))
answers(SummarizeConversationSocialCivic)(
    lambda t, seed: summary(t, social.summarize_social(t, talk.summarize(seed, t))))
