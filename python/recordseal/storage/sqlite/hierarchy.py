"""The tenant hierarchy's part of the SQLite store (``HierarchyStore``): the SQL only.

Writes go through the store's group-commit writer (one transaction each, under its
cross-process lock); reads use the store's reader connection.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from recordseal.storage.hierarchy import FleetRow, OrganizationRow, TenantRow
from recordseal.storage.sqlite.database import SQLiteDatabase
from recordseal.storage.sqlite.writer import Batch

T = TypeVar("T")

_TENANT = "id, display_name, contact_email, active, source, created_at"
_ORGANIZATION = "tenant_id, id, display_name, sso_provider_ref, source, created_at"
_FLEET = "fleet_id, organization_id, tenant_id"


def _tenant(row: Sequence[Any]) -> TenantRow:
    tenant_id, display_name, contact_email, active, source, created_at = row
    return TenantRow(tenant_id, display_name, contact_email, bool(active), source, created_at)


def _organization(row: Sequence[Any]) -> OrganizationRow:
    return OrganizationRow(*row)


def _fleet(row: Sequence[Any]) -> FleetRow:
    return FleetRow(*row)


def select_tenant(conn: sqlite3.Connection, tenant_id: str) -> TenantRow | None:
    row = conn.execute(f"SELECT {_TENANT} FROM tenants WHERE id = ?", (tenant_id,)).fetchone()
    return _tenant(row) if row is not None else None


class SQLiteHierarchy:
    """``HierarchyStore`` on the database of a ``SQLiteStore``, through its writer and reader."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    async def _submit(self, job: Callable[[sqlite3.Connection], T]) -> T:
        def run(conn: sqlite3.Connection, batch: Batch) -> T:
            return job(conn)

        result: T = await self._db.writer.submit(run)
        return result

    # -- tenants -------------------------------------------------------------------------

    async def put_tenant(self, tenant: TenantRow) -> tuple[TenantRow, bool]:
        def job(conn: sqlite3.Connection) -> tuple[TenantRow, bool]:
            written = conn.execute(
                f"INSERT INTO tenants ({_TENANT}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name,"
                " contact_email = excluded.contact_email, source = excluded.source"
                " WHERE tenants.source = 'implicit'",
                (
                    tenant.id,
                    tenant.display_name,
                    tenant.contact_email,
                    int(tenant.active),
                    tenant.source,
                    tenant.created_at,
                ),
            ).rowcount
            stored = select_tenant(conn, tenant.id)
            assert stored is not None
            return stored, written > 0

        return await self._submit(job)

    async def tenant(self, tenant_id: str) -> TenantRow | None:
        rows = self._db.read(f"SELECT {_TENANT} FROM tenants WHERE id = ?", (tenant_id,))
        return _tenant(rows[0]) if rows else None

    async def tenants(self) -> list[TenantRow]:
        return [_tenant(row) for row in self._db.read(f"SELECT {_TENANT} FROM tenants ORDER BY id")]

    async def set_tenant_active(self, tenant_id: str, active: bool) -> TenantRow | None:
        def job(conn: sqlite3.Connection) -> TenantRow | None:
            conn.execute("UPDATE tenants SET active = ? WHERE id = ?", (int(active), tenant_id))
            return select_tenant(conn, tenant_id)

        return await self._submit(job)

    # -- organizations -------------------------------------------------------------------

    async def put_organization(
        self, organization: OrganizationRow
    ) -> tuple[OrganizationRow, bool] | None:
        o = organization

        def job(conn: sqlite3.Connection) -> tuple[OrganizationRow, bool] | None:
            if select_tenant(conn, o.tenant_id) is None:
                return None
            written = conn.execute(
                f"INSERT OR IGNORE INTO organizations ({_ORGANIZATION}) VALUES (?, ?, ?, ?, ?, ?)",
                (o.tenant_id, o.id, o.display_name, o.sso_provider_ref, o.source, o.created_at),
            ).rowcount
            row = conn.execute(
                f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = ? AND id = ?",
                (o.tenant_id, o.id),
            ).fetchone()
            return _organization(row), written > 0

        return await self._submit(job)

    async def organization(self, tenant_id: str, organization_id: str) -> OrganizationRow | None:
        rows = self._db.read(
            f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = ? AND id = ?",
            (tenant_id, organization_id),
        )
        return _organization(rows[0]) if rows else None

    async def organizations(self, tenant_id: str) -> list[OrganizationRow]:
        rows = self._db.read(
            f"SELECT {_ORGANIZATION} FROM organizations WHERE tenant_id = ? ORDER BY id",
            (tenant_id,),
        )
        return [_organization(row) for row in rows]

    # -- fleets --------------------------------------------------------------------------

    async def put_fleet(self, fleet: FleetRow) -> tuple[FleetRow, bool] | None:
        def job(conn: sqlite3.Connection) -> tuple[FleetRow, bool] | None:
            claimed = conn.execute(
                f"SELECT {_FLEET} FROM fleet_refs WHERE fleet_id = ?", (fleet.fleet_id,)
            ).fetchone()
            if claimed is not None:
                return _fleet(claimed), False
            organization = conn.execute(
                "SELECT 1 FROM organizations WHERE tenant_id = ? AND id = ?",
                (fleet.tenant_id, fleet.organization_id),
            ).fetchone()
            if organization is None:
                return None
            conn.execute(
                f"INSERT INTO fleet_refs ({_FLEET}) VALUES (?, ?, ?)",
                (fleet.fleet_id, fleet.organization_id, fleet.tenant_id),
            )
            return fleet, True

        return await self._submit(job)

    async def fleet(self, fleet_id: str) -> FleetRow | None:
        rows = self._db.read(f"SELECT {_FLEET} FROM fleet_refs WHERE fleet_id = ?", (fleet_id,))
        return _fleet(rows[0]) if rows else None

    async def fleets(self, tenant_id: str, organization_id: str) -> list[FleetRow]:
        rows = self._db.read(
            f"SELECT {_FLEET} FROM fleet_refs WHERE tenant_id = ? AND organization_id = ?"
            " ORDER BY fleet_id",
            (tenant_id, organization_id),
        )
        return [_fleet(row) for row in rows]
