"""The bootstrap file named by ``RECORDSEAL_PANEL_TENANT_SEED`` (docs/panel.md, "Tenants,
organizations, fleets").

The file is one JSON object with exactly the members ``tenants``, ``organizations`` and
``fleets``, each an array of objects with the fields of docs/panel.md, "Tenants, organizations,
fleets". Rows are inserted in
that order; the first inconsistency aborts start with a ``BootstrapError`` that names the
file, the row and the offending identifier. An empty or unset variable means an empty store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from recordseal.panel.tenants import (
    FleetRef,
    InMemoryTenantStore,
    Organization,
    OrganizationNotFound,
    PanelStoreError,
    Tenant,
    TenantNotFound,
)

Row = TypeVar("Row", Tenant, Organization, FleetRef)


class BootstrapError(Exception):
    """Start must abort: the seed file is unreadable, malformed or inconsistent."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"tenant seed {path}: {message}")
        self.path = path


class Seed(msgspec.Struct, forbid_unknown_fields=True):
    tenants: list[Tenant]
    organizations: list[Organization]
    fleets: list[FleetRef]


def load_seed(path: str | Path) -> InMemoryTenantStore:
    """A store holding the seed file's tenants, organizations and fleets, in that order."""
    path = Path(path)
    seed = _read(path)
    store = InMemoryTenantStore()
    _insert(path, "tenants", seed.tenants, store.insert_tenant, _tenant_problem)
    _insert(path, "organizations", seed.organizations, store.insert_organization, _org_problem)
    _insert(path, "fleets", seed.fleets, store.insert_fleet, _fleet_problem)
    return store


def store_from_seed(path: Path | None) -> InMemoryTenantStore:
    """The seeded store when the seed setting names a file, else an empty one."""
    return load_seed(path) if path is not None else InMemoryTenantStore()


def _read(path: Path) -> Seed:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BootstrapError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        return msgspec.json.decode(raw, type=Seed)
    except msgspec.ValidationError as exc:
        raise BootstrapError(path, f"invalid content: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise BootstrapError(path, f"not valid JSON: {exc}") from exc


def _insert(
    path: Path,
    member: str,
    rows: Sequence[Row],
    insert: Callable[[Row], None],
    problem: Callable[[Row, PanelStoreError], str],
) -> None:
    for index, row in enumerate(rows):
        try:
            insert(row)
        except PanelStoreError as exc:
            raise BootstrapError(path, f"{member}[{index}]: {problem(row, exc)}") from exc


def _tenant_problem(tenant: Tenant, error: PanelStoreError) -> str:
    return str(error)


def _org_problem(organization: Organization, error: PanelStoreError) -> str:
    if isinstance(error, TenantNotFound):
        return (
            f"organization {organization.id!r} names tenant {error.tenant!r},"
            " which is not declared in 'tenants'"
        )
    return str(error)


def _fleet_problem(fleet: FleetRef, error: PanelStoreError) -> str:
    if isinstance(error, TenantNotFound):
        return (
            f"fleet {fleet.fleet_id!r} names tenant {error.tenant!r},"
            " which is not declared in 'tenants'"
        )
    if isinstance(error, OrganizationNotFound):
        return (
            f"fleet {fleet.fleet_id!r} names organization {error.organization!r},"
            f" which is not declared for tenant {error.tenant!r} in 'organizations'"
        )
    return str(error)
