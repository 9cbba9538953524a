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

The lock file never is anyone else's: it is made with O_EXCL, or, when one is there (a killed
holder's, a live holder's, or one that came with the save), opened without following a link and
used only if it is a regular file of one name that belongs to this user (store/sidefiles.py)
and holds a writer's note (or nothing); otherwise the writer is refused, naming it, and nothing
is written.
"""

from __future__ import annotations

import errno
import os
import shlex
import sys
import threading
from pathlib import Path

from smalltown.store.errors import SaveError
from smalltown.store.sidefiles import message, problem, stat_problem

try:
    import fcntl
except ImportError:  # not a POSIX system: no flock, and no lock (one writer is then up to the user)
    fcntl = None

LOCK_SUFFIX = ".lock"
HOLDER_MAX_BYTES = 1000  # what is read of another holder's note
NOTE_MAX_BYTES = 4000  # a note is at most a pid and 300 characters of command line (4 bytes each)
# never through a link; a named pipe put there since it was looked at is not waited on
_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


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
        when the lock file cannot be made: a read-only folder; SaveError when the file there is
        not one to write: a link, a file with other names, another user's, not a regular file)."""
        file = lock_file(save)
        with _guard:
            held = _held.get(str(file))
            if held is not None and held.pid == os.getpid() and held.count > 0:
                held.count += 1
                return held
            for _ in range(20):
                opened = _open(file)
                if opened is None:
                    continue  # its last holder removed it as we came: again
                fd, made = opened
                try:
                    if fcntl is not None:
                        _flock_exclusive(fd)
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
                if not made and not _is_note(fd):  # a file of that name that no writer left
                    os.close(fd)
                    raise SaveError(message(file, "holds something other than a writer lock's note"))
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


def _open(file: Path) -> tuple[int, bool] | None:
    """The lock file opened to read and write, and whether we made it; or one there that may be
    written (see the module's doc); None if it went away meanwhile."""
    try:
        return os.open(file, _FLAGS | os.O_CREAT | os.O_EXCL, 0o644), True  # (O_EXCL: no link followed)
    except FileExistsError:
        pass
    found = problem(file, own=True)  # before opening it: opening a device may act on it
    if found is None:
        try:
            fd = os.open(file, _FLAGS)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise  # (a read-only folder or file: the caller says so)
            found = "is a symbolic link"  # (put there since it was looked at)
        else:
            found = stat_problem(os.fstat(fd), own=True)  # what was opened is what was looked at
            if found is None:
                return fd, False
            os.close(fd)
    raise SaveError(message(file, found))


def _is_note(fd: int) -> bool:
    """What a writer leaves in its lock file: its pid and command line, "12\nsmalltown run …\n" (or
    nothing yet: killed as it made the file). Anything else is some other program's file, which
    a link to a save may have put beside the save's target (`/etc/passwd.lock`): not written."""
    try:
        if os.fstat(fd).st_size > NOTE_MAX_BYTES:
            return False
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, NOTE_MAX_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    pid, newline, _ = text.partition("\n")
    return not text or (pid.isascii() and pid.isdigit() and newline == "\n" and text.endswith("\n"))


def _flock_exclusive(fd: int, tries: int = 5) -> None:
    """Take the lock, or raise BlockingIOError. A reader asking whether a writer is running
    (store/reading.py) holds a shared lock for a moment; a few short waits let that pass."""
    import time

    for left in range(tries - 1, -1, -1):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not left:
                raise
            time.sleep(0.005)


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
