"""PostgreSQL statements on the ingest path (docs/records.md, "PostgreSQL").

- Keyed lookups stay one index lookup per key under a generic plan made while the table was
  small (``ONE_ROW_BY_KEY``): asyncpg prepares every statement, and PostgreSQL may keep such a
  plan until the next ANALYZE. The earlier ``tenant = $1 AND key = ANY($2)`` plan scanned every
  row of the tenant.
- A seal locks its log's row without blocking the foreign-key checks of the records written
  to that log meanwhile: appends do not wait for the seal under way.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from recordseal.identifiers import DEFAULT_FLEET
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.postgres.logs import LOCK_LOG
from recordseal.storage.postgres.records import IDEMPOTENCY_KEYS_BY_KEY, SUBJECTS_BY_INDEX
from recordseal.storage.postgres.writer import LOCK_ROWS, LOCKED_KEYS
from tests.backends import opened
from tests.pg_cluster import Cluster
from tests.storage.test_log_positions import NOW, append

#: Rows in the tables when the generic plans are made: enough that a scan of the tenant's rows
#: looks as cheap as an index lookup per key.
ROWS = 400


def index(n: int) -> bytes:
    return hashlib.sha256(b"subject-%d" % n).digest()


def bytea_array(values: list[bytes]) -> str:
    items = ", ".join("'\\x" + value.hex() + "'" for value in values)
    return f"ARRAY[{items}]::bytea[]"


def text_array(values: list[str]) -> str:
    items = ", ".join(f"'{value}'" for value in values)
    return f"ARRAY[{items}]::text[]"


KEYS = [f"key-{n}" for n in range(100)]
INDEXES = [index(n) for n in range(100)]

#: Each keyed statement, the table it reads, its key columns and its arguments.
STATEMENTS = {
    "subjects by index": (
        SUBJECTS_BY_INDEX,
        "subjects",
        ("tenant", "subject_index"),
        f"'acme', {bytea_array(INDEXES)}",
    ),
    "idempotency keys by key": (
        IDEMPOTENCY_KEYS_BY_KEY,
        "idempotency_keys",
        ("tenant", "key"),
        f"'acme', {text_array(KEYS)}",
    ),
    "the writer's locked keys": (
        LOCKED_KEYS,
        "idempotency_keys",
        ("tenant", "key"),
        f"{text_array(['acme'] * 100)}, {text_array(KEYS)}",
    ),
    "the writer's locked subjects and streams": (
        LOCK_ROWS,
        "subjects",
        ("tenant", "subject_index"),
        f"{text_array(['acme'] * 100)}, {bytea_array(INDEXES)}, ARRAY['acme']::text[],"
        " ARRAY[1]::bigint[]",
    ),
    "the writer's locked streams": (
        LOCK_ROWS,
        "streams",
        ("tenant", "id"),
        f"{text_array(['acme'] * 100)}, {bytea_array(INDEXES)}, {text_array(['acme'] * 100)},"
        f" ARRAY[{', '.join(str(n) for n in range(1, 101))}]::bigint[]",
    ),
}


def scans(plan: dict[str, Any], table: str) -> list[dict[str, Any]]:
    """The plan's nodes that read ``table``."""
    found = [plan] if plan.get("Relation Name") == table else []
    for child in plan.get("Plans", []):
        found += scans(child, table)
    return found


@pytest.mark.parametrize("name", STATEMENTS)
def test_keyed_lookups_stay_index_lookups_under_a_generic_plan(
    name: str, postgres: Cluster, tmp_path: Path
):
    sql, table, columns, arguments = STATEMENTS[name]
    settings = Settings(data_dir=tmp_path, database_url=postgres.url())

    async def body() -> list[dict[str, Any]]:
        async with opened(open_store(settings)):
            pass  # migrated
        conn = await asyncpg.connect(settings.database_url)
        try:
            await conn.execute("SET session_replication_role = replica")  # rows without FKs
            await conn.execute(
                "INSERT INTO subjects (tenant, subject_index, subject_ref, wrapped_key,"
                " created_at) SELECT 'acme', sha256(('other-' || g)::bytea), 'ref-' || g,"
                f" '\\x00', 'now' FROM generate_series(1, {ROWS}) g"
            )
            await conn.execute(
                "INSERT INTO idempotency_keys (tenant, key, request_hash, record_id,"
                " created_at) SELECT 'acme', 'other-' || g, '\\x00', 'r-' || g, 'now'"
                f" FROM generate_series(1, {ROWS}) g"
            )
            await conn.execute(
                "INSERT INTO streams (tenant, name, declarations, strict, next_seq, head,"
                " created_at, log_id) SELECT 'acme', 'other-' || g, '{}', false, 1, '\\x00',"
                f" 'now', 1 FROM generate_series(1, {ROWS}) g"
            )
            await conn.execute("ANALYZE subjects, idempotency_keys, streams")
            await conn.execute("SET plan_cache_mode = force_generic_plan")
            await conn.execute(f"PREPARE probe AS {sql}")
            plan = await conn.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE probe({arguments})")
            return scans(json.loads(plan)[0]["Plan"], table)
        finally:
            await conn.close()

    found = asyncio.run(body())
    assert found, f"{name}: the plan reads no {table}"
    for node in found:
        assert node["Node Type"] in ("Index Scan", "Index Only Scan"), (name, node)
        for column in columns:
            assert column in node["Index Cond"], (name, node)
        assert "Filter" not in node, (name, node)


def test_an_append_does_not_wait_for_a_seal_of_its_log(postgres: Cluster, tmp_path: Path):
    settings = Settings(data_dir=tmp_path, database_url=postgres.url())

    async def body() -> None:
        async with opened(open_store(settings)) as store:
            await store.records.create_stream("acme", "a", {}, False, bytes(32), NOW)
            await append(store, "a", ["a1"])
            sealer = await asyncpg.connect(settings.database_url)
            try:
                async with sealer.transaction():
                    # Holds the log's row as a seal does, for the whole of the append.
                    assert await sealer.fetchrow(LOCK_LOG, "acme", DEFAULT_FLEET) is not None
                    stored = await asyncio.wait_for(append(store, "a", ["a2", "a3"]), 30)
                    assert [r.seq for r in stored] == [2, 3]
            finally:
                await sealer.close()

    asyncio.run(body())
