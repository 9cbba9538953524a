"""Scripted lines (the world file's [[lines]]): at a line's time, or as soon after as both are
awake, free and within sight of each other (within the hour), the speaker starts a conversation
whose lines from the speaker are the lines scripted for that moment, said as written, each
answered by the listener as in any talk. A line is done once the speaker has talked with the
listener since its time (the agents' own state, so a resumed run does not say it again)."""

from __future__ import annotations

from datetime import datetime, timedelta

from smalltown.mind import talk
from smalltown.sim.agent import Agent
from smalltown.world.model import ScriptedLine

WINDOW = timedelta(hours=1)  # a line not said within this after its time is dropped


def _free(agent: Agent) -> bool:
    return agent.action is not None and not agent.asleep and not agent.action.talking


def due(lines: list[ScriptedLine], by_name: dict[str, Agent], now: datetime, radius: int,
        busy: set[str]) -> list[tuple[Agent, Agent, list[tuple[str, str]]]]:
    """(speaker, listener, [(text, tone), ...]) of the talks the world file scripts now; none
    with an agent in `busy`. Lines of one speaker to one listener due together are one talk."""
    out: dict[tuple[str, str], list[ScriptedLine]] = {}
    for line in lines:
        if line.at > now:
            break  # (in time order)
        if now - line.at >= WINDOW:
            continue
        a, b = by_name[line.speaker], by_name[line.to]
        last = a.mind.state.last_chat.get(b.name)
        if last is not None and last >= line.at:
            continue  # said already
        if a.name in busy or b.name in busy or not (_free(a) and _free(b)):
            continue
        if max(abs(a.tile[0] - b.tile[0]), abs(a.tile[1] - b.tile[1])) > radius:
            continue  # not within sight yet
        out.setdefault((a.name, b.name), []).append(line)
    talks = []
    for (sa, sb), said in out.items():
        if sa in busy or sb in busy:
            continue
        busy.update((sa, sb))
        talks.append((by_name[sa], by_name[sb], [(x.text, x.tone) for x in said]))
    return talks


def script(conv: talk.Conversation, lines: list[tuple[str, str]]) -> None:
    """Make a conversation just begun (its opening the first scripted line) a scripted one: the
    rest of the speaker's lines to come, each answered once."""
    conv.tones[0] = lines[0][1]
    conv.script = list(lines[1:])
    conv.max_lines = 2 * len(lines)
    conv.going = True
