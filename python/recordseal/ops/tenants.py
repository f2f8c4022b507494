"""``recordseal tenant create|list|show|freeze|unfreeze`` and ``recordseal org create|list``
(docs/panel.md, "Tenants, organizations, fleets").

They change the database every service process reads, so the panel shows a new tenant or
organization at its next request, and the record API refuses a frozen tenant's writes within
1 s. ``list`` prints one row a line, tab-separated under a header; every command takes
``--json``. Exit codes: 0 done (freezing a frozen tenant too: it says so), 1 no such tenant,
2 a refusal (a field breaking its rule, named with the rule; an id taken; a frozen tenant's
new organization).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from recordseal import datadir, logs
from recordseal.ops.options import create_data_dir_option, family, store_options
from recordseal.ops.stores import settings_of, with_store
from recordseal.panel.stored_tenants import StoredTenantStore
from recordseal.panel.tenants import FleetRef, Organization, Tenant, TenantNotFound
from recordseal.services.errors import NotFound, ServiceError
from recordseal.services.tenant_admin import Actor, TenantAdmin, tenant_not_found
from recordseal.settings import Settings

T = TypeVar("T")
TENANT_COLUMNS = ("id", "status", "display name", "contact")
ORG_COLUMNS = ("tenant", "id", "display name", "sign-on provider")

Handler = Callable[[argparse.Namespace, Settings], int]


def register(commands: Any) -> None:
    tenant = family(commands, "tenant", "tenants: create, list, show, freeze, unfreeze", "action")
    create = tenant.add_parser("create", help="create a tenant (the panel shows it at once)")
    create.add_argument("tenant_id", metavar="ID", help="the tenant's id, as API tokens name it")
    create.add_argument("--display-name", required=True, help="the name people see")
    create.add_argument("--contact-email", default=None, help="who to contact about it")
    _command(create, "the tenant", tenant_create)
    create_data_dir_option(create)
    _command(
        tenant.add_parser("list", help="list every tenant and its status"), "tenants", tenant_list
    )
    show = tenant.add_parser("show", help="a tenant, its organizations and their fleets")
    show.add_argument("tenant_id", metavar="ID", help="the tenant's id")
    _command(show, "the tenant", tenant_show)
    for action, what, handler in (
        (
            "freeze",
            "make a tenant read-only: no new records, streams, tokens or organizations",
            tenant_freeze,
        ),
        ("unfreeze", "make a frozen tenant writable again", tenant_unfreeze),
    ):
        change = tenant.add_parser(action, help=what)
        change.add_argument("tenant_id", metavar="ID", help="the tenant's id")
        _command(change, "the tenant", handler)
    _register_org(commands)


def _register_org(commands: Any) -> None:
    org = family(commands, "org", "organizations of tenants: create, list", "action")
    org_create_command = org.add_parser("create", help="create an organization in a tenant")
    org_create_command.add_argument("tenant_id", metavar="TENANT", help="the tenant it belongs to")
    org_create_command.add_argument(
        "organization_id", metavar="ID", help="the organization's id, unique in its tenant"
    )
    org_create_command.add_argument("--display-name", required=True, help="the name people see")
    _command(org_create_command, "the organization", org_create)
    org_list_command = org.add_parser("list", help="list organizations (of every tenant)")
    org_list_command.add_argument("--tenant", default=None, help="only this tenant's")
    _command(org_list_command, "organizations", org_list)


def _command(command: argparse.ArgumentParser, what: str, handler: Handler) -> None:
    store_options(command, what)

    def run(args: argparse.Namespace) -> int:
        settings = settings_of(args, create=getattr(args, "create_data_dir", False))
        datadir.secure(settings.data_dir)
        # A change's audit line (recordseal.panel.audit) goes to standard error, in the
        # service's log format.
        logs.configure(settings.log_format, settings.log_level)  # type: ignore[arg-type]
        try:
            return handler(args, settings)
        except ServiceError as error:
            return _refused(error)

    command.set_defaults(run=run)


def _with_tenants(settings: Settings, action: Callable[[StoredTenantStore], Awaitable[T]]) -> T:
    return with_store(settings, lambda store: action(StoredTenantStore(store.hierarchy)))


def _actor() -> Actor:
    try:
        return Actor(getpass.getuser(), "cli")
    except (KeyError, OSError):  # no name for this uid (a container)
        return Actor("unknown", "cli")


def _refused(error: ServiceError) -> int:
    print(f"recordseal: {error} ({error.code})", file=sys.stderr)
    return 1 if isinstance(error, NotFound) else 2


def _status(tenant: Tenant) -> str:
    return "active" if tenant.active else "frozen"


#: The members of a tenant's and an organization's JSON, as their attributes are named.
TENANT_MEMBERS = ("id", "display_name", "contact_email", "active")
ORGANIZATION_MEMBERS = ("tenant_id", "id", "display_name", "sso_provider_ref")


def _tenant_json(tenant: Tenant) -> dict[str, Any]:
    return {name: getattr(tenant, name) for name in TENANT_MEMBERS}


def _organization_json(organization: Organization) -> dict[str, Any]:
    return {name: getattr(organization, name) for name in ORGANIZATION_MEMBERS}


def _cell(value: str | None) -> str:
    """A free-text value as one tab-free cell."""
    return " ".join((value or "").split()) or "-"


def _print(args: argparse.Namespace, document: Any, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(document, indent=2))
        return
    for line in lines:
        print(line)


def tenant_create(args: argparse.Namespace, settings: Settings) -> int:
    async def create(tenants: StoredTenantStore) -> Tenant:
        return await TenantAdmin(tenants).create_tenant(
            args.tenant_id, args.display_name, args.contact_email, _actor()
        )

    tenant = _with_tenants(settings, create)
    _print(args, _tenant_json(tenant), [f"tenant {tenant.id!r} created: {tenant.display_name}"])
    return 0


def tenant_list(args: argparse.Namespace, settings: Settings) -> int:
    tenants = _with_tenants(settings, lambda store: store.list_tenants())
    rows = [
        "\t".join((t.id, _status(t), _cell(t.display_name), _cell(t.contact_email)))
        for t in tenants
    ]
    _print(args, [_tenant_json(t) for t in tenants], ["\t".join(TENANT_COLUMNS), *rows])
    return 0


def tenant_show(args: argparse.Namespace, settings: Settings) -> int:
    async def show(
        store: StoredTenantStore,
    ) -> tuple[Tenant, list[tuple[Organization, list[FleetRef]]]]:
        tenant = await store.get_tenant(args.tenant_id)
        organizations = await store.list_organizations(tenant.id)
        return tenant, [(o, await store.list_fleets(tenant.id, o.id)) for o in organizations]

    tenant, organizations = _with_tenants(settings, _found(show, args.tenant_id))
    document = {
        **_tenant_json(tenant),
        "organizations": [
            {**_organization_json(o), "fleets": [f.fleet_id for f in fleets]}
            for o, fleets in organizations
        ],
    }
    lines = [
        f"tenant       {tenant.id}",
        f"display name {tenant.display_name}",
        f"status       {_status(tenant)}",
        f"contact      {tenant.contact_email or '-'}",
    ]
    for organization, fleets in organizations:
        names = ", ".join(f.fleet_id for f in fleets) or "no fleets"
        lines.append(f"organization {organization.id}: {organization.display_name} ({names})")
    if not organizations:
        lines.append("organization none")
    _print(args, document, lines)
    return 0


def _found(
    action: Callable[[StoredTenantStore], Awaitable[T]], tenant_id: str
) -> Callable[[StoredTenantStore], Awaitable[T]]:
    """``action``, with a missing tenant as the command line's refusal."""

    async def run(store: StoredTenantStore) -> T:
        try:
            return await action(store)
        except TenantNotFound:
            raise tenant_not_found(tenant_id) from None

    return run


