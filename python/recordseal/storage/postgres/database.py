"""One PostgreSQL database as the store's parts share it: its URL and a connection pool."""

from __future__ import annotations

import asyncpg

from recordseal.storage.postgres.schema import migrate

#: Ends a ``LATERAL`` subquery that reads one row by its whole primary key, once per element
#: of an array parameter: ``FROM unnest($2) AS u(k), LATERAL (SELECT … WHERE tenant = $1 AND
#: key = u.k LIMIT 1)``. asyncpg prepares every statement, and after five runs PostgreSQL may
#: keep a generic plan made while the table was small. For ``tenant = $1 AND key = ANY($2)``
#: (or a join with ``unnest``) that plan scans every row of the tenant and compares it with
#: each key, until the next ANALYZE: 8 ms for 100 keys among 4,500 subjects, 64 ms among
#: 50,000 (docs/records.md). The ``LIMIT`` keeps the subquery from being flattened into a
#: join, so every plan, generic or not, is one index lookup per key.
ONE_ROW_BY_KEY = "LIMIT 1"


class PostgresDatabase:
    def __init__(self, url: str, pool_size: int = 8) -> None:
        self.url = url
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None

    async def open(self) -> None:
        conn = await asyncpg.connect(self.url)
        try:
            await migrate(conn)
        finally:
            await conn.close()
        self._pool = await asyncpg.create_pool(self.url, min_size=1, max_size=self._pool_size)

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @property
    def pool(self) -> asyncpg.Pool:
        assert self._pool is not None, "store is not open"
        return self._pool
