"""WAL checkpoints beside the writers, off their cross-process lock.

SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL past its threshold:
the writer that holds the cross-process write lock (``sqlite/writer.py``) then copies pages
into the database file and fsyncs it while every other writer waits for the lock. Here a
thread of each process runs PASSIVE checkpoints on a connection of its own instead (they never
block writers or readers, and release the interpreter while they copy), at most every
``INTERVAL`` seconds while its process writes. The writer connection keeps an automatic
checkpoint as a backstop (``BACKSTOP_PAGES``), so the WAL stays bounded if this thread cannot
keep up; an erasure still truncates the WAL itself, in its own transaction.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

from recordseal.storage.sqlite.schema import connect

#: Seconds between two checkpoints of one process while it writes.
INTERVAL = 0.25
#: Pages of WAL past which a writer's COMMIT checkpoints itself (SQLite's default is 1,000).
BACKSTOP_PAGES = 16_384


class WalCheckpointer:
    """A daemon thread that checkpoints the WAL after its process's commits."""

    def __init__(self, path: Path) -> None:
        self._conn = connect(path)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """A transaction of this process committed: checkpoint soon."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._conn.close()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            # Refused while another process's checkpoint runs: the next wake-up tries again.
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if self._stop.wait(INTERVAL):
                return
