"""One SQLite database as the store's parts share it: a reader connection, and the group
commit writer through which every write goes (``sqlite/writer.py``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from recordseal.storage.sqlite.schema import connect, migrate
from recordseal.storage.sqlite.writer import GroupCommitWriter

T = TypeVar("T")


class SQLiteDatabase:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: GroupCommitWriter | None = None
        self._reader: sqlite3.Connection | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Owner only (SQLite gives its -wal and -shm files the same mode): the database
        # holds wrapped keys, sealed payloads and the panel's state. Also a file an older
        # version created with the umask.
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        conn = connect(self.path)
        try:
            migrate(conn)
        finally:
            conn.close()
        self._reader = connect(self.path)
        self._writer = GroupCommitWriter(self.path)

    async def close(self) -> None:
        if self._writer is not None:
            await self._writer.stop()
            self._writer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    @property
    def writer(self) -> GroupCommitWriter:
        assert self._writer is not None, "store is not open"
        return self._writer

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """The rows of one query on the reader connection (WAL: beside the writer)."""
        assert self._reader is not None, "store is not open"
        return self._reader.execute(sql, params).fetchall()


def in_lists(values: list[T], size: int = 500) -> Iterator[tuple[list[T], str]]:
    """``values`` in chunks within SQLite's parameter limit, each with its ``?, ?, …``."""
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ", ".join("?" * len(chunk))


def next_id(conn: sqlite3.Connection, table: str) -> int:
    """The id the next row of ``table`` (``streams`` or ``logs``) takes: one above the largest
    (read from its index on the id alone), as a rowid would have been. The tables' keys lead
    with the tenant (docs/records.md, "Distributing by tenant"), so the id is no rowid; every
    write holds the database's write lock, so no two transactions take the same one."""
    assert table in ("streams", "logs")
    (largest,) = conn.execute(f"SELECT max(id) FROM {table}").fetchone()
    return int(largest or 0) + 1


def open_log(conn: sqlite3.Connection, tenant: str, fleet: str, origin: str | None) -> int:
    """The id of the live (``tenant``, ``fleet``) log, its row made now (named ``origin``, or
    unnamed until its first seal) if it has none; ``tenant`` as ``tenancy.tenant_key``."""
    conn.execute(
        "INSERT OR IGNORE INTO logs (id, tenant, fleet, origin, size, root)"
        " VALUES (?, ?, ?, ?, 0, x'')",
        (next_id(conn, "logs"), tenant, fleet, origin),
    )
    (log_id,) = conn.execute(
        "SELECT id FROM logs WHERE tenant = ? AND fleet = ? AND retired_at IS NULL",
        (tenant, fleet),
    ).fetchone()
    return int(log_id)
