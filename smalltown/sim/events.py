"""The event log: what happened, tick by tick (the timeline a replay scrubs through).

`KINDS` is the engine's own kinds followed by those the registered modules declare
(mind/modules.py), read when it is read: a module registered later is in it."""

from __future__ import annotations

from collections.abc import Sequence

from smalltown.mind.modules import event_kinds

ENGINE_KINDS = ("started", "moved", "arrived", "entered", "object", "perceived", "said", "reflected",
                "reacted", "replanned", "whispered", "interviewed",
                # the PIANO modules run in the engine's phases: the controller, feelings, promises, action awareness
                "decided", "sentiment", "committed", "kept", "broken", "unexpected", "blocked",
                # the economy's (sim/economy.py): its ops, and an op refused by its check
                "gather", "craft", "give", "trade", "deposit", "refused",
                # civics (sim/civics.py): the constitution in force, tax seasons, the vote, stances
                "constitution", "season", "tax_due", "tax_paid", "feedback", "proposal", "vote", "tally", "stance")


class Kinds(Sequence[str]):
    """The engine's kinds, then the registered modules' (a live view of the registry)."""

    def _all(self) -> tuple[str, ...]:
        return ENGINE_KINDS + tuple(k for k in event_kinds() if k not in ENGINE_KINDS)

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self):
        return iter(self._all())  # (once per loop, not once per item as Sequence's would)

    def __contains__(self, kind: object) -> bool:
        return kind in self._all()

    def __repr__(self) -> str:
        return repr(self._all())


KINDS = Kinds()
