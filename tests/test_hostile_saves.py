"""A stranger's save is data: every hostile save of the corpus (tests/hostile/saves.py) through every
command that reads a save. Each refuses it with a message naming what is wrong (or, where the
command does not read what is broken, does its job), never a traceback, a hang, or the last-resort
"this is a bug" line; the file itself is never written to."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from helpers import cli_within, file_sha, refused_code
from smalltown.cli.execute import BUG

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("hostile_saves", ROOT / "tests" / "hostile" / "saves.py")
corpus_module = importlib.util.module_from_spec(_spec)
sys.modules["hostile_saves"] = corpus_module  # dataclasses look their module up
_spec.loader.exec_module(corpus_module)
CASES = corpus_module.CASES
WORLD = ROOT / "tests" / "worlds_bad" / "ok_base.toml"
LIMIT = 20  # seconds one command may take on one case: a hang fails the test instead of blocking it


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-saves")
    corpus_module.make_all(out)
    return out



def _cli(capsys, argv: list) -> tuple[int, str]:
    return cli_within(capsys, argv, LIMIT)


def commands(path: Path, work: Path) -> list[tuple[tuple[str, ...], list]]:
    """(the levels of case it refuses, argv) of every command that reads a save."""
    new = work / "new.sqlite"
    scripted = ("--backend", "scripted")
    everything, world = ("open", "world", "snapshots"), ("open", "world")  # (writers need the snapshots)
    return [
        (everything, ["save", "check", path]),
        (("open",), ["save", "info", path]),
        (("open",), ["save", "strip", path, "-o", work / "stripped.sqlite"]),
        (everything, ["run", path, "--headless", "--until", "+1m", *scripted]),
        (everything, ["run", path, "--headless", "--until", "+1m", *scripted, "--save", new]),
        (world, ["inspect", path, "John"]),
        (everything, ["whisper", path, "John", "be kind", *scripted]),
        (everything, ["interview", path, "John", "How are you?", *scripted]),
        (everything, ["edit-object", path, "Lin house:kitchen:stove", "warm"]),
        (everything, ["fork", path, "--to", work / "fork.sqlite"]),
        (everything, ["replay", path]),
        (world, ["eval", "town", path, *scripted]),
        (("open",), ["run", WORLD, "--headless", "--until", "+1m", "--from", path, "--save", work / "cassette.sqlite"]),
    ]


def test_the_corpus_is_large_and_every_case_is_its_own():
    assert len(CASES) >= 60
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.level for c in CASES} == {"open", "world", "snapshots"}


def test_the_memory_kinds_a_save_may_hold_are_the_minds():
    from smalltown.mind.memory import KINDS
    from smalltown.store.validate import MEMORY_KINDS

    assert MEMORY_KINDS == KINDS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_hostile_save_is_refused_by_every_command_that_reads_it(case, corpus: Path, tmp_path: Path, capsys,
                                                                   monkeypatch):
    import smalltown.tui.replay

    def no_screen(*a, **k):  # a replay that was not refused would open its screen here
        raise AssertionError("replay started its screen")

    monkeypatch.setattr(smalltown.tui.replay, "run_replay", no_screen)
    path = corpus / f"{case.name}.sqlite"
    before = file_sha(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for refuses, argv in commands(path, work):
        rc, out = _cli(capsys, argv)
        said = f"smalltown {' '.join(map(str, argv))} -> {rc}\n{out}"
        assert "Traceback" not in out and BUG not in out, said
        if case.level in refuses:
            assert rc == refused_code(argv), said
            assert case.expect in out, f"expected {case.expect!r}: {said}"
        else:
            assert rc in (0, 1, 2), said  # it does not read what is broken: it may do its job
        assert file_sha(path) == before, f"{said}\nthe save was changed"
        for suffix in ("-wal", "-shm", "-journal"):
            assert not Path(f"{path}{suffix}").exists(), f"{said}\n{suffix} left beside the save"


def test_an_unexpected_exception_is_one_line_naming_the_command_and_the_file(tmp_path: Path, capsys, monkeypatch):
    import smalltown.cli.main as cli

    def boom(path, as_json):
        raise KeyError("boom")

    monkeypatch.setattr(cli, "save_info", boom)
    rc, out = _cli(capsys, ["save", "info", tmp_path / "x.sqlite"])
    assert rc == 70 and "Traceback" not in out
    assert out.strip().splitlines() == [f"error: smalltown save info on {tmp_path / 'x.sqlite'} failed: "
                                        f"KeyError: 'boom' ({BUG})"]
