"""The stand-in speaking a doctrine's words (mind/belief.py), from the talk question's typed inputs
only (`Utterance.faiths`): a doctrine's keywords are world data, chosen here by level, never read
from anything the mind wrote.

A priest or believer brings its faith up on its first line of a conversation asked of it (the
initiator's second: its first is the opening it decided to talk with), at a seeded chance:
- a priest, or a believer at the top level, in the top level's words: P_PREACH when the listener
  is not known to hold that level, P_AGAIN when it is;
- a believer at a lower level, in its own level's words (or, at P_ECHO_TOP, a higher level's it
  has heard): P_BELIEVER;
- one not converted who has heard the doctrine (before, or earlier in this talk): on any line,
  P_EXPOSED a line heard (at most P_EXPOSED_MAX), in the words of level 1, or at P_ECHO_TOP in
  those of the highest level heard.
So hearing a doctrine makes a listener likelier to use its words later, and using them is what
converts (mind/belief.py): conversion is a mechanism here, not a tuned result."""

from __future__ import annotations

from smalltown.llm.tasks import Utterance
from smalltown.llm.tasks.belief import Faith
from smalltown.scripted.words import pick
from smalltown.seeded import stable_int

P_PREACH = 0.7
P_AGAIN = 0.2
P_BELIEVER = 0.35
P_EXPOSED = 0.15
P_EXPOSED_MAX = 0.5
P_ECHO_TOP = 0.25


def _draw(seed: int, *key: object) -> float:
    return stable_int(seed, "faith", *key) / 2.0 ** 64


def _level(seed: int, f: Faith, key: tuple) -> tuple[int, float]:
    """(the level whose words the speaker would use, the chance it brings them up)."""
    top = len(f.levels)
    if f.priest or (f.level and f.level >= top):
        return top, (P_PREACH if f.listener_level < top else P_AGAIN)
    if f.level:  # (one who has heard a higher level's words takes them up at P_ECHO_TOP)
        up = f.heard_level if f.heard_level > f.level and _draw(seed, *key, "echo") < P_ECHO_TOP else f.level
        return up, P_BELIEVER
    if f.heard_level:
        echo = f.heard_level if _draw(seed, *key, "echo") < P_ECHO_TOP else 1
        return echo, min(P_EXPOSED_MAX, P_EXPOSED * f.exposures)
    return 0, 0.0


def faith_line(seed: int, task: Utterance) -> str:
    """The speaker's words of faith on its first line of the talk ("" most of the time)."""
    me = task.persona.name
    first = sum(x.speaker == me for x in task.transcript) == (1 if me == task.initiator else 0)
    for f in task.faiths:
        key = (me, task.listener, task.now.isoformat(), f.doctrine)
        if f.level == 0:  # (the exposed: any line, each its own draw)
            key = (*key, len(task.transcript))
        elif not first:
            continue
        level, chance = _level(seed, f, key)
        if not level or not f.levels[level - 1] or _draw(seed, *key, "bring") >= chance:
            continue
        word = pick(seed, tuple(f.levels[level - 1]), *key, "word")
        if f.priest or level == len(f.levels):
            return pick(seed, (f"Have you heard of the {word}? It has changed my life.",
                               f"I'd love to tell you about the {word}.",
                               f"You should join us, we gather for the {word}.",
                               f"The {word} welcomes everyone, you know."), *key, "preach")
        return pick(seed, (f"I keep hearing about {word} lately.", f"Someone told me about {word}, it stuck with me.",
                           f"Do you know much about {word}?", f"I've been thinking about {word}."), *key, "echo")
    return ""
