"""Groups and roles (spec 2.9 rule 3, 3): the groups claim rules and the operator group list,
unit by unit and through the real OP."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.sessions import TenantSession
from recordseal.panel.sso.claims import groups_from, principal_from
from tests.panel.sso.conftest import (
    MakeRp,
    RelyingParty,
    login,
    loopback_policy,
    register_code,
)
from tests.panel.sso.op_server import OpenIdProvider
from tests.panel.sso.tls import LocalTls


@pytest.mark.parametrize(
    ("claims", "name", "expected"),
    [
        ({"groups": ["a", "b"]}, None, ("a", "b")),
        ({"groups": ["a", "b"]}, "", ("a", "b")),
        ({"groups": "panel operators"}, None, ("panel operators",)),
        ({"groups": ["a", "a", ""]}, None, ("a",)),
        ({"groups": {"a": {}}}, None, ()),
        ({}, None, ()),
        ({"groups": [1, True, None, ["x"]]}, None, ()),
        ({"roles": {"admin": {"org": "1"}, "reader": {}}}, "roles", ("admin", "reader")),
        ({"roles": [{"admin": {}}, "reader"]}, "roles", ("admin", "reader")),
        ({"roles": "admin reader"}, "roles", ("admin reader",)),
        ({"roles": ["x"], "groups": ["y"]}, "roles", ("x",)),
        ({"groups": ["y"]}, "roles", ()),
    ],
)
def test_the_groups_claim_rules(
    claims: dict[str, Any], name: str | None, expected: tuple[str, ...]
) -> None:
    assert groups_from(claims, name) == expected


def test_the_principal_keeps_identity_claims_as_strings_and_drops_exchange_bindings() -> None:
    principal = principal_from(
        {"sub": "s", "email": "e@x", "name": "N", "nonce": "n", "at_hash": "h", "exp": 5,
         "groups": ["g"], "aud": ["a", "b"]},
        "acme",
        "eng",
        None,
    )  # fmt: skip
    assert (principal.email, principal.display_name, principal.groups) == ("e@x", "N", ("g",))
    assert principal.claims == {
        "sub": "s", "email": "e@x", "name": "N", "exp": "5", "groups": '["g"]', "aud": '["a","b"]'
    }  # fmt: skip


@pytest.mark.parametrize(
    ("claim_name", "value", "role"),
    [
        ("app_roles", {"panel-operators": {"granted": "2026"}}, "operator"),
        ("app_roles", "panel-operators staff", "viewer"),
        ("app_roles", "panel-operators", "operator"),
        ("", None, "operator"),  # default: the top-level groups array (alice is in it)
    ],
)
def test_a_configured_groups_claim_decides_the_role(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    claim_name: str,
    value: object,
    role: str,
) -> None:
    register_code(rp, op, groups_claim=claim_name)
    if claim_name:
        op.more_claims = {claim_name: value, "groups": ["staff"]}
    response = login(client, op)
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession)
    assert session.role == role


def test_with_the_operator_group_list_unset_every_sso_login_is_a_viewer(
    make_rp: MakeRp, tls: LocalTls, op: OpenIdProvider
) -> None:
    rp = make_rp(loopback_policy(tls), operator_groups=frozenset())
    register_code(rp, op)
    with rp.client() as client:
        response = login(client, op)
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession) and session.role == "viewer"


def test_a_role_change_at_the_idp_takes_effect_on_the_next_login(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    first = rp.session_of(login(client, op).headers["set-cookie"])
    op.more_claims = {"groups": ["staff"]}
    second = rp.session_of(login(client, op).headers["set-cookie"])
    assert isinstance(first, TenantSession) and isinstance(second, TenantSession)
    assert (first.role, second.role) == ("operator", "viewer")


def test_the_dashboard_sends_a_tenant_session_to_its_tenant(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    response = login(client, op, return_url="https://evil.example")
    assert response.headers["location"] == "/dashboard"
    landed = client.get("/dashboard", follow_redirects=False)
    assert landed.status_code == 303
    assert landed.headers["location"] == "/tenants/acme"
    assert client.get("/dashboard", follow_redirects=True).status_code == 200


def test_the_dashboard_needs_a_session(client: TestClient[Litestar]) -> None:
    response = client.get("/dashboard", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login"


def test_the_login_page_form_leads_to_the_start_of_a_provider(
    client: TestClient[Litestar],
) -> None:
    page = client.get("/login")
    assert 'action="/sso"' in page.text and 'name="provider"' in page.text
    response = client.get("/sso", params={"provider": "acme-okta"}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/sso/acme-okta/start"
    for bad in ("", "../x", "a/b", "https://evil.example"):
        assert client.get("/sso", params={"provider": bad}).status_code == 404
