"""Log positions assigned at insert (docs/records.md, "Sealing"), on both backends.

A record takes the next position of its (tenant, fleet) log in the transaction that inserts
it; the sealer only hashes the leaves after the sealed size and never rewrites a record. The
migration gives the pending records of an existing database the positions the sealer would
have given them.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import asyncpg

from recordseal.core import leaf_hash
from recordseal.merkle import tree
from recordseal.merkle.genesis import log_origin, tenant_genesis
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.storage.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from recordseal.storage.requests import Append, NewRecord, SubjectClaim
from recordseal.storage.sqlite.schema import MIGRATIONS as SQLITE_MIGRATIONS
from recordseal.storage.sqlite.schema import connect
from tests.backends import query
from tests.fleet.support import SERVICE, seal, using

NOW = "2026-11-23T10:00:00.000000Z"


def leaf(name: str) -> bytes:
    return leaf_hash(name.encode())


def build_each(appends, slots, heads) -> list[NewRecord]:  # type: ignore[no-untyped-def]
    """A builder whose chain leaf is the leaf hash of the record id."""
    records = []
    for append, slot in zip(appends, slots, strict=True):
        seq, _ = heads[slot]
        chain_leaf = leaf(append.record_id)
        heads[slot] = (seq + 1, chain_leaf)
        records.append(NewRecord(append.record_id, seq, b"{}", b"sig", chain_leaf, b"sealed"))
    return records


async def append(store: Store, stream: str, fleet_log_records: list[str]) -> list[NewRecord]:
    row = await store.records.get_stream("acme", stream)
    assert row is not None
    subject = SubjectClaim(b"subject", "ref", b"wrapped")
    outcomes = await store.records.append_records(
        "acme", [Append(row.id, subject, r, None) for r in fleet_log_records], NOW, build_each
    )
    assert all(isinstance(o, NewRecord) for o in outcomes), outcomes
    return [o for o in outcomes if isinstance(o, NewRecord)]


def expected_root(tenant: str, fleet: str, names: list[str]) -> bytes:
    nodes: dict[tuple[int, int], bytes] = {}
    hashes = [leaf_hash(tenant_genesis(tenant, fleet))] + [leaf(n) for n in names]
    for index, digest in enumerate(hashes):
        for level, i, node in tree.nodes_completed_by_append(
            index, digest, lambda lv, ix: nodes[(lv, ix)]
        ):
            nodes[(level, i)] = node
    return tree.root(len(hashes), lambda lv, ix: nodes[(lv, ix)])


def test_positions_are_taken_at_insert_and_sealing_only_adds_nodes(store_settings: Settings):
    store = open_store(store_settings)

    async def body(store: Store) -> None:
        await store.records.create_stream("acme", "a", {}, False, bytes(32), NOW)
        await store.records.create_stream("acme", "b", {}, False, bytes(32), NOW)
        await store.records.create_stream("acme", "c", {}, False, bytes(32), NOW, fleet="f2")
        await append(store, "a", ["a1", "a2"])
        await append(store, "b", ["b1"])
        await append(store, "c", ["c1"])
        await append(store, "a", ["a3"])
        # Taken at insert: streams a and b share the default log, c has its own.
        assert await store.logs.unsealed_logs() == [("acme", "default"), ("acme", "f2")]
        assert await store.logs.record_seal("acme", "a1") is None  # positioned, not yet sealed
        batch = await seal(store, "acme", "default", NOW)
        assert batch is not None and (batch.first_index, batch.size) == (1, 5)
        assert batch.root == expected_root("acme", "default", ["a1", "a2", "b1", "a3"])
        origin = log_origin(SERVICE, "acme", "default")
        assert [await store.logs.record_seal("acme", r) for r in ("a1", "b1", "a3")] == [
            (origin, 1),
            (origin, 3),
            (origin, 4),
        ]
        assert await seal(store, "acme", "default", NOW) is None  # nothing pending
        assert await store.logs.unsealed_logs() == [("acme", "f2")]
        await append(store, "b", ["b2"])
        batch = await seal(store, "acme", "default", NOW)
        assert batch is not None and (batch.first_index, batch.size) == (5, 6)
        assert batch.root == expected_root("acme", "default", ["a1", "a2", "b1", "a3", "b2"])
        f2 = await seal(store, "acme", "f2", NOW)
        assert f2 is not None and f2.root == expected_root("acme", "f2", ["c1"])
        # A stream of a tenant with no log yet makes an unnamed log row, listed nowhere.
        await store.records.create_stream("acme", "d", {}, False, bytes(32), NOW, fleet="f3")
        assert [log.fleet for log in await store.logs.anchor_logs()] == ["default", "f2"]
        assert await store.logs.unsealed_logs() == []

    using(store, body)
    rows = query(store_settings, "SELECT record_id, log_index FROM records ORDER BY record_id")
    assert rows == [("a1", 1), ("a2", 2), ("a3", 4), ("b1", 3), ("b2", 5), ("c1", 1)]


def test_seals_that_overlap_each_seal_once(store_settings: Settings) -> None:
    """The SQLite store grows a log outside its write lock and writes only if the size it grew
    from is still the log's: seals that overlap (here, started together) add every leaf once,
    with the root of the records in position order, on both backends."""
    store = open_store(store_settings)

    async def body(store: Store) -> None:
        await store.records.create_stream("acme", "a", {}, False, bytes(32), NOW)
        await append(store, "a", ["x0"])
        assert await seal(store, "acme", "default", NOW) is not None  # names the log
        names = []
        for round_ in range(3):
            batch_names = [f"r{round_}-{n}" for n in range(5)]
            await append(store, "a", batch_names)
            names += batch_names
            sealed = await asyncio.gather(*(seal(store, "acme", "default", NOW) for _ in range(3)))
            done = [b for b in sealed if b is not None]
            assert done and done[-1].size == 2 + len(names)
            assert done[-1].root == expected_root("acme", "default", ["x0", *names])
        assert await seal(store, "acme", "default", NOW) is None

    using(store, body)
    sizes = query(store_settings, "SELECT size FROM checkpoints ORDER BY size")
    assert len(sizes) == len(set(sizes))  # no size checkpointed twice


# --- the migration -------------------------------------------------------------------------

#: Before the migration: tenant acme's default log sealed with genesis, o1 and o2 (size 3);
#: o3, o4 and o5 pending; fleet f2's stream has two pending records and no log yet.
SEALED, PENDING, PENDING_F2 = ["o1", "o2"], ["o3", "o4", "o5"], ["p1", "p2"]


def old_rows() -> list[tuple[str, tuple[object, ...]]]:
    """Statements (in ``?`` style) that fill a database of the old schema."""
    genesis = leaf_hash(tenant_genesis("acme", "default"))
    nodes: dict[tuple[int, int], bytes] = {}
    for index, digest in enumerate([genesis, leaf("o1"), leaf("o2")]):
        for level, i, node in tree.nodes_completed_by_append(
            index, digest, lambda lv, ix: nodes[(lv, ix)]
        ):
            nodes[(level, i)] = node
    root = tree.root(3, lambda lv, ix: nodes[(lv, ix)])
    origin = log_origin(SERVICE, "acme", "default")
    rows: list[tuple[str, tuple[object, ...]]] = [
        (
            "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head, created_at,"
            " fleet) VALUES ('acme', 'orders', '{}', ?, 6, ?, ?, 'default')",
            (False, leaf("o5"), NOW),
        ),
        (
            "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head, created_at,"
            " fleet) VALUES ('acme', 'audit', '{}', ?, 3, ?, ?, 'f2')",
            (False, leaf("p2"), NOW),
        ),
        (
            "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES ('acme', 'default', ?,"
            " 3, ?)",
            (origin, root),
        ),
        (
            "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES (1, 3, ?,"
            " 'note', ?)",
            (root, NOW),
        ),
    ]
    rows += [
        ("INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (1, ?, ?, ?)", (lv, ix, h))
        for (lv, ix), h in nodes.items()
    ]
    for n, name in enumerate(SEALED + PENDING + PENDING_F2):
        stream, seq = (2, n - 4) if name in PENDING_F2 else (1, n + 1)
        sealed = (1, n + 1) if name in SEALED else (None, None)
        rows.append(
            (
                "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header,"
                " signature, chain_leaf, log_id, log_index) VALUES (?, 'acme', ?, ?, 'ref', ?,"
                " ?, ?, ?, ?)",
                (name, stream, seq, b"{}", b"sig", leaf(name), *sealed),
            )
        )
    return rows


def make_old_sqlite(path: Path) -> None:
    conn = connect(path)
    conn.execute("BEGIN")
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for version, script in enumerate(SQLITE_MIGRATIONS[:5], start=1):
        for statement in script.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    for sql, params in old_rows():
        conn.execute(sql, params)
    conn.execute("COMMIT")
    conn.close()


async def make_old_postgres(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE schema_version (version integer NOT NULL)")
        for version, script in enumerate(PG_MIGRATIONS[:3], start=1):
            await conn.execute(script)
            await conn.execute("INSERT INTO schema_version VALUES ($1)", version)
        for sql, params in old_rows():
            numbered = sql
            for n in range(1, sql.count("?") + 1):
                numbered = numbered.replace("?", f"${n}", 1)
            await conn.execute(numbered, *params)
    finally:
        await conn.close()


def test_the_migration_gives_pending_records_the_positions_after_the_sealed_size(
    store_settings: Settings,
) -> None:
    if store_settings.database_url:
        asyncio.run(make_old_postgres(store_settings.database_url))
    else:
        store_settings.database_path.parent.mkdir(parents=True, exist_ok=True)
        make_old_sqlite(store_settings.database_path)
    store = open_store(store_settings)

    async def body(store: Store) -> None:
        assert await store.logs.unsealed_logs() == [("acme", "default"), ("acme", "f2")]
        await append(store, "orders", ["o6"])  # after the migrated ones
        batch = await seal(store, "acme", "default", NOW)
        assert batch is not None and (batch.first_index, batch.size) == (3, 7)
        assert batch.root == expected_root("acme", "default", SEALED + PENDING + ["o6"])
        f2 = await seal(store, "acme", "f2", NOW)
        assert f2 is not None and f2.root == expected_root("acme", "f2", PENDING_F2)
        assert await store.logs.unsealed_logs() == []
        checkpoints = await store.logs.checkpoints("acme", "default")
        assert [c.size for c in checkpoints] == [3, 7]

    using(store, body)
    positions = query(
        store_settings, "SELECT record_id, log_index FROM records ORDER BY log_id, log_index"
    )
    assert positions == [(n, i + 1) for i, n in enumerate(SEALED + PENDING + ["o6"])] + [
        ("p1", 1),
        ("p2", 2),
    ]
    if not store_settings.database_url:
        with sqlite3.connect(store_settings.database_path) as conn:
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
