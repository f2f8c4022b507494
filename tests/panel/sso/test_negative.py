"""Refused sign-ons (spec 3, 4.2, 5.4, 7): each answered with the status of spec 7 and an empty
body, each audited without its reason, against the real OP."""

from __future__ import annotations

import base64
import logging
from urllib.parse import parse_qs, urlsplit

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.sso.nonces import NONCE_LIFETIME, seal_stash
from recordseal.panel.sso.oidc import new_code_verifier
from recordseal.panel.sso.provider_store import SecretBox
from recordseal.web.panel.sso import BINDING_COOKIE
from tests.panel.sso.conftest import (
    RP_BASE,
    RelyingParty,
    at_idp,
    login,
    register_code,
    start,
)
from tests.panel.sso.op_server import OpenIdProvider

AUDIT = "recordseal.panel.audit"
TRACE = "recordseal.panel.sso.trace"
#: The test's own IdP (pyop and pyoidc run in this process) logs the codes it issues; every
#: other logger — the panel's, httpx, httpcore, authlib, litestar — is searched for secrets.
IDP_LOGGERS = ("pyop", "oic", "tests.")


def _refused(response: object, status: int = 401) -> None:
    assert getattr(response, "status_code") == status  # noqa: B009
    assert getattr(response, "content") == b""  # noqa: B009
    assert "set-cookie" not in getattr(response, "headers")  # noqa: B009


def _audited(caplog: pytest.LogCaptureFixture, kind: str, status: int = 401) -> None:
    lines = [r for r in caplog.records if r.name == AUDIT and "refused" in r.getMessage()]
    assert lines, "the failure was not audited"
    message = Formatter().format(lines[-1])
    assert f"error={kind}" in message
    assert f"status={status}" in message
    assert "reason" not in message


def _reason(caplog: pytest.LogCaptureFixture) -> str:
    traces = [Formatter().format(r) for r in caplog.records if r.name == TRACE]
    assert traces, "no trace line"
    return traces[-1]


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="recordseal")


@pytest.fixture
def registered(rp: RelyingParty, op: OpenIdProvider) -> None:
    register_code(rp, op)


@pytest.mark.usefixtures("registered")
def test_a_replayed_nonce_is_refused(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    assert client.get(callback, follow_redirects=False).status_code == 303
    _refused(client.get(callback, follow_redirects=False))
    _audited(caplog, "InvalidNonce")
    assert "unknown" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_a_nonce_expires_after_ten_minutes(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    rp.clock.offset = NONCE_LIFETIME + 1
    _refused(client.get(callback, follow_redirects=False))
    _audited(caplog, "InvalidNonce")
    assert "expired" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_a_nonce_is_still_good_just_before_ten_minutes(
    rp: RelyingParty, op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    rp.clock.offset = NONCE_LIFETIME - 5
    assert client.get(callback, follow_redirects=False).status_code == 303


def test_a_callback_for_another_provider_reference_is_refused_and_burns_the_nonce(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    register_code(rp, op)
    register_code(rp, op, "ops-okta", org="ops")
    callback = at_idp(op, start(client, "acme-okta").headers["location"])
    elsewhere = callback.replace("/sso/acme-okta/", "/sso/ops-okta/")
    _refused(client.get(elsewhere, follow_redirects=False))
    _audited(caplog, "InvalidNonce")
    assert "issued for provider 'acme-okta'" in _reason(caplog)
    # Step 2 (consume) runs before step 3 (provider check): the nonce is gone.
    _refused(client.get(callback, follow_redirects=False))


@pytest.mark.usefixtures("registered")
def test_a_provider_removed_between_start_and_callback_is_refused(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    assert rp.call(rp.registry.remove, "acme-okta")
    _refused(client.get(callback, follow_redirects=False))
    _audited(caplog, "InvalidCallback")
    assert "removed" in _reason(caplog)
    assert op.token_requests == []


@pytest.mark.usefixtures("registered")
def test_a_wrong_pkce_verifier_is_refused_by_the_provider(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    location = start(client).headers["location"]
    callback = at_idp(op, location)
    wrong = new_code_verifier()
    nonce = parse_qs(urlsplit(location).query)["state"][0]
    rp.query("UPDATE panel_pending_logins SET stash = ?", seal_stash(nonce, wrong))
    _refused(client.get(callback, follow_redirects=False))
    _audited(caplog, "InvalidCallback")
    assert "refused the grant (HTTP 400, error=invalid_request)" in _reason(caplog)
    assert parse_qs(op.token_requests[-1]["body"])["code_verifier"] == [wrong]


@pytest.mark.usefixtures("registered")
def test_a_bad_id_token_signature_is_refused(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    def flip(token: str) -> str:
        head, payload, signature = token.split(".")
        raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
        raw[10] ^= 0x01
        return f"{head}.{payload}.{base64.urlsafe_b64encode(bytes(raw)).rstrip(b'=').decode()}"

    op.tamper_id_token = flip
    _refused(login(client, op))
    _audited(caplog, "InvalidCallback")
    assert "signature does not verify" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_a_token_signed_again_unchanged_still_signs_in(
    op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    """The control for the claim tests below: re-signing alone is not what they refuse."""
    op.tamper_id_token = op.resign
    assert login(client, op).status_code == 303


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize(
    ("changes", "claim"),
    [
        ({"aud": "another-client"}, "aud"),
        ({"aud": ["another-client", "panel-basic"]}, None),
        ({"azp": "another-client"}, None),
        ({"iss": "https://evil.example"}, "iss"),
        ({"nonce": "not-the-panel-nonce"}, "nonce"),
        ({"exp": 1_000_000_000}, "exp"),
    ],
)
def test_id_token_claims_are_checked(
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
    changes: dict[str, object],
    claim: str | None,
) -> None:
    op.tamper_id_token = lambda token: op.resign(token, **changes)
    _refused(login(client, op))
    _audited(caplog, "InvalidCallback")
    reason = _reason(caplog)
    assert (f"claim refused: {claim}" in reason) if claim else ("azp" in reason)


@pytest.mark.usefixtures("registered")
def test_an_expired_id_token_from_the_provider_is_refused(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    op.provider.id_token_lifetime = -3600
    _refused(login(client, op))
    assert "claim refused: exp" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_algorithms_are_pinned(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    def unsigned(token: str) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
        return f"{head}.{token.split('.')[1]}."

    op.tamper_id_token = unsigned
    _refused(login(client, op))
    assert "alg 'none'" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_a_rotated_signing_key_is_fetched_by_its_key_id(
    op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    assert login(client, op).status_code == 303
    op.rotate_key()
    assert login(client, op).status_code == 303


@pytest.mark.usefixtures("registered")
def test_an_idp_error_response_is_refused_without_echoing_its_text(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    op.deny = True
    callback = at_idp(op, start(client).headers["location"])
    assert "error_description" in callback
    response = client.get(callback, follow_redirects=False)
    _refused(response)
    _audited(caplog, "InvalidCallback")
    assert "error=access_denied" in _reason(caplog)
    # Every record but the test client's own request line (httpx logs the URL it fetches).
    for record in caplog.records:
        if record.name == "httpx":
            continue
        assert "not assigned" not in record.getMessage()
        assert "Alice" not in record.getMessage()


@pytest.mark.usefixtures("registered")
def test_an_unreachable_token_endpoint_is_a_network_error(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    op.stop()
    _refused(client.get(callback, follow_redirects=False), 502)
    _audited(caplog, "Network", 502)


@pytest.mark.usefixtures("registered")
def test_a_forged_callback_that_never_visited_start_is_refused(
    client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    _refused(client.get("/sso/acme-okta/callback?code=abc&state=forged", follow_redirects=False))
    _audited(caplog, "InvalidNonce")
    _refused(client.get("/sso/acme-okta/callback?code=abc", follow_redirects=False))


@pytest.mark.usefixtures("registered")
def test_a_mismatched_idp_echo_is_refused_by_the_provider(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    query = parse_qs(urlsplit(callback).query)
    data = f"code={query['code'][0]}&state=something-else"
    response = client.post(
        "/sso/acme-okta/callback",
        json={
            "state_nonce": query["state"][0],
            "callback_data": base64.b64encode(data.encode()).decode(),
        },
    )
    _refused(response)
    _audited(caplog, "InvalidNonce")
    assert "echoed" in _reason(caplog)
    assert op.token_requests == []


@pytest.mark.usefixtures("registered")
def test_callback_data_that_is_not_base64_is_a_protocol_error_after_the_nonce_is_used(
    op: OpenIdProvider, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    callback = at_idp(op, start(client).headers["location"])
    query = urlsplit(callback).query
    state = parse_qs(query)["state"][0]
    response = client.post(
        "/sso/acme-okta/callback", json={"state_nonce": state, "callback_data": "%%%not base64"}
    )
    _refused(response, 400)
    _audited(caplog, "InvalidProtocol", 400)
    retry = client.post(
        "/sso/acme-okta/callback",
        json={"state_nonce": state, "callback_data": base64.b64encode(query.encode()).decode()},
    )
    _refused(retry)


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize(
    ("content", "content_type"),
    [(b"not json", "application/json"), (b"[1]", "application/json"), (b"a=b", "text/plain")],
)
def test_a_post_callback_that_is_not_a_json_object_is_400(
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
    content: bytes,
    content_type: str,
) -> None:
    response = client.post(
        "/sso/acme-okta/callback", content=content, headers={"Content-Type": content_type}
    )
    _refused(response, 400)
    _audited(caplog, "InvalidProtocol", 400)


@pytest.mark.usefixtures("registered")
def test_a_post_callback_without_a_nonce_is_refused(client: TestClient[Litestar]) -> None:
    _refused(client.post("/sso/acme-okta/callback", json={"callback_data": ""}))


def test_an_unknown_provider_reference_is_404_at_start(client: TestClient[Litestar]) -> None:
    response = client.get("/sso/nobody/start", follow_redirects=False)
    assert response.status_code == 404
    assert response.json()["code"] == "provider_not_found"


@pytest.mark.usefixtures("registered")
@pytest.mark.parametrize(
    "return_url",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "\\\\evil.example",
        "javascript:alert(1)",
        "/\t/evil.example",
        "/%0a/x\n",
        "evil.example",
        "http:/evil.example",
        "",
        "/" + "a" * 2048,
    ],
)
def test_open_redirect_attempts_land_on_the_dashboard(
    op: OpenIdProvider, client: TestClient[Litestar], return_url: str
) -> None:
    response = login(client, op, return_url=return_url)
    assert response.status_code == 303
    assert response.headers["location"] == "/dashboard"


@pytest.mark.usefixtures("registered")
def test_a_local_return_url_with_a_query_is_kept(
    op: OpenIdProvider, client: TestClient[Litestar]
) -> None:
    response = login(client, op, return_url="/tenants/acme/orgs/eng?tab=fleets")
    assert response.headers["location"] == "/tenants/acme/orgs/eng?tab=fleets"


@pytest.mark.usefixtures("registered")
def test_secrets_codes_tokens_and_verifiers_never_reach_a_log(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    first = start(client)
    # The test's browser at the IdP (its own httpx call) legitimately sees the code.
    before = len(caplog.records)
    callback = at_idp(op, first.headers["location"])
    browser = range(before, len(caplog.records))
    code = parse_qs(urlsplit(callback).query)["code"][0]
    tokens: list[str] = []
    op.tamper_id_token = lambda token: tokens.append(token) or token
    assert client.get(callback, follow_redirects=False).status_code == 303
    verifier = parse_qs(op.token_requests[-1]["body"])["code_verifier"][0]
    secrets = ["s3cr+t/with=equals:colon", verifier, code, tokens[0]]
    searched = [
        record
        for index, record in enumerate(caplog.records)
        if index not in browser
        and not record.name.startswith(IDP_LOGGERS)
        # the test client's own request line for the callback URL it was handed
        and not (record.name == "httpx" and f" {RP_BASE}/" in record.getMessage())
    ]
    assert {r.name for r in searched} >= {"recordseal.panel.audit", "httpx"}
    for record in searched:
        for secret in secrets:
            assert secret not in record.getMessage()


# -- login CSRF: the callback must come from the browser that started --------------------


@pytest.mark.usefixtures("registered")
def test_start_binds_the_login_to_the_browser_with_a_host_cookie(
    client: TestClient[Litestar],
) -> None:
    first = start(client)
    cookie = first.headers["set-cookie"]
    name, _, rest = cookie.partition("=")
    assert name == BINDING_COOKIE and name.startswith("__Host-")
    value, *attributes = [part.strip() for part in rest.split(";")]
    assert len(value) == 43
    assert {"Path=/", "Secure", "HttpOnly", "SameSite=Lax", f"Max-Age={NONCE_LIFETIME}"} <= set(
        attributes
    )
    assert not any(a.lower().startswith("domain") for a in attributes)
    # A second tab keeps the same value, so both logins complete.
    second = start(client)
    assert second.headers["set-cookie"].partition("=")[2].split(";")[0] == value


@pytest.mark.usefixtures("registered")
def test_a_callback_url_opened_in_another_browser_is_refused_and_burns_the_nonce(
    op: OpenIdProvider,
    client: TestClient[Litestar],
    rp: RelyingParty,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The attacker starts and signs in at the IdP, then hands the callback URL to a victim.
    callback = at_idp(op, start(client).headers["location"])
    with rp.another_browser() as victim:
        _refused(victim.get(callback, follow_redirects=False))
        _audited(caplog, "InvalidNonce")
        assert "another browser" in _reason(caplog)
        # Consumed by the first use, as every refused callback.
        _refused(client.get(callback, follow_redirects=False))
        assert "unknown" in _reason(caplog)
        # A victim that has a binding cookie of its own is refused too.
        victim.cookies.set(BINDING_COOKIE, "x" * 43, domain="testserver.local")
        second = at_idp(op, start(client).headers["location"])
        _refused(victim.get(second, follow_redirects=False))
        assert "another browser" in _reason(caplog)


@pytest.mark.usefixtures("registered")
def test_the_post_shape_needs_the_starting_browser_too(
    op: OpenIdProvider, client: TestClient[Litestar], rp: RelyingParty
) -> None:
    def posted(via: TestClient[Litestar]) -> tuple[str, dict[str, str]]:
        callback = at_idp(op, start(via).headers["location"])
        query = urlsplit(callback).query
        state = parse_qs(query)["state"][0]
        body = {"state_nonce": state, "callback_data": base64.b64encode(query.encode()).decode()}
        return urlsplit(callback).path, body

    path, body = posted(client)
    with rp.another_browser() as other:
        _refused(other.post(path, json=body))
    path, body = posted(client)
    answer = client.post(path, json=body)
    assert answer.status_code == 200 and answer.json() == {"ok": True, "redirect": "/tenants/acme"}


@pytest.mark.usefixtures("registered")
def test_the_completion_steps_run_in_the_order_of_spec_4_2(
    rp: RelyingParty,
    op: OpenIdProvider,
    client: TestClient[Litestar],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each case breaks two steps at once; the earlier step must be the one that answers."""

    def nonce() -> str:
        return parse_qs(urlsplit(start(client).headers["location"]).query)["state"][0]

    def post(ref: str, state: str | None, data: str) -> None:
        body = {"callback_data": data} | ({"state_nonce": state} if state else {})
        _refused(client.post(f"/sso/{ref}/callback", json=body), 401)

    # Step 1 before 5: no nonce and undecodable data is InvalidNonce, not InvalidProtocol.
    post("acme-okta", None, "%%%")
    _audited(caplog, "InvalidNonce")
    # Step 2 before 3: an unknown nonce on another reference says "unknown".
    post("nobody", "never-issued", "%%%")
    assert "unknown" in _reason(caplog)
    # Step 3 before 4 and 5: another (unregistered) reference is InvalidNonce.
    issued = nonce()
    post("nobody", issued, "%%%")
    _audited(caplog, "InvalidNonce")
    assert "issued for provider 'acme-okta'" in _reason(caplog)
    # Step 4 before 5: a removed provider is InvalidCallback (401), not InvalidProtocol (400).
    issued = nonce()
    assert rp.call(rp.registry.remove, "acme-okta")
    post("acme-okta", issued, "%%%")
    _audited(caplog, "InvalidCallback")
    assert "removed" in _reason(caplog)
    register_code(rp, op)
    # Step 2 before everything after it: each refusal above consumed its nonce.
    assert rp.call(rp.pending.count) == 0


def test_a_fault_of_the_panel_at_start_or_callback_is_an_audited_internal_error(
    rp: RelyingParty, op: OpenIdProvider, caplog: pytest.LogCaptureFixture
) -> None:
    """A provider whose stored client secret no longer opens (a database restored under
    another key-encryption key) is the panel's fault: 500 with an empty body, audited at
    ERROR and flagged for escalation, at both ends."""
    register_code(rp, op)
    with rp.client() as client:
        callback = at_idp(op, start(client).headers["location"])
        rp.query("UPDATE panel_providers SET secret = ?", SecretBox(b"other" * 8).seal("x", "y"))
        for response in (
            client.get("/sso/acme-okta/start", follow_redirects=False),
            client.get(callback, follow_redirects=False),
        ):
            _refused(response, 500)
            _audited(caplog, "Internal", 500)
            escalated = [
                r for r in caplog.records if r.name == AUDIT and getattr(r, "escalate", "") == "yes"
            ]
            assert escalated and escalated[-1].levelno == logging.ERROR
            assert "ProviderStoreError" in _reason(caplog)
