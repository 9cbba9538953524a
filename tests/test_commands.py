"""The user's commands as data (sim/commands.py): a Simulation applies them with no interface (a
headless run, a test), the TUI's runner takes the same ones (DESIGN.md: the engine, its systems,
the commands every front end uses; module sizes: tests/test_module_sizes.py)."""

from __future__ import annotations

from pathlib import Path

from helpers import tiny_sim
from smalltown.sim.commands import EditObject, Interview, Quit, Whisper


def test_a_simulation_applies_commands_without_an_interface(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, "07:10")
    try:
        tick = sim.tick
        address = next(a for a in sim.objects if a.endswith(":stove"))
        assert sim.apply(EditObject(address, "burning")) == (address, "burning")
        name = sim.agents[0].name
        thought = sim.apply(Whisper(name, "I should bake bread today"))
        answer, _retrieval = sim.apply(Interview(name, "What are you doing today?", "a neighbour"))
        assert sim.tick == tick  # commands happen between ticks: time does not move
        assert sim.save.objects()[address] == "burning"  # each is committed at once
        events = sim.save.events_since(tick - 1, ("object", "whispered", "interviewed"))[-3:]  # (at this tick)
        assert [(k, d.get("by")) for _, _, k, d in events] == [("object", "user"), ("whispered", None),
                                                                 ("interviewed", None)]
        assert events[1][3]["memory"] == thought.id and events[2][3]["answer"] == answer
    finally:
        sim.close()


def test_the_runner_takes_the_same_commands(tmp_path: Path) -> None:
    from smalltown.tui.runner import SimRunner

    sim = tiny_sim(tmp_path)
    try:
        runner = SimRunner(sim, lambda frame: None, paused=True)
        address = next(a for a in sim.objects if a.endswith(":stove"))
        replies: list[object] = []
        runner.send(EditObject(address, "smoking"), replies.append)
        runner.send(Quit())
        runner.run()  # (on this thread: it applies what is queued, then quits)
        assert replies == [(address, "smoking")]
        assert sim.save.objects()[address] == "smoking"
    finally:
        sim.close()
