"""The schema is ready to be distributed by tenant (docs/records.md, "Distributing by
tenant"): read from each backend's catalog after migrating, every table is placed
(``storage.tenancy``), every primary key and unique index of a tenant table leads with
``tenant``, no foreign key between tenant tables leaves it out, and no shared table points
into tenant data. On PostgreSQL the store's lookups by key use an index."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from recordseal.settings import Settings
from recordseal.storage import tenancy
from recordseal.storage.backends import open_store
from recordseal.storage.postgres import records as postgres_records
from recordseal.storage.sqlite import records as sqlite_records
from tests.pg_cluster import Cluster

PLACED = tenancy.DISTRIBUTED | tenancy.REFERENCE | tenancy.COORDINATOR


@dataclass
class Table:
    """A table's keys as the catalog holds them: each key (primary or unique) as its column
    names (None for an expression), and each foreign key as (its columns, the table it points
    to, that table's columns)."""

    keys: list[list[str | None]] = field(default_factory=list)
    foreign: list[tuple[list[str], str, list[str]]] = field(default_factory=list)


def sqlite_tables(path: Path) -> dict[str, Table]:
    conn = sqlite3.connect(path)
    try:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        tables = {}
        for name in names:
            table = Table()
            info = conn.execute(f"PRAGMA table_info({name})").fetchall()
            primary = [column for column in sorted(info, key=lambda c: c[5]) if column[5]]
            if primary:
                table.keys.append([column[1] for column in primary])
            for _, index, unique, _, _ in conn.execute(f"PRAGMA index_list({name})"):
                if unique:
                    table.keys.append(
                        [row[2] for row in conn.execute(f"PRAGMA index_info({index})")]
                    )
            by_id: dict[int, tuple[list[str], str, list[str]]] = {}
            for fk_id, _, parent, column, parent_column, *_ in conn.execute(
                f"PRAGMA foreign_key_list({name})"
            ):
                columns, _, parents = by_id.setdefault(fk_id, ([], parent, []))
                columns.append(column)
                parents.append(parent_column)
            table.foreign = list(by_id.values())
            tables[name] = table
        return tables
    finally:
        conn.close()


CONSTRAINT_COLUMNS = """
SELECT c.conrelid::regclass::text AS tab, c.contype, c.confrelid::regclass::text AS parent,
       array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
             ORDER BY k.i) AS columns,
       array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, i)
             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n
             ORDER BY k.i) AS parent_columns
FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
WHERE n.nspname = current_schema() AND c.contype IN ('p', 'u', 'f')
"""
# Unique indexes, constraints' and others' (an expression's column is NULL): attnum 0.
UNIQUE_INDEXES = """
SELECT t.relname AS tab,
       array(SELECT a.attname FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(n, o)
             LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
             ORDER BY k.o) AS columns
FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = current_schema() AND i.indisunique
"""


def postgres_tables(url: str) -> dict[str, Table]:
    async def read() -> dict[str, Table]:
        conn = await asyncpg.connect(url)
        try:
            tables = {
                name: Table()
                for (name,) in await conn.fetch(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                )
            }
            for row in await conn.fetch(CONSTRAINT_COLUMNS):
                if row["contype"] == "f":
                    tables[row["tab"]].foreign.append(
                        (list(row["columns"]), row["parent"], list(row["parent_columns"]))
                    )
            for row in await conn.fetch(UNIQUE_INDEXES):  # primary keys and unique ones
                tables[row["tab"]].keys.append(list(row["columns"]))
            return tables
        finally:
            await conn.close()

    return asyncio.run(read())


def migrated_tables(settings: Settings) -> dict[str, Table]:
    async def migrate() -> None:
        store = open_store(settings)
        await store.open()
        await store.close()

    asyncio.run(migrate())
    if settings.database_url:
        return postgres_tables(settings.database_url)
    return sqlite_tables(settings.database_path)


def test_every_key_of_tenant_data_leads_with_the_tenant(store_settings: Settings) -> None:
    tables = migrated_tables(store_settings)
    assert set(tables) == PLACED, "a table not placed in storage.tenancy, or one gone"
    for name in tenancy.DISTRIBUTED:
        keys = tables[name].keys
        assert keys, f"{name} has no primary key"
        for key in keys:
            assert key[0] == "tenant", f"{name}: key {key} does not lead with tenant"
        for columns, parent, parent_columns in tables[name].foreign:
            if parent in tenancy.DISTRIBUTED:
                pairs = dict(zip(columns, parent_columns, strict=True))
                assert pairs.get("tenant") == "tenant", (
                    f"{name}: foreign key {columns} -> {parent} {parent_columns} crosses tenants"
                )
            else:  # a tenant table may point at a table every server holds, not at another
                assert parent in tenancy.REFERENCE, f"{name} -> {parent}"
    for name in tenancy.REFERENCE | tenancy.COORDINATOR:
        for _, parent, _ in tables[name].foreign:
            assert parent not in tenancy.DISTRIBUTED, f"{name} points into tenant data"
            if name in tenancy.REFERENCE:
                assert parent in tenancy.REFERENCE, f"{name} -> {parent}"


# --- the store's lookups use the keys (PostgreSQL's planner) ---------------------------------

#: What the PostgreSQL store asks of its keys, each as its query there with sample values.
LOOKUPS: list[tuple[str, tuple[object, ...]]] = [
    (  # a record by the tenant that asks for it (PostgresRecords.get_record)
        "SELECT r.record_id, s.name FROM records r"
        " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
        " WHERE r.record_id = $1 AND r.tenant = $2",
        ("r1", "acme"),
    ),
    (  # a batch's records, after a commit whose outcome was lost (postgres.writer)
        "SELECT count(*) FROM unnest($1::text[], $2::text[]) AS u(t, r)"
        " JOIN records ON tenant = u.t AND record_id = u.r",
        (["acme", "acme"], ["r1", "r2"]),
    ),
    (  # a record's payload (PostgresRecords.get_sealed_payload)
        "SELECT sealed FROM payloads WHERE record_id = $1 AND tenant = $2",
        ("r1", "acme"),
    ),
    (postgres_records.LIST_RECORDS, (1, "acme", 1, 100)),
    (  # a proof's nodes by the log's origin (PostgresLogs.log_nodes)
        "SELECT n.level, n.idx, n.hash FROM log_nodes n"
        " JOIN logs l ON l.tenant = n.tenant AND l.id = n.log_id"
        " JOIN unnest($2::integer[], $3::bigint[]) AS u(level, idx)"
        " ON n.level = u.level AND n.idx = u.idx WHERE l.origin = $1",
        ("o", [0], [0]),
    ),
    (  # the aggregate's entries by position, under its tenant '' (PostgresLogs.aggregate_entries)
        "SELECT idx, entry FROM aggregate_entries WHERE tenant = $1 AND idx >= $2 AND idx < $3"
        " ORDER BY idx",
        ("", 0, 256),
    ),
    (  # a checkpoint by the log's origin (PostgresLogs.checkpoint_at)
        "SELECT c.note FROM checkpoints c JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
        " WHERE l.origin = $1 AND c.size = $2",
        ("o", 1),
    ),
]


def test_postgres_lookups_by_key_use_an_index(postgres: Cluster) -> None:
    """With sequential scans priced out, each lookup's plan reads no table whole: the keys
    that lead with the tenant (or, by a log's origin, the index on it) serve it."""
    url = postgres.url()
    migrated_tables(Settings(data_dir=Path("/nonexistent"), database_url=url))

    async def plans() -> list[str]:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("SET enable_seqscan = off")
            found = []
            for sql, args in LOOKUPS:
                rows = await conn.fetch("EXPLAIN " + sql, *args)
                found.append("\n".join(row[0] for row in rows))
            return found
        finally:
            await conn.close()

    for (sql, _), plan in zip(LOOKUPS, asyncio.run(plans()), strict=True):
        assert "Seq Scan" not in plan, f"{sql}\n{plan}"
        assert "Index" in plan, f"{sql}\n{plan}"


def test_sqlite_lookups_by_key_use_an_index(tmp_path: Path) -> None:
    """The same on SQLite: its planner reports a SCAN of a table it reads whole."""
    settings = Settings(data_dir=tmp_path)
    migrated_tables(settings)
    lookups = [
        "SELECT r.record_id, s.name FROM records r"
        " JOIN streams s ON s.tenant = r.tenant AND s.id = r.stream_id"
        " WHERE r.tenant = 'acme' AND r.record_id = 'r1'",
        "SELECT sealed FROM payloads WHERE tenant = 'acme' AND record_id = 'r1'",
        sqlite_records.LIST_RECORDS.replace("?", "1"),
        "SELECT c.note FROM checkpoints c JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
        " WHERE l.origin = 'o' AND c.size = 1",
        "SELECT max(id) FROM streams",
        "SELECT max(id) FROM logs",
    ]
    conn = sqlite3.connect(settings.database_path)
    try:
        for sql in lookups:
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
            assert not [step for step in plan if step.startswith("SCAN")], (sql, plan)
    finally:
        conn.close()


def test_the_tenant_column_holds_no_null(tmp_path: Path) -> None:
    """A distribution column has a value on every row: a log of no tenant is kept under
    ``tenancy.NO_TENANT``."""
    settings = Settings(data_dir=tmp_path)
    migrated_tables(settings)
    conn = sqlite3.connect(settings.database_path)
    try:
        for name in sorted(tenancy.DISTRIBUTED):
            info = conn.execute(f"PRAGMA table_info({name})").fetchall()
            tenant = [row for row in info if row[1] == "tenant"]
            assert tenant and tenant[0][3] == 1, f"{name}.tenant is missing or nullable"
    finally:
        conn.close()
