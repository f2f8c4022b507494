"""The OIDC code flow end to end against pyop on 127.0.0.1 (spec 2.6, 2.9, 3, 4.2)."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import TenantSession
from recordseal.panel.sso.nonces import open_stash
from tests.panel.sso.conftest import (
    BASIC_SECRET,
    POST_SECRET,
    RelyingParty,
    login,
    register_code,
    start,
)
from tests.panel.sso.op_server import OpenIdProvider


@pytest.mark.parametrize(
    ("provider_id", "org", "client_id", "secret", "method"),
    [
        ("acme-okta", "eng", "panel-basic", BASIC_SECRET, "client_secret_basic"),
        ("acme-post", "ops", "panel-post", POST_SECRET, "client_secret_post"),
    ],
)
def test_code_flow_signs_in_with_a_tenant_scoped_operator_cookie(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    provider_id: str,
    org: str,
    client_id: str,
    secret: str,
    method: str,
) -> None:
    register_code(rp, op, provider_id, org=org, client_id=client_id, secret=secret, method=method)
    response = login(client, op, provider_id, f"/tenants/acme/orgs/{org}")
    assert response.status_code == 303
    assert response.headers["location"] == f"/tenants/acme/orgs/{org}"
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession)
    assert (session.subject, session.tenant_id, session.org_id) == (
        "alice@acme.test",
        "acme",
        org,
    )
    assert session.role == "operator"
    assert session.epoch == 0
    assert response.headers["set-cookie"].startswith(f"{COOKIE_NAME}=")
    page = client.get(f"/tenants/acme/orgs/{org}", headers={"Accept": "application/json"})
    assert page.status_code == 200
    assert page.json()["session"]["role"] == "operator"
    assert client.get("/tenants/globex", headers={"Accept": "application/json"}).status_code == 403


def test_client_secret_basic_form_encodes_before_base64(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    assert login(client, op).status_code == 303
    header = op.token_requests[-1]["Authorization"]
    decoded = base64.b64decode(header.removeprefix("Basic ")).decode()
    assert decoded == "panel-basic:s3cr%2Bt%2Fwith%3Dequals%3Acolon"
    assert "client_secret" not in op.token_requests[-1]["body"]


def test_client_secret_post_sends_the_credentials_in_the_body(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(
        rp, op, "acme-post", org="ops", client_id="panel-post", secret=POST_SECRET,
        method="client_secret_post",
    )  # fmt: skip
    assert login(client, op, "acme-post").status_code == 303
    request = op.token_requests[-1]
    assert "Authorization" not in request
    body = parse_qs(request["body"])
    assert body["client_id"] == ["panel-post"]
    assert body["client_secret"] == [POST_SECRET]


def test_a_member_of_no_operator_group_is_a_viewer(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    op.user = "bob"
    response = login(client, op)
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession)
    assert session.role == "viewer"
    refused = client.post(
        "/logout/everywhere",
        headers={"Accept": "application/json", "X-CSRF-Token": _csrf(client)},
    )
    assert refused.status_code == 403


def _csrf(client: TestClient[Litestar]) -> str:
    token: str = client.get("/tenants", headers={"Accept": "application/json"}).json()["session"][
        "csrf_token"
    ]
    return token


def test_pkce_s256_with_a_fresh_verifier_per_attempt_kept_server_side(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    first = start(client)
    second = start(client)
    sealed = [bytes(row[0]) for row in rp.query("SELECT stash FROM panel_pending_logins")]
    nonces = [parse_qs(urlsplit(r.headers["location"]).query)["state"][0] for r in (first, second)]
    verifiers = [v for n in nonces for s in sealed if (v := open_stash(n, s)) is not None]
    assert len(set(verifiers)) == 2
    # At rest the verifier is sealed under the nonce, which the database does not hold.
    assert all(v.encode() not in blob for v in verifiers for blob in sealed)
    challenges = set()
    for response in (first, second):
        query = parse_qs(urlsplit(response.headers["location"]).query)
        assert query["code_challenge_method"] == ["S256"]
        challenges.add(query["code_challenge"][0])
        for verifier in verifiers:
            assert verifier not in response.headers["location"]
            assert verifier not in response.text
            assert all(verifier not in value for value in response.headers.values())
    expected = {
        base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode()
        for v in verifiers
    }
    assert challenges == expected


def test_the_state_and_the_id_token_nonce_carry_the_panel_nonce(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    register_code(rp, op)
    query = parse_qs(urlsplit(start(client).headers["location"]).query)
    assert query["state"] == query["nonce"]
    assert query["response_type"] == ["code"]
    assert query["client_id"] == ["panel-basic"]


def test_the_post_callback_shape_signs_in_with_json(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    from tests.panel.sso.conftest import at_idp

    register_code(rp, op)
    callback = at_idp(op, start(client, return_url="/tenants/acme").headers["location"])
    query = urlsplit(callback).query
    state = parse_qs(query)["state"][0]
    response = client.post(
        "/sso/acme-okta/callback",
        json={"state_nonce": state, "callback_data": base64.b64encode(query.encode()).decode()},
    )
    assert response.status_code == 200
    assert response.json() == {"ok": True, "redirect": "/tenants/acme"}
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession) and session.role == "operator"
