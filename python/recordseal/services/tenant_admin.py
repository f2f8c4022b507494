"""Tenants and organizations made, frozen and unfrozen at run time, by the command line
(``recordseal tenant|org``) and the panel (docs/panel.md, "Tenants, organizations, fleets").

One place for the rules of their input (an identifier, a display name, a contact address;
a refusal names the field and the rule and changes nothing) and for the audit line of every
change, on the panel's audit logger ``recordseal.panel.audit`` (ids and who, never a name or
address). Fleets are not made here: they are bound through the fleet manifest and joined to
the hierarchy by the seed file (docs/fleets.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from recordseal.identifiers import IDENTIFIER_RULE, is_identifier
from recordseal.panel.tenants import (
    Duplicate,
    Organization,
    Tenant,
    TenantNotFound,
    TenantStore,
    display_name_problem,
    email_problem,
)
from recordseal.services.errors import AlreadyExists, Invalid, NotFound, tenant_inactive

audit = logging.getLogger("recordseal.panel.audit")


@dataclass(frozen=True)
class Actor:
    """Who makes a change, for the audit line: a panel session's subject, or the user
    running the command line."""

    subject: str
    via: Literal["panel", "cli"]


def _ignore(tenant: str) -> None:
    return None


def check_id(value: str, field: str = "id") -> str:
    if not is_identifier(value):
        raise Invalid(f"{field}_invalid", f"{field} must be {IDENTIFIER_RULE}", field)
    return value


def check_display_name(value: str) -> str:
    """The display name without surrounding spaces, or the refusal naming the rule."""
    problem = display_name_problem(value.strip())
    if problem is not None:
        raise Invalid("display_name_invalid", f"display_name must be {problem}", "display_name")
    return value.strip()


def check_contact_email(value: str | None) -> str | None:
    """None for no address (absent or blank), else the address as given, checked."""
    if value is None or not value.strip():
        return None
    problem = email_problem(value.strip())
    if problem is not None:
        raise Invalid("contact_email_invalid", f"contact_email must be {problem}", "contact_email")
    return value.strip()


def tenant_not_found(tenant_id: str) -> NotFound:
    return NotFound("tenant_not_found", f"no tenant {tenant_id!r}", "tenant_id")


class TenantAdmin:
    """Run-time changes to a ``TenantStore``; ``changed`` is told each tenant whose state
    changed (the record API's cache of frozen tenants forgets it at once)."""

    def __init__(self, tenants: TenantStore, changed: Callable[[str], None] = _ignore) -> None:
        self._tenants = tenants
        self._changed = changed

    async def create_tenant(
        self, tenant_id: str, display_name: str, contact_email: str | None, actor: Actor
    ) -> Tenant:
        """A new tenant, active. An id the store holds is refused (409 ``tenant_exists``),
        except a tenant registered only by its API tokens, which takes this name."""
        tenant = Tenant(
            check_id(tenant_id),
            check_display_name(display_name),
            contact_email=check_contact_email(contact_email),
        )
        try:
            await self._tenants.add_tenant(tenant)
        except Duplicate:
            raise AlreadyExists(
                "tenant_exists", f"a tenant with id {tenant_id!r} exists", "id"
            ) from None
        audit.info(
            "panel.tenant_created",
            extra={"tenant": tenant_id, "by": actor.subject, "via": actor.via},
        )
        return await self._tenants.get_tenant(tenant_id)

    async def set_active(self, tenant_id: str, active: bool, actor: Actor) -> tuple[Tenant, bool]:
        """Freeze (``active`` false: read-only) or unfreeze; the tenant now and whether this
        call changed it (freezing a frozen tenant changes nothing and is no audit event)."""
        try:
            before = await self._tenants.get_tenant(tenant_id)
            if before.active == active:
                return before, False
            after = await self._tenants.set_active(tenant_id, active)
        except TenantNotFound:
            raise tenant_not_found(tenant_id) from None
        self._changed(tenant_id)
        audit.info(
            "panel.tenant_unfrozen" if active else "panel.tenant_frozen",
            extra={"tenant": tenant_id, "by": actor.subject, "via": actor.via},
        )
        return after, True

    async def create_organization(
        self, tenant_id: str, organization_id: str, display_name: str, actor: Actor
    ) -> Organization:
        """A new organization of an active tenant (a frozen one is read-only: 409
        ``tenant_inactive``); an id the tenant holds is 409 ``organization_exists``."""
        organization = Organization(
            check_id(organization_id),
            check_id(tenant_id, "tenant_id"),
            check_display_name(display_name),
        )
        try:
            tenant = await self._tenants.get_tenant(tenant_id)
            if not tenant.active:
                raise tenant_inactive("no new organizations")
            await self._tenants.add_organization(organization)
        except TenantNotFound:
            raise tenant_not_found(tenant_id) from None
        except Duplicate:
            raise AlreadyExists(
                "organization_exists",
                f"tenant {tenant_id!r} has an organization with id {organization_id!r}",
                "id",
            ) from None
        audit.info(
            "panel.organization_created",
            extra={
                "tenant": tenant_id,
                "org": organization_id,
                "by": actor.subject,
                "via": actor.via,
            },
        )
        return organization
