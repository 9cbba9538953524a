"""Folding the write-ahead log into the save off the tick's thread.

A commit appends its pages to the save's `-wal`; a checkpoint copies them into the file. SQLite
runs one inside the commit that takes the log past its threshold, and with synchronous=NORMAL it
waits on two fsyncs there (the log's, then the file's): on this machine ~0.3-0.4 s of a 25-agent
scripted day (a third of a GB of log reaches the disk). Here a thread with its own connection
runs most of them, PASSIVE (it never blocks the writer nor waits for it), so commits seldom wait on
the disk. Nothing in the save changes: the same pages reach the file, synced the same way, and a
killed process leaves a log SQLite recovers from as before.

The log starts over from its beginning only at a commit that finds all of it folded in, which a
pass running beside a busy writer seldom leaves. So the writer keeps its own checkpoint, at
`FALLBACK` pages: by then this thread has folded in all but the last ~`PASS` pages, the writer's
checkpoint syncs only those, and the log starts over (at most ~33 MB with 16 KiB pages).
"""

from __future__ import annotations

import sqlite3
import threading

PASS = 500  # pages of log a pass folds in (about: counted in commits, at the pages a commit wrote lately)
FALLBACK = 2000  # pages: the writer's own checkpoint (SQLite's default is 1000)


class Checkpointer:
    """Checkpoints the save at `path` (a writer's, in WAL mode) on its own thread: call
    `committed()` after each commit, and `close()` before the writer's connection closes (whose
    close, the last, then folds in the rest and removes the log)."""

    def __init__(self, path: str):
        self._path = path
        self._count = 0  # commits since the last pass was asked
        self._asked = 0  # commits the pass under way covers
        self._per_commit = 8.0  # pages a commit wrote, over the last pass (the writer reads it)
        self._log = 0  # the log's length in pages at the last pass
        self._wake = threading.Event()
        self._done = threading.Condition()
        self.passes = 0
        self._folding = False  # a pass under way
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="save-checkpoint", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        self._count += 1
        if self._count * self._per_commit >= PASS and not self._wake.is_set():
            self._asked, self._count = self._count, 0
            self._wake.set()

    def run_pass(self) -> None:
        """Ask for a pass now and wait until one has ended (whatever was committed is then in the
        file, unless a reader held it back)."""
        with self._done:
            until = self.passes + (2 if self._folding else 1)  # (one under way may predate the ask)
            self._wake.set()
            self._done.wait_for(lambda: self.passes >= until or not self._thread.is_alive())

    def close(self) -> None:
        self._closing = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            return  # (the writer's own checkpoints remain)
        try:
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA synchronous=NORMAL")  # (a checkpoint syncs as its connection says)
            while True:
                self._wake.wait()
                self._wake.clear()  # (before reading: a commit asking meanwhile asks again)
                asked = self._asked
                if self._closing:
                    return
                self._folding = True
                self._fold(conn, asked)
        finally:
            conn.close()
            with self._done:
                self._done.notify_all()

    def _fold(self, conn: sqlite3.Connection, asked: int) -> None:
        try:
            _, log, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            log = -1  # (busy, or the disk refused: the writer's checkpoint or close does it)
        if log >= 0:
            if asked and log > self._log:  # (shorter: the log started over, no measure)
                self._per_commit = max(1.0, (log - self._log) / asked)
            self._log = log
        with self._done:
            self.passes += 1
            self._folding = False
            self._done.notify_all()


def for_writer(conn: sqlite3.Connection) -> Checkpointer | bool:
    """A Checkpointer for the file the writer `conn` commits to, whose own checkpoint is moved to
    FALLBACK; False for a save in memory (no log)."""
    file = conn.execute("PRAGMA database_list").fetchone()[2]
    if not file:
        return False
    conn.execute(f"PRAGMA wal_autocheckpoint={FALLBACK}")
    return Checkpointer(file)
