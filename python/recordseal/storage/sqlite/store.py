"""SQLite backend: the embedded default (stdlib ``sqlite3``, WAL, no server).

Writes are committed in groups (one writer task per process, on its event loop): every write
waiting when a transaction starts joins it, and none is acknowledged before the COMMIT (with
``synchronous=FULL``) has returned. Several processes may share one database file: each takes
a lock file before ``BEGIN IMMEDIATE``, and sequence numbers and chain heads are read inside
that transaction, so chains never fork. Reads use a separate connection; WAL lets them run
beside the writer.
"""

from __future__ import annotations

from pathlib import Path

from recordseal.storage.sqlite.activity import SQLiteActivity
from recordseal.storage.sqlite.database import SQLiteDatabase
from recordseal.storage.sqlite.hierarchy import SQLiteHierarchy
from recordseal.storage.sqlite.logs import SQLiteLogs
from recordseal.storage.sqlite.panel import SQLitePanelStore
from recordseal.storage.sqlite.records import SQLiteRecords
from recordseal.storage.sqlite.tokens import SQLiteTokens


class SQLiteStore:
    """The store on one SQLite database file: its parts share the file's connections."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = SQLiteDatabase(path)
        self.records = SQLiteRecords(self._db)
        self.logs = SQLiteLogs(self._db)
        self.panel = SQLitePanelStore(self._db)
        self.tokens = SQLiteTokens(self._db)
        self.activity = SQLiteActivity(self._db)
        self.hierarchy = SQLiteHierarchy(self._db)

    async def open(self) -> None:
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()
        self.logs.release()
