"""Every command's help says what it does, explains its positionals, shows an example, points at
nothing outside the repository, and docs/cli.md documents every command and option; the old
spellings of the output flag still work but are not shown."""

from __future__ import annotations

import re

import click
import pytest

from helpers import ROOT, cli
from smalltown.cli.main import cli as group

DOC = (ROOT / "docs" / "cli.md").read_text()
OUTSIDE = re.compile(r"\.\./shared|SPEC|DESIGN|[Ii]ssue \d+|#\d+")


def commands(c: click.Command = group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out = [(path, c)]
    if isinstance(c, click.Group):
        for name, sub in c.commands.items():
            out += commands(sub, path + (name,))
    return out


ALL = commands()


@pytest.mark.parametrize("path, command", ALL, ids=[" ".join(p) or "smalltown" for p, _ in ALL])
def test_each_help_describes_explains_and_shows_an_example(path, command):
    proc = cli(*path, "--help")
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout
    assert command.help and len(command.help.split()) >= 8  # a description, not a bare name
    assert "Example" in shown
    assert not OUTSIDE.search(shown), OUTSIDE.search(shown)
    for p in command.params:
        if isinstance(p, click.Argument):  # each positional is explained in the text
            name = p.human_readable_name.strip("[].")
            assert re.search(rf"^\s*{re.escape(name)}\.*\s\s", shown, re.M), (name, shown)


@pytest.mark.parametrize("path, command", [(p, c) for p, c in ALL if p],
                         ids=[" ".join(p) for p, _ in ALL if p])
def test_docs_cli_md_has_every_command_and_option(path, command):
    assert f"`smalltown {' '.join(path)}`" in DOC
    for p in command.params:
        if isinstance(p, click.Option) and not p.hidden:
            shown = [o for o in p.opts if o not in getattr(p, "aliases", ())]
            assert any(f"`{o}" in DOC or f" {o}" in DOC for o in shown), (path, shown)


def test_old_output_spellings_work_but_are_not_shown():
    for path, old in [(("run",), "--save"), (("fork",), "--to"), (("world", "pack"), "--output"),
                      (("save", "strip"), "--output"), (("world", "unpack"), "--to")]:
        shown = cli(*path, "--help").stdout
        assert "-o, --out" in shown and old not in shown.split("Options:")[1], (path, old)
        assert old in DOC  # (documented as kept)


@pytest.mark.parametrize("argv", [(), ("world",), ("save",), ("eval",)], ids=["smalltown", "world", "save", "eval"])
def test_a_group_alone_shows_its_help_as_a_usage_error(argv):
    proc = cli(*argv)
    assert proc.returncode == 2 and proc.stderr.startswith("Usage: smalltown") and "Commands:" in proc.stderr
    assert "␊" not in proc.stderr  # (its own text, its lines kept)


def test_a_mistyped_command_says_which_it_probably_meant():
    proc = cli("rn")
    assert proc.returncode == 2 and "No such command 'rn'. Did you mean 'run'?" in proc.stderr
