"""The tenant hierarchy changed from the panel (``web/panel/tenant_admin.py``): a new tenant,
freezing and unfreezing, a new organization; forms and JSON, the guards in their order
(session, CSRF, the operator-admin role, the tenant scope), refusals naming the field and the
rule and changing nothing, and one audit line per change. The tenant store is the database's
(``StoredTenantStore`` on the panel database's SQLite store)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.stored_tenants import StoredTenantStore
from recordseal.panel.tenants import InMemoryTenantStore, Organization, Tenant
from recordseal.web.panel.session import csrf_token_for
from tests.web.panel.conftest import HTML, JSON, Panel

AUDIT = "recordseal.panel.audit"


class Admin:
    """The panel app on a database tenant store holding ``acme`` (organization ``eng``)."""

    def __init__(self, panel: Panel, client: TestClient[Litestar]) -> None:
        self.panel = panel
        self.client = client
        self.changed: list[str] = []

    @property
    def tenants(self) -> StoredTenantStore:
        store = self.panel.context.tenants
        assert isinstance(store, StoredTenantStore)
        return store

    def call(self, method: str, *args: Any) -> Any:
        return self.client.blocking_portal.call(getattr(self.tenants, method), *args)

    def json(self, token: str) -> dict[str, str]:
        """JSON headers with the session ``token`` and its CSRF token."""
        return self.panel.cookie(
            token, **JSON, **{"X-CSRF-Token": csrf_token_for(self.panel.keyring, token)}
        )

    def form(self, token: str, path: str, **fields: str) -> Any:
        """A browser's form post, with the CSRF field the page rendered."""
        page = self.client.get("/tenants", headers=self.panel.cookie(token, **HTML)).text
        match = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert match is not None
        return self.client.post(
            path,
            data={"csrf_token": match.group(1), **fields},
            headers=self.panel.cookie(token, **HTML),
            follow_redirects=False,
        )

    def ids(self) -> list[str]:
        return [t.id for t in self.call("list_tenants")]


@pytest.fixture
def admin(tmp_path: Path) -> Iterator[Admin]:
    panel = Panel(
        InMemoryTenantStore(), tmp_path, passkey_roles={"root": "operator", "vera": "viewer"}
    )
    with TestClient(panel.app) as client:
        hub = Admin(panel, client)
        panel.context.tenants = StoredTenantStore(panel.database.backend.hierarchy)
        panel.context.tenant_changed = hub.changed.append
        hub.call("add_tenant", Tenant("acme", "Acme Corp"))
        hub.call("add_organization", Organization("eng", "acme", "Engineering"))
        yield hub


