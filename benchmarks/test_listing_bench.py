"""What a listing costs as a tenant grows (issue 30, item 3): a page of 100 of a stream's
records, and a page of 100 of a tenant's streams with their counts, from a small store and
from a big one, on each backend.

- ``records-small``: a page from a stream of 100 records;
- ``records-big``: a page from the middle of a stream of ``BIG_STREAM`` records;
- ``streams-small``: the first page of a tenant with 100 streams;
- ``streams-big``: a page from the middle of a tenant with ``MANY_STREAMS`` streams;
- ``count-from-row``: the big stream's ``record_count`` as every stream answer reads it (its
  row), against ``count-by-scan``: ``count(*)`` over its records, what a count without the
  ``lost_seqs`` column would cost.

Rows are written straight into the database (a header that is JSON, no signature worth
checking): the listings read them as they read real ones. Report each big case's median as a
ratio against its small case measured in the same run: a listing that reads one index range
stays near 1 however big the store is.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from recordseal.services.listing import Listing
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.storage.sqlite import schema as sqlite_schema

BIG_STREAM = 1_000_000
MANY_STREAMS = 20_000
PAGE = 100
DAY = "2026-11-21T08:00:00Z"

#: Streams 'small' (100 records) and 'big', then the tenant 'many' with its streams; every
#: record of (stream, n) for n = 1.. with its seq n and a position in the tenant's log.
SQLITE_FILL = [
    "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head, created_at,"
    " fleet, log_id) VALUES ('acme', 'small', '{}', 0, 101, x'00', '" + DAY + "', 'default',"
    " 1), ('acme', 'big', '{}', 0, " + str(BIG_STREAM + 1) + ", x'00', '" + DAY + "',"
    " 'default', 1)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
    " INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header, signature,"
    " chain_leaf, log_id, log_index) SELECT ? || i, 'acme', ?, i, 'ref',"
    " CAST('{\"format\":\"recordseal/header/v1\"}' AS BLOB), x'00', x'00', 1, ? + i FROM n",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
    " INSERT INTO streams (tenant, name, declarations, strict, next_seq, head, created_at,"
    " fleet, log_id) SELECT ?, printf('s%06d', i), '{}', 0, 1, x'00', '" + DAY + "',"
    " 'default', 1 FROM n",
]


def _fill_sqlite(settings: Settings) -> None:
    conn = sqlite_schema.connect(settings.database_path)
    try:
        conn.execute("BEGIN")
        conn.execute("INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ('acme',"
                     " 'default', 'bench/acme/default', 0, x'')")  # fmt: skip
        conn.execute(SQLITE_FILL[0])
        conn.execute(SQLITE_FILL[1], (100, "small-", 1, 0))
        conn.execute(SQLITE_FILL[1], (BIG_STREAM, "big-", 2, 100))
        conn.execute(SQLITE_FILL[2], (100, "few"))
        conn.execute(SQLITE_FILL[2], (MANY_STREAMS, "many"))
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()


async def _fill_postgres(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            log_id = await conn.fetchval(
                "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ('acme', 'default',"
                " 'bench/acme/default', 0, ''::bytea) RETURNING id"
            )
            ids = {}
            for name, count in (("small", 100), ("big", BIG_STREAM)):
                ids[name] = await conn.fetchval(
                    "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                    " created_at, fleet, log_id) VALUES ('acme', $1, '{}', false, $2,"
                    " '\\x00'::bytea, $3, 'default', $4) RETURNING id",
                    name, count + 1, DAY, log_id,
                )  # fmt: skip
            for name, count, offset in (("small", 100, 0), ("big", BIG_STREAM, 100)):
                await conn.execute(
                    "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header,"
                    " signature, chain_leaf, log_id, log_index) SELECT $1 || i, 'acme', $2, i,"
                    " 'ref', convert_to('{\"format\":\"recordseal/header/v1\"}', 'UTF8'),"
                    " '\\x00'::bytea, '\\x00'::bytea, $3, $4 + i FROM generate_series(1, $5) i",
                    f"{name}-", ids[name], log_id, offset, count,
                )  # fmt: skip
            for tenant, count in (("few", 100), ("many", MANY_STREAMS)):
                await conn.execute(
                    "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                    " created_at, fleet, log_id) SELECT $1, 's' || lpad(i::text, 6, '0'), '{}',"
                    " false, 1, '\\x00'::bytea, $2, 'default', $3 FROM generate_series(1, $4) i",
                    tenant, DAY, log_id, count,
                )  # fmt: skip
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    yield running
    running.close()


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """The tests' throwaway PostgreSQL cluster (tests/pg_cluster.py, from the repository)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.pg_cluster import Cluster

    started = Cluster.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def filled(
    request: pytest.FixtureRequest, loop: asyncio.AbstractEventLoop
) -> Iterator[tuple[Listing, Store, Settings]]:
    folder = Path(tempfile.mkdtemp(prefix="listing-bench-"))
    if request.param == "postgres":
        cluster = request.getfixturevalue("cluster")
        settings = Settings(data_dir=folder, database_url=cluster.url())
    else:
        settings = Settings(data_dir=folder)
    store: Store = open_store(settings)
    loop.run_until_complete(store.open())  # the schema, then the rows
    if settings.database_url:
        loop.run_until_complete(_fill_postgres(settings.database_url))
    else:
        _fill_sqlite(settings)
    try:
        yield Listing(store), store, settings
    finally:
        loop.run_until_complete(store.close())
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def listing(filled: tuple[Listing, Store, Settings]) -> Listing:
    return filled[0]


