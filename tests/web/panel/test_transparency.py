"""``GET /transparency/...`` behind sign-on and tenant scope (spec panel 4.5), and the
organization page's fleet status (latest anchor, witnesses)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.fleet.status import FleetStatus
from recordseal.panel.tenants import FleetRef
from tests.web.panel.conftest import HTML, JSON, Panel, seeded_store

DAY = "2026-11-21"
ACME = b'{"format":"acme file"}\n'
GLOBEX = b'{"format":"globex file"}\n'
SOLO = b'{"format":"legacy file"}\n'


@pytest.fixture
def panel(tmp_path: Path) -> Panel:
    (tmp_path / DAY / "acme").mkdir(parents=True)
    (tmp_path / DAY / "globex").mkdir(parents=True)
    (tmp_path / DAY / "acme" / "fleet-a1.log").write_bytes(ACME)
    (tmp_path / DAY / "globex" / "fleet-g1.log").write_bytes(GLOBEX)
    (tmp_path / DAY / "solo.log").write_bytes(SOLO)
    panel = Panel(seeded_store(), tmp_path / "panel", passkey_roles={"root": "operator"})
    panel.context.transparency_root = tmp_path
    return panel


@pytest.fixture
def client(panel: Panel) -> Iterator[TestClient[Litestar]]:
    with TestClient(panel.app) as test_client:
        yield test_client


def test_a_tenant_session_reads_its_own_tenants_log(
    client: TestClient[Litestar], panel: Panel
) -> None:
    response = client.get(
        f"/transparency/{DAY}/acme/fleet-a1.log", headers=panel.cookie(panel.tenant("acme"))
    )
    assert response.status_code == 200
    assert response.content == ACME
    assert response.headers["content-type"].startswith("application/jsonl")
    assert response.headers["cache-control"] == "no-store"


def test_another_tenants_log_is_403_before_any_file_lookup(
    client: TestClient[Litestar], panel: Panel
) -> None:
    cookie = panel.cookie(panel.tenant("acme"), **JSON)
    existing = client.get(f"/transparency/{DAY}/globex/fleet-g1.log", headers=cookie)
    missing = client.get(f"/transparency/{DAY}/globex/nothing-here.log", headers=cookie)
    unknown_tenant = client.get("/transparency/1999-01-01/initech/x.log", headers=cookie)
    for response in (existing, missing, unknown_tenant):
        assert response.status_code == 403
        assert response.json()["code"] == "forbidden_tenant"
        assert b"globex file" not in response.content
    assert panel.context.metrics["forbidden_cross_tenant"] == 3
    assert panel.context.metrics["not_found"] == 0


def test_a_legacy_session_reads_every_tenants_log(
    client: TestClient[Litestar], panel: Panel
) -> None:
    cookie = panel.cookie(panel.legacy())
    assert client.get(f"/transparency/{DAY}/globex/fleet-g1.log", headers=cookie).content == GLOBEX
    assert client.get(f"/transparency/{DAY}/acme/fleet-a1.log", headers=cookie).content == ACME


def test_a_log_with_no_tenant_is_for_legacy_sessions_only(
    client: TestClient[Litestar], panel: Panel
) -> None:
    legacy = client.get(f"/transparency/{DAY}/solo.log", headers=panel.cookie(panel.legacy()))
    assert legacy.status_code == 200 and legacy.content == SOLO
    scoped = client.get(
        f"/transparency/{DAY}/solo.log", headers=panel.cookie(panel.tenant("acme"), **JSON)
    )
    assert scoped.status_code == 403 and scoped.json()["code"] == "forbidden_tenant"


def test_sign_on_is_required(client: TestClient[Litestar]) -> None:
    api = client.get(f"/transparency/{DAY}/acme/fleet-a1.log", headers=JSON)
    assert api.status_code == 401
    browser = client.get(
        f"/transparency/{DAY}/acme/fleet-a1.log", headers=HTML, follow_redirects=False
    )
    assert browser.status_code == 303 and browser.headers["location"] == "/login"
    assert client.get(f"/transparency/{DAY}/solo.log", headers=JSON).status_code == 401


@pytest.mark.parametrize(
    "path",
    [
        f"/transparency/{DAY}/acme/fleet-zz.log",
        "/transparency/2026-11-20/acme/fleet-a1.log",
        "/transparency/2026-02-30/acme/fleet-a1.log",
        f"/transparency/{DAY}/acme/fleet-a1.txt",
        f"/transparency/{DAY}/acme/..log",
        f"/transparency/{DAY}/acme.log",
    ],
)
def test_unknown_or_malformed_names_are_404(
    client: TestClient[Litestar], panel: Panel, path: str
) -> None:
    response = client.get(path, headers=panel.cookie(panel.legacy(), **JSON))
    assert response.status_code == 404
    assert response.json()["code"] == "transparency_log_not_found"


def test_without_a_transparency_root_every_log_is_404(
    client: TestClient[Litestar], panel: Panel
) -> None:
    panel.context.transparency_root = None
    response = client.get(
        f"/transparency/{DAY}/acme/fleet-a1.log", headers=panel.cookie(panel.legacy(), **JSON)
    )
    assert response.status_code == 404


def test_the_organization_page_lists_each_fleets_latest_anchor_and_witness_status(
    client: TestClient[Litestar], panel: Panel
) -> None:
    async def status(ref: FleetRef) -> FleetStatus:
        if ref.fleet_id == "fleet-a1":
            return FleetStatus(
                "fleet-a1",
                "bound",
                "balanced",
                42,
                "ab" * 32,
                "2026-11-21T09:00:00.000000Z",
                "partial",
                ("witness.test/w1",),
                ("witness.test/w1", "tsa-1"),
            )
        return FleetStatus(
            "fleet-a2",
            "absent",
            None,
            None,
            None,
            None,
            "no_anchor",
            (),
            ("witness.test/w1", "tsa-1"),
        )

    panel.context.fleet_status = status
    cookie = panel.tenant("acme")
    page = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(cookie, **HTML)).text
    assert "size 42" in page and "abababababababab" in page
    assert "cosigned by 1 of 2: witness.test/w1" in page
    assert "preset <code>balanced</code>" in page
    assert "none yet" in page and "not in the manifest" in page
    body = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(cookie, **JSON)).json()
    assert body["fleet_status"]["fleet-a1"]["anchor_size"] == 42
    assert body["fleet_status"]["fleet-a1"]["witness_state"] == "partial"
    assert body["fleet_status"]["fleet-a2"]["witness_state"] == "no_anchor"


@pytest.mark.parametrize(
    "path",
    [
        f"/transparency/{DAY}/%2e%2e/{DAY}/acme/fleet-a1.log",
        f"/transparency/{DAY}/..%2Facme/fleet-a1.log",
        f"/transparency/{DAY}/acme/..%2F..%2F{DAY}%2Fsolo.log",
        f"/transparency/{DAY}/acme/%2e%2e%2Fsecret.log",
        f"/transparency/..%2F{DAY}/acme/fleet-a1.log",
        f"/transparency/{DAY}%2F..%2F{DAY}/acme/fleet-a1.log",
        "/transparency/%2e%2e/secret.log",
        f"/transparency/{DAY}/%2Fetc%2Fpasswd",
        f"/transparency/{DAY}/.hidden.log",
        f"/transparency/{DAY}/acme/.fleet-a1.log.tmp",
        "/transparency/\uff12\uff10\uff12\uff16-11-21/acme/fleet-a1.log",  # full-width digits
    ],
)
def test_no_path_leaves_the_transparency_root(
    client: TestClient[Litestar], panel: Panel, tmp_path: Path, path: str
) -> None:
    """Every segment is checked (a date, identifiers) before it touches the file system, so
    neither ``..`` nor an encoded ``/`` reaches a file outside the root or another folder."""
    (tmp_path / "secret.log").write_bytes(b"outside the day folders\n")
    (tmp_path / DAY / ".hidden.log").write_bytes(b"hidden\n")
    response = client.get(path, headers=panel.cookie(panel.legacy(), **JSON))
    assert response.status_code == 404, response.content
    assert b"outside" not in response.content and b"hidden" not in response.content


@pytest.mark.parametrize(
    "path",
    [
        "/transparency/not-a-date/globex/fleet-g1.log",
        f"/transparency/{DAY}/globex/..log",
        f"/transparency/{DAY}/globex/fleet-g1.txt",
    ],
)
def test_the_tenant_check_comes_before_any_name_check(
    client: TestClient[Litestar], panel: Panel, path: str
) -> None:
    """Another tenant's path is 403 whatever follows, never 404: no oracle at all."""
    response = client.get(path, headers=panel.cookie(panel.tenant("acme"), **JSON))
    assert response.status_code == 403 and response.json()["code"] == "forbidden_tenant"
    assert panel.context.metrics["not_found"] == 0


def test_a_legacy_session_reads_a_tenants_log_without_a_tenant_in_its_cookie(
    client: TestClient[Litestar], panel: Panel
) -> None:
    """Spec 5.3: legacy (passkey) sessions are not tenant-gated, for any tenant's file."""
    for user in ("root", "someone-else"):
        cookie = panel.cookie(panel.legacy(user), **JSON)
        for tenant, fleet, body in (("acme", "fleet-a1", ACME), ("globex", "fleet-g1", GLOBEX)):
            response = client.get(f"/transparency/{DAY}/{tenant}/{fleet}.log", headers=cookie)
            assert response.status_code == 200 and response.content == body
    assert panel.context.metrics["forbidden_cross_tenant"] == 0
