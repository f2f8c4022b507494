"""Tenant views (spec 4.1, 5.3): scoping, cross-tenant 403 before the store, 404, HTML."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.tenants import InMemoryTenantStore
from tests.web.panel.conftest import HTML, JSON, Panel, SpyStore, seeded_store


def test_legacy_session_sees_all_tenants(client: TestClient[Litestar], panel: Panel) -> None:
    response = client.get("/tenants", headers=panel.cookie(panel.legacy(), **JSON))
    assert response.status_code == 200
    body = response.json()
    assert [tenant["id"] for tenant in body["tenants"]] == ["acme", "globex"]
    assert body["session"]["kind"] == "legacy"
    assert body["session"]["role"] == "operator"
    assert body["session"]["tenant_id"] is None


def test_tenant_session_sees_only_its_tenant(client: TestClient[Litestar], panel: Panel) -> None:
    response = client.get("/tenants", headers=panel.cookie(panel.tenant("acme"), **JSON))
    assert response.status_code == 200
    assert [tenant["id"] for tenant in response.json()["tenants"]] == ["acme"]
    html = client.get("/tenants", headers=panel.cookie(panel.tenant("acme"), **HTML)).text
    assert "Acme Corp" in html
    assert "Globex" not in html


def test_tenant_detail_lists_organizations(client: TestClient[Litestar], panel: Panel) -> None:
    response = client.get("/tenants/acme", headers=panel.cookie(panel.tenant("acme"), **JSON))
    assert response.status_code == 200
    body = response.json()
    assert body["tenant"]["display_name"] == "Acme Corp"
    assert [org["id"] for org in body["organizations"]] == ["eng", "ops"]
    html = client.get("/tenants/acme", headers=panel.cookie(panel.tenant("acme"), **HTML))
    assert html.status_code == 200
    assert html.headers["content-type"].startswith("text/html")
    assert 'href="/tenants/acme/orgs/eng"' in html.text


def test_organization_detail_lists_fleets(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.tenant("acme")
    response = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(token, **JSON))
    assert response.status_code == 200
    body = response.json()
    assert body["organization"]["id"] == "eng"
    assert [fleet["fleet_id"] for fleet in body["fleets"]] == ["fleet-a1", "fleet-a2"]
    html = client.get("/tenants/acme/orgs/eng", headers=panel.cookie(token, **HTML)).text
    assert "fleet-a1" in html
    assert "fleet-g1" not in html


def test_legacy_session_is_not_tenant_gated(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.legacy()
    assert client.get("/tenants/globex", headers=panel.cookie(token, **JSON)).status_code == 200
    response = client.get("/tenants/globex/orgs/hq", headers=panel.cookie(token, **JSON))
    assert response.status_code == 200
    assert [fleet["fleet_id"] for fleet in response.json()["fleets"]] == ["fleet-g1"]


@pytest.mark.parametrize(
    "path", ["/tenants/globex", "/tenants/globex/orgs/hq", "/tenants/nonexistent/orgs/x"]
)
def test_cross_tenant_is_403_before_the_store(
    path: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    spy = SpyStore(seeded_store())
    panel = Panel(spy, tmp_path)
    token = panel.tenant("acme", role="operator")
    with TestClient(panel.app) as client, caplog.at_level(logging.INFO, "recordseal.panel.web"):
        response = client.get(path, headers=panel.cookie(token, **JSON))
        assert response.status_code == 403
        assert response.json()["code"] == "forbidden_tenant"
        assert spy.calls == []
        page = client.get(path, headers=panel.cookie(token, **HTML))
        assert page.status_code == 403
        assert page.headers["content-type"].startswith("text/html")
        assert "Forbidden" in page.text
        assert spy.calls == []
    assert panel.context.metrics["forbidden_cross_tenant"] == 2
    assert panel.context.metrics["not_found"] == 0
    lines = [Formatter().format(record) for record in caplog.records]
    assert sum("panel.denied reason=cross_tenant" in line for line in lines) == 2
    assert not any("panel.not_found" in line for line in lines)
    assert all(record.levelno == logging.INFO for record in caplog.records)


def test_spy_sees_calls_for_own_tenant(tmp_path: Path) -> None:
    """Control for the test above: the spy does record store calls."""
    spy = SpyStore(seeded_store())
    panel = Panel(spy, tmp_path)
    with TestClient(panel.app) as client:
        token = panel.tenant("acme")
        assert client.get("/tenants/acme", headers=panel.cookie(token, **JSON)).status_code == 200
    assert [name for name, _ in spy.calls] == ["get_tenant", "list_organizations"]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/tenants/initech", "tenant_not_found"),
        ("/tenants/initech/orgs/eng", "tenant_not_found"),
        ("/tenants/acme/orgs/nope", "organization_not_found"),
    ],
)
def test_missing_is_404_with_its_own_log_and_metric(
    path: str, code: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    panel = Panel(seeded_store(), tmp_path)
    with TestClient(panel.app) as client, caplog.at_level(logging.INFO, "recordseal.panel.web"):
        response = client.get(path, headers=panel.cookie(panel.legacy(), **JSON))
        assert response.status_code == 404
        assert response.json()["code"] == code
        page = client.get(path, headers=panel.cookie(panel.legacy(), **HTML))
        assert page.status_code == 404
        assert page.headers["content-type"].startswith("text/html")
        assert "Not found" in page.text
    assert panel.context.metrics["not_found"] == 2
    assert panel.context.metrics["forbidden_cross_tenant"] == 0
    lines = [Formatter().format(record) for record in caplog.records]
    assert sum("panel.not_found kind=" in line for line in lines) == 2
    assert not any("panel.denied" in line for line in lines)


def test_own_tenant_missing_org_is_404_for_tenant_session(
    client: TestClient[Litestar], panel: Panel
) -> None:
    response = client.get(
        "/tenants/acme/orgs/nope", headers=panel.cookie(panel.tenant("acme"), **JSON)
    )
    assert response.status_code == 404


def test_empty_store_shows_empty_state_card(tmp_path: Path) -> None:
    panel = Panel(InMemoryTenantStore(), tmp_path)
    with TestClient(panel.app) as client:
        page = client.get("/tenants", headers=panel.cookie(panel.legacy(), **HTML))
        assert page.status_code == 200
        assert 'class="card empty"' in page.text
        assert "No tenants yet" in page.text
        body = client.get("/tenants", headers=panel.cookie(panel.legacy(), **JSON)).json()
        assert body["tenants"] == []
        # a tenant session whose tenant is gone sees the empty state too
        page = client.get("/tenants", headers=panel.cookie(panel.tenant("acme"), **HTML))
        assert "No tenants yet" in page.text


def test_html_escapes_display_names(client: TestClient[Litestar], panel: Panel) -> None:
    token = panel.legacy()
    for path in ("/tenants", "/tenants/globex", "/tenants/globex/orgs/hq"):
        page = client.get(path, headers=panel.cookie(token, **HTML))
        assert page.status_code == 200
        assert "<script>alert(1)</script>" not in page.text, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text, path


def test_header_shows_subject_role_and_signout_form(
    client: TestClient[Litestar], panel: Panel
) -> None:
    token = panel.tenant("acme", subject="<b>eve</b>", role="viewer")
    page = client.get("/tenants", headers=panel.cookie(token, **HTML)).text
    assert "&lt;b&gt;eve&lt;/b&gt;" in page
    assert "<b>eve</b>" not in page
    assert 'action="/logout"' in page
    assert 'name="csrf_token"' in page
    assert 'action="/logout/everywhere"' not in page  # viewers do not get the button
    operator = client.get(
        "/tenants", headers=panel.cookie(panel.tenant("acme", role="operator"), **HTML)
    ).text
    assert 'action="/logout/everywhere"' in operator


def test_default_accept_gets_html(client: TestClient[Litestar], panel: Panel) -> None:
    response = client.get("/tenants", headers=panel.cookie(panel.legacy(), Accept="*/*"))
    assert response.headers["content-type"].startswith("text/html")
