"""The paper's ablations (SPEC 9), two ways: for a run (`eval ablate`: the settings an agent
lives under) and for an interview (`eval interview`: the kinds of memory the agent may draw on,
as the paper's ablated agents were the same agents with parts of their memory disabled)."""

from __future__ import annotations

from smalltown.eval import EvalError

ORDER = ("full", "no-reflection", "no-planning", "no-memory")

# As in the paper, each ablation takes away the one before it as well.
SETTINGS: dict[str, dict[str, str]] = {
    "full": {},
    "no-reflection": {"reflection": "false"},
    "no-planning": {"reflection": "false", "planning": "false"},
    "no-memory": {"reflection": "false", "planning": "false", "observation_memory": "false"},
}
MEMORY_KINDS: dict[str, frozenset[str]] = {
    "full": frozenset({"observation", "reflection", "plan", "chat"}),
    "no-reflection": frozenset({"observation", "plan", "chat"}),
    "no-planning": frozenset({"observation", "chat"}),
    "no-memory": frozenset(),
}
DESCRIBE = {
    "full": "the whole architecture",
    "no-reflection": "no reflection",
    "no-planning": "no reflection, no planning",
    "no-memory": "no observation, no reflection, no planning",
}


# The scripted stand-in is rules: under `planning` it bends each agent's routine around the gatherings
# and intentions it has heard of (scripted/plan.py: day.plan); without, it gives the routine's item
# of the moment (next_action), gatherings unheard. What an ablation changes there is which rule runs.
SCRIPTED = ("Scripted answers: these ablations test the pipeline (each condition runs, is saved and is "
            "measured), not the architecture. The scripted stand-in plans by rules: with planning it bends "
            "each agent's routine around the gatherings and intentions it has heard of; without, it follows "
            "the routine hour by hour, which takes agents to other places at other times, so they meet and "
            "pass on news differently. The differences between the columns come from those rules, in "
            "whichever direction, not from how well an agent plans, reflects or remembers: run the "
            "ablations with a model (--backend llama or openai) to measure that.")


def caveat(backend: str) -> str | None:
    """What a report of ablations run on `backend` must say of them: under the scripted stand-in,
    that they do not measure the architecture."""
    return SCRIPTED if backend == "scripted" else None


def parse_conditions(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in SETTINGS]
    if unknown or not names:
        raise EvalError(f"unknown condition(s): {', '.join(unknown) or '(none given)'} "
                        f"(known: {', '.join(ORDER)})")
    return list(dict.fromkeys(names))


# The culture experiments' conditions for `eval matrix` (Sid §5.3), by name. `priests=false` is
# not a setting but a change of the world: its doctrines without priests (eval/culture_worlds.py),
# so the agents who were priests live as ordinary agents.
CULTURE: dict[str, dict[str, str]] = {
    "no-priests": {"priests": "false"},
    "no-travel": {"travel": "false"},
    "no-social-awareness": {"social_awareness": "false"},
}
WORLD_SETTINGS = ("priests",)  # a condition's "settings" that change its world, not its run


def parse_condition(text: str) -> tuple[str, dict[str, str]]:
    """One matrix condition (`eval matrix --condition`): an ablation's name ("no-planning") or a
    culture condition's (CULTURE: "no-priests", "no-travel", "no-social-awareness"), or
    NAME=SETTING=VALUE[,SETTING=VALUE...] ("quiet=social_awareness=false,reflection=false"), or
    NAME= for the world as it is. The settings are checked by the run that uses them (a condition
    with a bad one fails alone, said in the report); `priests=false` runs the world with its
    doctrines' priests as ordinary agents. A name is a file name: letters, digits, -, _."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not name or not all(c.isascii() and (c.isalnum() or c in "-_") for c in name):
        raise EvalError(f"--condition {text!r}: a condition's name is letters, digits, - and _ "
                        "(e.g. --condition quiet=social_awareness=false)")
    if not sep:
        if name not in SETTINGS and name not in CULTURE:
            raise EvalError(f"--condition {text!r}: not an ablation ({', '.join(ORDER)}) or a culture condition "
                            f"({', '.join(CULTURE)}); name the settings: {name}=SETTING=VALUE[,SETTING=VALUE...]")
        return name, dict(SETTINGS.get(name, CULTURE.get(name, {})))
    sets: dict[str, str] = {}
    for item in filter(None, (i.strip() for i in rest.split(","))):
        setting, eq, value = item.partition("=")
        if not eq or not setting.strip():
            raise EvalError(f"--condition {text!r}: {item!r} is not SETTING=VALUE")
        sets[setting.strip()] = value.strip()
    if sets.get("priests", "false").lower() not in ("true", "false"):
        raise EvalError(f"--condition {text!r}: priests is true or false")
    return name, sets
