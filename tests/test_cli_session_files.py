"""The command line's ends of a session (issue 14): `fork --to` into a missing folder is refused
as `run --save` is, nothing made; a headless run's summary ends with the same commands to continue
and replay the save as the TUI's quit message."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import TINY, cli
from smalltown.cli.run import say_where

SCRIPTED = ("--backend", "scripted")


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A tiny save, in a folder whose name needs quoting in a shell."""
    save = tmp_path_factory.mktemp("runs") / "my run.sqlite"
    cli("run", TINY, "--headless", "--until", "6:20", "--save", save, *SCRIPTED, check=True)
    return save


def test_fork_to_a_missing_folder_is_refused_and_nothing_is_made(tmp_path, saved):
    missing = tmp_path / "no" / "such"
    proc = cli("fork", saved, "--to", missing / "fork.sqlite")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --out: ") and f"the folder {missing} does not exist" in proc.stderr
    assert not (tmp_path / "no").exists()
    assert cli("fork", saved, "--to", tmp_path / "fork.sqlite").returncode == 0  # (the same, into a folder there)


def test_the_headless_summary_says_how_to_continue_and_replay_as_the_tui_quit_does(tmp_path, saved, capsys):
    proc = cli("run", saved, "--headless", "--until", "+10m", *SCRIPTED, check=True)
    say_where(saved)  # what the TUI says when it ends on this save
    quit_lines = capsys.readouterr().err.splitlines()[-2:]
    quoted = f"'{saved}'"
    assert quit_lines == [f"continue it: smalltown run {quoted}", f"replay it:   smalltown replay {quoted}"]
    assert proc.stderr.splitlines()[-2:] == quit_lines
