"""Hostile worlds and packs (tests/hostile/worlds.py) through every command that reads a world or
a pack: each is refused in bounded time, without a traceback, with a message naming the file (and
the line where the loader can), and nothing is written: not the original, not beside it, not the
save, pack or folder the command was asked to make."""

from __future__ import annotations

import importlib.util
import stat
import sys
from pathlib import Path

import pytest

from helpers import cli_within, file_sha

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "hostile" / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


worlds = _load("hostile_worlds", "worlds.py")
make = sys.modules.get("hostile_make") or _load("hostile_make", "make.py")
CASES = worlds.CASES
LIMIT_S = 10  # per command: a hang fails the test instead of stalling the suite


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile-worlds")
    worlds.make_all(out)
    return out


def _state(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder` (links not followed): kind, size and mtime; a write anywhere shows."""
    seen = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        seen[str(p.relative_to(folder))] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns)
    return seen


def _sha(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink():
        return None
    return file_sha(path)


def _cli(capsys, argv: list) -> tuple[int, str]:
    return cli_within(capsys, argv, LIMIT_S)


def test_the_corpus_holds_at_least_30_worlds_and_packs():
    theirs = [c for c in make.CASES if c.kind in ("world", "pack")]
    assert len(CASES) >= 15 and len(CASES) + len(theirs) >= 30
    names = [c.name for c in CASES + theirs]
    assert len(set(names)) == len(names)
    assert {c.kind for c in CASES} == {"world", "pack"}
    assert len({c.rule for c in CASES}) == len(CASES), "two cases test the same rule"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_hostile_world_or_pack_is_refused_by_every_command(case, corpus: Path, tmp_path: Path, capsys,
                                                             monkeypatch):
    import smalltown.tui.session

    def tui(*args, **kwargs):
        raise AssertionError("the TUI started on a hostile file")

    monkeypatch.setattr(smalltown.tui.session, "run_tui", tui)
    path = corpus / case.name
    before, sha = _state(corpus), _sha(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # where `run` would install a pack or write its save
    new = work / "new.sqlite"
    reads_it = [  # each reads the file as what it is: the case's own error is expected
        ("world", "check", path),
        ("run", path, "--headless", "--until", "+10m", "--backend", "scripted", "--save", new),
        ("run", path, "--backend", "scripted", "--save", new),  # the TUI: refused before it starts
    ]
    reads_it += [("world", "pack", path, "-o", work / "out.smalltown-world"),
                 ("eval", "ablate", path, "--until", "+10m", "--backend", "scripted", "--conditions", "full",
                  "--out", work / "ablate")] if case.kind == "world" else \
                [("world", "unpack", path, "--to", work / "to")]
    others = [("world", "unpack", path, "--to", work / "to")] if case.kind == "world" else \
             [("world", "pack", path, "-o", work / "out.smalltown-world"),
              ("eval", "ablate", path, "--until", "+10m", "--backend", "scripted", "--conditions", "full",
               "--out", work / "ablate")]
    for argv in reads_it + others:
        rc, out = _cli(capsys, argv)
        said = f"smalltown {' '.join(map(str, argv))} -> {rc}\n{out}"
        assert rc != 0, said
        assert "Traceback" not in out, said
        if argv in reads_it:
            assert case.expect in out, f"expected {case.expect!r}: {said}"
            assert (case.names or case.name.rsplit("/", 1)[-1]) in out, f"the message names no file: {said}"
        else:
            assert case.name.rsplit("/", 1)[-1] in out, f"the message does not name the file: {said}"
        assert list(work.iterdir()) == [], f"something was written: {sorted(work.rglob('*'))}\n{said}"
    assert _sha(path) == sha and _state(corpus) == before, "the corpus was changed"
