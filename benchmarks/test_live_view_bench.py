"""What the live view of a tenant costs as the tenant grows (issue 30, item 2): the whole page,
``GET /tenants/{id}/live`` through the service's application (session check, store query,
figures, SVG charts, template), for a tenant of ``BIG`` records and for a tenant of 100, in
one database, on each backend.

- ``page-small`` / ``page-big``: the HTML page of the tenant ``small`` / ``big``;
- ``json-big``: the same data as JSON for ``big``;
- ``count-by-scan``: ``count(*)`` over ``big``'s records, what one figure would cost if it
  were counted instead of read from rows (a reference for what the page avoids).

The rows are written straight into the database (``RECORDSEAL_BENCH_LIVE_RECORDS`` records,
default 2,000,000; the issue asks about 10 million): records of one stream, a week of
ingest-minute counters and of one checkpoint a minute (the last five minutes not sealed yet),
two witnesses (one refusing, ``witness.two_roots``), 1,000 subjects of which 100 erased, three
tokens. Report ``page-big`` as a ratio against ``page-small`` measured in the same run: the
page reads no record, so it stays near 1 however big the tenant is.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from litestar.testing import TestClient

from recordseal.clock import minute_start
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession
from recordseal.settings import Settings
from recordseal.storage.sqlite import schema as sqlite_schema
from recordseal.web.app import create_app

BIG = int(os.environ.get("RECORDSEAL_BENCH_LIVE_RECORDS", "2000000"))
SMALL = 100
WEEK = 7 * 24 * 60
UNSEALED_MINUTES = 5
DAY = "2026-11-21T08:00:00Z"
HEADER = '{"format":"recordseal/header/v1"}'


def _plan(now_minute: int, records: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(minute, records) of a week ending now, and (minute, size) of one checkpoint a minute
    up to ``UNSEALED_MINUTES`` ago; sizes count the genesis leaf."""
    first = now_minute - WEEK + 1
    per, extra = divmod(records, WEEK)
    minutes = [(first + i, per + (1 if i < extra else 0)) for i in range(WEEK)]
    checkpoints, size = [], 1
    for minute, n in minutes:
        size += n
        if n and minute <= now_minute - UNSEALED_MINUTES:
            checkpoints.append((minute, size))
    return minutes, checkpoints


def _fill_sqlite(path: Path, now_minute: int) -> None:
    conn = sqlite_schema.connect(path)
    try:
        conn.execute("BEGIN")
        for log_id, tenant, count in ((1001, "big", BIG), (1002, "small", SMALL)):
            minutes, checkpoints = _plan(now_minute, count)
            sealed = checkpoints[-1][1] if checkpoints else 0
            conn.execute(
                "INSERT INTO tenants (id, display_name, active, source, created_at)"
                " VALUES (?, ?, 1, 'operator', ?)",
                (tenant, tenant.title(), DAY),
            )
            conn.execute(
                "INSERT INTO logs (id, tenant, fleet, origin, size, root)"
                " VALUES (?, ?, 'default', ?, ?, x'00')",
                (log_id, tenant, f"bench/{tenant}", sealed),
            )
            conn.execute(
                "INSERT INTO log_positions (log_id, next_index) VALUES (?, ?)", (log_id, count + 1)
            )
            conn.execute(
                "INSERT INTO streams (id, tenant, name, declarations, strict, next_seq, head,"
                " created_at, fleet, log_id, last_ingest_at)"
                " VALUES (?, ?, 'events', '{}', 0, ?, x'00', ?, 'default', ?, ?)",
                (log_id, tenant, count + 1, DAY, log_id, minute_start(now_minute)),
            )
            conn.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                " INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header,"
                " signature, chain_leaf, log_id, log_index)"
                " SELECT ? || i, ?, ?, i, 'ref', CAST(? AS BLOB), x'00', x'00', ?, i FROM n",
                (count, f"{tenant}-", tenant, log_id, HEADER, log_id),
            )
            conn.executemany(
                "INSERT INTO ingest_minutes (log_id, minute, records) VALUES (?, ?, ?)",
                [(log_id, m, n) for m, n in minutes if n],
            )
            conn.executemany(
                "INSERT INTO checkpoints (log_id, size, root, note, created_at)"
                " VALUES (?, ?, x'00', '', ?)",
                [(log_id, size, minute_start(m)) for m, size in checkpoints],
            )
            conn.executemany(
                "INSERT INTO witness_health (log_id, witness, cosigned_size, cosigned_at,"
                " failures, code, reason, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (log_id, "w1", sealed, minute_start(now_minute - 5), 0, None, None, None),
                    (log_id, "w2", 1, DAY, 12, "witness_refused", "witness.two_roots", DAY),
                ],
            )
            conn.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)"
                " INSERT INTO subjects (tenant, subject_index, subject_ref, created_at, erased_at)"
                " SELECT ?, CAST(printf('%08d', i) AS BLOB), ? || i, ?,"
                " CASE WHEN i % 10 = 0 THEN ? END FROM n",
                (tenant, f"{tenant}-subject-", DAY, DAY),
            )
            conn.executemany(
                "INSERT INTO tokens (token_hash, tenant, label, created_at, last_used_at)"
                " VALUES (?, ?, 't', ?, ?)",
                [(f"{tenant}{i}".encode(), tenant, DAY, DAY) for i in range(3)],
            )
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
    finally:
        conn.close()


