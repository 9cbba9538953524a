"""A world's civics, as its file declares it in `[civics]` (Project Sid §5.2 and
Appendix D), checked with file:line.

    [civics]
    constitution = "..."                     # the text in force at the start (version 1)
    tax_rate = 20                            # percent of what each holds, paid each tax season
    influencers = ["Ann Lee"]                # agents who argue a side (the `influencer_side` setting)
    election_manager = "Kit Ray"             # collects feedback, writes amendments and the new text
    stances = {anti = "...", pro = "..."}    # what an influencer believes and does, per side
    persuasion_step = 5                      # percent a talk with an influencer moves a listener's
                                             # desired rate toward its side (the stand-in's; typed)
    [civics.timeline]                        # optional, in Sid's seconds (scaled by `civics_scale`)
    season_every = 120                       # a tax season starts every 120 s, its window 20 s
    window = 20
    feedback = 300
    amendments = 360
    vote = 420
    tally = 480
    in_force = 600
    end = 1200

Refused: no [economy] (taxes are paid into its chest); unknown agents; a manager who is also an
influencer; an influencer named twice; a timeline out of order (feedback < amendments < vote <
tally < in force <= end) or a window not shorter than the season."""

from __future__ import annotations

from dataclasses import dataclass

from smalltown.world.errors import Problem
from smalltown.world.model import Persona
from smalltown.world.toml_lines import TomlLines

PHASES = ("feedback", "amendments", "vote", "tally", "in_force", "end")  # the timeline's order
SIDES = ("anti", "pro")


@dataclass(frozen=True)
class Timeline:
    """Sid's seconds from the run's start."""

    season_every: int = 120
    window: int = 20
    feedback: int = 300
    amendments: int = 360
    vote: int = 420
    tally: int = 480
    in_force: int = 600
    end: int = 1200


@dataclass(frozen=True)
class CivicsSpec:
    constitution: str
    tax_rate: int  # percent
    influencers: tuple[str, ...]
    manager: str
    stances: tuple[tuple[str, str], ...]  # (side, text) for "anti" and "pro"
    timeline: Timeline
    persuasion_step: int = 5

    def stance(self, side: str) -> str:
        return dict(self.stances).get(side, "")


def civics(source: str, doc, lines: TomlLines, agents: list[Persona], problems: list[Problem]) -> CivicsSpec | None:
    """The file's [civics] checked against its agents and economy (None when it has none)."""
    c = doc.civics
    if c is None:
        return None
    line = lines.line_of
    if doc.economy is None:
        problems.append(Problem(source, line(("civics",)), "[civics] needs an [economy] (taxes go into its chest)"))
    names = {a.name for a in agents}
    if c.election_manager not in names:
        problems.append(Problem(source, line(("civics", "election_manager")),
                                f"election_manager {c.election_manager!r} is not an agent of this world"))
    seen: set[str] = set()
    for k, name in enumerate(c.influencers):
        where = line(("civics", "influencers", k))
        if name not in names:
            problems.append(Problem(source, where, f"influencer {name!r} is not an agent of this world"))
        elif name in seen:
            problems.append(Problem(source, where, f"influencer {name!r} is named twice"))
        elif name == c.election_manager:
            problems.append(Problem(source, where, f"{name!r} is the manager of the vote: it cannot be an influencer"))
        seen.add(name)
    t = c.timeline
    times = [getattr(t, p) for p in PHASES]
    if any(a >= b for a, b in zip(times, times[1:-1])) or times[-2] > times[-1]:
        problems.append(Problem(source, line(("civics", "timeline")),
                                "the timeline is out of order: feedback < amendments < vote < tally < in_force <= end "
                                f"(got {', '.join(f'{p} {v}' for p, v in zip(PHASES, times))})"))
    if t.window >= t.season_every:
        problems.append(Problem(source, line(("civics", "timeline", "window")),
                                f"a tax window ({t.window} s) must be shorter than a season ({t.season_every} s)"))
    return CivicsSpec(c.constitution.strip(), c.tax_rate, tuple(c.influencers), c.election_manager,
                      (("anti", c.stances.anti.strip()), ("pro", c.stances.pro.strip())),
                      Timeline(**t.model_dump()), c.persuasion_step)
