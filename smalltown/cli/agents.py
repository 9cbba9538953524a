"""`smalltown inspect | whisper | interview`: look into an agent, or step into its mind."""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager
from typing import Iterator
from datetime import datetime

from rich.console import Console
from rich.table import Table
from rich.text import Text

from smalltown.lang import hhmm
from smalltown.state.plan import minute_of
from smalltown.state.agent import AgentState
from smalltown.shown import shown, shown_text
from smalltown.store.records import Retrieval
from smalltown.sim.commands import EditObject, Interview, Whisper
from smalltown.sim.look import look
from smalltown.sim.open import peek_seed, resume
from smalltown.sim.simulation import TIME_FMT, Simulation
from smalltown.world.model import pretty
from smalltown.world.names import agent_named, suggestion


class UnknownAgent(Exception):
    """An object the save does not have, or a state a world file could not hold (an agent's
    name that is no agent's is a NoSuchAgent)."""


def open_sim(args: argparse.Namespace, readonly: bool = False) -> Simulation:
    """The save, with the backend the command line asks for (scripted for read-only commands).
    `readonly` (inspect): without the save's writer lock, so it works while a run goes on; nothing
    is written to the file."""
    from smalltown.cli.backends import choose
    from smalltown.cli.common import backend_choice
    from smalltown.store.sidefiles import check_side_files

    choice = backend_choice(args) if hasattr(args, "backend") else choose("scripted")
    embedder = choice.embedder()
    if not readonly:  # a writer: what lies beside the save is checked before it is even read
        check_side_files(args.save)
    seed = peek_seed(args.save)
    return resume(args.save, choice.backend(seed), sets=getattr(args, "set", None) or [],
                  embedder=embedder, fallback=choice.fallback(seed), readonly=readonly)


@contextmanager
def agent_in_save(args: argparse.Namespace) -> Iterator[tuple[Simulation, str]]:
    """The save opened, the agent the command names found; the save closed afterwards."""
    sim = open_sim(args)
    try:
        yield sim, find_agent(sim, args.agent)
    finally:
        sim.close()


def find_agent(sim: Simulation, name: str) -> str:
    """A full name, or a first name, any case; NoSuchAgent (a usage error) says whom a misspelt
    one probably meant."""
    return agent_named(name, [a.name for a in sim.agents])


def plan_json(state: AgentState, now: datetime) -> dict:
    plan = state.plan
    if plan is None:
        return {"daily": [], "blocks": [], "actions": []}
    current = plan.block_during(now, now)  # the plan's own lookups, as the inspector's
    now_doing = plan.actions_during(current, now, now) if current else []
    return {
        "date": plan.date.isoformat(), "wake_up_hour": plan.wake_up_hour,
        "daily": [f"{t} {a}".strip() for t, a in plan.items],
        "blocks": [{"start": hhmm(b.start), "minutes": b.minutes, "activity": b.activity,
                    "address": b.address or b.place, "current": b is current} for b in plan.blocks],
        "actions": [{"start": hhmm(a.start), "minutes": a.minutes, "activity": a.activity, "address": a.address,
                     "current": any(a is d for d in now_doing)} for a in (current.actions or [])] if current else [],
    }


def retrieval_json(r: Retrieval) -> dict:
    return {"query": r.query, "time": r.time.strftime(TIME_FMT), "results": [
        {"id": s.memory.id, "kind": s.memory.kind, "description": s.memory.description,
         "recency": round(s.recency, 4), "importance": round(s.importance, 4),
         "relevance": round(s.relevance, 4), "total": round(s.total, 4)} for s in r.results]}


def inspect(args: argparse.Namespace) -> int:
    if args.retrieve is not None:
        return inspect_retrieval(args)
    seen = look(args.save, args.agent, args.memories)  # one agent's rows, not the whole run
    state = seen.state
    info = {
        "agent": seen.spec.name, "game_time": seen.now.strftime(TIME_FMT),
        "summary": state.summary or seen.spec.description,
        "action": state.action.describe() if state.action else None,
        "plan": plan_json(state, seen.now),
        "memories": [{"id": m.id, "kind": m.kind, "created": m.created.strftime(TIME_FMT),
                      "importance": m.importance or 0, "description": m.description,
                      "evidence": list(m.evidence)} for m in seen.memories],
        "memory_count": seen.memory_count,
    }
    if args.json:
        print(json.dumps(info))
    else:
        show_inspect(info)
    return 0


def inspect_retrieval(args: argparse.Namespace) -> int:
    """A retrieval scores the agent's whole stream with the run's embedder: the run is opened."""
    sim = open_sim(args, readonly=True)
    try:
        mind = sim.agent(find_agent(sim, args.agent)).mind
        # an inspection is read-only: the retrieval's last-access updates are not committed
        out = retrieval_json(mind.memory.retrieve(args.retrieve, sim.now, args.k, purpose="inspect"))
        if args.json:
            print(json.dumps(out))
        else:
            show_retrieval(out)
        return 0
    finally:
        sim.close()


