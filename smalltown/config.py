"""Every tunable number in one place. A world file's [settings] table and the command line's
`--set NAME=VALUE` override them; the defaults are the paper's numbers (SPEC), or its authors'
code where the paper is silent."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace


class SettingsError(ValueError):
    """A setting that does not exist, or a value of the wrong type or out of its range, said so a
    user can fix it."""


# settings renamed to the glossary's names (docs/architecture.md): world files, `--set` and saves
# written before the rename still use the old ones, which keep working
RENAMED = {"dialogue_k": "conversation_k", "dialogue_rounds": "conversation_rounds",
           "chat_cooldown_hours": "conversation_cooldown_hours"}


def _in(default: int | float, low: int | float, high: int | float):
    """A setting with the range its values must lie in (both ends included): a value from a world
    file, `--set` or a stranger's save is checked against it before any of it is used."""
    return field(default=default, metadata={"range": (low, high)})


# what may reach the controller's prompts (`controller_inputs`): react's status, place, retrieved
# context, last talk and news; the plan tasks' gatherings and intentions (default: all, as today)
CONTROLLER_INPUTS = ("status", "place", "context", "last_talk", "news", "gatherings", "intentions", "feeling",
                     "unavailable")
NAMES = "tuple[str, ...]"  # the type of a list-of-names setting

# `architecture` presets: each a set of modules, named by their switches (mind/modules.py registers
# the modules; a test checks each switch named here is a module's setting): the module switches it
# turns on (the others of SWITCHES off), and the other settings it fills, unless a world's
# [settings] or `--set` names that setting itself. "baseline" is Sid's §8.1 control: skill
# execution (the plan's actions), memory (the stream and retrieval) and the cognitive controller
# only; reflection, which writes new higher-level memories, is a module beyond Sid's "memory" and
# goes; planning stays, as the controller's decisions at action boundaries are the plan's
# (mind/controller.py)
PIANO_MODULES = ("social_awareness", "controller_broadcast", "commitments", "action_awareness", "goal_generation",
                 "slow_reflection")
# the culture modules (mind/belief.py, mind/memes.py): off but in the `culture` preset
CULTURE_MODULES = ("memes", "belief")
SWITCHES = (*PIANO_MODULES, "reflection", *CULTURE_MODULES)  # the module switches a preset sets
PRESETS: dict[str, tuple[tuple[str, ...], dict[str, object]]] = {  # name -> (switches on, other settings)
    "generative_agents": (("reflection",), {"attention_minutes": 0.0, "reflection_every_minutes": 0}),
    "piano": ((*PIANO_MODULES, "reflection"), {"attention_minutes": 5.0, "reflection_every_minutes": 480}),
    "baseline": ((), {"attention_minutes": 5.0, "reflection_every_minutes": 0}),
    # Sid's §5.3: piano with the meme summaries and belief levels (trips between towns: `travel`)
    "culture": ((*PIANO_MODULES, "reflection", *CULTURE_MODULES),
                {"attention_minutes": 5.0, "reflection_every_minutes": 480}),
}
ARCHITECTURES = {name: {**{s: s in on for s in SWITCHES}, **fill} for name, (on, fill) in PRESETS.items()}
PRESET = tuple(ARCHITECTURES["piano"])  # the settings a preset fills


