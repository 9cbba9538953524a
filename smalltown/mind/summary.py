"""The summary description (SPEC 6): who the agent is, what it does and how it feels about its
life, from three retrievals; the stable part of every prompt it asks with."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import SummaryDescription

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def refresh(mind: "MindCore", now: datetime) -> None:
    """Regenerated once each game morning, then kept in the agent's state."""
    if mind.state.summary_date == now.date():
        return
    n, spec = mind.name, mind.spec
    parts = [mind.retrieve(q, now, 10, "summary")
             for q in (f"{n}'s core characteristics", f"{n}'s current daily occupation",
                       f"{n}'s feeling about their recent progress in life")]
    out = mind.ask(SummaryDescription(persona=mind.persona, now=now, core=parts[0], occupation=parts[1],
                                      feeling=parts[2]))
    mind.set_summary(f"Name: {n} (age: {spec.age})\nInnate traits: {spec.traits}\n"
                     f"{out.core}\n{out.occupation}\n{out.feeling}\nLives in: {spec.home}.")
    mind.state.summary_date = now.date()
