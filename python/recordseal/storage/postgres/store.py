"""PostgreSQL backend (asyncpg): for production, and for several service processes sharing
one database.

Appends are committed in groups by one writer task per process (``postgres/writer.py``);
every other write is its own transaction from the connection pool. Processes coordinate
through the database only: stream rows are locked while sequence numbers are assigned, each
log row while it is sealed, and the sealer leadership is a session advisory lock (released
by the server when its holder's connection dies, so another process takes over).
"""

from __future__ import annotations

from recordseal.storage.postgres.activity import PostgresActivity
from recordseal.storage.postgres.database import PostgresDatabase
from recordseal.storage.postgres.hierarchy import PostgresHierarchy
from recordseal.storage.postgres.logs import PostgresLogs
from recordseal.storage.postgres.panel import PostgresPanelStore
from recordseal.storage.postgres.records import PostgresRecords
from recordseal.storage.postgres.tokens import PostgresTokens


class PostgresStore:
    """The store on one PostgreSQL database (``postgresql://`` URL)."""

    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self._db = PostgresDatabase(url, pool_size)
        self.records = PostgresRecords(self._db)
        self.logs = PostgresLogs(self._db)
        self.panel = PostgresPanelStore(self._db)
        self.tokens = PostgresTokens(self._db)
        self.activity = PostgresActivity(self._db)
        self.hierarchy = PostgresHierarchy(self._db)

    async def open(self) -> None:
        await self._db.open()
        self.records.start()

    async def close(self) -> None:
        await self.records.stop()
        await self.logs.release()
        await self._db.close()
