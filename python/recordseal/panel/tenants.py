"""The tenant store: tenants, their organizations and the fleets joined to them (docs/panel.md,
"Tenants, organizations, fleets").

Identifiers of tenants, organizations and fleets share one format, the one of the API's
tenant ids: 1 to 64 characters of ASCII letters, digits, ``.``, ``_`` and ``-``, starting with
a letter or digit. Organization ids are unique within their tenant; fleet ids are unique
across the whole store (a second tenant claiming a fleet id is ``CrossTenantAccess``).
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

import msgspec

from recordseal.identifiers import check_identifier

logger = logging.getLogger("recordseal.panel")


class Tenant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Billing and audit isolation boundary; ``active`` false freezes it read-only."""

    id: str
    display_name: str
    active: bool = True
    contact_email: str | None = None

    def __post_init__(self) -> None:
        check_identifier("tenant id", self.id)


class Organization(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Access-control and identity-provider boundary inside one tenant."""

    id: str
    tenant_id: str
    display_name: str
    sso_provider_ref: str | None = None

    def __post_init__(self) -> None:
        check_identifier("organization id", self.id)
        check_identifier("tenant_id", self.tenant_id)


class FleetRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Only the hierarchy link of a proxy fleet; its parameters live in the proxy manifest."""

    fleet_id: str
    organization_id: str
    tenant_id: str

    def __post_init__(self) -> None:
        check_identifier("fleet_id", self.fleet_id)
        check_identifier("organization_id", self.organization_id)
        check_identifier("tenant_id", self.tenant_id)


class PanelStoreError(Exception):
    """Base of every tenant store error (docs/panel.md, "Views and errors")."""


class TenantNotFound(PanelStoreError):
    def __init__(self, tenant: str) -> None:
        super().__init__(f"no tenant {tenant!r}")
        self.tenant = tenant


class OrganizationNotFound(PanelStoreError):
    def __init__(self, tenant: str, organization: str) -> None:
        super().__init__(f"no organization {organization!r} in tenant {tenant!r}")
        self.tenant = tenant
        self.organization = organization


class FleetNotFound(PanelStoreError):
    """``organization`` is None when the lookup was by tenant only (``find_fleet``)."""

    def __init__(self, tenant: str, organization: str | None, fleet: str) -> None:
        where = f"organization {organization!r} of tenant" if organization else "tenant"
        scope = f"{where} {tenant!r}"
        super().__init__(f"no fleet {fleet!r} in {scope}")
        self.tenant = tenant
        self.organization = organization
        self.fleet = fleet


class Duplicate(PanelStoreError):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class CrossTenantAccess(PanelStoreError):
    """A fleet id claimed by ``requested`` already belongs to ``actual_tenant``."""

    def __init__(self, requested: str, actual_tenant: str, fleet: str | None = None) -> None:
        subject = f"fleet {fleet!r}" if fleet else "the resource"
        super().__init__(
            f"tenant {requested!r} claims {subject}, which belongs to tenant {actual_tenant!r}"
        )
        self.requested = requested
        self.actual_tenant = actual_tenant
        self.fleet = fleet


class Backend(PanelStoreError):
    """A storage failure; ``text`` is for logs, callers see only the kind."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@runtime_checkable
class TenantStore(Protocol):
    """The stable surface of tenant storage; the in-memory store is the only backend today."""

    async def add_tenant(self, tenant: Tenant) -> None: ...
    async def add_organization(self, organization: Organization) -> None: ...
    async def add_fleet(self, fleet: FleetRef) -> None: ...
    async def list_tenants(self) -> list[Tenant]: ...
    async def get_tenant(self, tenant: str) -> Tenant: ...
    async def list_organizations(self, tenant: str) -> list[Organization]: ...
    async def get_organization(self, tenant: str, organization: str) -> Organization: ...
    async def list_fleets(self, tenant: str, organization: str) -> list[FleetRef]: ...
    async def find_fleet(self, tenant: str, fleet_id: str) -> FleetRef: ...


class InMemoryTenantStore:
    """Process-lifetime store (docs/panel.md). Lists come back in insert order.

    The ``insert_*`` methods are the synchronous core, used by the bootstrap loader at start;
    the async methods of ``TenantStore`` delegate to them.
    """

    def __init__(self) -> None:
        self._tenants: dict[str, Tenant] = {}
        self._organizations: dict[str, dict[str, Organization]] = {}
        self._fleets: dict[str, FleetRef] = {}

    def insert_tenant(self, tenant: Tenant) -> None:
        if tenant.id in self._tenants:
            raise Duplicate(f"tenant {tenant.id!r} is declared twice")
        self._tenants[tenant.id] = tenant
        self._organizations[tenant.id] = {}

    def insert_organization(self, organization: Organization) -> None:
        organizations = self._organizations_of(organization.tenant_id)
        if organization.id in organizations:
            raise Duplicate(
                f"organization {organization.id!r} is declared twice"
                f" in tenant {organization.tenant_id!r}"
            )
        organizations[organization.id] = organization

    def insert_fleet(self, fleet: FleetRef) -> None:
        claimed = self._fleets.get(fleet.fleet_id)
        if claimed is not None and claimed.tenant_id != fleet.tenant_id:
            logger.warning(
                "cross-tenant fleet id collision: fleet %r belongs to tenant %r,"
                " tenant %r claims it too; the second claim is refused",
                fleet.fleet_id,
                claimed.tenant_id,
                fleet.tenant_id,
            )
            raise CrossTenantAccess(fleet.tenant_id, claimed.tenant_id, fleet.fleet_id)
        if claimed is not None:
            raise Duplicate(
                f"fleet {fleet.fleet_id!r} is claimed twice in tenant {fleet.tenant_id!r}"
                f" (organizations {claimed.organization_id!r} and {fleet.organization_id!r})"
            )
        if fleet.organization_id not in self._organizations_of(fleet.tenant_id):
            raise OrganizationNotFound(fleet.tenant_id, fleet.organization_id)
        self._fleets[fleet.fleet_id] = fleet

    def _organizations_of(self, tenant: str) -> dict[str, Organization]:
        organizations = self._organizations.get(tenant)
        if organizations is None:
            raise TenantNotFound(tenant)
        return organizations

    async def add_tenant(self, tenant: Tenant) -> None:
        self.insert_tenant(tenant)

    async def add_organization(self, organization: Organization) -> None:
        self.insert_organization(organization)

    async def add_fleet(self, fleet: FleetRef) -> None:
        self.insert_fleet(fleet)

    async def list_tenants(self) -> list[Tenant]:
        return list(self._tenants.values())

    async def get_tenant(self, tenant: str) -> Tenant:
        found = self._tenants.get(tenant)
        if found is None:
            raise TenantNotFound(tenant)
        return found

    async def list_organizations(self, tenant: str) -> list[Organization]:
        return list(self._organizations_of(tenant).values())

    async def get_organization(self, tenant: str, organization: str) -> Organization:
        found = self._organizations_of(tenant).get(organization)
        if found is None:
            raise OrganizationNotFound(tenant, organization)
        return found

    async def list_fleets(self, tenant: str, organization: str) -> list[FleetRef]:
        await self.get_organization(tenant, organization)
        return [
            fleet
            for fleet in self._fleets.values()
            if fleet.tenant_id == tenant and fleet.organization_id == organization
        ]

    async def find_fleet(self, tenant: str, fleet_id: str) -> FleetRef:
        """The fleet of ``tenant``; one held by another tenant is reported as not found,
        so this lookup is no oracle for other tenants' fleets (docs/panel.md, "Sessions")."""
        self._organizations_of(tenant)
        found = self._fleets.get(fleet_id)
        if found is None or found.tenant_id != tenant:
            raise FleetNotFound(tenant, None, fleet_id)
        return found
