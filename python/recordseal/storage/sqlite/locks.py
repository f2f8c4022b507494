"""Opening SQLite files that several processes may be creating at the same moment.

SQLite's busy handler (``timeout=``) waits for a lock only where waiting cannot deadlock.
Two processes that both read a new database's header and then both ask for the exclusive
lock that switching to WAL needs would wait for each other, so one of them gets "database
is locked" at once; the same for a write that would have to upgrade a stale read. The remedy
is to start the step over, which ``retry_while_locked`` does.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds to keep starting over before the error is raised.
LOCK_WAIT = 10.0


def retry_while_locked(action: Callable[[], T], timeout: float = LOCK_WAIT) -> T:
    """``action()``, run again while SQLite answers "database is locked" (up to ``timeout``
    seconds); ``action`` must be safe to repeat (``IF NOT EXISTS``, a pragma)."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def enable_wal(db: sqlite3.Connection) -> None:
    """Put the database in WAL mode (a no-op once it is), alongside other processes."""
    retry_while_locked(lambda: db.execute("PRAGMA journal_mode = WAL").fetchone())
