"""Which store a process uses: PostgreSQL when a database URL is set, SQLite otherwise."""

from __future__ import annotations

from urllib.parse import urlsplit

from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.storage.errors import StorageError, StoreUnavailable
from recordseal.storage.journal import DirectoryJournal, Journal
from recordseal.storage.schema_version import SchemaStatus


class BackendError(StorageError, ValueError):
    """The settings name no usable store (e.g. a database URL of another kind)."""


def unavailable_errors() -> tuple[type[Exception], ...]:
    """What the store raises when it cannot serve now but may later (its server down,
    restarting, a standby not promoted yet, or a failover the process has not compared
    with the journal yet): the service answers ``503 store_unavailable`` to them."""
    from recordseal.storage.postgres.database import SERVER_DOWN

    return (StoreUnavailable, ConnectionError, *SERVER_DOWN)


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


def open_journal(settings: Settings) -> Journal:
    """The continuity journal named by the settings (not opened yet): a directory, or a
    PostgreSQL database that must be on another server than the store's (docs/continuity.md:
    one on the store's server is restored and failed over with it, so it remembers nothing
    the store forgot)."""
    url = settings.journal_url
    if url is None:
        return DirectoryJournal(settings.journal_dir)
    store = settings.database_url
    if store and _server(url) == _server(store):
        raise BackendError(
            "RECORDSEAL_JOURNAL names a database on the store's own PostgreSQL server"
            f" ({_server(url)[0]}:{_server(url)[1]}): a restore or failover of that server"
            " rolls the journal back with the store. Use a database on another server, or a"
            " directory (docs/continuity.md)"
        )
    from recordseal.storage.postgres.journal import PostgresJournal

    return PostgresJournal(url)


def _server(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return (parts.hostname or "localhost", parts.port or 5432)


async def schema_status(settings: Settings) -> SchemaStatus:
    """Where the configured database's schema stands; changes nothing."""
    open_store(settings)  # refuses a database URL of another kind
    url = settings.database_url
    if url:
        import asyncpg

        from recordseal.storage.postgres import schema as postgres_schema

        conn = await asyncpg.connect(url)
        try:
            current = await postgres_schema.schema_version(conn)
        finally:
            await conn.close()
        return SchemaStatus("postgresql", current, len(postgres_schema.MIGRATIONS))
    from recordseal.storage.sqlite import schema as sqlite_schema

    current = sqlite_schema.schema_version(settings.database_path)
    return SchemaStatus("sqlite", current, len(sqlite_schema.MIGRATIONS))
