"""Which store a process uses: PostgreSQL when a database URL is set, SQLite otherwise."""

from __future__ import annotations

from recordseal.settings import Settings
from recordseal.storage.base import Store


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
