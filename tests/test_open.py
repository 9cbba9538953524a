"""Opening a run is owned by sim/open.py (issue 13): a front end hands it a path and `RunOptions`
and gets the simulation and its stop time, or a typed error; the backend chosen by name (the
command line's registry, cli/backends.py), its embedder and fallback are made there for the run's
seed, and the writer lock and a copy to another save are taken there, not in the command line. The TUI
sends typed commands (sim/commands.py), never string tuples."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from helpers import ROOT, TINY
from smalltown.cli.backends import choose
from smalltown.sim.open import RunOptions, UntilError, open_run
from smalltown.sim.simulation import Simulation


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_a_run_opens_from_a_path_and_options_with_no_command_line(tmp_path: Path) -> None:
    save = tmp_path / "new.sqlite"
    sim, until = open_run(TINY, RunOptions(backend=choose("scripted"), save=save, until="+10m"))
    try:
        assert sim.save.path == save and sim.tick == 0 and (until - sim.now).total_seconds() == 600
        sim.run_until(until)
    finally:
        sim.close()
    copy = tmp_path / "copy.sqlite"  # a save continued in a copy: the original is left as it was
    sim, until = open_run(save, RunOptions(backend=choose("scripted"), save=copy))
    try:
        assert until is None and sim.save.path == copy and sim.tick == 60
    finally:
        sim.close()
    with pytest.raises(UntilError, match="before the save's time"):
        open_run(copy, RunOptions(backend=choose("scripted"), until="-1h"))


def test_the_command_line_leaves_opening_a_run_to_sim_open() -> None:
    """cli/run.py chooses no backend, takes no lock, copies and unpacks nothing itself."""
    leaks = _imports(ROOT / "smalltown" / "cli" / "run.py") & {
        "smalltown.sim.backends", "smalltown.store.save", "smalltown.world.pack", "smalltown.world.load",
        "smalltown.sim.check", "smalltown.config", "smalltown.cli.files"}
    assert not leaks, f"cli/run.py opens the run itself through {sorted(leaks)}"


def test_the_simulation_is_given_its_embedder() -> None:
    """The engine builds no embedder of its own: sim/open (or the caller) gives it one."""
    param = inspect.signature(Simulation.__init__).parameters["embedder"]
    assert param.default is inspect.Parameter.empty
    assert "HashEmbedder" not in (ROOT / "smalltown" / "sim" / "simulation.py").read_text()


def test_the_tui_sends_typed_commands() -> None:
    sends = [(p.name, m.group(0)) for p in (ROOT / "smalltown" / "tui").rglob("*.py")
             for m in re.finditer(r"\.send\(\s*[\"']\w+", p.read_text())]
    assert not sends, f"string commands sent by the TUI: {sends}"


def test_a_save_continued_in_place_is_checked_once(tmp_path: Path, monkeypatch) -> None:
    """The opener checks the save under its writer lock and hands `resume` the proof; opened any
    other way (no proof, or a proof for another file) the save is checked as it opens."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim import check
    from smalltown.sim.open import resume

    save = tmp_path / "s.sqlite"
    sim, until = open_run(TINY, RunOptions(backend=choose("scripted"), save=save, until="+10m"))
    sim.run_until(until)
    sim.close()
    checked = []
    problems = check.problems
    monkeypatch.setattr(check, "problems", lambda *a, **k: checked.append(a[0].path) or problems(*a, **k))
    sim, _ = open_run(save, RunOptions(backend=choose("scripted")))
    sim.close()
    assert checked == [save]
    checked.clear()
    resume(save, ScriptedBackend(0)).close()
    resume(save, ScriptedBackend(0), sound=check.Sound(tmp_path / "other.sqlite")).close()
    assert checked == [save, save]
