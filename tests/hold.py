"""One conversation held whole by two minds, as the engine holds each of a tick's conversations in
lockstep (sim/encounters.py): for the tests of the mind, which talk without an engine."""

from __future__ import annotations

from datetime import datetime

from smalltown.mind import talk


def hold_conversation(a, b, now: datetime, place: str, reason: str, doing: dict[str, str],
                      opening: str = "", relationship: str = "") -> talk.Conversation:
    """`a` (a Mind) starts the talk with `b` on noticing `reason`; `opening` is its first line when
    it came packed with the decision to talk, `relationship` its view of `b` from that decision."""
    a.settle()
    b.settle()
    conv = talk.begin(a, b, now, place, reason, doing, opening, relationship)
    while talk.say(conv, a, b):
        pass
    for me, other in ((a, b), (b, a)):
        talk.settle_memory(conv, me.name, talk.remember(me, other, conv))
    for me, other in ((a, b), (b, a)):
        conv.replanned[me.name] = talk.carry_on(me, other, conv)
    return conv
