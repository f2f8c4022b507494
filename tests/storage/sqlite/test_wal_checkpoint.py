"""WAL checkpoints run beside the SQLite writers, not inside their COMMIT (sqlite_checkpoint.py).

SQLite's own automatic checkpoint (at 1,000 pages of WAL) runs in the COMMIT that crosses
it, while the writer holds the cross-process write lock. The store moves that work to a
thread of its own: pages reach the database file although no COMMIT checkpoints (the writer's
threshold is the much larger backstop), and the thread ends with the store.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

from recordseal.storage.sqlite.checkpoint import BACKSTOP_PAGES
from recordseal.storage.sqlite.database import SQLiteDatabase
from recordseal.storage.sqlite.writer import Batch

PAGE = 4096


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sqlite-checkpoint"]


def test_pages_reach_the_database_file_without_a_commit_checkpointing(tmp_path: Path) -> None:
    path = tmp_path / "recordseal.sqlite3"
    blob = bytes(range(256)) * 16  # a page of data per row

    async def run() -> tuple[int, int, int]:
        db = SQLiteDatabase(path)
        await db.open()
        try:

            def create(conn: sqlite3.Connection, batch: Batch) -> int:
                conn.execute("CREATE TABLE scratch (id INTEGER PRIMARY KEY, data BLOB)")
                return int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])

            threshold = await db.writer.submit(create)
            before = path.stat().st_size

            def insert(conn: sqlite3.Connection, batch: Batch) -> None:
                conn.executemany("INSERT INTO scratch (data) VALUES (?)", [(blob,)] * 20)

            for _ in range(15):  # about 300 pages: under SQLite's own 1,000-page threshold
                await db.writer.submit(insert)
            deadline = time.monotonic() + 10
            while path.stat().st_size <= before + 100 * PAGE:
                assert time.monotonic() < deadline, "no checkpoint copied the WAL's pages"
                await asyncio.sleep(0.05)
            return threshold, before, path.stat().st_size
        finally:
            await db.close()

    threshold, before, after = asyncio.run(run())
    assert threshold == BACKSTOP_PAGES  # a COMMIT would checkpoint only past the backstop
    assert after - before >= 250 * PAGE
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM scratch").fetchone() == (300,)
    conn.close()
    assert _checkpoint_threads() == []  # closing the store ended its thread
