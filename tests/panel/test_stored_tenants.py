"""The tenant store on the database (``panel/stored_tenants.py``) and the seed file loaded into
it at start (``panel/bootstrap.py``, ``apply_seed``), on both backends: run-time duplicates,
tenants registered by their tokens and named later, the seed loaded idempotently, and every
conflict between the seed and the database refused naming the file, the row, the id and the
field."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from recordseal.panel.bootstrap import BootstrapError, SeedLoad, apply_seed
from recordseal.panel.stored_tenants import StoredTenantStore
from recordseal.panel.tenants import (
    CrossTenantAccess,
    Duplicate,
    FleetNotFound,
    FleetRef,
    Organization,
    OrganizationNotFound,
    SeedConflict,
    Tenant,
    TenantNotFound,
    TenantStore,
)
from recordseal.services.tokens import TokenService
from recordseal.storage.base import Store
from tests.backends import opened


def seed() -> dict[str, Any]:
    return {
        "tenants": [
            {"id": "acme", "display_name": "Acme", "contact_email": "ops@acme.test"},
            {"id": "globex", "display_name": "Globex", "active": False},
        ],
        "organizations": [
            {"id": "prod", "tenant_id": "acme", "display_name": "P", "sso_provider_ref": "okta"},
            {"id": "prod", "tenant_id": "globex", "display_name": "GP"},
        ],
        "fleets": [
            {"fleet_id": "eu-1", "organization_id": "prod", "tenant_id": "acme"},
            {"fleet_id": "gx-1", "organization_id": "prod", "tenant_id": "globex"},
        ],
    }


def write(tmp_path: Path, content: dict[str, Any], name: str = "seed.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(content))
    return path


def test_the_database_store_is_a_tenant_store(store: Store) -> None:
    assert isinstance(StoredTenantStore(store.hierarchy), TenantStore)


def test_run_time_creation_and_its_refusals(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await tenants.add_tenant(Tenant("acme", "Acme", contact_email="ops@acme.test"))
            with pytest.raises(Duplicate, match="'acme'"):
                await tenants.add_tenant(Tenant("acme", "Again"))
            assert await tenants.get_tenant("acme") == Tenant("acme", "Acme", True, "ops@acme.test")
            with pytest.raises(TenantNotFound):
                await tenants.add_organization(Organization("eng", "nobody", "E"))
            await tenants.add_organization(Organization("eng", "acme", "Engineering"))
            with pytest.raises(Duplicate, match="'eng'"):
                await tenants.add_organization(Organization("eng", "acme", "Again"))
            assert await tenants.list_organizations("acme") == [
                Organization("eng", "acme", "Engineering")
            ]
            await tenants.add_fleet(FleetRef("eu-1", "eng", "acme"))
            with pytest.raises(Duplicate, match="'eu-1'"):
                await tenants.add_fleet(FleetRef("eu-1", "eng", "acme"))
            with pytest.raises(OrganizationNotFound):
                await tenants.add_fleet(FleetRef("eu-2", "nope", "acme"))
            with pytest.raises(TenantNotFound):
                await tenants.add_fleet(FleetRef("eu-2", "eng", "nobody"))
            assert await tenants.find_fleet("acme", "eu-1") == FleetRef("eu-1", "eng", "acme")
            assert await tenants.list_fleets("acme", "eng") == [FleetRef("eu-1", "eng", "acme")]
            with pytest.raises(OrganizationNotFound):
                await tenants.list_fleets("acme", "nope")
            with pytest.raises(TenantNotFound):
                await tenants.list_organizations("nobody")
            frozen = await tenants.set_active("acme", False)
            assert frozen.active is False and (await tenants.get_tenant("acme")).active is False
            with pytest.raises(TenantNotFound):
                await tenants.set_active("nobody", False)

    asyncio.run(run())


def test_a_fleet_of_another_tenant_is_refused_and_warned_and_not_found(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            for tenant_id in ("acme", "globex"):
                await tenants.add_tenant(Tenant(tenant_id, tenant_id.title()))
                await tenants.add_organization(Organization("prod", tenant_id, "Prod"))
            await tenants.add_fleet(FleetRef("eu-1", "prod", "acme"))
            with (
                caplog.at_level(logging.WARNING, logger="recordseal.panel"),
                pytest.raises(CrossTenantAccess) as refused,
            ):
                await tenants.add_fleet(FleetRef("eu-1", "prod", "globex"))
            assert (refused.value.requested, refused.value.actual_tenant) == ("globex", "acme")
            assert [r.levelname for r in caplog.records] == ["WARNING"]
            with pytest.raises(FleetNotFound):  # no oracle for other tenants' fleets
                await tenants.find_fleet("globex", "eu-1")

    asyncio.run(run())


def test_a_tenant_its_tokens_registered_is_named_by_its_creation(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await TokenService(store.tokens).create("acme")
            assert await tenants.list_tenants() == [Tenant("acme", "acme")]
            assert await tenants.registered_implicitly("acme")
            await tenants.add_tenant(Tenant("acme", "Acme Corp"))  # not a duplicate
            assert await tenants.get_tenant("acme") == Tenant("acme", "Acme Corp")
            assert not await tenants.registered_implicitly("acme")
            with pytest.raises(Duplicate):
                await tenants.add_tenant(Tenant("acme", "Acme Corp"))

    asyncio.run(run())


def test_the_seed_is_loaded_once_and_again_changes_nothing(store: Store, tmp_path: Path) -> None:
    path = write(tmp_path, seed())

    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            assert await apply_seed(path, tenants) == SeedLoad(2, 2, 2)
            assert await tenants.list_tenants() == [
                Tenant("acme", "Acme", True, "ops@acme.test"),
                Tenant("globex", "Globex", False),
            ]
            assert await tenants.get_organization("acme", "prod") == Organization(
                "prod", "acme", "P", "okta"
            )
            assert await tenants.find_fleet("globex", "gx-1") == FleetRef("gx-1", "prod", "globex")
            assert await apply_seed(path, tenants) == SeedLoad(0, 0, 0)
            # Frozen and unfrozen at run time: the seed's `active` does not undo it.
            await tenants.set_active("acme", False)
            await tenants.set_active("globex", True)
            assert await apply_seed(path, tenants) == SeedLoad(0, 0, 0)
            assert [t.active for t in await tenants.list_tenants()] == [False, True]
            # Rows made at run time stay beside the seed's.
            await tenants.add_tenant(Tenant("initech", "Initech"))
            assert await apply_seed(path, tenants) == SeedLoad(0, 0, 0)
            assert len(await tenants.list_tenants()) == 3
            assert await apply_seed(None, tenants) == SeedLoad()

    asyncio.run(run())


def test_the_seed_names_a_tenant_its_tokens_registered(store: Store, tmp_path: Path) -> None:
    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await TokenService(store.tokens).create("acme")
            await TokenService(store.tokens).create("globex")
            loaded = await apply_seed(write(tmp_path, seed()), tenants)
            assert loaded == SeedLoad(2, 2, 2)
            assert [(t.id, t.display_name) for t in await tenants.list_tenants()] == [
                ("acme", "Acme"),
                ("globex", "Globex"),
            ]
            # The state is the database's once the tenant exists (globex: active).
            assert (await tenants.get_tenant("globex")).active is True

    asyncio.run(run())


@pytest.mark.parametrize(
    ("change", "row", "words"),
    [
        (
            lambda s: s["tenants"][1].update(display_name="Globex Inc"),
            "tenants[1]",
            ["tenant 'globex'", "display_name", "'Globex'", "'Globex Inc'"],
        ),
        (
            lambda s: s["tenants"][0].update(contact_email="billing@acme.test"),
            "tenants[0]",
            ["tenant 'acme'", "contact_email", "'ops@acme.test'", "'billing@acme.test'"],
        ),
        (
            lambda s: s["organizations"][0].pop("sso_provider_ref"),
            "organizations[0]",
            ["organization 'prod' of tenant 'acme'", "sso_provider_ref", "'okta'", "None"],
        ),
        (
            lambda s: (
                s["organizations"].append({"id": "qa", "tenant_id": "acme", "display_name": "Q"}),
                s["fleets"].__setitem__(0, {**s["fleets"][0], "organization_id": "qa"}),
            ),
            "fleets[0]",
            ["fleet 'eu-1'", "organization_id", "'prod'", "'qa'"],
        ),
    ],
)
def test_a_seed_that_contradicts_the_database_stops_the_start_naming_it(
    store: Store, tmp_path: Path, change: Any, row: str, words: list[str]
) -> None:
    first = write(tmp_path, seed())
    content = seed()
    change(content)
    second = write(tmp_path, content, "changed.json")

    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await apply_seed(first, tenants)
            before = await _everything(tenants)
            with pytest.raises(BootstrapError) as refused:
                await apply_seed(second, tenants)
            message = str(refused.value)
            assert str(second) in message and f"{row}:" in message
            assert all(word in message for word in words), message
            assert isinstance(refused.value.__cause__, SeedConflict)
            assert await _everything(tenants) == before  # the database keeps its rows

    asyncio.run(run())


def test_a_seed_fleet_another_tenant_holds_stops_the_start(store: Store, tmp_path: Path) -> None:
    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await apply_seed(write(tmp_path, seed()), tenants)
            content = seed()
            content["fleets"].append(
                {"fleet_id": "eu-1", "organization_id": "prod", "tenant_id": "globex"}
            )
            content["fleets"].pop(0)
            with pytest.raises(BootstrapError) as refused:
                await apply_seed(write(tmp_path, content, "other.json"), tenants)
            assert isinstance(refused.value.__cause__, CrossTenantAccess)
            assert all(w in str(refused.value) for w in ("'eu-1'", "'acme'", "'globex'"))

    asyncio.run(run())


def test_a_seed_inconsistent_in_itself_changes_nothing(store: Store, tmp_path: Path) -> None:
    """Checked on its own first: an organization of a tenant the file does not declare stops
    the start before any row is written, even when the database holds that tenant."""
    content = seed()
    content["organizations"].append({"id": "qa", "tenant_id": "initech", "display_name": "Q"})

    async def run() -> None:
        async with opened(store):
            tenants = StoredTenantStore(store.hierarchy)
            await tenants.add_tenant(Tenant("initech", "Initech"))
            with pytest.raises(BootstrapError, match=r"organizations\[2\].*'initech'"):
                await apply_seed(write(tmp_path, content), tenants)
            assert [t.id for t in await tenants.list_tenants()] == ["initech"]

    asyncio.run(run())


async def _everything(tenants: StoredTenantStore) -> list[Any]:
    rows: list[Any] = []
    for tenant in await tenants.list_tenants():
        rows.append(tenant)
        for organization in await tenants.list_organizations(tenant.id):
            rows.append(organization)
            rows.extend(await tenants.list_fleets(tenant.id, organization.id))
    return rows
