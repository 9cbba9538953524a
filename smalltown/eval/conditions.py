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


def parse_conditions(text: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    unknown = [c for c in names if c not in SETTINGS]
    if unknown or not names:
        raise EvalError(f"unknown condition(s): {', '.join(unknown) or '(none given)'} "
                        f"(known: {', '.join(ORDER)})")
    return list(dict.fromkeys(names))
