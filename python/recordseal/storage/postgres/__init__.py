"""The PostgreSQL backend: its SQL only (schema, pool, group commit, each part of the store's
interface, and the continuity journal kept in a PostgreSQL database), the rules it follows
being the storage package's (``placing``, ...)."""

from recordseal.storage.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
