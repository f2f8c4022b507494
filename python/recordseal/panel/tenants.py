"""The tenant store: tenants, their organizations and the fleets joined to them (docs/panel.md,
"Tenants, organizations, fleets").

Identifiers of tenants, organizations and fleets share one format, the one of the API's
tenant ids: 1 to 64 characters of ASCII letters, digits, ``.``, ``_`` and ``-``, starting with
a letter or digit. Organization ids are unique within their tenant; fleet ids are unique
across the whole store (a second tenant claiming a fleet id is ``CrossTenantAccess``).
Display names and contact addresses follow :data:`DISPLAY_NAME_RULE` and :data:`EMAIL_RULE`.

``TenantStore`` is the spec's store interface; the service's store is the database
(``panel/stored_tenants.py``); :class:`InMemoryTenantStore` checks a seed file on its own
and serves tests.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from typing import Protocol, runtime_checkable

import msgspec

from recordseal.identifiers import check_identifier
from recordseal.panel.errors import PanelError

logger = logging.getLogger("recordseal.panel")

MAX_DISPLAY_NAME = 128
DISPLAY_NAME_RULE = (
    f"1 to {MAX_DISPLAY_NAME} characters, not only spaces, with no control characters"
)
MAX_EMAIL = 254
EMAIL_RULE = (
    f"an e-mail address: a local part, '@' and a domain, at most {MAX_EMAIL} characters,"
    " with no spaces or control characters"
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


def display_name_problem(value: str) -> str | None:
    """Why ``value`` is no display name (:data:`DISPLAY_NAME_RULE`), or None."""
    if not value.strip() or len(value) > MAX_DISPLAY_NAME or _has_control(value):
        return DISPLAY_NAME_RULE
    return None


def email_problem(value: str) -> str | None:
    """Why ``value`` is no contact address (:data:`EMAIL_RULE`), or None."""
    if len(value) > MAX_EMAIL or _has_control(value) or not _EMAIL.fullmatch(value):
        return EMAIL_RULE
    return None


def _has_control(value: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in value)


def _check(field: str, problem: str | None) -> None:
    if problem is not None:
        raise ValueError(f"{field} must be {problem}")


class Tenant(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Billing and audit isolation boundary; ``active`` false freezes it read-only."""

    id: str
    display_name: str
    active: bool = True
    contact_email: str | None = None

    def __post_init__(self) -> None:
        check_identifier("tenant id", self.id)
        _check("display_name", display_name_problem(self.display_name))
        if self.contact_email is not None:
            _check("contact_email", email_problem(self.contact_email))


class Organization(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Access-control and identity-provider boundary inside one tenant."""

    id: str
    tenant_id: str
    display_name: str
    sso_provider_ref: str | None = None

    def __post_init__(self) -> None:
        check_identifier("organization id", self.id)
        check_identifier("tenant_id", self.tenant_id)
        _check("display_name", display_name_problem(self.display_name))


class FleetRef(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Only the hierarchy link of a proxy fleet; its parameters live in the proxy manifest."""

    fleet_id: str
    organization_id: str
    tenant_id: str

    def __post_init__(self) -> None:
        check_identifier("fleet_id", self.fleet_id)
        check_identifier("organization_id", self.organization_id)
        check_identifier("tenant_id", self.tenant_id)


class PanelStoreError(PanelError):
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


class SeedConflict(PanelStoreError):
    """A seed row whose id the store holds with other values: ``field`` differs."""

    def __init__(self, what: str, field: str, seeded: object, stored: object) -> None:
        super().__init__(
            f"{what} is already in the database with {field} {stored!r}; the seed says {seeded!r}"
        )
        self.what = what
        self.field = field


class Backend(PanelStoreError):
    """A storage failure; ``text`` is for logs, callers see only the kind."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def cross_tenant_claim(fleet: FleetRef, owner: str) -> CrossTenantAccess:
    """The refusal of a fleet id that tenant ``owner`` holds, claimed for another tenant;
    logged at WARN naming both (spec panel 6.4)."""
    logger.warning(
        "cross-tenant fleet id collision: fleet %r belongs to tenant %r,"
        " tenant %r claims it too; the second claim is refused",
        fleet.fleet_id,
        owner,
        fleet.tenant_id,
    )
    return CrossTenantAccess(fleet.tenant_id, owner, fleet.fleet_id)


@runtime_checkable
class TenantStore(Protocol):
    """The stable surface of tenant storage (spec panel 1.5): the database
    (``StoredTenantStore``) in the service, the in-memory store for a seed file's own check.

    ``add_*`` create at run time: an id taken is ``Duplicate`` (in the database, a tenant
    registered only by its tokens is taken over instead). ``set_active`` freezes (false) or
    unfreezes a tenant and answers it as it is now."""

    async def add_tenant(self, tenant: Tenant) -> None: ...
    async def add_organization(self, organization: Organization) -> None: ...
    async def add_fleet(self, fleet: FleetRef) -> None: ...
    async def set_active(self, tenant: str, active: bool) -> Tenant: ...
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
            raise cross_tenant_claim(fleet, claimed.tenant_id)
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

    async def set_active(self, tenant: str, active: bool) -> Tenant:
        changed = msgspec.structs.replace(await self.get_tenant(tenant), active=active)
        self._tenants[tenant] = changed
        return changed

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
