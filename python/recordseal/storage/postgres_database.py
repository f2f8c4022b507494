"""One PostgreSQL database as the store's parts share it: its URL and a connection pool."""

from __future__ import annotations

import asyncpg

from recordseal.storage.postgres_schema import migrate


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
