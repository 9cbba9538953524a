"""Every tunable number in one place. A world file's [settings] table and the command line's
`--set NAME=VALUE` override them; the defaults are the paper's numbers (SPEC), or its authors'
code where the paper is silent."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace


class SettingsError(ValueError):
    """A setting that does not exist or a value of the wrong type, said so a user can fix it."""


@dataclass(frozen=True)
class Settings:
    # perception (SPEC 1; the authors' code used 4-8 tiles, 3-8 things, 5-8 memories)
    vision_radius: int = 4
    attention_bandwidth: int = 3
    retention: int = 5
    # retrieval (SPEC 2): weights of the min-max normalised components, recency decay per hour
    weight_recency: float = 1.0
    weight_importance: float = 1.0
    weight_relevance: float = 1.0
    recency_decay: float = 0.995
    # reflection (SPEC 3)
    reflection_threshold: int = 150  # summed importance of new records that triggers one
    reflection_recent: int = 100  # records the questions are asked from
    reflection_k: int = 30  # records retrieved per question
    # importance ratings are batched: new records wait until this many pile up or the oldest
    # has waited this long (or until the memory is used), then are rated in one task
    settle_batch: int = 16
    settle_hours: float = 2.0
    # reacting and dialogue (SPEC 5)
    react_k: int = 5  # records per context query (two queries: relationship, and what is seen)
    dialogue_k: int = 10  # records per utterance retrieval (about the other, about the last line)
    dialogue_rounds: int = 8  # at most; a round is one line from each side
    chat_cooldown_hours: float = 3.0  # two agents who just talked do not start again before this
    react_cooldown_hours: float = 4.0  # after deciding not to react to something, not again before this
    plan_context_k: int = 10  # records retrieved when planning a day
    interview_k: int = 20
    # ablations (SPEC 9)
    reflection: bool = True
    planning: bool = True
    observation_memory: bool = True

    def override(self, **changes: object) -> "Settings":
        """A copy with `changes`, each converted to the setting's type (so "6" sets an int)."""
        types = {f.name: f.type for f in fields(self)}
        unknown = set(changes) - set(types)
        if unknown:
            raise SettingsError(f"unknown setting(s): {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(sorted(types))})")
        return replace(self, **{k: _convert(k, types[k], v) for k, v in changes.items()})


    def changes(self) -> dict[str, object]:
        """The settings that differ from the defaults (what a save records)."""
        default = asdict(Settings())
        return {k: v for k, v in asdict(self).items() if default[k] != v}


def parse_sets(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--set NAME=VALUE` options as a dict (values converted by `Settings.override`)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SettingsError(f"--set {item!r}: expected NAME=VALUE, e.g. --set reflection=false")
        out[name.strip()] = value
    return out


def _convert(name: str, type_name: object, value: object) -> object:
    kind = {"int": int, "float": float, "bool": bool}[str(type_name)]
    if isinstance(value, str):
        text = value.strip().lower()
        if kind is bool:
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise SettingsError(f"setting {name}: {value!r} is not true or false")
        try:
            return kind(text)
        except ValueError:
            raise SettingsError(f"setting {name}: {value!r} is not a{'n' if kind is int else ''} {kind.__name__}") from None
    if kind is bool and not isinstance(value, bool) or kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SettingsError(f"setting {name}: {value!r} is not a {kind.__name__}")
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise SettingsError(f"setting {name}: {value!r} is not a number")
    return kind(value)
