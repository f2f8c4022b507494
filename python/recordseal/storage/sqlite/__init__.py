"""The SQLite backend: its SQL only (schema, connections, group commit, and each part of the
store's interface), the rules it follows being the storage package's (``placing``, ...)."""

from recordseal.storage.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
