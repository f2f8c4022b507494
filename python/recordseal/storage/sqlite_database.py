"""One SQLite database as the store's parts share it: a reader connection, and the group
commit writer through which every write goes (``sqlite_writer.py``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from recordseal.storage.sqlite_schema import connect, migrate
from recordseal.storage.sqlite_writer import GroupCommitWriter

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