def show_inspect(info: dict) -> None:
    # Everything from the save is shown as Text (never markup), its control characters visible.
    c = Console()
    c.rule(Text.assemble((shown(info["agent"]), "bold"), f" at {shown(info['game_time'])}"))
    c.print(shown_text(info["summary"], lines=True))
    c.print(Text.assemble("\n", ("Now:", "bold"), " ", shown(info["action"] or "—")))
    plan = info["plan"]
    if plan["daily"]:
        c.print(Text.assemble("\n", (f"Plan for {shown(plan['date'])}", "bold"),
                              f" (wakes at {shown(plan['wake_up_hour'])}:00)"))
        for item in plan["daily"]:
            c.print(Text(f"  • {shown(item)}"))
        c.print(Text.assemble("\n", ("Hour by hour", "bold")))
        for b in plan["blocks"]:
            mark = "▶" if b["current"] else " "
            c.print(Text.assemble(f" {mark} {b['start']} {b['minutes']:>4} min  {shown(b['activity'])}",
                                  (f"  @ {shown(pretty(b['address']))}" if b["address"] else "", "dim")))
        if plan["actions"]:
            c.print(Text.assemble("\n", ("This hour", "bold")))
            for a in plan["actions"]:
                c.print(Text.assemble(f" {'▶' if a['current'] else ' '} {a['start']} {a['minutes']:>3} min  "
                                      f"{shown(a['activity'])}",
                                      (f"  @ {shown(pretty(a['address']))}" if a["address"] else "", "dim")))
    t = Table(title=f"Latest memories ({len(info['memories'])} of {info['memory_count']})", show_lines=False)
    for col in ("id", "time", "kind", "imp", "description", "evidence"):
        t.add_column(col, overflow="fold")
    for m in info["memories"]:
        t.add_row(*(shown_text(v) for v in (m["id"], m["created"][5:16], m["kind"], m["importance"],
                                             m["description"], ", ".join(map(str, m["evidence"])))))
    c.print(t)


def show_retrieval(out: dict) -> None:
    t = Table(title=Text(f"Retrieval: {shown(repr(out['query']))} at {shown(out['time'])}"))
    for col in ("id", "kind", "recency", "importance", "relevance", "total", "description"):
        t.add_column(col, overflow="fold")
    for r in out["results"]:
        t.add_row(shown_text(r["id"]), shown_text(r["kind"]), f"{r['recency']:.3f}", f"{r['importance']:.3f}",
                  f"{r['relevance']:.3f}", f"{r['total']:.3f}", shown_text(r["description"]))
    Console().print(t)


def whisper(args: argparse.Namespace) -> int:
    with agent_in_save(args) as (sim, name):
        thought = sim.apply(Whisper(name, args.text))
        plan = plan_json(sim.agent(name).mind.state, sim.now)
        print(f"{shown(name)} now thinks: {shown(thought.description)} (memory {thought.id}, "
              f"importance {thought.importance})")
        upcoming = [b for b in plan["blocks"] if b["start"] >= hhmm(minute_of(sim.now))]
        if upcoming:
            print("The rest of the day:")
            for b in upcoming:
                print(f"  {b['start']} {b['minutes']:>4} min  {shown(b['activity'])}")
    return 0


def interview(args: argparse.Namespace) -> int:
    with agent_in_save(args) as (sim, name):
        answer, retrieval = sim.apply(Interview(name, args.question, args.persona))
        if args.json:
            print(json.dumps({"agent": name, "question": args.question, "as": args.persona,
                              "answer": answer, "retrieval": retrieval_json(retrieval)}))
        else:
            print(f"{shown(args.persona)} → {shown(name)}: {shown(args.question)}\n"
                  f"{shown(name)}: {shown(answer, lines=True)}")
    return 0


def object_suggestion(address: str, objects: list[str]) -> str:
    """What a mistyped 'sector:arena:object' probably meant: the closest address (each part may be
    misspelt), else the objects of that name elsewhere."""
    guess = suggestion(address, objects)
    if guess:
        return guess
    near = [a for a in objects if address.split(":")[-1].lower() in a.lower()][:8]
    return f"; did you mean: {', '.join(near)}" if near else ""


def edit_object(args: argparse.Namespace) -> int:
    from smalltown.world.schema import object_state_problem

    problem = object_state_problem(args.state)  # held to a world file's rule: refused before the save opens
    if problem:
        raise UnknownAgent(f"STATE {args.state[:60]!r}: {problem}")
    sim = open_sim(args)
    try:
        address = args.address.replace(": ", ":").strip()
        if address not in sim.objects:
            raise UnknownAgent(f"no object {args.address!r}" + (object_suggestion(address, list(sim.objects))
                               or " (addresses look like 'sector:arena:object')"))
        before = sim.objects[address]
        sim.apply(EditObject(address, args.state))
        print(f"{shown(pretty(address))}: {shown(before)} -> {shown(args.state)} "
              "(agents who see it will notice)")
        return 0
    finally:
        sim.close()
