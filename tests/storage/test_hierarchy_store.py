"""The tenant hierarchy's part of the store (``storage/hierarchy.py``) on both backends: every
rule of its contract, the tenant a token registers, and several stores on one database (several
processes) writing the same rows at once."""

from __future__ import annotations

import asyncio

from recordseal.services.tokens import TokenService
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.storage.hierarchy import FleetRow, OrganizationRow, Source, TenantRow
from tests.backends import opened, query

AT = "2026-11-21T08:00:00.000000Z"
LATER = "2026-11-22T08:00:00.000000Z"


def tenant(
    tenant_id: str,
    name: str = "Acme Corp",
    source: Source = "operator",
    *,
    contact_email: str | None = None,
    created_at: str = AT,
) -> TenantRow:
    return TenantRow(tenant_id, name, contact_email, True, source, created_at)


def org(tenant_id: str, org_id: str, name: str = "Engineering") -> OrganizationRow:
    return OrganizationRow(tenant_id, org_id, name, None, "operator", AT)


def test_a_tenant_is_written_once_and_read_back(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            first = tenant("acme", contact_email="ops@acme.test")
            assert await rows.put_tenant(first) == (first, True)
            assert await rows.tenant("acme") == first
            # Taken: nothing changes, the stored row is answered.
            again = await rows.put_tenant(tenant("acme", "Other", created_at=LATER))
            assert again == (first, False)
            assert await rows.put_tenant(tenant("acme", "Seeded", source="seed")) == (first, False)
            await rows.put_tenant(tenant("globex", "Globex"))
            await rows.put_tenant(tenant("Zeta", "Zeta"))
            assert [t.id for t in await rows.tenants()] == ["Zeta", "acme", "globex"]
            assert await rows.tenant("nobody") is None

    asyncio.run(run())


def test_freezing_and_unfreezing(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            await rows.put_tenant(tenant("acme"))
            frozen = await rows.set_tenant_active("acme", False)
            assert frozen is not None and frozen.active is False
            assert (await rows.tenant("acme")).active is False  # type: ignore[union-attr]
            assert (await rows.set_tenant_active("acme", True)).active is True  # type: ignore[union-attr]
            assert await rows.set_tenant_active("nobody", False) is None
            assert await rows.tenants() == [tenant("acme")]

    asyncio.run(run())


def test_a_token_registers_its_tenant_and_a_name_is_given_later(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            await TokenService(store.tokens).create("acme", "ci")
            registered = await rows.tenant("acme")
            assert registered is not None
            assert (registered.display_name, registered.source, registered.active) == (
                "acme",
                "implicit",
                True,
            )
            # A second token changes nothing; a declared tenant keeps its row.
            await TokenService(store.tokens).create("acme", "ci-2")
            assert await rows.tenant("acme") == registered
            # Declaring it takes the row over: the name and source, not its state or age.
            await rows.set_tenant_active("acme", False)
            named, written = await rows.put_tenant(
                tenant("acme", "Acme Corp", contact_email="ops@acme.test", created_at=LATER)
            )
            assert written
            assert named == TenantRow(
                "acme", "Acme Corp", "ops@acme.test", False, "operator", registered.created_at
            )
            # Declared rows are never taken over again.
            assert (await rows.put_tenant(tenant("acme", "Again")))[1] is False
            await TokenService(store.tokens).create("globex")
            assert (await rows.tenant("globex")).source == "implicit"  # type: ignore[union-attr]

    asyncio.run(run())


def test_a_frozen_tenant_gets_no_token(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            await store.hierarchy.put_tenant(tenant("acme"))
            await store.hierarchy.set_tenant_active("acme", False)
            stored = await store.tokens.add_token(b"h" * 32, "acme", "ci", AT)
            assert stored is False
            assert await store.tokens.list_tokens("acme") == []
            await store.hierarchy.set_tenant_active("acme", True)
            assert await store.tokens.add_token(b"h" * 32, "acme", "ci", AT) is True
            assert len(await store.tokens.list_tokens("acme")) == 1

    asyncio.run(run())


def test_organizations_belong_to_an_existing_tenant(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            assert await rows.put_organization(org("acme", "eng")) is None  # no tenant yet
            await rows.put_tenant(tenant("acme"))
            await rows.put_tenant(tenant("globex"))
            assert await rows.put_organization(org("acme", "eng")) == (org("acme", "eng"), True)
            taken = await rows.put_organization(org("acme", "eng", "Other"))
            assert taken == (org("acme", "eng"), False)
            # Organization ids are scoped to their tenant.
            assert (await rows.put_organization(org("globex", "eng")))[1] is True  # type: ignore[index]
            await rows.put_organization(org("acme", "ops", "Operations"))
            assert [o.id for o in await rows.organizations("acme")] == ["eng", "ops"]
            assert await rows.organization("acme", "ops") == org("acme", "ops", "Operations")
            assert await rows.organization("acme", "nope") is None
            assert await rows.organizations("nobody") == []

    asyncio.run(run())


def test_a_fleet_id_is_held_by_one_organization_of_one_tenant(store: Store) -> None:
    async def run() -> None:
        async with opened(store):
            rows = store.hierarchy
            for tenant_id in ("acme", "globex"):
                await rows.put_tenant(tenant(tenant_id))
                await rows.put_organization(org(tenant_id, "eng"))
            eu1 = FleetRow("eu-1", "eng", "acme")
            assert await rows.put_fleet(FleetRow("eu-1", "nope", "acme")) is None
            assert await rows.put_fleet(eu1) == (eu1, True)
            # Claimed again, by another tenant or organization: the holder is answered.
            assert await rows.put_fleet(FleetRow("eu-1", "eng", "globex")) == (eu1, False)
            assert await rows.put_fleet(eu1) == (eu1, False)
            await rows.put_fleet(FleetRow("eu-0", "eng", "acme"))
            assert [f.fleet_id for f in await rows.fleets("acme", "eng")] == ["eu-0", "eu-1"]
            assert await rows.fleets("globex", "eng") == []
            assert await rows.fleet("eu-1") == eu1
            assert await rows.fleet("nope") is None

    asyncio.run(run())


def test_stores_on_one_database_writing_the_same_rows_at_once_agree(
    store_settings: Settings,
) -> None:
    """Four processes starting together load one seed: each row is written once, and every
    store answers the same row."""

    async def run() -> None:
        stores = [open_store(store_settings) for _ in range(4)]
        for each in stores:
            await each.open()
        try:
            await stores[0].hierarchy.put_tenant(tenant("acme"))
            puts = await asyncio.gather(
                *(s.hierarchy.put_tenant(tenant("globex", source="seed")) for s in stores),
                *(s.hierarchy.put_organization(org("acme", "eng")) for s in stores),
            )
            tenants, organizations = puts[:4], puts[4:]
            assert sum(written for _, written in tenants) == 1
            assert len({row for row, _ in tenants}) == 1
            assert sum(put[1] for put in organizations if put is not None) == 1
            fleets = await asyncio.gather(
                *(s.hierarchy.put_fleet(FleetRow("eu-1", "eng", "acme")) for s in stores)
            )
            assert sum(put[1] for put in fleets if put is not None) == 1
        finally:
            for each in stores:
                await each.close()

    asyncio.run(run())
    assert query(store_settings, "SELECT count(*) FROM tenants")[0][0] == 2
    assert query(store_settings, "SELECT count(*) FROM fleet_refs")[0][0] == 1
