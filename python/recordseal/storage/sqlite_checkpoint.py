"""WAL checkpoints beside the writers, off their cross-process lock.

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past its threshold:
the writer that holds the cross-process write lock (``sqlite_writer.py``) then copies pages
into the database file and fsyncs it while every other writer waits for the lock. Here a
thread of each process runs PASSIVE checkpoints on a connection of its own instead (they never
block writers or readers, and release the interpreter while they copy), at most every
``INTERVAL`` seconds while its process writes. The writer connection keeps an automatic
checkpoint as a backstop (``BACKSTOP_PAGES``), so the WAL stays bounded if this thread cannot
keep up; an erasure still truncates the WAL itself, in its own transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from recordseal.storage.sqlite_schema import connect

#: Seconds between two checkpoints of one process while it writes.
INTERVAL = 0.25
#: Pages of WAL past which a writer's COMMIT checkpoints itself (SQLite's default is 1,000).
BACKSTOP_PAGES = 16_384


class WalCheckpointer:
    """A daemon thread that checkpoints the WAL after its process's commits."""

    def __init__(self, path: Path) -> None:
        self._conn = connect(path)
        self._wake = threading.Event()
        self._stopping = False
        self.checkpoints = 0  #: completed PASSIVE checkpoints (tests read it)
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """A transaction of this process committed: checkpoint soon."""
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        self._thread.join()
        self._conn.close()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stopping:
                return
            self._wake.clear()
            try:
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                self.checkpoints += 1
            except sqlite3.Error:
                pass  # e.g. another process's checkpoint runs: the next wake-up tries again
            time.sleep(INTERVAL)
