"""The SQLite store's group commit: jobs of one batch see each other's writes in order."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from recordseal.storage.base import NewRecord, SubjectClaim
from recordseal.storage.sqlite import SQLiteStore


def builder(record_id: str):
    def build(seq: int, prev: bytes) -> NewRecord:
        header = f'{{"seq":{seq}}}'.encode()
        return NewRecord(record_id, seq, header, b"sig", bytes(32), b"sealed-" + record_id.encode())

    return build


def test_an_erasure_in_the_same_batch_deletes_the_payload_appended_before_it(tmp_path: Path):
    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "db.sqlite3")
        await store.open()
        try:
            stream = await store.create_stream("t", "s", {}, False, bytes(32), "now")
            new = SubjectClaim(b"index", "ref", b"wrapped")
            await store.append_record("t", stream.id, new, builder("r1"), "now")
            existing = SubjectClaim(b"index", "ref", None)
            # Queued in one tick: the writer takes both into one transaction, append first.
            appended, erased = await asyncio.gather(
                store.append_record("t", stream.id, existing, builder("r2"), "now"),
                store.erase_subject("t", "ref", "later"),
            )
            assert appended.seq == 2
            assert erased.payloads_deleted == 2
        finally:
            await store.close()
        with sqlite3.connect(tmp_path / "db.sqlite3") as conn:
            assert conn.execute("SELECT count(*) FROM payloads").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM records").fetchone()[0] == 2

    asyncio.run(scenario())


def test_appends_after_an_erasure_in_the_same_batch_are_refused(tmp_path: Path):
    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "db.sqlite3")
        await store.open()
        try:
            stream = await store.create_stream("t", "s", {}, False, bytes(32), "now")
            await store.append_record(
                "t", stream.id, SubjectClaim(b"i", "ref", b"w"), builder("r1"), "now"
            )
            existing = SubjectClaim(b"i", "ref", None)
            results = await asyncio.gather(
                store.append_record("t", stream.id, existing, builder("r2"), "now"),
                store.erase_subject("t", "ref", "later"),
                store.append_record("t", stream.id, existing, builder("r3"), "now"),
                return_exceptions=True,
            )
            assert isinstance(results[0], NewRecord) and results[0].seq == 2
            assert type(results[2]).__name__ == "SubjectErased"
        finally:
            await store.close()

    asyncio.run(scenario())
