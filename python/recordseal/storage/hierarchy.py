"""The tenant hierarchy's part of the store (``HierarchyStore``): tenants, their organizations
and the fleets joined to them, in the database so they can be created at run time
(docs/panel.md, "Tenants, organizations, fleets").

The backends hold the SQL only. Each ``put_*`` is one transaction that inserts a row unless
its key is taken, and answers the row stored under that key with whether this call wrote it;
what a taken key means (a duplicate, the same seed row again, a conflict) is decided above
(``panel/stored_tenants.py``). Nothing is ever deleted.

A tenant row also appears without being declared: ``TokenStore.add_token`` registers the
tenant of a new token (source ``implicit``, its id as its display name), and the migration that
made these tables registered every tenant already holding tokens or streams, so every tenant
with tokens or records has a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, TypeAlias

#: Where a row came from: the seed file, an operator (command line or panel), or (tenants
#: only) the tenant's first API token.
Source: TypeAlias = Literal["seed", "operator", "implicit"]


@dataclass(frozen=True, slots=True)
class TenantRow:
    id: str
    display_name: str
    contact_email: str | None
    active: bool
    source: Source
    #: RFC 3339, when the row was first written
    created_at: str


@dataclass(frozen=True, slots=True)
class OrganizationRow:
    tenant_id: str
    id: str
    display_name: str
    sso_provider_ref: str | None
    source: Source
    created_at: str


@dataclass(frozen=True, slots=True)
class FleetRow:
    """A fleet reference: only its place in the hierarchy (spec panel 2.3)."""

    fleet_id: str
    organization_id: str
    tenant_id: str


class HierarchyStore(Protocol):
    async def put_tenant(self, tenant: TenantRow) -> tuple[TenantRow, bool]:
        """Insert ``tenant``; a tenant registered implicitly (by its tokens) takes this
        row's display name, contact and source, keeping its state and creation time. Answers
        the row as stored now and whether this call wrote it."""
        ...

    async def tenant(self, tenant_id: str) -> TenantRow | None: ...
    async def tenants(self) -> list[TenantRow]:
        """Every tenant, by id."""
        ...

    async def set_tenant_active(self, tenant_id: str, active: bool) -> TenantRow | None:
        """Freeze (``active`` false) or unfreeze; None when there is no such tenant."""
        ...

    async def put_organization(
        self, organization: OrganizationRow
    ) -> tuple[OrganizationRow, bool] | None:
        """Insert unless the tenant has an organization of this id; None when there is no
        such tenant."""
        ...

    async def organization(
        self, tenant_id: str, organization_id: str
    ) -> OrganizationRow | None: ...

    async def organizations(self, tenant_id: str) -> list[OrganizationRow]:
        """The tenant's organizations, by id."""
        ...

    async def put_fleet(self, fleet: FleetRow) -> tuple[FleetRow, bool] | None:
        """Insert unless a fleet of this id exists (of any tenant: the stored one is
        answered); None when the organization does not exist in the fleet's tenant."""
        ...

    async def fleet(self, fleet_id: str) -> FleetRow | None: ...
    async def fleets(self, tenant_id: str, organization_id: str) -> list[FleetRow]:
        """The organization's fleets, by id."""
        ...
