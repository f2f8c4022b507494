"""The bootstrap file named by ``RECORDSEAL_PANEL_TENANT_SEED`` (docs/panel.md, "The seed
file").

The file is one JSON object with exactly the members ``tenants``, ``organizations`` and
``fleets``, each an array of objects with the fields of docs/panel.md, "The seed file". It is
checked on its own first (:func:`load_seed`: rows inserted in that order into an in-memory
store, so an organization must name a tenant of the file), then loaded into the database at
start (:func:`apply_seed`), idempotently: a row already there with the same values changes
nothing, one with other values is refused. The first inconsistency aborts start with a
``BootstrapError`` that names the file, the row and the offending identifier. An empty or
unset variable means no seed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from recordseal.panel.errors import PanelError
from recordseal.panel.tenants import (
    FleetRef,
    InMemoryTenantStore,
    Organization,
    OrganizationNotFound,
    PanelStoreError,
    SeedConflict,
    Tenant,
    TenantNotFound,
)

if TYPE_CHECKING:
    from recordseal.panel.stored_tenants import StoredTenantStore

Row = TypeVar("Row", Tenant, Organization, FleetRef)
Row_contra = TypeVar("Row_contra", Tenant, Organization, FleetRef, contravariant=True)


class Seeding(Protocol[Row_contra]):
    """One of ``StoredTenantStore.seed_*``."""

    def __call__(self, row: Row_contra, /, *, dry_run: bool) -> Awaitable[bool]: ...


class BootstrapError(PanelError):
    """Start must abort: the seed file is unreadable, malformed or inconsistent. ``path`` names
    the file, ``row`` the row refused (``organizations[2]``; None when the file as a whole is),
    ``problem`` what is wrong with it (naming the identifier)."""

    def __init__(self, path: Path, problem: str, row: str | None = None) -> None:
        where = f"tenant seed {path}" if row is None else f"tenant seed {path}: {row}"
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.row = row
        self.problem = problem


class Seed(msgspec.Struct, forbid_unknown_fields=True):
    tenants: list[Tenant]
    organizations: list[Organization]
    fleets: list[FleetRef]


@dataclass(frozen=True)
class SeedLoad:
    """How many rows of each kind a start's seed added to the database."""

    tenants: int = 0
    organizations: int = 0
    fleets: int = 0


def load_seed(path: str | Path) -> InMemoryTenantStore:
    """A store holding the seed file's tenants, organizations and fleets, in that order."""
    return _checked(Path(path))[1]


def _checked(path: Path) -> tuple[Seed, InMemoryTenantStore]:
    seed = _read(path)
    store = InMemoryTenantStore()
    _insert(path, "tenants", seed.tenants, store.insert_tenant, _tenant_problem)
    _insert(path, "organizations", seed.organizations, store.insert_organization, _org_problem)
    _insert(path, "fleets", seed.fleets, store.insert_fleet, _fleet_problem)
    return seed, store


async def apply_seed(path: Path | None, store: StoredTenantStore) -> SeedLoad:
    """Load the seed file (checked on its own first) into the database, tenants, then
    organizations, then fleets; rows already there with the same values change nothing, and
    a row there with other values is refused (``BootstrapError`` naming the row, the id and
    the field). Every row is compared with the database before any is written, so a refused
    seed adds nothing."""
    if path is None:
        return SeedLoad()
    seed, _ = _checked(path)
    for dry_run in (True, False):
        loaded = SeedLoad(
            await _apply(path, "tenants", seed.tenants, store.seed_tenant, dry_run),
            await _apply(
                path, "organizations", seed.organizations, store.seed_organization, dry_run
            ),
            await _apply(path, "fleets", seed.fleets, store.seed_fleet, dry_run),
        )
    return loaded


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
            raise BootstrapError(path, problem(row, exc), f"{member}[{index}]") from exc


async def _apply(
    path: Path, member: str, rows: Sequence[Row], seed: Seeding[Row], dry_run: bool
) -> int:
    added = 0
    for index, row in enumerate(rows):
        try:
            added += await seed(row, dry_run=dry_run)
        except SeedConflict as exc:
            advice = "make the seed say what the database holds, or remove the row from the seed"
            raise BootstrapError(path, f"{exc}: {advice}", f"{member}[{index}]") from exc
        except PanelStoreError as exc:  # CrossTenantAccess
            raise BootstrapError(path, str(exc), f"{member}[{index}]") from exc
    return added


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
