"""Anchors with an optional tenant (spec panel 6.2, 9.4): null-safe scoped queries.

Every test runs once per Store backend (the ``store`` fixture).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from recordseal.core import leaf_hash
from recordseal.merkle.genesis import tenant_genesis
from recordseal.storage.base import Store
from recordseal.storage.sqlite import SQLiteStore
from recordseal.storage.sqlite.schema import MIGRATIONS, connect
from tests.fleet.support import ingest, seal, using
from tests.pg_cluster import Cluster

DAY1 = "2026-11-20T10:00:00.000000Z"
DAY2 = "2026-11-21T09:00:00.000000Z"


async def three_scopes(store: Store) -> None:
    """Fleet ``f1`` three times: legacy (no tenant), tenant acme, tenant globex."""
    for tenant in (None, "acme", "globex"):
        assert await seal(store, tenant, "f1", DAY1) is not None


def test_a_query_for_no_tenant_returns_only_legacy_rows(store: Store) -> None:
    async def body(store: Store) -> None:
        await three_scopes(store)
        legacy = await store.logs.anchors(None, "f1")
        assert [(a.tenant, a.fleet, a.size) for a in legacy] == [(None, "f1", 1)]
        assert legacy[0].root == leaf_hash(tenant_genesis(None, "f1"))
        assert legacy[0].origin == "test.local/f1"
        latest = await store.logs.latest_anchor(None, "f1")
        assert latest is not None and latest.tenant is None

    using(store, body)


def test_a_query_for_a_tenant_returns_only_that_tenants_rows(store: Store) -> None:
    async def body(store: Store) -> None:
        await three_scopes(store)
        for tenant in ("acme", "globex"):
            rows = await store.logs.anchors(tenant, "f1")
            assert [(a.tenant, a.origin) for a in rows] == [(tenant, f"test.local/{tenant}/f1")]
            assert rows[0].root == leaf_hash(tenant_genesis(tenant, "f1"))
            latest = await store.logs.latest_anchor(tenant, "f1")
            assert latest is not None and latest.tenant == tenant
        assert await store.logs.anchors("initech", "f1") == []
        assert await store.logs.latest_anchor("initech", "f1") is None
        assert await store.logs.anchors(None, "f2") == []

    using(store, body)


def test_legacy_and_tenant_logs_of_one_fleet_stay_apart_when_sealed_again(store: Store) -> None:
    async def body(store: Store) -> None:
        await three_scopes(store)
        # Nothing pending anywhere: no scope gets a new anchor, and no second legacy log.
        for tenant in (None, "acme", "globex"):
            assert await seal(store, tenant, "f1", DAY2) is None
        logs = await store.logs.anchor_logs()
        assert [(log.tenant, log.fleet) for log in logs] == [
            (None, "f1"),
            ("acme", "f1"),
            ("globex", "f1"),
        ]

    using(store, body)


def test_anchors_by_day_and_latest_before_a_day(store: Store) -> None:
    async def body(store: Store) -> None:
        await ingest(store, "acme", 2)
        first = await seal(store, "acme", "default", DAY1)
        await ingest(store, "acme", 3)
        second = await seal(store, "acme", "default", DAY2)
        await ingest(store, "acme", 1)
        third = await seal(store, "acme", "default", "2026-11-21T23:59:59.999999Z")
        assert first and second and third
        assert [a.size for a in await store.logs.anchors("acme", "default")] == [3, 6, 7]
        day2 = await store.logs.anchors(
            "acme", "default", created_from="2026-11-21", created_before="2026-11-22"
        )
        assert [a.size for a in day2] == [6, 7]
        assert [a.root for a in day2] == [second.root, third.root]
        before = await store.logs.latest_anchor("acme", "default", created_before="2026-11-21")
        assert before is not None and before.size == 3
        assert (
            await store.logs.latest_anchor("acme", "default", created_before="2026-11-20") is None
        )
        latest = await store.logs.latest_anchor("acme", "default")
        assert latest is not None and latest.size == 7 and latest.note == third.note
        # the tenant's rows never answer a legacy query of the same fleet
        assert await store.logs.anchors(None, "default") == []

    using(store, body)


async def read_migrated_log(store: Store) -> None:
    """After the migration: tenant acme's log of fleet f1 (one checkpoint of size 1, root
    r…r) reads as before, and a legacy log of f1 can be opened beside it."""
    rows = await store.logs.anchors("acme", "f1")
    assert [(a.tenant, a.size, a.root) for a in rows] == [("acme", 1, b"r" * 32)]
    assert [c.size for c in await store.logs.checkpoints("acme", "f1")] == [1]
    assert await store.logs.anchors(None, "f1") == []
    assert await seal(store, None, "f1", DAY1) is not None  # a legacy log beside it


def test_a_database_from_before_tenant_scoping_keeps_its_logs(tmp_path: Path) -> None:
    """Migration 4 rebuilds ``logs`` with a nullable tenant; rows, ids and the foreign keys
    of nodes and checkpoints survive, and existing callers still read them."""
    path = tmp_path / "old.sqlite3"
    conn = connect(path)
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version, script in enumerate(MIGRATIONS[:3], start=1):
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    conn.execute(
        "INSERT INTO logs (id, tenant, fleet, origin, size, root) VALUES (7, 'acme', 'f1',"
        " 'test.local/acme/f1', 1, ?)",
        (b"r" * 32,),
    )
    conn.execute("INSERT INTO log_nodes VALUES (7, 0, 0, ?)", (b"n" * 32,))
    conn.execute(
        "INSERT INTO checkpoints VALUES (7, 1, ?, 'note', '2026-01-01T00:00:00.000000Z')",
        (b"r" * 32,),
    )
    conn.execute("COMMIT")
    conn.close()

    store = SQLiteStore(path)

    using(store, read_migrated_log)
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA foreign_key_check").fetchall() == []
    assert check.execute("SELECT max(version) FROM schema_version").fetchone() == (len(MIGRATIONS),)
    # a legacy log is kept under the tenant '' (docs/records.md, "Distributing by tenant")
    assert check.execute("SELECT id, tenant FROM logs ORDER BY id").fetchall() == [
        (7, "acme"),
        (8, ""),
    ]
    try:  # a second legacy log of the same fleet is refused by the unique index
        check.execute(
            "INSERT INTO logs (id, tenant, fleet, origin, size, root)"
            " VALUES (9, '', 'f1', 'x', 0, x'')"
        )
    except sqlite3.IntegrityError:
        pass
    else:
        raise AssertionError("two legacy logs of one fleet were accepted")


def test_a_postgres_database_from_before_tenant_scoping_keeps_its_logs(postgres: Cluster) -> None:
    """Migration 3 (PostgreSQL) makes ``logs.tenant`` nullable; rows and ids survive, existing
    callers still read them, a legacy log can be opened beside them, and a second legacy log
    of the same fleet is refused by the unique index of a scope (the legacy log's tenant is ''
    since PostgreSQL migration 13)."""
    import asyncpg

    from recordseal.storage.postgres import PostgresStore
    from recordseal.storage.postgres.schema import MIGRATIONS as PG_MIGRATIONS

    url = postgres.url()

    async def before() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
            for version, script in enumerate(PG_MIGRATIONS[:2], start=1):
                await conn.execute(script)
                await conn.execute("INSERT INTO schema_version VALUES ($1)", version)
            log_id = await conn.fetchval(
                "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ('acme', 'f1',"
                " 'test.local/acme/f1', 1, $1) RETURNING id",
                b"r" * 32,
            )
            await conn.execute("INSERT INTO log_nodes VALUES ($1, 0, 0, $2)", log_id, b"n" * 32)
            await conn.execute(
                "INSERT INTO checkpoints VALUES ($1, 1, $2, 'note', '2026-01-01T00:00:00.000000Z')",
                log_id,
                b"r" * 32,
            )
        finally:
            await conn.close()

    asyncio.run(before())

    async def body(store: Store) -> None:
        await read_migrated_log(store)
        assert [(log.tenant, log.fleet) for log in await store.logs.anchor_logs()] == [
            ("acme", "f1"),
            (None, "f1"),
        ]

    using(PostgresStore(url), body)

    async def after() -> None:
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT max(version) FROM schema_version") == len(
                PG_MIGRATIONS
            )
            with pytest.raises(asyncpg.UniqueViolationError):
                await conn.execute(
                    "INSERT INTO logs (tenant, fleet, origin, size, root)"
                    " VALUES ('', 'f1', 'x', 0, '')"
                )
        finally:
            await conn.close()

    asyncio.run(after())