def tenant_freeze(args: argparse.Namespace, settings: Settings) -> int:
    return _set_active(args, settings, active=False)


def tenant_unfreeze(args: argparse.Namespace, settings: Settings) -> int:
    return _set_active(args, settings, active=True)


def _set_active(args: argparse.Namespace, settings: Settings, active: bool) -> int:
    async def change(store: StoredTenantStore) -> tuple[Tenant, bool]:
        return await TenantAdmin(store).set_active(args.tenant_id, active, _actor())

    tenant, changed = _with_tenants(settings, change)
    state = "active" if active else "frozen (read-only)"
    if not changed:
        line = f"tenant {tenant.id!r} is already {state}; nothing changed"
    elif active:
        line = f"tenant {tenant.id!r} is active again: every service process accepts its writes"
    else:
        line = (
            f"tenant {tenant.id!r} is frozen read-only: every service process refuses its new"
            f" records, streams and tokens within {settings.token_cache_seconds:g} s"
        )
    _print(args, {**_tenant_json(tenant), "changed": changed}, [line])
    return 0


def org_create(args: argparse.Namespace, settings: Settings) -> int:
    async def create(store: StoredTenantStore) -> Organization:
        return await TenantAdmin(store).create_organization(
            args.tenant_id, args.organization_id, args.display_name, _actor()
        )

    organization = _with_tenants(settings, create)
    line = (
        f"organization {organization.id!r} of tenant {organization.tenant_id!r} created:"
        f" {organization.display_name}"
    )
    _print(args, _organization_json(organization), [line])
    return 0


def org_list(args: argparse.Namespace, settings: Settings) -> int:
    async def every(store: StoredTenantStore) -> list[Organization]:
        ids = [args.tenant] if args.tenant else [t.id for t in await store.list_tenants()]
        return [o for tenant_id in ids for o in await store.list_organizations(tenant_id)]

    organizations = _with_tenants(settings, _found(every, args.tenant or ""))
    rows = [
        "\t".join((o.tenant_id, o.id, _cell(o.display_name), _cell(o.sso_provider_ref)))
        for o in organizations
    ]
    _print(
        args,
        [_organization_json(o) for o in organizations],
        ["\t".join(ORG_COLUMNS), *rows],
    )
    return 0
