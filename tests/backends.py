"""Helpers for tests that run on both storage backends."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from recordseal.settings import Settings
from recordseal.storage.base import Store


@asynccontextmanager
async def opened(store: Store) -> AsyncIterator[Store]:
    await store.open()
    try:
        yield store
    finally:
        await store.close()


def query(settings: Settings, sql: str) -> list[tuple[Any, ...]]:
    """Rows of one parameterless SQL statement, straight from the backend's database."""
    if settings.database_url:
        url = settings.database_url

        async def fetch() -> list[tuple[Any, ...]]:
            conn = await asyncpg.connect(url)
            try:
                return [tuple(row) for row in await conn.fetch(sql)]
            finally:
                await conn.close()

        return asyncio.run(fetch())
    with sqlite3.connect(settings.database_path) as conn:
        return conn.execute(sql).fetchall()


def count(settings: Settings, table: str) -> int:
    value: int = query(settings, f"SELECT count(*) FROM {table}")[0][0]
    return value
