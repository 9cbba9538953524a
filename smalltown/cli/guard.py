"""A command that loads a llama.cpp model runs as a supervised child process, so that a fault
inside llama.cpp (a segmentation fault kills the process; no Python handler runs) never ends it
silently: the parent sees the child die by a signal, puts the terminal back as it was (the TUI may
have died mid-frame), and says what happened, where the save stands and what to try.

The child is the same command (same argv, same terminal, same package), marked by FAULT_FILE in
its environment: it writes Python's `faulthandler` stack there, from which the parent tells a
fault inside llama.cpp (its Python frames are `llama_cpp`'s) and shows the last frames.

Signals: a Ctrl-C or a terminal hang-up reaches the child from the terminal itself (the whole
foreground process group gets it), so the parent does not pass those on again; a signal sent to
the parent alone (`kill PID`) is forwarded. The child's exit code is passed through, and 128 +
the signal when it died by one (130 for SIGINT, 143 for SIGTERM, 139 for SIGSEGV)."""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

FAULT_FILE = "SMALLTOWN_FAULT_FILE"  # in the child's environment: where its faulthandler writes
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # a stop asked for, not a fault
SI_KERNEL = 0x80  # siginfo's si_code for a signal the kernel sent (the terminal's Ctrl-C, hang-up)
PR_SET_PDEATHSIG = 1
# the TUI's terminal modes, undone: leave the alternate screen, show the cursor, stop mouse
# tracking (each mode Textual turns on) and bracketed paste
RESET_TERMINAL = "\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[0m"
TRIES = ("--repack off: keep llama.cpp off its repacked-weight CPU kernels (AMX among them)",
         "a smaller context window: --ctx 2048",
         "the model in a process of its own: `python -m llama_cpp.server --model PATH.gguf` and "
         "--backend openai --base-url http://127.0.0.1:8000/v1")
_fault_file = None  # the child's open faulthandler file (kept open for the process's life)


# --- in the child -------------------------------------------------------------------------------


def in_child() -> bool:
    return bool(os.environ.get(FAULT_FILE))


def arm() -> None:
    """In the child: write the Python stack of every thread to the parent's file on a fault.
    The mark is taken out of the environment: a process this one starts is not the child."""
    global _fault_file
    path = os.environ.pop(FAULT_FILE)
    _fault_file = open(path, "w")  # noqa: SIM115 - open until the process ends
    faulthandler.enable(_fault_file, all_threads=True)


# --- in the parent ------------------------------------------------------------------------------


def loads_llama(args: argparse.Namespace) -> bool:
    """Whether the command will load a llama.cpp model: its backend (chosen as the command will
    choose it), a cassette's live fallthrough, or a sentence-embedding model."""
    if not hasattr(args, "backend") or os.name != "posix":
        return False
    from smalltown.cli.common import backend_choice

    try:
        choice = backend_choice(args)
    except Exception:  # noqa: BLE001 - a mistake in the options: the command itself reports it
        return False
    return choice.name == "llama" or choice.opts.fallthrough == "llama" or bool(choice.opts.embed_model)


def smalltown_command(argv: list[str]) -> list[str]:
    """`smalltown ARGV` in a new interpreter, from this very package (not one the cwd may hold)."""
    import smalltown

    root = str(Path(smalltown.__file__).resolve().parent.parent)
    code = f"import sys; sys.path.insert(0, {root!r}); from smalltown.cli.main import main; sys.exit(main())"
    return [sys.executable, "-c", code, *argv]


def supervise(args: argparse.Namespace, command: list[str]) -> int:
    """Run the child `command` (the command `args` were parsed from: smalltown_command) and wait
    for it; its exit code, or 128 + the signal it died by, after saying what happened."""
    fd, fault_path = tempfile.mkstemp(prefix="smalltown-fault-", suffix=".txt")
    os.close(fd)
    saves_before = _saves_now()
    try:
        rc, forwarded = run_child(command, {**os.environ, FAULT_FILE: fault_path})
        if rc >= 0:
            return rc
        sig = -rc
        restore_terminal()  # it died mid-frame, or with the terminal in raw mode: whatever killed it
        if sig in STOPS or sig in forwarded:
            return 128 + sig
        stack = Path(fault_path).read_text(errors="replace") if Path(fault_path).exists() else ""
        print(report(sig, stack, save_of(args, saves_before), args), file=sys.stderr)
        return 128 + sig
    finally:
        with contextlib.suppress(OSError):
            os.unlink(fault_path)


_terminal: tuple[int, list] | None = None  # stdin's termios attributes, as they were before the child