def _records(loop: asyncio.AbstractEventLoop, listing: Listing, stream: str, start: int) -> None:
    page = loop.run_until_complete(listing.records("acme", stream, start, PAGE))
    assert len(page.items) == PAGE and page.items[0].record.seq == start


def _streams(loop: asyncio.AbstractEventLoop, listing: Listing, tenant: str, after: str | None):
    page = loop.run_until_complete(listing.streams(tenant, after, PAGE))
    assert len(page.items) == PAGE


def test_records_small(benchmark, loop, listing) -> None:
    benchmark(_records, loop, listing, "small", 1)


def test_records_big(benchmark, loop, listing) -> None:
    benchmark(_records, loop, listing, "big", BIG_STREAM // 2)


def test_streams_small(benchmark, loop, listing) -> None:
    benchmark(_streams, loop, listing, "few", None)


def test_streams_big(benchmark, loop, listing) -> None:
    benchmark(_streams, loop, listing, "many", f"s{MANY_STREAMS // 2:06d}")


def _count_from_row(loop: asyncio.AbstractEventLoop, store: Store) -> None:
    stream = loop.run_until_complete(store.records.get_stream("acme", "big"))
    assert stream is not None and stream.record_count == BIG_STREAM


def test_count_from_row(benchmark, loop, filled) -> None:
    benchmark(_count_from_row, loop, filled[1])


COUNT = "SELECT count(*) FROM records r JOIN streams s ON s.id = r.stream_id"
COUNT_WHERE = " WHERE s.tenant = 'acme' AND s.name = 'big'"


def test_count_by_scan(benchmark, loop, filled) -> None:
    settings: Settings = filled[2]
    if settings.database_url:
        conn = loop.run_until_complete(asyncpg.connect(settings.database_url))

        def count() -> None:
            assert loop.run_until_complete(conn.fetchval(COUNT + COUNT_WHERE)) == BIG_STREAM

        try:
            benchmark.pedantic(count, rounds=5)
        finally:
            loop.run_until_complete(conn.close())
        return
    db = sqlite_schema.connect(settings.database_path)

    def count_sqlite() -> None:
        assert db.execute(COUNT + COUNT_WHERE).fetchone()[0] == BIG_STREAM

    try:
        benchmark.pedantic(count_sqlite, rounds=5)
    finally:
        db.close()
