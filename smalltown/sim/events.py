"""The event log: what happened, tick by tick (the timeline a replay scrubs through)."""

from __future__ import annotations

from smalltown.store.records import Event  # noqa: F401  (the event log's record; sim emits them)

KINDS = ("started", "moved", "arrived", "entered", "object", "perceived", "said", "reflected",
         "reacted", "replanned", "whispered", "interviewed")