def run_child(command: list[str], env: dict[str, str]) -> tuple[int, set[int]]:
    """Start the child and wait for it, passing on the signals sent to this process alone; its
    return code (negative: the signal it died by) and the signals forwarded to it."""
    global _terminal
    import termios

    with contextlib.suppress(OSError, termios.error):
        if os.isatty(0):
            _terminal = (0, termios.tcgetattr(0))
    watched = {*FORWARDED, signal.SIGCHLD}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, watched)  # taken by sigwaitinfo below, never lost

    import ctypes

    libc = ctypes.CDLL(None)  # (loaded here: nothing is imported between fork and exec)

    def in_child() -> None:  # (between fork and exec) the child gets signals as usual, and a stop
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # when this process goes without one
        with contextlib.suppress(Exception):
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))

    forwarded: set[int] = set()
    try:
        child = subprocess.Popen(command, env=env, preexec_fn=in_child)
        while child.poll() is None:
            info = signal.sigtimedwait(watched, 1.0)
            if info is None or info.si_signo == signal.SIGCHLD:
                continue
            if info.si_code != SI_KERNEL:  # sent to this process alone: the child has not had it
                forwarded.add(info.si_signo)
                with contextlib.suppress(ProcessLookupError):
                    child.send_signal(info.si_signo)
        return child.returncode, forwarded
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def restore_terminal() -> None:
    """The terminal as it was before the child: its modes, and the screen the TUI may have left."""
    if _terminal is not None:
        import termios

        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(_terminal[0], termios.TCSANOW, _terminal[1])
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            if stream.isatty():
                stream.write(RESET_TERMINAL)
                stream.flush()
                return


# --- what is said -------------------------------------------------------------------------------


FRAME = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+) in (?P<func>.+)$')


def frames(stack: str) -> tuple[list[tuple[str, str, str]], bool]:
    """The faulting thread's Python frames in a faulthandler dump (most recent first), and whether
    it was inside llama.cpp (a frame of llama-cpp-python's on the faulting thread)."""
    blocks = re.split(r"\n(?=(?:Current thread|Thread) 0x)", stack)
    current = next((b for b in blocks if "Current thread" in b), stack)
    found = [(m["file"], m["line"], m["func"]) for line in current.splitlines() if (m := FRAME.match(line))]
    return found, any(f"{os.sep}llama_cpp{os.sep}" in file for file, _, _ in found)


def short(file: str) -> str:
    """A frame's file from its package down (site-packages/… and the checkout's folders dropped)."""
    parts = Path(file).parts
    for name in ("llama_cpp", "smalltown", "textual"):
        if name in parts:
            return str(Path(*parts[len(parts) - 1 - parts[::-1].index(name):]))
    return file


def signal_name(sig: int) -> str:
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
    return f"{signal.strsignal(sig) or name} ({name})"


def report(sig: int, stack: str, save: Path | None, args: argparse.Namespace) -> str:
    """What the user is told when the child died by a signal it was not asked to stop by."""
    found, in_llama = frames(stack)
    where = " inside llama.cpp (the library running the model)" if in_llama else ""
    lines = [f"error: smalltown {args.command} ended abruptly: {signal_name(sig)}{where}"]
    if sig == signal.SIGKILL:
        lines.append("  killed from outside: by the system when it runs out of memory, most often")
    if found:
        lines.append("  last Python frames (most recent first):")
        lines += [f"    {short(file)}:{line} in {func}" for file, line, func in found[:6]]
    lines += save_lines(save, args)
    lines.append("  what to try:")
    lines += [f"    {t}" for t in TRIES]
    return "\n".join(lines)


def save_lines(save: Path | None, args: argparse.Namespace) -> list[str]:
    from smalltown.shown import shown

    if save is None:
        if args.command == "run":
            return ["  no save was written (the fault came before it was made)"]
        return ["  a save stays at its last whole tick (each tick is written whole or not at all)"]
    from smalltown.cli.run import how_to_go_on
    from smalltown.state.saved import saved_at

    try:
        tick, now, _ = saved_at(save)
    except Exception as e:  # noqa: BLE001 - (a save being created: smalltown run makes it again)
        return [shown(f"  the save {save} is not whole yet ({e}); running it again makes it again"),
                *(f"  {shown(line)}" for line in how_to_go_on(save)[:1])]
    go_on = [f"  {shown(line)}" for line in how_to_go_on(save)]
    if args.command == "run" and getattr(args, "headless", False):  # (a relative --until counts from the save)
        until = args.until if args.until and not args.until.startswith(("+", "-")) else "WHEN"
        go_on[0] += f" --headless --until {shlex.quote(until)}"
    return [shown(f"  the save is safe at its last whole tick: {save} at {now:%Y-%m-%d %H:%M:%S} (tick {tick})"),
            *go_on]


def _saves_now() -> set[Path]:
    """The saves folder's files before the child starts (a new run's save is the one added)."""
    from smalltown.dirs import saves_dir

    with contextlib.suppress(OSError):
        return set(saves_dir().glob("*.sqlite"))
    return set()


def save_of(args: argparse.Namespace, before: set[Path]) -> Path | None:
    """The save the command was writing: named (--out, a save continued, whisper's), or the
    one a new run added to the saves folder."""
    if args.command != "run":
        path = getattr(args, "save", None)
        return Path(path) if path and Path(path).exists() else None
    if args.save:
        return Path(args.save) if Path(args.save).exists() else None
    from smalltown.store.checks import is_save

    if args.target and is_save(args.target):
        return Path(args.target)
    from smalltown.world.bundled import default_world

    stem = Path(args.target).stem if args.target else default_world().stem  # (sim/open.py's default_save)
    added = [p for p in _saves_now() - before if p.name.startswith(f"{stem}-")]
    return max(added, key=lambda p: p.stat().st_mtime) if added else None
