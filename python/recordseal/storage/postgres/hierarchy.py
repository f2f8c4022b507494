"""The tenant hierarchy's part of the PostgreSQL store (``HierarchyStore``): the SQL only.

Every write is one transaction from the store's pool. Rows are never deleted, so a row found
taken by ``INSERT … ON CONFLICT`` is still there when it is read back in the same
transaction, whichever process wrote it.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from recordseal.storage.hierarchy import FleetRow, OrganizationRow, TenantRow
from recordseal.storage.postgres.database import PostgresDatabase

_TENANT = "id, display_name, contact_email, active, source, created_at"
_ORGANIZATION = "tenant_id, id, display_name, sso_provider_ref, source, created_at"
_FLEET = "fleet_id, organization_id, tenant_id"


def _tenant(row: asyncpg.Record) -> TenantRow:
    return TenantRow(*row)


def _organization(row: asyncpg.Record) -> OrganizationRow:
    return OrganizationRow(*row)


def _fleet(row: asyncpg.Record) -> FleetRow:
    return FleetRow(*row)


class PostgresHierarchy:
    """``HierarchyStore`` on the database of a ``PostgresStore``, through its pool."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    def _pool(self) -> asyncpg.Pool:
        return self._db.pool

    # -- tenants -------------------------------------------------------------------------

    async def put_tenant(self, tenant: TenantRow) -> tuple[TenantRow, bool]:
        t = tenant
        async with self._pool().acquire() as conn, conn.transaction():
            written = await conn.fetchrow(
                f"INSERT INTO tenants ({_TENANT}) VALUES ($1, $2, $3, $4, $5, $6)"
                " ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name,"
                " contact_email = excluded.contact_email, source = excluded.source"
                f" WHERE tenants.source = 'implicit' RETURNING {_TENANT}",
                t.id,
                t.display_name,
                t.contact_email,
                t.active,
                t.source,
                t.created_at,
            )
            if written is not None:
                return _tenant(written), True
            stored = await conn.fetchrow(f"SELECT {_TENANT} FROM tenants WHERE id = $1", t.id)
            assert stored is not None  # rows are never deleted
            return _tenant(stored), False

    async def tenant(self, tenant_id: str) -> TenantRow | None:
        row = await self._pool().fetchrow(f"SELECT {_TENANT} FROM tenants WHERE id = $1", tenant_id)
        return _tenant(row) if row is not None else None

    async def tenants(self) -> list[TenantRow]:
        rows = await self._pool().fetch(f"SELECT {_TENANT} FROM tenants ORDER BY id")
        return [_tenant(row) for row in rows]

    async def set_tenant_active(self, tenant_id: str, active: bool) -> TenantRow | None:
        row = await self._pool().fetchrow(
            f"UPDATE tenants SET active = $2 WHERE id = $1 RETURNING {_TENANT}", tenant_id, active
        )
        return _tenant(row) if row is not None else None

    # -- organizations -------------------------------------------------------------------

    async def put_organization(
        self, organization: OrganizationRow
    ) -> tuple[OrganizationRow, bool] | None:
        o = organization
        async with self._pool().acquire() as conn, conn.transaction():
            if await conn.fetchval("SELECT 1 FROM tenants WHERE id = $1", o.tenant_id) is None:
                return None
            written = await conn.fetchrow(
                f"INSERT INTO organizations ({_ORGANIZATION}) VALUES ($1, $2, $3, $4, $5, $6)"
                f" ON CONFLICT DO NOTHING RETURNING {_ORGANIZATION}",
                o.tenant_id,
                o.id,
                o.display_name,
                o.sso_provider_ref,
                o.source,
                o.created_at,
            )
            if written is not None:
                return _organization(written), True
            stored = await conn.fetchrow(
                f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = $1 AND id = $2",
                o.tenant_id,
                o.id,
            )
            assert stored is not None  # rows are never deleted
            return _organization(stored), False

    async def organization(self, tenant_id: str, organization_id: str) -> OrganizationRow | None:
        row = await self._pool().fetchrow(
            f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = $1 AND id = $2",
            tenant_id,
            organization_id,
        )
        return _organization(row) if row is not None else None

    async def organizations(self, tenant_id: str) -> list[OrganizationRow]:
        rows = await self._pool().fetch(
            f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = $1 ORDER BY id",
            tenant_id,
        )
        return [_organization(row) for row in rows]

    # -- fleets --------------------------------------------------------------------------

    async def put_fleet(self, fleet: FleetRow) -> tuple[FleetRow, bool] | None:
        f = fleet
        async with self._pool().acquire() as conn, conn.transaction():
            claimed = await self._claimed(conn, f.fleet_id)
            if claimed is not None:
                return claimed, False
            known = await conn.fetchval(
                "SELECT 1 FROM organizations WHERE tenant_id = $1 AND id = $2",
                f.tenant_id,
                f.organization_id,
            )
            if known is None:
                return None
            written = await conn.fetchrow(
                f"INSERT INTO fleet_refs ({_FLEET}) VALUES ($1, $2, $3)"
                f" ON CONFLICT DO NOTHING RETURNING {_FLEET}",
                f.fleet_id,
                f.organization_id,
                f.tenant_id,
            )
            if written is not None:
                return _fleet(written), True
            raced = await self._claimed(conn, f.fleet_id)  # another process, just now
            assert raced is not None
            return raced, False

    @staticmethod
    async def _claimed(conn: Any, fleet_id: str) -> FleetRow | None:
        row = await conn.fetchrow(f"SELECT {_FLEET} FROM fleet_refs WHERE fleet_id = $1", fleet_id)
        return _fleet(row) if row is not None else None

    async def fleet(self, fleet_id: str) -> FleetRow | None:
        row = await self._pool().fetchrow(
            f"SELECT {_FLEET} FROM fleet_refs WHERE fleet_id = $1", fleet_id
        )
        return _fleet(row) if row is not None else None

    async def fleets(self, tenant_id: str, organization_id: str) -> list[FleetRow]:
        rows = await self._pool().fetch(
            f"SELECT {_FLEET} FROM fleet_refs WHERE tenant_id = $1 AND organization_id = $2"
            " ORDER BY fleet_id",
            tenant_id,
            organization_id,
        )
        return [_fleet(row) for row in rows]
