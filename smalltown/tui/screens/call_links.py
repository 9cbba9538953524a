"""What one call links to, as the call screen shows it (tui/screens/calls.py `CallDetailScreen`):
the retrieval logged with it (the records it was given, each with its recency, importance and
relevance) and the actions it decided (those whose "started" event names it, state.agent.Action.calls).
The other way, from the inspector to the calls that decided an action, is calls.py's `open_why`."""

from __future__ import annotations

from rich.text import Text

from smalltown.shown import shown
from smalltown.store.records import EventRow
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.inspector_text import SHORT_KIND

SCORES = ("recency", "importance", "relevance", "total")


def retrieval_text(retrievals: list[dict]) -> Text:
    """Each retrieval: its purpose and query, then one line a record: id, kind, the three scores
    and their total, its description."""
    if not retrievals:
        return Text("none logged with this call (its question was not given retrieved records)", "dim")
    out = Text()
    for n, r in enumerate(retrievals):
        out.append("\n" if n else "")
        out.append(f"#{r['id']} ", "dim")
        out.append(shown(r["purpose"]), "bold")
        out.append("  query: ", "dim")
        out.append(shown(r["query"]))
        out.append("\n      id kind   recency importance relevance   total  description\n", "dim")
        for x in r["results"]:
            kind = SHORT_KIND.get(x.get("kind", ""), x.get("kind", ""))
            rec, imp, rel, tot = (float(x.get(s) or 0) for s in SCORES)
            out.append(f"  {x['id']:>6} {shown(kind):<5} {rec:8.3f} {imp:10.3f} {rel:9.3f} {tot:7.3f}  ")
            out.append(shown(x.get("description", "")) + "\n")
    return out


def decided_text(actions: list[EventRow], limit: int) -> Text:
    """The actions a call decided, one a line: when, who, what and where."""
    if not actions:
        return Text("none: no action names this call as deciding it (or the save predates that link)", "dim")
    out = Text()
    for e in actions:  # (the event's own text: "Agent: activity @ place", as the timeline shows it)
        out.append(shown(e.time[5:16]) + "  ", "dim")
        out.append(shown(e.text) + "\n")
    if len(actions) >= limit:
        out.append(f"(the first {limit})", "dim")
    return out

