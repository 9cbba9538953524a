"""One writer per save: an exclusive lock on a file beside it (`town.sqlite.lock`).

Two processes writing one save interleave their ticks (the second allocates memory ids the first
already used). Every command that writes a save (run, whisper, interview, edit-object, the TUI,
and anything building a new save at a path) holds this lock while it has the save open; readers
(inspect, save info, save check, replay, eval's copy) never take it and keep working.

The lock is `flock` on the lock file, so it dies with its process: a killed run never leaves a
save locked. The file holds the holder's pid and command line, so a refused writer can say who
holds it. The holder removes the file when it lets go; a taker that opened the file just before
it was removed checks that what it locked is still the file at that name, and tries again if not.
Within one process the lock is re-entrant (the process already is the one writer).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # not a POSIX system: no flock, and no lock (one writer is then up to the user)
    fcntl = None

LOCK_SUFFIX = ".lock"
HOLDER_MAX_BYTES = 1000  # what is read of another holder's note


class SaveBusy(Exception):
    """Another process holds the save's writer lock; `holder` says who ("pid 12 (smalltown run …)")."""

    def __init__(self, holder: str):
        super().__init__(holder)
        self.holder = holder


def lock_file(save: str | Path) -> Path:
    """The lock file of a save (the save need not exist yet: a new save is locked while it is made)."""
    real = Path(save).resolve()
    return real.with_name(real.name + LOCK_SUFFIX)


def command_line() -> str:
    """This process's command, as a user would have typed it."""
    argv = list(sys.argv) or ["python"]
    first = Path(argv[0]).name
    if first in ("__main__.py", "smalltown"):
        first = "smalltown"
    # an argument of bytes that are not UTF-8 holds surrogate escapes: written as \\udcff, not fatal
    return shlex.join([first, *argv[1:]])[:300].encode("utf-8", "backslashreplace").decode("utf-8")


_held: dict[str, "WriterLock"] = {}  # lock file -> this process's hold on it (re-entrant)
_guard = threading.Lock()


class WriterLock:
    def __init__(self, file: Path, fd: int):
        self.file = file
        self.fd = fd
        self.pid = os.getpid()
        self.count = 1

    @classmethod
    def take(cls, save: str | Path) -> "WriterLock":
        """Hold the save's writer lock, or raise SaveBusy naming the process that does (OSError
        when the lock file cannot be made: a read-only folder)."""
        file = lock_file(save)
        with _guard:
            held = _held.get(str(file))
            if held is not None and held.pid == os.getpid() and held.count > 0:
                held.count += 1
                return held
            for _ in range(20):
                fd = os.open(file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
                try:
                    if fcntl is not None:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _holder(fd)
                    os.close(fd)
                    raise SaveBusy(holder) from None
                except BaseException:
                    os.close(fd)
                    raise
                try:  # the last holder may have removed the file between our open and our lock
                    same = os.path.samestat(os.fstat(fd), os.stat(file))
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    continue
                try:
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    os.write(fd, f"{os.getpid()}\n{command_line()}\n".encode())
                except OSError:
                    pass  # the note is a courtesy; the lock is what counts
                lock = cls(file, fd)
                _held[str(file)] = lock
                return lock
            raise SaveBusy("another process (it keeps taking and leaving the lock)")

    def release(self) -> None:
        with _guard:
            if self.count <= 0:
                return
            self.count -= 1
            if self.count:
                return
            if _held.get(str(self.file)) is self:
                del _held[str(self.file)]
            if self.pid != os.getpid():
                return  # a forked child's copy of its parent's hold: the parent lets go of it
            try:
                os.unlink(self.file)  # still holding it: see `take`
            except OSError:
                pass
            os.close(self.fd)


def _holder(fd: int) -> str:
    """Who holds the lock, from its note ("pid 12 (smalltown run …)"); the note may be being
    written at this moment, so it is read a few times before giving up on it."""
    import time

    for _ in range(5):
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            text = os.read(fd, HOLDER_MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            text = ""
        pid, _, command = text.partition("\n")
        if pid.strip().isdigit():
            command = command.strip()
            return f"pid {pid.strip()}" + (f" ({command})" if command else "")
        time.sleep(0.01)
    return "another process"
