"""The command line's exit codes (docs/cli.md), held by every command: 0 ok, 1 failed, 2 a usage
error or input refused (a missing or bad file, a misspelt name, a backend without what it needs),
130 stopped by Ctrl-C, 143 stopped by SIGTERM; the TUI's Ctrl-C and SIGTERM too. For each command
an ok case, a usage case and a refused-input case, run through `main` in this process (what a
subprocess would add is the interpreter); the signals are sent to real processes."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dripserver import DripServer
from helpers import ROOT, TINY, cli

SCRIPTED = ("--backend", "scripted")
AGENT = "Isabella Rodriguez"
STOVE = "Willow Cottage:kitchen:stove"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """A scripted save an hour into the tiny town, a pack of the tiny world, a file that is no
    save nor world, and a world with a problem."""
    d = tmp_path_factory.mktemp("codes")
    save = d / "town.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "-o", save, *SCRIPTED, check=True)
    cli("world", "pack", TINY, "-o", d / "tiny.smalltown-world", check=True)
    (d / "junk.sqlite").write_text("not a save\n")
    bad = d / "bad.toml"
    bad.write_text(TINY.read_text().replace('map = "../maps/tiny.toml"', f'map = "{ROOT / "maps" / "tiny.toml"}"')
                   .replace("seed = 1", "sead = 1", 1))
    return {"save": str(save), "pack": str(d / "tiny.smalltown-world"), "junk": str(d / "junk.sqlite"),
            "bad": str(bad), "world": str(TINY), "dir": str(d)}


# (command, argv, exit code): {save} is a copy of the scripted save (each case its own), {out} a
# fresh path in the case's own folder, the others as `files` names them.
CASES = [
    ("run", "run --headless {world} --until +10m -o {out}.sqlite --backend scripted", 0),
    ("run", "run --headless {world} --until +10m --save {out}.sqlite --backend scripted", 0),  # old spelling
    ("run", "run --headless {world} --until +10m --no-such-flag", 2),
    ("run", "run --headless {world}", 2),  # --headless without --until
    ("run", "run --headless {dir}/nowhere.toml --until +10m", 2),
    ("run", "run --headless {junk} --until +10m", 2),
    ("run", "run --headless {world} --until +10m --backend openai", 2),  # no --base-url
    ("run", "run --headless {world} --until +10m --backend llama --model {dir}/missing.gguf", 2),
    ("run", "run --headless {world} --until +10m -o {dir}/no/such/folder/s.sqlite --backend scripted", 2),
    ("world check", "world check {world}", 0),
    ("world check", "world check", 2),
    ("world check", "world check {dir}/nowhere.toml", 2),
    ("world check", "world check {bad}", 1),  # the check ran and the world fails it
    ("world pack", "world pack {world} -o {out}.smalltown-world", 0),
    ("world pack", "world pack {world} --output {out}.smalltown-world", 0),  # old spelling
    ("world pack", "world pack {world} -o", 2),
    ("world pack", "world pack {world} -o {pack}", 2),  # a file is there
    ("world unpack", "world unpack {pack} -o {out}", 0),
    ("world unpack", "world unpack {pack} --to {out}", 0),  # old spelling
    ("world unpack", "world unpack", 2),
    ("world unpack", "world unpack {junk} -o {out}", 2),
    ("world generate", "world generate -o {out}.toml --agents 2", 0),
    ("world generate", "world generate --agents 2", 2),  # no -o
    ("world generate", "world generate -o {out}.txt", 2),
    ("save info", "save info {save}", 0),
    ("save info", "save info", 2),
    ("save info", "save info {junk}", 2),
    ("save check", "save check {save}", 0),
    ("save check", "save check {save} --bogus", 2),
    ("save check", "save check {dir}/nowhere.sqlite", 2),
    ("save check", "save check {junk}", 1),  # the check ran and the file fails it
    ("save strip", "save strip {save} -o {out}.sqlite", 0),
    ("save strip", "save strip {save} --output {out}.sqlite", 0),  # old spelling
    ("save strip", "save strip {save}", 2),
    ("save strip", "save strip {save} -o {save}", 2),
    ("inspect", "inspect {save} Isabella --json", 0),
    ("inspect", "inspect {save}", 2),
    ("inspect", "inspect {save} Isabela", 2),  # did you mean
    ("whisper", "whisper {save} Isabella 'a party on Friday' --backend scripted", 0),
    ("whisper", "whisper {save} Isabella", 2),
    ("whisper", "whisper {dir}/nowhere.sqlite Isabella hello --backend scripted", 2),
    ("interview", "interview {save} Isabella 'How are you?' --backend scripted --json", 0),
    ("interview", "interview {save} Isabella 'How are you?' --as", 2),
    ("interview", "interview {save} Isabella 'How are you?' --backend openai", 2),  # no --base-url
    ("edit-object", f"edit-object {{save}} '{STOVE}' burning", 0),
    ("edit-object", f"edit-object {{save}} '{STOVE}'", 2),
    ("edit-object", "edit-object {save} 'Willow Cottage:kitchen:stoev' burning", 2),
    ("models", "models", 0),
    ("models", "models --bogus", 2),
    ("models", "models pull no-such-model", 2),
    ("eval interview", f"eval interview {{save}} --agents Isabella --backend scripted --json", 0),
    ("eval interview", "eval interview", 2),
    ("eval interview", "eval interview {dir}/nowhere.sqlite --backend scripted", 2),
    ("eval town", "eval town {save} --backend scripted --json", 0),
    ("eval town", "eval town {save} --ask=yes", 2),
    ("eval town", "eval town {save} --copy {save} --backend scripted", 2),
    ("eval ablate", "eval ablate {world} --until +10m --conditions full -o {out} --backend scripted --json", 0),
    ("eval ablate", "eval ablate {world} -o {out}", 2),  # no --until
    ("eval ablate", "eval ablate {world} --until +10m --conditions nope -o {out} --backend scripted", 2),
    ("eval social", "eval social {save} --backend scripted --json", 0),
    ("eval social", "eval social", 2),
    ("eval social", "eval social {save} {save} {save} --backend scripted", 2),  # at most two
    ("eval matrix", "eval matrix {world} --condition a= --seeds 1 --until +10m --jobs 1 -o {out} --backend scripted", 0),
    ("eval matrix", "eval matrix {world} --seeds 1 --until +10m -o {out}", 2),  # no --condition
    ("eval matrix", "eval matrix {world} --condition 'a b=' --seeds 1 --until +10m -o {out} --backend scripted", 2),
    ("eval civics", "eval civics --roles {save} --json", 0),
    ("eval civics", "eval civics {save}", 2),  # a save of a world without civics: nothing to measure
    ("eval civics", "eval civics", 2),
    ("eval civics", "eval civics {dir}/nowhere.sqlite", 2),
    ("eval culture", "eval culture {save} --json", 0),  # a world of one town, no doctrine: all rural
    ("eval culture", "eval culture", 2),
    ("eval culture", "eval culture {dir}/nowhere.sqlite", 2),
    ("fork", "fork {save} -o {out}.sqlite --json", 0),
    ("fork", "fork {save} --to {out}.sqlite", 0),  # old spelling
    ("fork", "fork {save}", 2),
    ("fork", "fork {save} -o {dir}/no/such/folder/f.sqlite", 2),
    ("fork", "fork {save} --at 'day 9 25:00' -o {out}.sqlite", 2),
    ("saves", "saves --json", 0),
    ("saves", "saves {save}", 2),  # it takes no file: a usage error
    ("replay", "replay", 2),
    ("replay", "replay {dir}/nowhere.sqlite", 2),
    ("replay", "replay {save} --at 'day 9 9:00'", 2),
    ("why", "why {save} Isabella --json", 0),
    ("why", "why {save}", 2),
    ("why", "why {save} Isabela", 2),
    ("why", "why {save} Isabella --at 'day 9 9:00'", 2),
    ("calls", "calls {save} --json -n 0", 0),
    ("calls", "calls {save} -n many", 2),
    ("calls", "calls {save} --task no_such_task", 2),
    ("calls", "calls {junk}", 2),
]


@pytest.mark.parametrize("command, argv, code", CASES, ids=[f"{c[0]}: {c[1]}" for c in CASES])
def test_each_command_exits_with_its_documented_code(files, tmp_path, command, argv, code, monkeypatch):
    import shlex

    monkeypatch.chdir(tmp_path)  # (a pack unpacks, a report is written, here by default)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # (eval matrix's runs: `python -m smalltown` from here)
    save = tmp_path / "save.sqlite"
    shutil.copy(files["save"], save)
    args = [a.format(**{**files, "save": save, "out": tmp_path / "out"}) for a in shlex.split(argv)]
    assert args[:len(command.split())] == command.split()
    proc = cli(*args)
    assert proc.returncode == code, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    if code == 2:
        assert "error" in proc.stderr.lower() or "problem" in proc.stderr, proc.stderr  # it says what is wrong


def test_every_command_has_its_cases():
    """The table covers every command of the command line: a new command needs its rows."""
    import click

    from smalltown.cli.main import cli as group  # (every command registered)

    def leaves(g: click.Group, prefix: str = "") -> list[str]:
        out = []
        for name, c in g.commands.items():
            out += leaves(c, f"{prefix}{name} ") if isinstance(c, click.Group) else [f"{prefix}{name}"]
        return out

    covered = {c[0] for c in CASES} | {"replay"}  # replay's ok case runs in a terminal, below
    commands = set(leaves(group)) - {"models pull"} | {"models"}  # (pull's refusal is the models row)
    assert commands <= covered, commands - covered
    for command in covered - {"saves"}:  # saves reads no input of the user's: nothing to refuse
        codes = {c[2] for c in CASES if c[0] == command}
        assert 2 in codes and (0 in codes or command == "replay"), command


# --- signals: real processes ----------------------------------------------------------------------


def _smalltown(*args: object, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "smalltown", *map(str, args)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_headless_run_stopped_by_a_signal_exits_128_plus_it(files, tmp_path, sig, code):
    save = tmp_path / "run.sqlite"
    shutil.copy(files["save"], save)
    with DripServer(0.5) as server:  # a question that takes a minute: the run is mid-answer when stopped
        proc = _smalltown("run", "--headless", save, "--until", "+1h", "--backend", "openai", "--base-url",
                          server.url, "--timeout", "60")
        deadline = time.monotonic() + 30
        while not server.posts() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.posts(), proc.stderr.read() if proc.poll() is not None else "no question asked"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    assert "Traceback" not in err


def _in_terminal(argv: list[str], keys: bytes = b"", sig: int | None = None) -> tuple[int, str]:
    """`smalltown ARGV` in a pseudo-terminal: wait for the TUI to draw, then type `keys` or send
    `sig`; its exit code and what it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI, on the terminal
        os.environ.update(TERM="xterm-256color", PYTHONPATH=str(ROOT))
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "smalltown", *argv])
    out = b""
    t0 = last = time.monotonic()
    while time.monotonic() - t0 < 60:  # until the screen is drawn and quiet for a second
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
            last = time.monotonic()
        elif b"\x1b[?1049h" in out and time.monotonic() - last > 1.0:
            break
    if keys:
        os.write(fd, keys)
    if sig is not None:
        os.kill(pid, sig)
    deadline = time.monotonic() + 30
    while True:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                out += os.read(fd, 65536)
            except OSError:
                pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            os.close(fd)
            return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("keys, sig, code", [(b"q", None, 0), (b"\x03", None, 130), (b"", signal.SIGTERM, 143)],
                         ids=["q", "ctrl-c", "sigterm"])
def test_the_tui_exits_with_the_documented_code(files, tmp_path, keys, sig, code):
    save = tmp_path / "tui.sqlite"
    shutil.copy(files["save"], save)
    rc, out = _in_terminal(["run", str(save), "--backend", "scripted"], keys, sig)
    assert rc == code, out[-2000:]
    assert "Traceback" not in out and f"saved in {save}" in out


def test_replay_in_a_terminal_exits_0_on_q(files):
    rc, out = _in_terminal(["replay", files["save"]], b"q")
    assert rc == 0 and "Traceback" not in out, out[-2000:]
