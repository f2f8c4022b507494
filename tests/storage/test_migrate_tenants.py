"""The migration that moved tenants into the database (SQLite 12, PostgreSQL 10): a database of
the version before upgrades, and every tenant already holding tokens or streams is registered,
so the panel shows it after the upgrade."""

from __future__ import annotations

import asyncio

from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.hierarchy import TenantRow
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.sqlite import schema as sqlite_schema
from tests.backends import query
from tests.storage.schema_support import take_back

EARLY, LATE = "2026-01-01T00:00:00.000000Z", "2026-06-01T00:00:00.000000Z"


def _older_database(settings: Settings) -> int:
    """A database with tokens of acme (two) and globex, and streams of acme and initech, at
    the schema version before the tenant tables: made at the latest version, then taken back
    (``tests/storage/schema_support.py``)."""

    async def fill() -> None:
        store = open_store(settings)
        await store.open()
        try:
            await store.tokens.add_token(b"a" * 32, "acme", "", LATE)
            await store.tokens.add_token(b"b" * 32, "acme", "", EARLY)
            await store.tokens.add_token(b"g" * 32, "globex", "", LATE)
            for tenant in ("acme", "initech"):
                await store.records.create_stream(tenant, "orders", {}, False, b"\0" * 32, LATE)
        finally:
            await store.close()

    asyncio.run(fill())
    latest = len(postgres_schema.MIGRATIONS if settings.database_url else sqlite_schema.MIGRATIONS)
    tenants_version = 10 if settings.database_url else 12  # the migration of the tenant tables
    take_back(settings, tenants_version - 1)  # its rows kept, in that version's tables
    assert query(settings, "SELECT max(version) FROM schema_version") == [(tenants_version - 1,)]
    return latest


def test_tenants_holding_tokens_or_streams_are_registered_on_upgrade(store_settings) -> None:
    latest = _older_database(store_settings)

    async def tenants() -> list[TenantRow]:
        store = open_store(store_settings)
        await store.open()  # migrates
        try:
            return await store.hierarchy.tenants()
        finally:
            await store.close()

    assert asyncio.run(tenants()) == [
        TenantRow("acme", "acme", None, True, "implicit", EARLY),
        TenantRow("globex", "globex", None, True, "implicit", LATE),
        TenantRow("initech", "initech", None, True, "implicit", LATE),
    ]
    assert query(store_settings, "SELECT max(version) FROM schema_version") == [(latest,)]
