"""``StoredTenantStore``: the spec's tenant store on the database (``storage/hierarchy.py``),
so tenants and organizations made at run time (``recordseal tenant create``, the panel) are
seen by every worker and host at their next request (docs/panel.md, "Tenants, organizations,
fleets").

The rules live here, once, above both backends: what a taken id means for a run-time
creation (``Duplicate``; a tenant registered only by its API tokens is taken over instead)
and for the seed file loaded at start (``seed_*``: the same row again changes nothing, other
values are a ``SeedConflict`` naming the id and the field; ``active`` is the seed's only when
the seed first declares the tenant, since freezing is done at run time).
"""

from __future__ import annotations

from collections.abc import Callable

from recordseal.clock import utc_now
from recordseal.panel.tenants import (
    Duplicate,
    FleetNotFound,
    FleetRef,
    Organization,
    OrganizationNotFound,
    SeedConflict,
    Tenant,
    TenantNotFound,
    cross_tenant_claim,
)
from recordseal.storage.hierarchy import (
    FleetRow,
    HierarchyStore,
    OrganizationRow,
    Source,
    TenantRow,
)


def _tenant(row: TenantRow) -> Tenant:
    return Tenant(row.id, row.display_name, row.active, row.contact_email)


def _organization(row: OrganizationRow) -> Organization:
    return Organization(row.id, row.tenant_id, row.display_name, row.sso_provider_ref)


def _fleet(row: FleetRow) -> FleetRef:
    return FleetRef(row.fleet_id, row.organization_id, row.tenant_id)


