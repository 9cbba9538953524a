"""`smalltown why SAVE AGENT [--at TIME]`: the chain behind what an agent was doing at a game time.

The action it had begun by then and the plan block it belongs to, the model calls that decided it
(those its "started" event names: the mind records them when it adopts the action, llm.asker.call_ref;
a save from before that link gets the agent's calls at the tick the action began instead, and says
so) with their prompts and answers, the retrievals logged with those calls (each record's recency,
importance and relevance) and the memories those records are, followed down their evidence.
`why_data` returns it all as data (the JSON `--json` prints); `show_why` prints it as text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from smalltown.lang import hhmm
from smalltown.shown import json_shown, shown
from smalltown.state.plan import DayPlan
from smalltown.store.records import CallRow, Memory
from smalltown.store.reader import Reader
from smalltown.store.schema import TIME_FMT
from smalltown.world.names import agent_named


class WhenError(ValueError):
    """A game time the command line gave that the run does not have (a usage error)."""


def tick_at(history, when: str | None) -> int:
    """The tick a command line's game time names, within the run (its end when None)."""
    from smalltown.sim.clock import clock_near

    if when is None:
        return history.last_tick
    try:
        tick = history.tick_of(clock_near(when, history.time_of(history.last_tick), history.time_of(0), last=True))
    except ValueError as e:
        raise WhenError(str(e)) from None
    if not 0 <= tick <= history.last_tick:
        raise WhenError(f"the run goes from {history.time_of(0):%Y-%m-%d %H:%M} to "
                        f"{history.time_of(history.last_tick):%Y-%m-%d %H:%M}")
    return tick


def call_json(reader: Reader, c: CallRow) -> dict:
    """A call's row with its prompt and answers as text."""
    d = reader.call_detail(c.id)
    return {"id": c.id, "tick": c.tick, "time": c.time, "agent": c.agent, "task": c.task, "key": reader.call_key(c.id),
            "backend": c.backend,
            "model": d.get("model"), "prompt_tokens": c.prompt_tokens, "cached_tokens": c.cached_tokens,
            "completion_tokens": c.completion_tokens, "ms": c.ms, "note": c.note, "prompt": d.get("prompt"),
            "answer": d.get("raw_answer"), "parsed_answer": d.get("parsed_answer")}


def memory_json(m: Memory) -> dict:
    return {"id": m.id, "kind": m.kind, "created": m.created.strftime(TIME_FMT), "importance": m.importance or 0,
            "description": m.description, "evidence": list(m.evidence)}


def plan_block(reader: Reader, agent: str, tick: int, history) -> dict | None:
    """The plan block holding the game time of `tick`, from the agent's state as the save kept it
    latest at or before it (a snapshot each game hour, or the save's own)."""
    kept = reader.agent_state_by(agent, tick)
    if kept is None or not kept[1].get("plan"):
        return None
    plan = DayPlan.from_json(kept[1]["plan"])
    now = history.time_of(tick)
    block = plan.block_during(now, now)
    if block is None:
        return None
    return {"from_tick": kept[0], "date": plan.date.isoformat(), "start": hhmm(block.start),
            "minutes": block.minutes, "activity": block.activity, "address": block.address or block.place,
            "actions": [{"start": hhmm(a.start), "minutes": a.minutes, "activity": a.activity, "address": a.address}
                        for a in block.actions or []]}


def why_data(path: str | Path, agent: str, at: str | None = None) -> dict:
    """What `smalltown why` shows, as data (NoSuchAgent for a name no agent has, WhenError for a
    time outside the run). `linked`: the action names the calls that decided it (False: the save
    predates that link, and `calls` are the agent's calls at the tick its action began, or its
    latest tick of calls before; None: no action begun)."""
    from smalltown.sim.history import History

    with History(path) as h:
        reader = h.reader
        name = agent_named(agent, reader.agent_names())
        tick = tick_at(h, at)
        started = reader.action_started_by(name, tick)
        action = None if started is None else {
            "tick": started.tick, "start": started.time, "activity": started.data.get("activity"),
            "address": started.data.get("address"), "end": started.data.get("end")}
        linked = None if started is None else isinstance(started.data.get("calls"), list)
        calls: list[dict] = []
        if linked:
            refs = started.data["calls"]
            for ref in refs:
                row = reader.call_decided(name, ref)
                calls.append({"ref": ref, "logged": row is not None} | (call_json(reader, row) if row else {}))
        elif started is not None or reader.deciding_tick(name, tick) is not None:
            decided = reader.deciding_tick(name, started.tick if started else tick)
            calls = [call_json(reader, c) for c in reader.calls_at(name, decided)] if decided is not None else []
        retrievals: list[dict] = []
        for who, t in dict.fromkeys((c["agent"], c["tick"]) for c in calls if "id" in c):
            for r in reader.retrievals_at(who, t):
                retrievals.append(r | {"agent": who})
        for c in calls:
            if "id" in c:
                c["retrievals"] = [r["id"] for r in retrievals if (r["agent"], r["tick"]) == (c["agent"], c["tick"])]
        cited = [r["id"] for ret in retrievals for r in ret["results"]]
        return {"agent": name, "tick": tick, "time": h.time_of(tick).strftime(TIME_FMT), "action": action,
                "plan_block": plan_block(reader, name, tick, h), "linked": linked, "calls": calls,
                "retrievals": retrievals, "memories": [memory_json(m) for m in reader.evidence_chain(cited)]}


