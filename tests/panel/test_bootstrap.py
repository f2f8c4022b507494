"""The bootstrap file of spec 2.4: insert order, and every inconsistency aborts start."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from recordseal.panel.bootstrap import BootstrapError, load_seed, store_from_seed
from recordseal.panel.tenants import (
    CrossTenantAccess,
    Duplicate,
    FleetRef,
    InMemoryTenantStore,
    Organization,
    OrganizationNotFound,
    Tenant,
    TenantNotFound,
)
from recordseal.settings import from_env


def seed() -> dict[str, Any]:
    return {
        "tenants": [
            {"id": "acme", "display_name": "Acme", "active": True, "contact_email": "a@acme"},
            {"id": "globex", "display_name": "Globex", "active": False},
        ],
        "organizations": [
            {"id": "prod", "tenant_id": "acme", "display_name": "P", "sso_provider_ref": "okta"},
            {"id": "staging", "tenant_id": "acme", "display_name": "S"},
            {"id": "prod", "tenant_id": "globex", "display_name": "GP"},
        ],
        "fleets": [
            {"fleet_id": "eu-1", "organization_id": "prod", "tenant_id": "acme"},
            {"fleet_id": "stg-1", "organization_id": "staging", "tenant_id": "acme"},
            {"fleet_id": "gx-1", "organization_id": "prod", "tenant_id": "globex"},
        ],
    }


def write(tmp_path: Path, content: Any) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def fleet(fleet_id: str, organization: str, tenant: str) -> dict[str, str]:
    return {"fleet_id": fleet_id, "organization_id": organization, "tenant_id": tenant}


def failure(tmp_path: Path, content: Any) -> BootstrapError:
    path = write(tmp_path, content)
    with pytest.raises(BootstrapError) as caught:
        load_seed(path)
    assert str(path) in str(caught.value)
    assert caught.value.path == path
    return caught.value


def test_loads_every_row(tmp_path: Path) -> None:
    store = load_seed(write(tmp_path, seed()))
    assert asyncio.run(store.list_tenants()) == [
        Tenant("acme", "Acme", True, "a@acme"),
        Tenant("globex", "Globex", False),
    ]
    assert asyncio.run(store.get_organization("acme", "prod")) == Organization(
        "prod", "acme", "P", "okta"
    )
    assert asyncio.run(store.find_fleet("globex", "gx-1")) == FleetRef("gx-1", "prod", "globex")


def test_inserts_tenants_then_organizations_then_fleets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    for name in ("insert_tenant", "insert_organization", "insert_fleet"):
        original = getattr(InMemoryTenantStore, name)

        def spy(self: InMemoryTenantStore, row: Any, _o: Any = original, _n: str = name) -> None:
            calls.append(_n)
            _o(self, row)

        monkeypatch.setattr(InMemoryTenantStore, name, spy)
    # Members in reverse order in the file: insert order is still the spec's.
    content = seed()
    path = write(tmp_path, {key: content[key] for key in ("fleets", "organizations", "tenants")})
    load_seed(path)
    assert calls == ["insert_tenant"] * 2 + ["insert_organization"] * 3 + ["insert_fleet"] * 3


def test_dangling_organization_aborts_naming_the_identifier(tmp_path: Path) -> None:
    content = seed()
    content["organizations"].append({"id": "qa", "tenant_id": "initech", "display_name": "Q"})
    error = failure(tmp_path, content)
    assert "'initech'" in str(error)
    assert "'qa'" in str(error)
    assert "organizations[3]" in str(error)
    assert isinstance(error.__cause__, TenantNotFound)


def test_organization_before_its_tenant_in_the_file_is_fine(tmp_path: Path) -> None:
    content = seed()
    content["tenants"].reverse()
    store = load_seed(write(tmp_path, content))
    assert [t.id for t in asyncio.run(store.list_tenants())] == ["globex", "acme"]


def test_duplicate_tenant_fails(tmp_path: Path) -> None:
    content = seed()
    content["tenants"].append({"id": "globex", "display_name": "Again"})
    error = failure(tmp_path, content)
    assert "tenants[2]" in str(error)
    assert "'globex'" in str(error)
    assert isinstance(error.__cause__, Duplicate)


def test_duplicate_organization_fails(tmp_path: Path) -> None:
    content = seed()
    content["organizations"].append({"id": "staging", "tenant_id": "acme", "display_name": "x"})
    error = failure(tmp_path, content)
    assert "'staging'" in str(error)
    assert isinstance(error.__cause__, Duplicate)


def test_fleet_claimed_twice_in_a_tenant_fails(tmp_path: Path) -> None:
    content = seed()
    content["fleets"].append(
        {"fleet_id": "eu-1", "organization_id": "staging", "tenant_id": "acme"}
    )
    error = failure(tmp_path, content)
    assert "fleets[3]" in str(error)
    assert "'eu-1'" in str(error)
    assert isinstance(error.__cause__, Duplicate)


def test_fleet_claimed_by_two_tenants_fails_and_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    content = seed()
    content["fleets"].append(fleet("eu-1", "prod", "globex"))
    with caplog.at_level(logging.WARNING, logger="recordseal.panel"):
        error = failure(tmp_path, content)
    assert isinstance(error.__cause__, CrossTenantAccess)
    assert all(word in str(error) for word in ("'eu-1'", "'acme'", "'globex'"))
    assert [record.levelname for record in caplog.records] == ["WARNING"]


def test_fleet_with_undeclared_organization_fails(tmp_path: Path) -> None:
    content = seed()
    content["fleets"].append(
        {"fleet_id": "gx-2", "organization_id": "staging", "tenant_id": "globex"}
    )
    error = failure(tmp_path, content)
    assert "'gx-2'" in str(error)
    assert "'staging'" in str(error)
    assert isinstance(error.__cause__, OrganizationNotFound)


def test_fleet_with_undeclared_tenant_fails(tmp_path: Path) -> None:
    content = seed()
    content["fleets"].append(fleet("x-1", "prod", "initech"))
    error = failure(tmp_path, content)
    assert "'initech'" in str(error)
    assert isinstance(error.__cause__, TenantNotFound)


@pytest.mark.parametrize(
    ("where", "row", "member"),
    [
        ("tenants", {"id": "x", "display_name": "X", "colour": "red"}, "colour"),
        ("organizations", {"id": "x", "tenant_id": "acme", "display_name": "X", "sso": 1}, "sso"),
        ("fleets", {"fleet_id": "x", "organization_id": "prod", "tenant_id": "acme", "n": 1}, "n"),
        ("tenants", {"id": "x", "display_name": 5}, "display_name"),
        ("tenants", {"id": "x", "display_name": "X", "active": "yes"}, "active"),
        ("tenants", {"id": "x"}, "display_name"),
        ("organizations", {"id": "x", "display_name": "X"}, "tenant_id"),
        ("fleets", {"fleet_id": "x", "tenant_id": "acme"}, "organization_id"),
        ("tenants", {"id": "bad id", "display_name": "X"}, "tenant id"),
        ("tenants", {"id": "x", "display_name": " "}, "display_name must be 1 to 128"),
        ("tenants", {"id": "x", "display_name": "a\nb"}, "no control characters"),
        ("tenants", {"id": "x", "display_name": "X", "contact_email": "x"}, "contact_email"),
        ("organizations", {"id": "x", "tenant_id": "acme", "display_name": ""}, "display_name"),
    ],
)
def test_unknown_or_mistyped_members_are_named(
    tmp_path: Path, where: str, row: dict[str, Any], member: str
) -> None:
    content = seed()
    content[where].append(row)
    assert member in str(failure(tmp_path, content))


def test_unknown_top_level_member_is_named(tmp_path: Path) -> None:
    assert "fleet" in str(failure(tmp_path, {**seed(), "fleet": []}))


@pytest.mark.parametrize("missing", ["tenants", "organizations", "fleets"])
def test_every_array_is_required(tmp_path: Path, missing: str) -> None:
    content = seed()
    del content[missing]
    assert missing in str(failure(tmp_path, content))


@pytest.mark.parametrize("content", ["", "{", "[]", "null", '{"tenants": {}}'])
def test_malformed_files_fail(tmp_path: Path, content: str) -> None:
    failure(tmp_path, content)


def test_missing_file_fails_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(BootstrapError, match=r"absent\.json"):
        load_seed(path)


def test_empty_arrays_give_an_empty_store(tmp_path: Path) -> None:
    store = load_seed(write(tmp_path, {"tenants": [], "organizations": [], "fleets": []}))
    assert asyncio.run(store.list_tenants()) == []


SEED = "RECORDSEAL_PANEL_TENANT_SEED"


@pytest.mark.parametrize("environ", [{}, {SEED: ""}, {SEED: "  "}])
def test_unset_variable_gives_an_empty_store(environ: dict[str, str]) -> None:
    store = store_from_seed(from_env(environ).panel_tenant_seed)
    assert asyncio.run(store.list_tenants()) == []


def test_variable_names_the_seed_file(tmp_path: Path) -> None:
    store = store_from_seed(from_env({SEED: str(write(tmp_path, seed()))}).panel_tenant_seed)
    assert len(asyncio.run(store.list_tenants())) == 2


def test_variable_naming_a_missing_file_fails(tmp_path: Path) -> None:
    with pytest.raises(BootstrapError):
        store_from_seed(from_env({SEED: str(tmp_path / "nope.json")}).panel_tenant_seed)
