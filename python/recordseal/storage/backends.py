"""Which store a process uses: PostgreSQL when a database URL is set, SQLite otherwise."""

from __future__ import annotations

from recordseal.settings import Settings
from recordseal.storage.base import Store


def open_store(settings: Settings) -> Store:
    """The store named by the settings (not opened yet)."""
    url = settings.database_url
    if url:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError("RECORDSEAL_DATABASE_URL must be a postgresql:// URL")
        from recordseal.storage.postgres import PostgresStore

        return PostgresStore(url)
    from recordseal.storage.sqlite import SQLiteStore

    return SQLiteStore(settings.database_path)
