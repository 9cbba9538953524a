"""The event log: what happened, tick by tick (the timeline a replay scrubs through)."""

from __future__ import annotations

KINDS = ("started", "moved", "arrived", "entered", "object", "perceived", "said", "reflected",
         "reacted", "replanned", "whispered", "interviewed",
         # the PIANO modules' (issue 16): the controller, goals, feelings, promises, action awareness
         "decided", "goal", "goal_ended", "sentiment", "committed", "kept", "broken", "unexpected", "blocked",
         # the economy's (issue 17, sim/economy.py): its ops, and an op refused by its check
         "gather", "craft", "give", "trade", "deposit", "refused",
         # issue 17: a role inferred from the goals (mind/roles.py), when it changes
         "role",
         # civics (issue 17, sim/civics.py): the constitution in force, tax seasons, the vote, stances
         "constitution", "season", "tax_due", "tax_paid", "feedback", "proposal", "vote", "tally", "stance")
