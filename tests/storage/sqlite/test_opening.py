"""SQLite files that the workers of one ``serve`` create at the same moment.

Two processes switching a new file to WAL can deadlock on its locks; SQLite then answers one
of them "database is locked" at once, without waiting (a worker failed to start this way
about once in 40 starts). Every file is opened here by 8 processes released together.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path

import pytest

from recordseal.storage.sqlite import SQLiteStore


def _open_records(path: Path) -> None:
    async def run() -> None:
        store = SQLiteStore(path)
        await store.open()
        await store.close()

    asyncio.run(run())


OPENERS = {"records": _open_records}


def _open_in_child(kind: str, path: str, barrier: object, out: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        OPENERS[kind](Path(path))
        out.put("ok")  # type: ignore[attr-defined]
    except Exception as error:  # reported to the test, which fails on it
        out.put(repr(error))  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", sorted(OPENERS))
def test_processes_creating_one_database_together_all_open_it(tmp_path: Path, kind: str) -> None:
    context = multiprocessing.get_context("fork")
    for round_ in range(12):
        path = tmp_path / f"{round_}" / "db.sqlite3"
        path.parent.mkdir()
        barrier, out = context.Barrier(8), context.Queue()
        children = [
            context.Process(target=_open_in_child, args=(kind, str(path), barrier, out))
            for _ in range(8)
        ]
        for child in children:
            child.start()
        answers = [out.get(timeout=60) for _ in children]
        for child in children:
            child.join(60)
        assert answers == ["ok"] * 8, (round_, answers)