async def _fill_postgres(url: str, now_minute: int) -> None:
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            for tenant, count in (("big", BIG), ("small", SMALL)):
                minutes, checkpoints = _plan(now_minute, count)
                sealed = checkpoints[-1][1] if checkpoints else 0
                await conn.execute(
                    "INSERT INTO tenants (id, display_name, active, source, created_at)"
                    " VALUES ($1, $2, true, 'operator', $3)",
                    tenant, tenant.title(), DAY,
                )  # fmt: skip
                log_id = await conn.fetchval(
                    "INSERT INTO logs (tenant, fleet, origin, size, root)"
                    " VALUES ($1, 'default', $2, $3, '\\x00'::bytea) RETURNING id",
                    tenant, f"bench/{tenant}", sealed,
                )  # fmt: skip
                await conn.execute(
                    "INSERT INTO log_positions (log_id, next_index) VALUES ($1, $2)",
                    log_id, count + 1,
                )  # fmt: skip
                stream_id = await conn.fetchval(
                    "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                    " created_at, fleet, log_id, last_ingest_at) VALUES ($1, 'events', '{}',"
                    " false, $2, '\\x00'::bytea, $3, 'default', $4, $5) RETURNING id",
                    tenant, count + 1, DAY, log_id, minute_start(now_minute),
                )  # fmt: skip
                await conn.execute(
                    "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header,"
                    " signature, chain_leaf, log_id, log_index) SELECT $1 || i, $2, $3, i,"
                    " 'ref', convert_to($4, 'UTF8'), '\\x00'::bytea, '\\x00'::bytea, $5, i"
                    " FROM generate_series(1, $6) i",
                    f"{tenant}-", tenant, stream_id, HEADER, log_id, count,
                )  # fmt: skip
                await conn.executemany(
                    "INSERT INTO ingest_minutes (log_id, minute, records) VALUES ($1, $2, $3)",
                    [(log_id, m, n) for m, n in minutes if n],
                )
                await conn.executemany(
                    "INSERT INTO checkpoints (log_id, size, root, note, created_at)"
                    " VALUES ($1, $2, '\\x00'::bytea, '', $3)",
                    [(log_id, size, minute_start(m)) for m, size in checkpoints],
                )
                await conn.executemany(
                    "INSERT INTO witness_health (log_id, witness, cosigned_size, cosigned_at,"
                    " failures, code, reason, failed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    [
                        (log_id, "w1", sealed, minute_start(now_minute - 5), 0, None, None, None),
                        (log_id, "w2", 1, DAY, 12, "witness_refused", "witness.two_roots", DAY),
                    ],
                )
                await conn.execute(
                    "INSERT INTO subjects (tenant, subject_index, subject_ref, created_at,"
                    " erased_at) SELECT $1, convert_to(lpad(i::text, 8, '0'), 'UTF8'), $2 || i,"
                    " $3, CASE WHEN i % 10 = 0 THEN $3 END FROM generate_series(1, 1000) i",
                    tenant, f"{tenant}-subject-", DAY,
                )  # fmt: skip
                await conn.executemany(
                    "INSERT INTO tokens (token_hash, tenant, label, created_at, last_used_at)"
                    " VALUES ($1, $2, 't', $3, $3)",
                    [(f"{tenant}{i}".encode(), tenant, DAY) for i in range(3)],
                )
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


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
def served(request: pytest.FixtureRequest) -> Iterator[tuple[TestClient[Any], Settings]]:
    folder = Path(tempfile.mkdtemp(prefix="live-bench-"))
    if request.param == "postgres":
        settings = Settings(
            data_dir=folder,
            database_url=request.getfixturevalue("cluster").url(),
            seal_interval=0,
            transparency_interval=0,
        )
    else:
        settings = Settings(data_dir=folder, seal_interval=0, transparency_interval=0)
    try:
        with TestClient(create_app(settings)) as client:  # the schema, then the rows
            now_minute = int(time.time()) // 60
            if settings.database_url:
                asyncio.run(_fill_postgres(settings.database_url, now_minute))
            else:
                _fill_sqlite(settings.database_path, now_minute)
            cookie = client.app.state.panel.keyring.issue(
                LegacySession("operator-1", int(time.time()) + 24 * 3600)
            )
            client.cookies.set(COOKIE_NAME, cookie)
            yield client, settings
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _page(client: TestClient[Any], tenant: str, count: int, accept: str) -> None:
    answer = client.get(f"/tenants/{tenant}/live", headers={"Accept": accept})
    assert answer.status_code == 200, answer.text[:300]
    if accept == "application/json":
        body = json.loads(answer.content)
        assert body["streams"][0]["record_count"] == count
        assert body["logs"][0]["sealing_lag"]["records"] > 0
        assert body["two_roots"] == [{"origin": f"bench/{tenant}", "witness": "w2"}]
    else:
        assert "witness.two_roots" in answer.text and "<svg" in answer.text


def test_page_small(benchmark, served) -> None:
    benchmark(_page, served[0], "small", SMALL, "text/html")


def test_page_big(benchmark, served) -> None:
    benchmark(_page, served[0], "big", BIG, "text/html")


def test_json_big(benchmark, served) -> None:
    _page(served[0], "big", BIG, "application/json")  # the figures are right, once
    benchmark(_page, served[0], "big", BIG, "application/json")


def _count(settings: Settings) -> int:
    sql = "SELECT count(*) FROM records WHERE tenant = 'big'"
    if settings.database_url:

        async def fetch() -> int:
            conn = await asyncpg.connect(settings.database_url)
            try:
                return int(await conn.fetchval(sql))
            finally:
                await conn.close()

        return asyncio.run(fetch())
    conn = sqlite_schema.connect(settings.database_path)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_count_by_scan(benchmark, served) -> None:
    assert benchmark.pedantic(_count, args=(served[1],), rounds=3, iterations=1) == BIG
