"""The registration form under /tenants/<tenant>/orgs/<org>/sso (spec 2.9, 4.3, 5, 7) and the
providers it keeps in the panel's store, shared by every process."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import TenantSession
from recordseal.panel.sso.errors import DuplicateProvider
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.tenants import Organization, Tenant
from tests.panel.sso.conftest import (
    BASIC_SECRET,
    JSON,
    RP_BASE,
    MakeRp,
    RelyingParty,
    login,
    loopback_policy,
    register_code,
)
from tests.panel.sso.op_server import OpenIdProvider
from tests.panel.sso.tls import LocalTls

PAGE = "/tenants/acme/orgs/eng/sso"


def operator(rp: RelyingParty, client: TestClient[Litestar], json: bool = True) -> dict[str, str]:
    headers = rp.legacy_operator_cookie()
    csrf = client.get("/tenants", headers={**headers, **JSON}).json()["session"]["csrf_token"]
    return {**headers, "X-CSRF-Token": csrf, **(JSON if json else {})}


def code_form(op: OpenIdProvider, **changes: str) -> dict[str, str]:
    form = {
        "flavour": "code-exchange",
        "id": "acme-okta",
        "issuer": op.issuer,
        "client_id": "panel-basic",
        "client_secret": BASIC_SECRET,
        "redirect_uri": f"{RP_BASE}/sso/acme-okta/callback",
        "token_endpoint_auth_method": "client_secret_basic",
        "groups_claim": "",
    }
    return {**form, **changes}


def test_an_operator_registers_a_code_exchange_provider_and_signs_in_with_it(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = client.post(PAGE, data=code_form(op), headers=operator(rp, client, json=False),
                           follow_redirects=False)  # fmt: skip
    assert response.status_code == 303
    assert response.headers["location"] == PAGE
    listed = client.get(PAGE, headers=operator(rp, client)).json()
    assert listed["providers"] == [
        {
            "id": "acme-okta",
            "protocol": "oidc",
            "flavour": "code-exchange",
            "issuer": op.issuer,
            "client_id": "panel-basic",
            "redirect_uri": f"{RP_BASE}/sso/acme-okta/callback",
            "token_endpoint_auth_method": "client_secret_basic",
            "groups_claim": None,
        }
    ]
    html = client.get(PAGE, headers=rp.legacy_operator_cookie()).text
    assert BASIC_SECRET not in html and "s3cr" not in html
    assert login(client, op).status_code == 303


def test_the_form_shows_both_flavours_to_operators(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    html = client.get(PAGE, headers=rp.legacy_operator_cookie()).text
    for field in ("flavour", "issuer", "audience", "client_id", "client_secret", "redirect_uri",
                  "token_endpoint_auth_method", "groups_claim"):  # fmt: skip
        assert f'name="{field}"' in html
    assert 'value="jwt-bearer"' in html and 'value="code-exchange"' in html
    assert 'value="acme-okta"' in html  # the organization's sso_provider_ref


def test_a_json_client_registers_and_gets_201(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = client.post(PAGE, json=code_form(op), headers=operator(rp, client))
    assert response.status_code == 201
    assert response.json()["client_id"] == "panel-basic"
    assert BASIC_SECRET not in response.text
    assert 'client_secret"' not in response.text


def test_a_jwt_bearer_provider_is_registered_with_issuer_and_audience(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    form = {"flavour": "jwt-bearer", "id": "acme-okta", "issuer": op.issuer, "audience": "panel"}
    response = client.post(PAGE, json=form, headers=operator(rp, client))
    assert response.status_code == 201
    assert response.json() == {
        "id": "acme-okta",
        "protocol": "oidc",
        "flavour": "jwt-bearer",
        "issuer": op.issuer,
        "audience": "panel",
    }


def test_a_wrong_issuer_fails_at_registration(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = client.post(PAGE, json=code_form(op, issuer=op.issuer + "/"),
                           headers=operator(rp, client))  # fmt: skip
    assert response.status_code == 422
    assert response.json()["field"] == "issuer"
    assert "names issuer" in response.json()["detail"]
    assert rp.call(rp.registry.resolve, "acme-okta") is None


def test_a_wrong_issuer_fails_at_registration_for_the_jwt_bearer_flavour_too(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    form = {"flavour": "jwt-bearer", "id": "acme-okta", "issuer": op.issuer + "/",
            "audience": "panel"}  # fmt: skip
    response = client.post(PAGE, json=form, headers=operator(rp, client))
    assert response.status_code == 422
    assert "names issuer" in response.json()["detail"]
    assert rp.call(rp.registry.resolve, "acme-okta") is None


def test_an_issuer_without_discovery_fails_at_registration(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = client.post(PAGE, json=code_form(op, issuer=op.issuer + "/nothing"),
                           headers=operator(rp, client))  # fmt: skip
    assert response.status_code == 502
    assert response.json()["code"] == "discovery_unreachable"
    assert "HTTP 404" in response.json()["detail"]


def test_the_outbound_guard_refuses_loopback_unless_configured(
    make_rp: MakeRp, tls: LocalTls, op: OpenIdProvider
) -> None:
    rp = make_rp(OutboundPolicy(ca_file=tls.ca_file))
    with rp.client() as client:
        response = client.post(PAGE, json=code_form(op), headers=operator(rp, client))
    assert response.status_code == 502
    assert "non-public address" in response.json()["detail"]


def test_registering_the_same_id_twice_is_a_duplicate(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    assert client.post(PAGE, json=code_form(op), headers=operator(rp, client)).status_code == 201
    again = client.post(PAGE, json=code_form(op), headers=operator(rp, client))
    assert again.status_code == 409
    assert again.json()["code"] == "provider_duplicate"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"flavour": "saml"}, "flavour"),
        ({"id": "other-id", "redirect_uri": f"{RP_BASE}/sso/other-id/callback"}, "id"),
        ({"id": "bad id!"}, "id"),
        ({"issuer": "ftp://idp.example"}, "issuer"),
        ({"issuer": "https://idp.example/?x=1"}, "issuer"),
        ({"client_id": ""}, "client_id"),
        ({"client_secret": ""}, "client_secret"),
        ({"redirect_uri": f"{RP_BASE}/elsewhere"}, "redirect_uri"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "token_endpoint_auth_method"),
        ({"groups_claim": "x" * 129}, "groups_claim"),
    ],
)
def test_bad_fields_are_refused_with_the_field_named(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    changes: dict[str, str],
    field: str,
) -> None:
    response = client.post(PAGE, json=code_form(op, **changes), headers=operator(rp, client))
    assert response.status_code == 422
    assert response.json()["field"] == field
    assert BASIC_SECRET not in response.text


def test_a_refused_form_is_shown_again_without_the_secret(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = client.post(PAGE, data=code_form(op, redirect_uri=f"{RP_BASE}/elsewhere"),
                           headers=operator(rp, client, json=False))  # fmt: skip
    assert response.status_code == 422
    assert "redirect_uri" in response.text and f"{RP_BASE}/elsewhere" in response.text
    assert BASIC_SECRET not in response.text


def test_a_viewer_may_look_but_not_register(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    token = rp.keyring.issue(TenantSession("v@acme.test", "acme", "eng", 2_000_000_000, "viewer"))
    headers = {"Cookie": f"{COOKIE_NAME}={token}"}
    page = client.get(PAGE, headers=headers)
    assert page.status_code == 200 and 'name="client_secret"' not in page.text
    csrf = client.get("/tenants", headers={**headers, **JSON}).json()["session"]["csrf_token"]
    response = client.post(
        PAGE, json=code_form(op), headers={**headers, **JSON, "X-CSRF-Token": csrf}
    )
    assert response.status_code == 403
    assert response.json()["code"] == "forbidden_role"


def test_another_tenants_session_is_refused_before_the_store(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    token = rp.keyring.issue(
        TenantSession("g@globex.test", "globex", "hq", 2_000_000_000, "operator")
    )
    headers = {"Cookie": f"{COOKIE_NAME}={token}", **JSON}
    assert client.get(PAGE, headers=headers).status_code == 403
    assert client.get("/tenants/nope/orgs/eng/sso", headers=headers).status_code == 403


def test_without_csrf_token_registration_is_refused(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    headers = {**rp.legacy_operator_cookie(), **JSON}
    response = client.post(PAGE, json=code_form(op), headers=headers)
    assert response.status_code == 403
    assert response.json()["code"] == "csrf_invalid"


def test_an_unknown_organization_is_404(rp: RelyingParty, client: TestClient[Litestar]) -> None:
    assert (
        client.get("/tenants/acme/orgs/nope/sso", headers=operator(rp, client)).status_code == 404
    )


def test_an_operator_removes_a_provider(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    response = client.post(f"{PAGE}/acme-okta/remove", headers=operator(rp, client))
    assert response.status_code == 200
    assert rp.call(rp.registry.resolve, "acme-okta") is None
    gone = client.post(f"{PAGE}/acme-okta/remove", headers=operator(rp, client))
    assert gone.status_code == 404
    assert client.get("/sso/acme-okta/start", follow_redirects=False).status_code == 404


# -- providers in the database ----------------------------------------------------------


def test_providers_persist_in_the_database_with_the_secret_sealed(
    rp: RelyingParty, make_rp: MakeRp, tls: LocalTls, op: OpenIdProvider
) -> None:
    register_code(rp, op)
    restarted = make_rp(loopback_policy(tls), database=rp.database)
    provider: Any = restarted.call(restarted.registry.resolve, "acme-okta")
    assert provider is not None and provider.config.client_secret == BASIC_SECRET
    assert provider.config.jwks["keys"][0]["kid"] == op.kid
    # At rest the secret is sealed under the key-encryption key, never in clear.
    ((config, sealed),) = rp.query("SELECT config, secret FROM panel_providers")
    assert BASIC_SECRET.encode() not in bytes(config) + bytes(sealed)
    files = rp.database.parent.glob("recordseal.sqlite3*")
    assert BASIC_SECRET.encode() not in b"".join(path.read_bytes() for path in files)


def test_the_database_is_shared_by_worker_processes(
    make_rp: MakeRp, tmp_path: Path, tls: LocalTls, op: OpenIdProvider
) -> None:
    shared = tmp_path / "shared" / "recordseal.sqlite3"
    first = make_rp(loopback_policy(tls), database=shared)
    second = make_rp(loopback_policy(tls), database=shared)
    assert second.call(second.registry.resolve, "acme-okta") is None
    provider = register_code(first, op)
    assert second.call(second.registry.resolve, "acme-okta") is not None
    with pytest.raises(DuplicateProvider):
        second.call(second.registry.register_config, provider.config)  # type: ignore[attr-defined]
    assert second.call(second.registry.remove, "acme-okta")
    assert first.call(first.registry.resolve, "acme-okta") is None
    assert first.call(first.registry.for_organization, "acme", "eng") == []


def test_an_organization_with_a_declared_reference_only_takes_that_id(
    rp: RelyingParty, op: OpenIdProvider
) -> None:
    organization = rp.call(rp.panel.tenants.get_organization, "acme", "eng")
    assert isinstance(organization, Organization) and organization.sso_provider_ref == "acme-okta"


# -- who may register and remove ------------------------------------------------------


def sso_operator(
    rp: RelyingParty, client: TestClient[Litestar], org: str = "eng"
) -> dict[str, str]:
    token = rp.keyring.issue(TenantSession("o@acme.test", "acme", org, 2_000_000_000, "operator"))
    headers = {"Cookie": f"{COOKIE_NAME}={token}"}
    csrf = client.get("/tenants", headers={**headers, **JSON}).json()["session"]["csrf_token"]
    return {**headers, **JSON, "X-CSRF-Token": csrf}


def test_an_sso_operator_registers_for_its_own_organization_only(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    other = "/tenants/acme/orgs/ops/sso"
    ops_form = code_form(op, id="ops-okta", redirect_uri=f"{RP_BASE}/sso/ops-okta/callback")
    refused = client.post(other, json=ops_form, headers=sso_operator(rp, client, "eng"))
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden_organization"
    assert rp.call(rp.registry.resolve, "ops-okta") is None
    assert rp.panel.metrics["forbidden_organization"] == 1
    page = client.get(other, headers={k: v for k, v in sso_operator(rp, client).items()
                                      if k == "Cookie"})  # fmt: skip
    assert page.status_code == 200 and 'name="client_secret"' not in page.text
    own = client.post(other, json=ops_form, headers=sso_operator(rp, client, "ops"))
    assert own.status_code == 201
    assert (
        client.post(PAGE, json=code_form(op), headers=sso_operator(rp, client, "eng")).status_code
        == 201
    )


def test_an_sso_operator_cannot_remove_another_organizations_provider(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    refused = client.post(f"{PAGE}/acme-okta/remove", headers=sso_operator(rp, client, "ops"))
    assert refused.status_code == 403
    assert refused.json()["code"] == "forbidden_organization"
    assert rp.call(rp.registry.resolve, "acme-okta") is not None
    removed = client.post(f"{PAGE}/acme-okta/remove", headers=sso_operator(rp, client, "eng"))
    assert removed.status_code == 200
    assert rp.call(rp.registry.resolve, "acme-okta") is None


@pytest.mark.parametrize("page", ["/tenants/acme/orgs/ops/sso", "/tenants/globex/orgs/hq/sso"])
def test_an_id_declared_by_another_organization_cannot_be_taken(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar], page: str
) -> None:
    response = client.post(page, json=code_form(op), headers=operator(rp, client))
    assert response.status_code == 422
    assert response.json()["field"] == "id"
    assert rp.call(rp.registry.resolve, "acme-okta") is None
    assert client.post(PAGE, json=code_form(op), headers=operator(rp, client)).status_code == 201


@pytest.mark.parametrize(
    ("member", "value"),
    [
        ("authorization_endpoint", "javascript:alert(1)"),
        ("authorization_endpoint", "http://idp.example/authorize"),
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "https://user:pw@idp.example/token"),
        ("jwks_uri", "https://idp.example/jwks#frag"),
    ],
)
def test_discovered_endpoints_must_be_absolute_https_urls(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar], member: str, value: str
) -> None:
    op.provider.configuration_information[member] = value
    response = client.post(PAGE, json=code_form(op), headers=operator(rp, client))
    assert response.status_code == 422
    assert response.json()["field"] == "issuer"
    assert member in response.json()["detail"]
    assert rp.call(rp.registry.resolve, "acme-okta") is None


def test_removing_a_provider_needs_the_csrf_token(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    headers = {**rp.legacy_operator_cookie(), **JSON}
    refused = client.post(f"{PAGE}/acme-okta/remove", headers=headers)
    assert refused.status_code == 403 and refused.json()["code"] == "csrf_invalid"
    assert rp.call(rp.registry.resolve, "acme-okta") is not None
    # The form posts with the session whose token it carries (a cookie minted a second later
    # is another session, with another CSRF token).
    session = operator(rp, client, json=False)
    csrf = session.pop("X-CSRF-Token")
    form = client.post(f"{PAGE}/acme-okta/remove", data={"csrf_token": csrf},
                       headers=session, follow_redirects=False)  # fmt: skip
    assert form.status_code == 303
    assert rp.call(rp.registry.resolve, "acme-okta") is None


def test_a_frozen_tenants_providers_do_not_change(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    store: Any = rp.panel.tenants
    store.insert_tenant(Tenant("frozen", "Frozen", active=False))
    store.insert_organization(Organization("eng", "frozen", "Engineering"))
    page = "/tenants/frozen/orgs/eng/sso"
    shown = client.get(page, headers=rp.legacy_operator_cookie())
    assert shown.status_code == 200 and 'name="client_secret"' not in shown.text
    refused = client.post(page, json=code_form(op), headers=operator(rp, client))
    assert refused.status_code == 409
    assert refused.json()["code"] == "tenant_inactive"
    assert rp.call(rp.registry.resolve, "acme-okta") is None
    assert op.token_requests == []


def test_a_provider_registered_at_process_start_is_not_removed_through_the_panel(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    from tests.panel.sso.test_contract import ContractProvider

    rp.call(rp.registry.register, ContractProvider("acme-saml", "saml"))
    page = client.get(PAGE, headers=rp.legacy_operator_cookie())
    assert "acme-saml" in page.text and "/acme-saml/remove" not in page.text
    refused = client.post(f"{PAGE}/acme-saml/remove", headers=operator(rp, client))
    assert refused.status_code == 409
    assert refused.json()["code"] == "provider_built_in"
    assert rp.call(rp.registry.resolve, "acme-saml") is not None


def test_registrations_removals_and_refusals_are_audited_without_the_secret(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="recordseal")
    assert client.post(PAGE, json=code_form(op), headers=operator(rp, client)).status_code == 201
    assert client.post(PAGE, json=code_form(op), headers=operator(rp, client)).status_code == 409
    assert client.post(f"{PAGE}/acme-okta/remove", headers=operator(rp, client)).status_code == 200
    audit = [Formatter().format(r) for r in caplog.records if r.name == "recordseal.panel.audit"]
    assert any("sso_registered provider=acme-okta" in line and "by=root" in line for line in audit)
    assert any("sso_registration_refused" in line and "status=409" in line for line in audit)
    assert any("sso_removed provider=acme-okta" in line for line in audit)
    assert all(BASIC_SECRET not in Formatter().format(r) for r in caplog.records)


def test_an_idp_that_lists_no_auth_methods_offers_only_client_secret_basic(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    del op.provider.configuration_information["token_endpoint_auth_methods_supported"]
    post = code_form(op, token_endpoint_auth_method="client_secret_post")
    refused = client.post(PAGE, json=post, headers=operator(rp, client))
    assert refused.status_code == 422
    assert refused.json()["field"] == "token_endpoint_auth_method"
    assert client.post(PAGE, json=code_form(op), headers=operator(rp, client)).status_code == 201
