"""The in-memory tenant store: insert rules, lookups and errors of spec 2.1-2.3 and 7."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine
from typing import Any, TypeVar

import msgspec
import pytest

from recordseal.identifiers import is_identifier
from recordseal.panel import tenants
from recordseal.panel.tenants import (
    CrossTenantAccess,
    Duplicate,
    FleetNotFound,
    FleetRef,
    InMemoryTenantStore,
    Organization,
    OrganizationNotFound,
    PanelStoreError,
    Tenant,
    TenantNotFound,
    TenantStore,
)
from recordseal.services.errors import Invalid
from recordseal.services.tokens import check_tenant_id

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture
def store() -> InMemoryTenantStore:
    store = InMemoryTenantStore()
    store.insert_tenant(Tenant("acme", "Acme"))
    store.insert_tenant(Tenant("globex", "Globex", active=False, contact_email="ops@globex"))
    store.insert_organization(Organization("prod", "acme", "Production", "okta-prod"))
    store.insert_organization(Organization("staging", "acme", "Staging"))
    store.insert_organization(Organization("prod", "globex", "Globex production"))
    store.insert_fleet(FleetRef("eu-1", "prod", "acme"))
    store.insert_fleet(FleetRef("us-1", "prod", "acme"))
    store.insert_fleet(FleetRef("stg-1", "staging", "acme"))
    store.insert_fleet(FleetRef("gx-1", "prod", "globex"))
    return store


def test_in_memory_store_is_a_tenant_store() -> None:
    assert isinstance(InMemoryTenantStore(), TenantStore)


@pytest.mark.parametrize("value", ["", "-acme", "a/b", "é", "a" * 65, "a", "acme.eu_1-x", "a" * 64])
def test_identifier_rule_is_the_api_tenant_rule(value: str) -> None:
    """The panel's tenant ids and the API's tenant ids are one format (recordseal.identifiers)."""
    try:
        check_tenant_id(value)
        api = True
    except Invalid:
        api = False
    try:
        Tenant(value, "x")
        panel = True
    except ValueError:
        panel = False
    assert api == panel == is_identifier(value)


@pytest.mark.parametrize("bad", ["", "-acme", ".a", "a b", "a|b", "é", "a" * 65, "a/b"])
def test_malformed_identifiers_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="tenant id"):
        Tenant(bad, "x")
    with pytest.raises(ValueError, match="organization id"):
        Organization(bad, "acme", "x")
    with pytest.raises(ValueError, match="fleet_id"):
        FleetRef(bad, "prod", "acme")
    with pytest.raises(ValueError, match="tenant_id"):
        FleetRef("f", "prod", bad)


@pytest.mark.parametrize("good", ["a", "A9", "acme.eu_1-x", "0", "a" * 64])
def test_well_formed_identifiers_are_accepted(good: str) -> None:
    assert Tenant(good, "x").id == good


def test_tenant_defaults() -> None:
    tenant = Tenant("acme", "Acme")
    assert tenant.active is True
    assert tenant.contact_email is None


def test_lists_come_back_in_insert_order(store: InMemoryTenantStore) -> None:
    assert [t.id for t in run(store.list_tenants())] == ["acme", "globex"]
    assert [o.id for o in run(store.list_organizations("acme"))] == ["prod", "staging"]
    assert [f.fleet_id for f in run(store.list_fleets("acme", "prod"))] == ["eu-1", "us-1"]
    assert [f.fleet_id for f in run(store.list_fleets("acme", "staging"))] == ["stg-1"]


def test_organization_ids_are_scoped_to_their_tenant(store: InMemoryTenantStore) -> None:
    assert run(store.get_organization("acme", "prod")).sso_provider_ref == "okta-prod"
    assert run(store.get_organization("globex", "prod")).display_name == "Globex production"


def test_get_tenant(store: InMemoryTenantStore) -> None:
    assert run(store.get_tenant("globex")).active is False
    with pytest.raises(TenantNotFound) as caught:
        run(store.get_tenant("initech"))
    assert caught.value.tenant == "initech"
    assert "initech" in str(caught.value)


def test_missing_organization(store: InMemoryTenantStore) -> None:
    with pytest.raises(OrganizationNotFound) as caught:
        run(store.get_organization("acme", "qa"))
    assert (caught.value.tenant, caught.value.organization) == ("acme", "qa")
    with pytest.raises(OrganizationNotFound):
        run(store.list_fleets("acme", "qa"))
    with pytest.raises(TenantNotFound):
        run(store.list_organizations("initech"))
    with pytest.raises(TenantNotFound):
        run(store.list_fleets("initech", "prod"))


def test_find_fleet(store: InMemoryTenantStore) -> None:
    assert run(store.find_fleet("acme", "stg-1")) == FleetRef("stg-1", "staging", "acme")
    with pytest.raises(FleetNotFound) as caught:
        run(store.find_fleet("acme", "nope"))
    assert (caught.value.tenant, caught.value.organization, caught.value.fleet) == (
        "acme",
        None,
        "nope",
    )
    with pytest.raises(TenantNotFound):
        run(store.find_fleet("initech", "eu-1"))


def test_find_fleet_of_another_tenant_is_not_found(store: InMemoryTenantStore) -> None:
    with pytest.raises(FleetNotFound, match="gx-1"):
        run(store.find_fleet("acme", "gx-1"))


def test_duplicate_tenant(store: InMemoryTenantStore) -> None:
    with pytest.raises(Duplicate, match="'acme'"):
        run(store.add_tenant(Tenant("acme", "Again")))


def test_duplicate_organization_within_a_tenant(store: InMemoryTenantStore) -> None:
    with pytest.raises(Duplicate, match=r"'staging'.*'acme'"):
        run(store.add_organization(Organization("staging", "acme", "Again")))


def test_organization_needs_a_declared_tenant(store: InMemoryTenantStore) -> None:
    with pytest.raises(TenantNotFound) as caught:
        run(store.add_organization(Organization("prod", "initech", "Initech")))
    assert caught.value.tenant == "initech"


def test_fleet_claimed_again_within_a_tenant_is_duplicate(store: InMemoryTenantStore) -> None:
    with pytest.raises(Duplicate, match=r"'eu-1'.*'acme'"):
        run(store.add_fleet(FleetRef("eu-1", "staging", "acme")))
    with pytest.raises(Duplicate):
        run(store.add_fleet(FleetRef("eu-1", "prod", "acme")))


def test_fleet_claimed_by_another_tenant_is_cross_tenant_access(
    store: InMemoryTenantStore, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="recordseal.panel"),
        pytest.raises(CrossTenantAccess) as caught,
    ):
        run(store.add_fleet(FleetRef("eu-1", "prod", "globex")))
    error = caught.value
    assert not isinstance(error, Duplicate)
    assert (error.requested, error.actual_tenant, error.fleet) == ("globex", "acme", "eu-1")
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.name == "recordseal.panel"
    message = record.getMessage()
    assert all(word in message for word in ("'eu-1'", "'acme'", "'globex'"))
    assert run(store.find_fleet("acme", "eu-1")).tenant_id == "acme"


def test_duplicates_within_a_tenant_log_nothing(
    store: InMemoryTenantStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="recordseal.panel"), pytest.raises(Duplicate):
        run(store.add_fleet(FleetRef("eu-1", "staging", "acme")))
    assert caplog.records == []


def test_fleet_needs_an_organization_of_its_tenant(store: InMemoryTenantStore) -> None:
    with pytest.raises(OrganizationNotFound) as caught:
        run(store.add_fleet(FleetRef("gx-2", "staging", "globex")))
    assert (caught.value.tenant, caught.value.organization) == ("globex", "staging")
    with pytest.raises(TenantNotFound):
        run(store.add_fleet(FleetRef("x-1", "prod", "initech")))


def test_failed_inserts_leave_the_store_unchanged(store: InMemoryTenantStore) -> None:
    before = (run(store.list_tenants()), run(store.list_fleets("globex", "prod")))
    for bad in (FleetRef("eu-1", "prod", "globex"), FleetRef("gx-2", "nope", "globex")):
        with pytest.raises(PanelStoreError):
            store.insert_fleet(bad)
    assert (run(store.list_tenants()), run(store.list_fleets("globex", "prod"))) == before


def test_every_store_error_is_a_panel_store_error() -> None:
    errors = [
        TenantNotFound("t"),
        OrganizationNotFound("t", "o"),
        FleetNotFound("t", "o", "f"),
        Duplicate("x"),
        CrossTenantAccess("a", "b"),
        tenants.Backend("disk on fire"),
    ]
    assert all(isinstance(error, PanelStoreError) for error in errors)
    assert re.search(r"'f'.*'o'.*'t'", str(errors[2]))


def test_structs_refuse_unknown_members_on_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="colour"):
        msgspec.json.decode(b'{"id":"a","display_name":"A","colour":"red"}', type=Tenant)
