"""Which store a process uses: PostgreSQL when a database URL is set, SQLite otherwise."""

from __future__ import annotations

from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.storage.schema_version import SchemaStatus


class BackendError(ValueError):
    """The settings name no usable store (e.g. a database URL of another kind)."""


def open_store(settings: Settings) -> Store:
    """The store named by the settings (not opened yet)."""
    url = settings.database_url
    if url:
        if not url.startswith(("postgresql://", "postgres://")):
            raise BackendError(
                "RECORDSEAL_DATABASE_URL (--database-url) must be a postgresql:// URL"
            )
        from recordseal.storage.postgres import PostgresStore

        return PostgresStore(url)
    from recordseal.storage.sqlite import SQLiteStore

    return SQLiteStore(settings.database_path)


async def schema_status(settings: Settings) -> SchemaStatus:
    """Where the configured database's schema stands; changes nothing."""
    open_store(settings)  # refuses a database URL of another kind
    url = settings.database_url
    if url:
        import asyncpg

        from recordseal.storage import postgres_schema

        conn = await asyncpg.connect(url)
        try:
            current = await postgres_schema.schema_version(conn)
        finally:
            await conn.close()
        return SchemaStatus("postgresql", current, len(postgres_schema.MIGRATIONS))
    from recordseal.storage import sqlite_schema

    current = sqlite_schema.schema_version(settings.database_path)
    return SchemaStatus("sqlite", current, len(sqlite_schema.MIGRATIONS))