@dataclass(frozen=True)
class Settings:
    # perception (SPEC 1; the authors' code used 4-8 tiles, 3-8 things, 5-8 memories)
    vision_radius: int = _in(4, 0, 50)
    attention_bandwidth: int = _in(3, 0, 100)
    retention: int = _in(5, 0, 100)
    # retrieval (SPEC 2): weights of the min-max normalised components, recency decay per hour
    weight_recency: float = _in(1.0, 0.0, 100.0)
    weight_importance: float = _in(1.0, 0.0, 100.0)
    weight_relevance: float = _in(1.0, 0.0, 100.0)
    recency_decay: float = _in(0.995, 0.0, 1.0)
    # reflection (SPEC 3)
    reflection_threshold: int = _in(150, 1, 100_000)  # summed importance of new records that triggers one
    reflection_recent: int = _in(100, 1, 1000)  # records the questions are asked from
    reflection_k: int = _in(30, 1, 1000)  # records retrieved per question
    # importance ratings are batched: new records wait until this many pile up or the oldest
    # has waited this long (or until the memory is used), then are rated in one task
    settle_batch: int = _in(16, 1, 1000)
    settle_hours: float = _in(2.0, 0.0, 168.0)
    # reacting and conversations (SPEC 5)
    react_k: int = _in(5, 1, 1000)  # records per context query (two queries: relationship, and what is seen)
    conversation_k: int = _in(10, 1, 1000)  # records per line's retrieval (about the other, about the last line)
    conversation_rounds: int = _in(8, 1, 100)  # at most; a round is one line from each side
    conversation_cooldown_hours: float = _in(3.0, 0.0, 8760.0)  # two agents who just talked do not start again before this
    react_cooldown_hours: float = _in(4.0, 0.0, 8760.0)  # after deciding not to react to something, not again before this
    plan_context_k: int = _in(10, 1, 1000)  # records retrieved when planning a day
    interview_k: int = _in(20, 1, 1000)
    # ablations (SPEC 9)
    reflection: bool = True
    planning: bool = True
    observation_memory: bool = True
    # Sid's PIANO: each action's outcome checked against what was expected (mind/awareness.py)
    action_awareness: bool = False
    # the cognitive controller (mind/controller.py): its decision given to the talking and
    # acting prompts; the parts of the state its prompts see; promises made in talk, kept or broken
    controller_broadcast: bool = False
    controller_inputs: tuple[str, ...] = field(default=CONTROLLER_INPUTS, metadata={"names": CONTROLLER_INPUTS})
    commitments: bool = False
    commitment_window_minutes: int = _in(30, 0, 720)  # a promise is kept within this of its time
    # PIANO modules, off by default (the piano preset turns them on)
    social_awareness: bool = False  # mind/social.py: sentiment toward others, after each conversation
    # goal generation (mind/goals.py): a social goal asked every `goal_every_minutes` of game
    # time as a slow module's question, applied `slow_lag_ticks` ticks after it was asked (sim/later.py)
    goal_generation: bool = False
    goal_every_minutes: int = _in(60, 5, 1440)
    slow_lag_ticks: int = _in(6, 1, 1000)
    # reflection as a slow module (mind/reflect.py): its two steps each applied `slow_lag_ticks` after asked
    slow_reflection: bool = False
    # reflection at most every this many game minutes (counted from the newest reflection in the
    # stream), like the other slow modules' clocks; 0: whenever the threshold is passed (the paper's
    # loop). The piano preset: 480, the paper's "roughly two or three times a day" in a busy town
    reflection_every_minutes: int = _in(0, 0, 1440)
    # the mind thinks on a grid: reflection, reactions and conversations and next actions
    # run only on ticks that are multiples of this, so every agent's questions go out together;
    # between them bodies move, perceive and remember. 1: every tick (the paper's loop)
    think_every_ticks: int = _in(1, 1, 360)
    # the next action of an agent whose action ends before the next grid tick is decided
    # ahead, on this one, beside the encounters of the others, and taken up when the action ends:
    # no standing between actions, and planning off the tick's critical path
    think_ahead: bool = False
    # which mind: a preset of the module switches above, ARCHITECTURES
    architecture: str = field(default="generative_agents", metadata={"choices": tuple(ARCHITECTURES)})
    # role inference (mind/roles.py): a role from the last goals, asked as a slow module's
    # question when the goals window changed, at most every `role_every_minutes` of game time
    roles: bool = False
    role_every_minutes: int = _in(60, 5, 1440)
    # civics (sim/civics.py; worlds with a [civics]): game seconds per Sid second (288: his
    # 1,200 s run is four game days, as his agents never sleep and ours wake ~16 h a day: the
    # feedback from the second day's dawn, the vote that afternoon, the new law from the third's
    # dawn, a tax season every 9.6 h; at 144, a season every 4.8 h, the town's cost per agent-day
    # passed the PIANO budget: benchmarks/RESULTS.md), which side the
    # influencers argue ("none": plain constituents), and a frozen constitution (the vote is held
    # and tallied, the text never changes)
    civics_scale: int = _in(288, 1, 3600)
    influencer_side: str = field(default="anti", metadata={"choices": ("anti", "pro", "none")})
    constitution_frozen: bool = False
    # attention (mind/react.py `attending`): after weighing a person it saw, an agent weighs no other
    # person for this many game minutes (a crowd is passed through); 0: every new face is weighed
    # (the paper's loop). Sid's controller (piano, baseline) decides at its own pace: 5
    attention_minutes: float = _in(0.0, 0.0, 1440.0)
    # culture (Sid §5.3). Memes (mind/memes.py): each `meme_every_minutes` of game time, one
    # question per town (and one for the rural area) summarises its people's goals into topics
    # with keywords. Belief (mind/belief.py): each agent's level in each of the world's doctrines,
    # from the lines it says, and the lines it hears: a line is heard by its listener and
    # overheard by anyone within `hearing_radius` tiles of the speaker
    memes: bool = False
    meme_every_minutes: int = _in(60, 5, 1440)
    belief: bool = False
    hearing_radius: int = _in(4, 0, 50)
    # a world of several towns (mind/travel.py): agents plan trips to other towns for the reasons
    # their day gives (a market, people they know there, a doctrine's gathering); off, every agent
    # keeps to its own town (a rural agent to its home, the land between towns and its nearest town)
    travel: bool = True

    def __post_init__(self) -> None:
        """Every Settings is whole: each value of its setting's type and inside its range (so an
        infinite cooldown or a NaN weight never reaches the clock arithmetic)."""
        for f in fields(self):
            if str(f.type) == NAMES:
                _check_names(f.name, f.metadata["names"], getattr(self, f.name))
            elif "choices" in f.metadata:
                _check_choice(f.name, f.metadata["choices"], getattr(self, f.name))
            else:
                _check(f.name, str(f.type), f.metadata.get("range"), getattr(self, f.name))

    def override(self, **changes: object) -> "Settings":
        """A copy with `changes`, each converted to the setting's type (so "6" sets an int) and
        checked against its range."""
        types = {f.name: f.type for f in fields(self)}
        old = {RENAMED[k]: k for k in changes if k in RENAMED}
        changes = {RENAMED.get(k, k): v for k, v in changes.items()}
        unknown = set(changes) - set(types)
        if unknown:
            shown = [_shown(n)[1:-1] for n in sorted(unknown)[:5]] + (["..."] if len(unknown) > 5 else [])
            raise SettingsError(f"unknown setting(s): {', '.join(shown)} "
                                f"(known: {', '.join(sorted(types))})")
        try:
            out = replace(self, **{k: _convert(k, types[k], v) for k, v in changes.items()})
        except SettingsError as e:  # named as the user wrote it
            for new, was in old.items():
                if str(e).startswith(f"setting {new}:"):
                    raise SettingsError(str(e).replace(f"setting {new}:", f"setting {was} (now {new}):", 1)) from None
            raise
        # a switch the user named stays as named through a later preset (world, then --set, then resume)
        explicit = self.explicit() | (set(changes) & set(PRESET))
        if "architecture" in changes:
            fill = {k: v for k, v in ARCHITECTURES[out.architecture].items() if k not in explicit}
            out = replace(out, **fill)
        object.__setattr__(out, "_explicit", frozenset(explicit))
        return out

    def explicit(self) -> frozenset[str]:
        """The preset's switches named by the user (world, `--set`, a save) rather than filled."""
        return getattr(self, "_explicit", frozenset())

    def saved(self, changes: object) -> "Settings":
        """A copy with the settings a save recorded (`meta.settings`: the changes from the
        defaults), checked as `--set` is: a stranger's save with `{"chat_cooldown_hours": 1e309}`
        or `[1, 2]` is refused here, naming the setting."""
        if changes is None:
            return self
        if not isinstance(changes, dict):
            raise SettingsError(f"settings {str(changes)[:60]!r}: not a table of NAME: VALUE")
        return self.override(**{str(k): v for k, v in changes.items()})

    def changes(self) -> dict[str, object]:
        """The settings that differ from the defaults (what a save records)."""
        default = asdict(Settings())
        preset = ARCHITECTURES[self.architecture]  # a switch is recorded when it differs from its preset
        return {k: v for k, v in asdict(self).items() if preset.get(k, default[k]) != v}


