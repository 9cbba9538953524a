"""The mind's modules and their clocks (issue 16, PIANO: modules over one shared agent state, each
on its own clock). Data only: what each module is, where it lives, when it runs, the setting that
switches it and what of the state it reads and writes. docs/architecture.md's table "Modules and
their clocks" is this registry (tests/test_modules_registry.py keeps them the same)."""

from __future__ import annotations

from dataclasses import dataclass

# the clocks, from the fastest: model-free each tick; on an event of the agent's (a line, an action
# ending, an observation weighed, a conversation over); on the hour; rarely (a threshold, a day)
CLOCKS = ("every tick", "on an event", "hourly", "rare")


@dataclass(frozen=True)
class Module:
    name: str
    file: str  # under smalltown/
    clock: str  # one of CLOCKS
    when: str  # the clock in words
    setting: str  # the setting that switches it ("" when it always runs)
    reads: str
    writes: str
    slow: str = ""  # when it is asked at one tick and applied `slow_lag_ticks` later (sim/later.py)


MODULES: tuple[Module, ...] = (
    Module("perception", "sim/perception.py", "every tick", "each tick, model-free", "observation_memory",
           "the world within sight", "pending observations, the known tree's object states"),
    Module("movement", "sim/movement.py", "every tick", "each tick, model-free", "",
           "the action's address, the map", "the agent's tile and path; blocked at a closed or taken place"),
    Module("action awareness", "mind/awareness.py", "every tick", "each tick, model-free", "action_awareness",
           "the action, the plan, the engine's outcome", "unavailable, an observation, the plan's block"),
    Module("commitment checks", "sim/commitments.py", "every tick", "each tick, model-free", "commitments",
           "commitments, the agent's place", "commitments (kept or broken events)"),
    Module("memory and importance", "mind/importance.py", "on an event",
           "before the memory is used, or a batch has waited", "", "pending records", "the memory stream, ratings"),
    Module("controller", "mind/controller.py", "on an event", "an action boundary, an observation weighed",
           "controller_broadcast", "the state's parts named in controller_inputs", "decision"),
    Module("reacting", "mind/react.py", "on an event", "an observation weighed", "",
           "retrievals, the last talk, news, weighed", "the plan (re-planned), declined, weighed"),
    Module("talking", "mind/talk.py", "on an event", "each line of a conversation", "",
           "retrievals, the last talk, decision, feeling", "talks, told, heard, commitments"),
    Module("social awareness", "mind/social.py", "on an event", "after each conversation", "social_awareness",
           "social, the other's traits", "social"),
    Module("places", "mind/places.py", "on an event", "an action that needs a place", "",
           "the known tree, unavailable", "place_answers"),
    Module("goal generation", "mind/goals.py", "hourly", "every goal_every_minutes, or when a goal succeeds or fails",
           "goal_generation", "traits, the community's needs, the others' goals", "goal, goals, goal_until, slow",
           slow="always"),
    Module("daily plan", "mind/planning.py", "rare", "each morning; blocks decomposed as they start", "planning",
           "the summary, retrievals, goal, decision", "plan, action"),
    Module("summary", "mind/summary.py", "rare", "each morning", "", "retrievals", "summary"),
    Module("reflection", "mind/reflect.py", "rare",
           "when importance since the last passes reflection_threshold, at most every reflection_every_minutes (piano: 480)",
           "reflection, slow_reflection", "recent records, retrievals", "reflections, since_reflection, slow",
           slow="with `slow_reflection`"),
)

HEADER = "| module | file | clock | when | setting | reads | writes | slow |"


def table() -> list[str]:
    """The registry as docs/architecture.md's markdown table (its lines)."""
    rows = [HEADER, "|" + "---|" * 8]
    for m in MODULES:
        cells = [m.name, f"`{m.file}`", m.clock, m.when, f"`{m.setting}`" if m.setting else "—", m.reads, m.writes,
                 m.slow or "—"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows
