"""The JWT-bearer flavour (spec 2.9): an identity-aware proxy forwards an ID token signed by a
key published through a discovery document and JWKS on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from joserfc.jwk import ECKey, RSAKey
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.sessions import TenantSession
from recordseal.panel.sso.registration import RegistrationForm, register_provider
from tests.panel.sso.conftest import RelyingParty
from tests.panel.sso.jwks_server import TokenIssuer, running_issuer
from tests.panel.sso.tls import LocalTls

TRACE = "recordseal.panel.sso.trace"


@pytest.fixture
def issuer(tls: LocalTls) -> Iterator[TokenIssuer]:
    with running_issuer(tls) as running:
        yield running


@pytest.fixture
def registered(rp: RelyingParty, issuer: TokenIssuer) -> None:
    organization = rp.call(rp.panel.tenants.get_organization, "acme", "ops")
    form = RegistrationForm(
        flavour="jwt-bearer", id="acme-proxy", issuer=issuer.issuer, audience="recordseal-panel"
    )
    rp.call(register_provider, rp.registry, organization, form)


def _through_proxy(client: TestClient[Litestar], token: str | None) -> object:
    """Start, then follow the redirect to the panel's callback as the proxy forwards it."""
    started = client.get("/sso/acme-proxy/start", params={"return_url": "/tenants/acme"},
                         follow_redirects=False)  # fmt: skip
    assert started.status_code == 307
    location = started.headers["location"]
    assert location.startswith("/sso/acme-proxy/callback?state=")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.get(location, headers=headers, follow_redirects=False)


@pytest.mark.usefixtures("registered")
def test_a_forwarded_token_signs_in_with_its_groups_mapped(
    rp: RelyingParty, issuer: TokenIssuer, client: TestClient[Litestar]
) -> None:
    response: object = _through_proxy(client, issuer.token())
    assert getattr(response, "status_code") == 303  # noqa: B009
    headers = getattr(response, "headers")  # noqa: B009
    assert headers["location"] == "/tenants/acme"
    session = rp.session_of(headers["set-cookie"])
    assert isinstance(session, TenantSession)
    assert (session.subject, session.tenant_id, session.org_id, session.role) == (
        "carol@acme.test",
        "acme",
        "ops",
        "operator",
    )


@pytest.mark.usefixtures("registered")
def test_a_token_without_an_operator_group_is_a_viewer(
    rp: RelyingParty, issuer: TokenIssuer, client: TestClient[Litestar]
) -> None:
    response: object = _through_proxy(client, issuer.token(groups=["staff"]))
    session = rp.session_of(getattr(response, "headers")["set-cookie"])  # noqa: B009
    assert isinstance(session, TenantSession) and session.role == "viewer"


@pytest.mark.usefixtures("registered")
def test_the_post_shape_takes_the_assertion_in_callback_data(
    issuer: TokenIssuer, client: TestClient[Litestar]
) -> None:
    started = client.get("/sso/acme-proxy/start", follow_redirects=False)
    state = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]
    data = base64.b64encode(f"assertion={issuer.token()}".encode()).decode()
    response = client.post("/sso/acme-proxy/callback",
                           json={"state_nonce": state, "callback_data": data})  # fmt: skip
    assert response.status_code == 200
    assert response.json() == {"ok": True, "redirect": "/dashboard"}


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda i: i.token(aud="another-service"), "claim refused: aud"),
        (lambda i: i.token(iss="https://evil.example"), "claim refused: iss"),
        (lambda i: i.token(exp=1_000_000_000), "claim refused: exp"),
        (lambda i: i.token(sub=None), "claim refused: sub"),
        (lambda i: i.token(sub="x" * 257), "principal refused"),
        (lambda i: i.token(key=RSAKey.generate_key(2048, {"kid": "proxy-1"})), "signature"),
        (lambda i: i.token(alg="RS384"), "alg 'RS384'"),
        (lambda i: "not.a.token", "compact JWS"),
    ],
)
def test_bad_tokens_are_refused(
    issuer: TokenIssuer,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
    make: object,
    reason: str,
) -> None:
    caplog.set_level(logging.DEBUG, logger="recordseal")
    token = make(issuer)  # type: ignore[operator]
    response = _through_proxy(client, token)
    assert getattr(response, "status_code") == 401  # noqa: B009
    assert getattr(response, "content") == b""  # noqa: B009
    traces = [Formatter().format(r) for r in caplog.records if r.name == TRACE]
    assert reason in traces[-1]


@pytest.mark.usefixtures("registered")
def test_no_forwarded_token_is_refused(client: TestClient[Litestar]) -> None:
    assert getattr(_through_proxy(client, None), "status_code") == 401  # noqa: B009


@pytest.mark.usefixtures("registered")
def test_a_new_key_published_later_is_found_by_its_key_id(
    issuer: TokenIssuer, client: TestClient[Litestar]
) -> None:
    rotated = ECKey.generate_key("P-256", {"kid": "proxy-2"})
    issuer.keys.append(rotated)
    response = _through_proxy(client, issuer.token(key=rotated))
    assert getattr(response, "status_code") == 303  # noqa: B009


@pytest.mark.usefixtures("registered")
def test_an_unpublished_key_id_is_refused(
    issuer: TokenIssuer, client: TestClient[Litestar]
) -> None:
    stranger = RSAKey.generate_key(2048, {"kid": "never-published"})
    assert getattr(_through_proxy(client, issuer.token(key=stranger)), "status_code") == 401  # noqa: B009


def test_private_key_members_published_by_mistake_are_not_kept(
    rp: RelyingParty, issuer: TokenIssuer
) -> None:
    issuer.keys.append(ECKey.generate_key("P-256", {"kid": "proxy-ec"}))
    issuer.jwks = lambda: {"keys": [key.as_dict(private=True) for key in issuer.keys]}  # type: ignore[method-assign]
    organization = rp.call(rp.panel.tenants.get_organization, "acme", "ops")
    form = RegistrationForm(
        flavour="jwt-bearer", id="acme-proxy", issuer=issuer.issuer, audience="recordseal-panel"
    )
    rp.call(register_provider, rp.registry, organization, form)
    ((config,),) = rp.query("SELECT config FROM panel_providers WHERE id = 'acme-proxy'")
    stored = json.loads(config)["jwks"]["keys"]
    assert [key["kid"] for key in stored] == ["proxy-1", "proxy-ec"]
    assert all("d" not in key and "p" not in key and "q" not in key for key in stored)
    with rp.client() as client:
        response: object = _through_proxy(client, issuer.token())
    assert getattr(response, "status_code") == 303  # noqa: B009