def why_lines(info: dict, prompts: bool = True) -> list[str]:
    """`why_data`'s answer as lines of text, everything from the save shown safe (smalltown.shown);
    without `prompts`, each call's prompt is left out (they are most of the text)."""
    out = [shown(f"{info['agent']} at {info['time']} (tick {info['tick']})")]
    a = info["action"]
    out.append("Doing: " + (shown(f"{a['activity']} @ {a['address']} (since {a['start']}, until {a['end']})")
                            if a else "nothing yet (no action begun by then)"))
    if a and a["end"] and a["end"] < info["time"]:  # (taken up again as it was: no new "started" event)
        out.append("  (it went on past that end: no other action began by then)")
    b = info["plan_block"]
    if b:
        out.append(shown(f"Plan block: {b['start']} {b['minutes']} min  {b['activity']}  @ {b['address']}"
                         f"  (plan of {b['date']}, as kept at tick {b['from_tick']})"))
        out += [shown(f"  {x['start']} {x['minutes']:>3} min  {x['activity']}") for x in b["actions"]]
    else:
        out.append("Plan block: none (the save keeps no plan of the agent's at or before then)")
    calls = info["calls"]
    if info["linked"]:
        out.append(f"Decided by {len(calls)} model call(s), as recorded when the action began:" if calls else
                   "Decided by no model call: the engine's rules began it (or a plan made without the model)")
    elif info["linked"] is False:
        ticks = sorted({c["tick"] for c in calls})
        out.append("This save predates the link from an action to the calls that decided it: " + (
            f"the agent's calls at tick {ticks[0]} are shown instead (the latest at or before the action began)"
            if calls else "and the agent made no model call by then"))
    for c in calls:
        out.append("")
        if "id" not in c:
            out.append(shown(f"--- a call asked at tick {c['ref'].get('tick')} (key {c['ref'].get('key')}) that the "
                             "save's call log does not hold"))
            continue
        asked = f"{c['agent']}, " if c["agent"] != info["agent"] else ""
        out.append(shown(f"--- call {c['id']}: {asked}{c['task']} at {c['time']} (tick {c['tick']}; {c['backend']}"
                         f"{', ' + c['model'] if c['model'] else ''}; {c['prompt_tokens']} prompt + "
                         f"{c['completion_tokens']} answer tokens, {c['ms']:.0f} ms{'; ' + c['note'] if c['note'] else ''})"))
        if prompts:
            out += ["Prompt:", shown(c["prompt"] or "", lines=True)]
        out += ["Answer:", shown(c["answer"] or "", lines=True)]
    memories = {m["id"]: m for m in info["memories"]}
    for r in info["retrievals"]:
        out.append("")
        who = f"{r['agent']}, " if r["agent"] != info["agent"] else ""
        out.append(shown(f"--- retrieval {r['id']} ({who}{r['purpose']}, tick {r['tick']}): {r['query']!r}"))
        out.append("  record  recency  importance  relevance  total  memory")
        for s in r["results"]:
            m = memories.get(s["id"])
            out.append(f"  {s['id']:>6}  {s['recency']:7.3f}  {s['importance']:10.3f}  {s['relevance']:9.3f}  "
                       f"{s['total']:5.3f}  " + (shown(m["description"]) if m else "(not saved)"))
    rested = [m for m in info["memories"] if m["evidence"]]
    if rested:
        out.append("")
        out.append("--- what the cited reflections rest on")
        for m in rested:
            out.append(shown(f"  {m['id']} ({m['kind']}, {m['created']}): {m['description']}"))
            out += [shown(f"      <- {e}: {memories[e]['description']}" if e in memories else f"      <- {e}")
                    for e in m["evidence"]]
    return out


def why_command(args: argparse.Namespace) -> int:
    try:
        info = why_data(args.save, args.agent, args.at)
    except WhenError as e:
        print(f"error: --at: {shown(e)}", file=sys.stderr)
        return 2
    print(json_shown(json.dumps(info, ensure_ascii=False)) if args.json else "\n".join(why_lines(info, not args.brief)))
    return 0