def parse_sets(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """`--set NAME=VALUE` options as a dict (values converted by `Settings.override`)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise SettingsError(f"--set {item!r}: expected NAME=VALUE, e.g. --set reflection=false")
        out[name.strip()] = value
    return out


def ranges() -> dict[str, tuple[int | float, int | float]]:
    """Each numeric setting's range, lowest and highest allowed (docs/world-format.md lists them)."""
    return {f.name: f.metadata["range"] for f in fields(Settings) if "range" in f.metadata}


def _check(name: str, type_name: str, bounds: tuple | None, value: object) -> None:
    kind = {"int": int, "float": float, "bool": bool}[type_name]
    if kind is bool:
        if not isinstance(value, bool):
            raise SettingsError(f"setting {name}: {_shown(value)} is not true or false")
        return
    if isinstance(value, bool) or not isinstance(value, kind if kind is int else (int, float)):
        raise SettingsError(f"setting {name}: {_shown(value)} is not a{'n' if kind is int else ''} "
                            f"{'integer' if kind is int else 'number'}")
    low, high = bounds
    if not ((isinstance(value, int) or math.isfinite(value)) and low <= value <= high):  # (NaN fails every comparison)
        raise SettingsError(f"setting {name}: {_shown(value)} is out of range ({_bounds(name)})")


def _check_names(name: str, known: tuple[str, ...], value: object) -> None:
    if not isinstance(value, tuple) or not all(isinstance(x, str) for x in value):
        raise SettingsError(f"setting {name}: {_shown(value)} is not a list of names")
    bad = [x for x in value if x not in known]
    if bad:
        raise SettingsError(f"setting {name}: {_shown(bad[0])} is not one of {', '.join(known)}")


def _check_choice(name: str, known: tuple[str, ...], value: object) -> None:
    if value not in known:
        raise SettingsError(f"setting {name}: {_shown(value)} is not one of {', '.join(known)}")


def _convert(name: str, type_name: object, value: object) -> object:
    """`value` as the setting's type: text (from `--set`) is read, other values must already be
    of the type (a TOML or JSON int for an int, a number for a float, true or false for a bool)."""
    if str(type_name) == NAMES:  # "a,b" from `--set`, a list from TOML or a save; order kept, once each
        items = [x.strip() for x in value.split(",") if x.strip()] if isinstance(value, str) else value
        return tuple(dict.fromkeys(items)) if isinstance(items, (list, tuple)) else items
    if str(type_name) == "str":  # a choice: checked by Settings.__post_init__
        return value.strip() if isinstance(value, str) else value
    kind = {"int": int, "float": float, "bool": bool}[str(type_name)]
    if isinstance(value, str):
        text = value.strip().lower()
        if kind is bool:
            if text in ("true", "false"):
                return text == "true"
            raise SettingsError(f"setting {name}: {_shown(value)} is not true or false")
        try:
            return kind(text)
        except ValueError:
            raise SettingsError(f"setting {name}: {_shown(value)} is not a{'n' if kind is int else ''} "
                                f"{'integer' if kind is int else 'number'}") from None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise SettingsError(f"setting {name}: {_shown(value)} is out of range "
                                f"({_bounds(name)})") from None
    return value  # checked (type and range) by Settings.__post_init__


def _shown(value: object) -> str:
    """A value as an error shows it: short (a 5000-digit number is not printed whole)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"a number of {len(str(abs(value))) if abs(value) < 10**4000 else 'over 4000'} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds(name: str) -> str:
    low, high = ranges()[name]
    return f"from {low} to {high}"