class StoredTenantStore:
    """``TenantStore`` on a ``HierarchyStore``; lists come back ordered by id."""

    def __init__(self, rows: HierarchyStore, clock: Callable[[], str] = utc_now) -> None:
        self._rows = rows
        self._clock = clock

    # -- run-time creation ---------------------------------------------------------------

    async def add_tenant(self, tenant: Tenant) -> None:
        _, written = await self._put_tenant(tenant, "operator")
        if not written:
            raise Duplicate(f"tenant {tenant.id!r} exists")

    async def add_organization(self, organization: Organization) -> None:
        _, written = await self._put_organization(organization, "operator")
        if not written:
            raise Duplicate(
                f"organization {organization.id!r} exists in tenant {organization.tenant_id!r}"
            )

    async def add_fleet(self, fleet: FleetRef) -> None:
        stored, written = await self._put_fleet(fleet)
        if not written:
            raise Duplicate(
                f"fleet {fleet.fleet_id!r} is claimed twice in tenant {fleet.tenant_id!r}"
                f" (organizations {stored.organization_id!r} and {fleet.organization_id!r})"
            )

    async def set_active(self, tenant: str, active: bool) -> Tenant:
        row = await self._rows.set_tenant_active(tenant, active)
        if row is None:
            raise TenantNotFound(tenant)
        return _tenant(row)

    # -- the seed file (panel/bootstrap.py) ----------------------------------------------

    async def seed_tenant(self, tenant: Tenant, *, dry_run: bool = False) -> bool:
        """Load a seed tenant; True when it is new to the database (or was only registered
        by its tokens). ``dry_run``: check it against the database, write nothing."""
        if dry_run:
            found = await self._rows.tenant(tenant.id)
            if found is not None and found.source != "implicit":
                _same_tenant(tenant, found)
            return found is None or found.source == "implicit"
        stored, written = await self._put_tenant(tenant, "seed")
        if not written:
            _same_tenant(tenant, stored)
        return written

    async def seed_organization(self, organization: Organization, *, dry_run: bool = False) -> bool:
        o = organization
        if dry_run:
            found = await self._rows.organization(o.tenant_id, o.id)
            if found is not None:
                _same_organization(o, found)
            return found is None
        stored, written = await self._put_organization(o, "seed")
        if not written:
            _same_organization(o, stored)
        return written

    async def seed_fleet(self, fleet: FleetRef, *, dry_run: bool = False) -> bool:
        if dry_run:
            found = await self._rows.fleet(fleet.fleet_id)
            if found is not None and found.tenant_id != fleet.tenant_id:
                raise cross_tenant_claim(fleet, found.tenant_id)
            if found is not None:
                _same_fleet(fleet, found)
            return found is None
        stored, written = await self._put_fleet(fleet)
        if not written:
            _same_fleet(fleet, stored)
        return written

    # -- reads ---------------------------------------------------------------------------

    async def list_tenants(self) -> list[Tenant]:
        return [_tenant(row) for row in await self._rows.tenants()]

    async def get_tenant(self, tenant: str) -> Tenant:
        row = await self._rows.tenant(tenant)
        if row is None:
            raise TenantNotFound(tenant)
        return _tenant(row)

    async def registered_implicitly(self, tenant: str) -> bool:
        """Whether the tenant has a row only because it holds API tokens or records (its
        display name is its id until an operator or the seed names it)."""
        row = await self._rows.tenant(tenant)
        return row is not None and row.source == "implicit"

    async def list_organizations(self, tenant: str) -> list[Organization]:
        await self.get_tenant(tenant)
        return [_organization(row) for row in await self._rows.organizations(tenant)]

    async def get_organization(self, tenant: str, organization: str) -> Organization:
        row = await self._rows.organization(tenant, organization)
        if row is None:
            await self.get_tenant(tenant)
            raise OrganizationNotFound(tenant, organization)
        return _organization(row)

    async def list_fleets(self, tenant: str, organization: str) -> list[FleetRef]:
        await self.get_organization(tenant, organization)
        return [_fleet(row) for row in await self._rows.fleets(tenant, organization)]

    async def find_fleet(self, tenant: str, fleet_id: str) -> FleetRef:
        """The fleet of ``tenant``; one held by another tenant is reported as not found,
        so this lookup is no oracle for other tenants' fleets."""
        await self.get_tenant(tenant)
        row = await self._rows.fleet(fleet_id)
        if row is None or row.tenant_id != tenant:
            raise FleetNotFound(tenant, None, fleet_id)
        return _fleet(row)

    # -- writes --------------------------------------------------------------------------

    async def _put_tenant(self, tenant: Tenant, source: Source) -> tuple[TenantRow, bool]:
        row = TenantRow(
            tenant.id,
            tenant.display_name,
            tenant.contact_email,
            tenant.active,
            source,
            self._clock(),
        )
        return await self._rows.put_tenant(row)

    async def _put_organization(
        self, organization: Organization, source: Source
    ) -> tuple[OrganizationRow, bool]:
        o = organization
        row = OrganizationRow(
            o.tenant_id, o.id, o.display_name, o.sso_provider_ref, source, self._clock()
        )
        put = await self._rows.put_organization(row)
        if put is None:
            raise TenantNotFound(o.tenant_id)
        return put

    async def _put_fleet(self, fleet: FleetRef) -> tuple[FleetRow, bool]:
        put = await self._rows.put_fleet(
            FleetRow(fleet.fleet_id, fleet.organization_id, fleet.tenant_id)
        )
        if put is None:
            await self.get_tenant(fleet.tenant_id)
            raise OrganizationNotFound(fleet.tenant_id, fleet.organization_id)
        stored, written = put
        if stored.tenant_id != fleet.tenant_id:
            raise cross_tenant_claim(fleet, stored.tenant_id)
        return stored, written


def _same(what: str, field: str, seeded: object, stored: object) -> None:
    if seeded != stored:
        raise SeedConflict(what, field, seeded, stored)


def _same_tenant(tenant: Tenant, stored: TenantRow) -> None:
    what = f"tenant {tenant.id!r}"
    _same(what, "display_name", tenant.display_name, stored.display_name)
    _same(what, "contact_email", tenant.contact_email, stored.contact_email)


def _same_organization(organization: Organization, stored: OrganizationRow) -> None:
    what = f"organization {organization.id!r} of tenant {organization.tenant_id!r}"
    _same(what, "display_name", organization.display_name, stored.display_name)
    _same(what, "sso_provider_ref", organization.sso_provider_ref, stored.sso_provider_ref)


def _same_fleet(fleet: FleetRef, stored: FleetRow) -> None:
    _same(
        f"fleet {fleet.fleet_id!r}",
        "organization_id",
        fleet.organization_id,
        stored.organization_id,
    )