def _audit(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The audit lines, without their time and logger name."""
    lines = [Formatter().format(r) for r in caplog.records if r.name == AUDIT]
    return [line.split(f"{AUDIT}: ", 1)[1] for line in lines]


# -- new tenants -------------------------------------------------------------------------


def test_an_operator_admin_creates_a_tenant_with_the_form(
    admin: Admin, caplog: pytest.LogCaptureFixture
) -> None:
    root = admin.panel.legacy()
    page = admin.client.get("/tenants", headers=admin.panel.cookie(root, **HTML)).text
    assert 'action="/tenants"' in page and "Create tenant" in page
    with caplog.at_level(logging.INFO, AUDIT):
        made = admin.form(
            root, "/tenants", id="initech", display_name=" Initech ", contact_email="it@initech"
        )
    assert (made.status_code, made.headers["location"]) == (303, "/tenants/initech")
    assert admin.call("get_tenant", "initech") == Tenant("initech", "Initech", True, "it@initech")
    assert _audit(caplog) == ["panel.tenant_created tenant=initech by=root via=panel"]
    listing = admin.client.get("/tenants", headers=admin.panel.cookie(root, **HTML)).text
    assert 'href="/tenants/initech"' in listing


def test_a_json_client_creates_a_tenant(admin: Admin) -> None:
    made = admin.client.post(
        "/tenants",
        json={"id": "initech", "display_name": "Initech"},
        headers=admin.json(admin.panel.legacy()),
    )
    assert made.status_code == 201, made.text
    assert made.json()["tenant"] == {
        "id": "initech",
        "display_name": "Initech",
        "active": True,
        "contact_email": None,
    }
    assert made.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"id": "bad id", "display_name": "X"}, "id", "1 to 64 characters of letters"),
        ({"id": "-x", "display_name": "X"}, "id", "starting with a letter or digit"),
        ({"id": "x" * 65, "display_name": "X"}, "id", "1 to 64 characters"),
        ({"id": "initech", "display_name": "   "}, "display_name", "not only spaces"),
        ({"id": "initech", "display_name": "a\u0007b"}, "display_name", "no control characters"),
        ({"id": "initech", "display_name": "n" * 129}, "display_name", "1 to 128 characters"),
        (
            {"id": "initech", "display_name": "I", "contact_email": "not an address"},
            "contact_email",
            "an e-mail address",
        ),
    ],
)
def test_a_refused_tenant_names_the_field_and_the_rule_and_changes_nothing(
    admin: Admin, body: dict[str, str], field: str, rule: str, caplog: pytest.LogCaptureFixture
) -> None:
    root = admin.panel.legacy()
    with caplog.at_level(logging.INFO, AUDIT):
        refused = admin.client.post("/tenants", json=body, headers=admin.json(root))
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        problem = refused.json()
        assert (problem["code"], problem["field"]) == (f"{field}_invalid", field)
        assert rule in problem["detail"]
        # The browser gets the page again, the refusal beside the form and its values kept.
        page = admin.form(root, "/tenants", **body)
        assert page.status_code == 422
        assert "Not created." in page.text and f"<code>{field}</code>" in page.text
        assert rule in page.text.replace("&#39;", "'")
        assert 'name="csrf_token"' in page.text
    assert admin.ids() == ["acme"]
    assert _audit(caplog) == []


def test_a_taken_id_is_refused_but_a_tenant_of_tokens_only_is_named(admin: Admin) -> None:
    root = admin.json(admin.panel.legacy())
    taken = admin.client.post(
        "/tenants", json={"id": "acme", "display_name": "Again"}, headers=root
    )
    assert (taken.status_code, taken.json()["code"], taken.json()["field"]) == (
        409,
        "tenant_exists",
        "id",
    )
    assert admin.call("get_tenant", "acme").display_name == "Acme Corp"
    page = admin.form(admin.panel.legacy(), "/tenants", id="acme", display_name="Again")
    assert page.status_code == 409 and "a tenant with id &#39;acme&#39; exists" in page.text

    # A tenant registered by its first API token takes the name (recordseal token create).
    store = admin.panel.database.backend
    admin.client.blocking_portal.call(
        store.tokens.add_token, b"t" * 32, "globex", "", "2026-11-21T00:00:00Z"
    )
    assert admin.call("get_tenant", "globex").display_name == "globex"
    named = admin.client.post(
        "/tenants", json={"id": "globex", "display_name": "Globex"}, headers=root
    )
    assert named.status_code == 201 and named.json()["tenant"]["display_name"] == "Globex"


def test_a_malformed_json_body_is_400(admin: Admin) -> None:
    headers = admin.json(admin.panel.legacy())
    for body in (b"[]", b'{"id": "x"}', b'{"id": "x", "display_name": "X", "colour": 1}', b"{"):
        refused = admin.client.post(
            "/tenants", content=body, headers={**headers, "Content-Type": "application/json"}
        )
        assert (refused.status_code, refused.json()["code"]) == (400, "request_invalid"), body
    assert admin.ids() == ["acme"]


# -- who may -----------------------------------------------------------------------------

MUTATIONS = [
    ("/tenants", {"id": "initech", "display_name": "Initech"}),
    ("/tenants/acme/freeze", None),
    ("/tenants/acme/unfreeze", None),
    ("/tenants/acme/orgs", {"id": "ops", "display_name": "Operations"}),
]


@pytest.mark.parametrize(("path", "body"), MUTATIONS)
def test_only_an_operator_admin_with_the_csrf_token_changes_the_hierarchy(
    admin: Admin, path: str, body: dict[str, str] | None, caplog: pytest.LogCaptureFixture
) -> None:
    panel = admin.panel
    refusals = [
        (JSON, 401, "unauthenticated"),
        (panel.cookie(panel.legacy(), **JSON), 403, "csrf_invalid"),
        (admin.json(panel.legacy("vera")), 403, "forbidden_role"),  # a passkey viewer
        (admin.json(panel.tenant("acme", role="operator")), 403, "forbidden_role"),  # sso
        (admin.json(panel.tenant("globex", role="operator")), 403, "forbidden_role"),
    ]
    before = (
        admin.ids(),
        admin.call("get_tenant", "acme"),
        admin.call("list_organizations", "acme"),
    )
    with caplog.at_level(logging.INFO, AUDIT):
        for headers, status, code in refusals:
            refused = admin.client.post(path, json=body, headers=headers)
            assert (refused.status_code, refused.json()["code"]) == (status, code), code
    sso = admin.client.post(
        path, json=body, headers=admin.json(panel.tenant("acme", role="operator"))
    )
    assert "operator-admin" in sso.json()["detail"]
    after = (
        admin.ids(),
        admin.call("get_tenant", "acme"),
        admin.call("list_organizations", "acme"),
    )
    assert after == before and _audit(caplog) == [] and admin.changed == []


def test_the_forms_are_shown_to_operator_admins_only(admin: Admin) -> None:
    panel = admin.panel
    for token, shown in (
        (panel.legacy(), True),
        (panel.legacy("vera"), False),
        (panel.tenant("acme", role="operator"), False),
    ):
        listing = admin.client.get("/tenants", headers=panel.cookie(token, **HTML)).text
        page = admin.client.get("/tenants/acme", headers=panel.cookie(token, **HTML)).text
        assert ("Create tenant" in listing) is shown
        assert ('action="/tenants/acme/freeze"' in page) is shown
        assert ('action="/tenants/acme/orgs"' in page) is shown


# -- freezing ----------------------------------------------------------------------------


def test_freezing_and_unfreezing(admin: Admin, caplog: pytest.LogCaptureFixture) -> None:
    root = admin.panel.legacy()
    with caplog.at_level(logging.INFO, AUDIT):
        frozen = admin.form(root, "/tenants/acme/freeze")
        assert (frozen.status_code, frozen.headers["location"]) == (303, "/tenants/acme")
        page = admin.client.get("/tenants/acme", headers=admin.panel.cookie(root, **HTML)).text
        assert "frozen (read-only)" in page and 'action="/tenants/acme/unfreeze"' in page
        assert 'action="/tenants/acme/orgs"' not in page  # a frozen tenant gets none
        again = admin.client.post("/tenants/acme/freeze", headers=admin.json(root))
        assert again.status_code == 200
        assert (again.json()["tenant"]["active"], again.json()["changed"]) == (False, False)
        thawed = admin.client.post("/tenants/acme/unfreeze", headers=admin.json(root))
        assert (thawed.json()["tenant"]["active"], thawed.json()["changed"]) == (True, True)
    assert _audit(caplog) == [
        "panel.tenant_frozen tenant=acme by=root via=panel",
        "panel.tenant_unfrozen tenant=acme by=root via=panel",
    ]
    assert admin.changed == ["acme", "acme"]  # the record API's cache forgot it each time
    missing = admin.client.post("/tenants/initech/freeze", headers=admin.json(root))
    assert (missing.status_code, missing.json()["code"]) == (404, "tenant_not_found")


# -- new organizations -------------------------------------------------------------------


def test_an_operator_admin_creates_an_organization(
    admin: Admin, caplog: pytest.LogCaptureFixture
) -> None:
    root = admin.panel.legacy()
    with caplog.at_level(logging.INFO, AUDIT):
        made = admin.form(root, "/tenants/acme/orgs", id="ops", display_name="Operations")
        assert (made.status_code, made.headers["location"]) == (303, "/tenants/acme")
        json_made = admin.client.post(
            "/tenants/acme/orgs", json={"id": "qa", "display_name": "QA"}, headers=admin.json(root)
        )
    assert json_made.status_code == 201
    assert json_made.json()["organization"] == {
        "id": "qa",
        "tenant_id": "acme",
        "display_name": "QA",
        "sso_provider_ref": None,
    }
    assert [o.id for o in admin.call("list_organizations", "acme")] == ["eng", "ops", "qa"]
    assert _audit(caplog) == [
        "panel.organization_created tenant=acme org=ops by=root via=panel",
        "panel.organization_created tenant=acme org=qa by=root via=panel",
    ]
    page = admin.client.get("/tenants/acme", headers=admin.panel.cookie(root, **HTML)).text
    assert 'href="/tenants/acme/orgs/ops"' in page


def test_refused_organizations_change_nothing(admin: Admin) -> None:
    root = admin.panel.legacy()
    headers = admin.json(root)
    cases = [
        ("/tenants/acme/orgs", {"id": "bad id", "display_name": "X"}, 422, "id_invalid"),
        ("/tenants/acme/orgs", {"id": "ops", "display_name": ""}, 422, "display_name_invalid"),
        ("/tenants/acme/orgs", {"id": "eng", "display_name": "Again"}, 409, "organization_exists"),
        ("/tenants/initech/orgs", {"id": "ops", "display_name": "Ops"}, 404, "tenant_not_found"),
    ]
    for path, body, status, code in cases:
        refused = admin.client.post(path, json=body, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (status, code), code
    page = admin.form(root, "/tenants/acme/orgs", id="eng", display_name="Again")
    assert page.status_code == 409 and "Not created." in page.text
    assert 'value="Again"' in page.text
    admin.client.post("/tenants/acme/freeze", headers=headers)
    frozen = admin.client.post(
        "/tenants/acme/orgs", json={"id": "ops", "display_name": "Ops"}, headers=headers
    )
    assert (frozen.status_code, frozen.json()["code"]) == (409, "tenant_inactive")
    assert [o.id for o in admin.call("list_organizations", "acme")] == ["eng"]
