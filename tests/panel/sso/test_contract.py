"""The provider contract, the registry, SAML and WebAuthn-via-provider through the contract,
the principal (spec 2.6, 2.7, 3, 7 rule 4) and pending nonces (spec 3, 8)."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.logs import Formatter
from recordseal.panel.sessions import TenantSession
from recordseal.panel.sso.contract import (
    BeginResult,
    Challenge,
    Principal,
    PrincipalError,
    ProtocolName,
    Redirect,
    SsoProvider,
)
from recordseal.panel.sso.errors import DuplicateProvider, InvalidNonce, RegistrationError
from recordseal.panel.sso.nonces import (
    NONCE_LIFETIME,
    PendingLogins,
    binding_hash,
    open_stash,
    seal_stash,
)
from recordseal.panel.sso.oidc import parse_callback
from recordseal.panel.sso.saml import SAML_IMPLEMENTATION_AVAILABLE, register_saml_provider
from recordseal.storage.sqlite import SQLiteStore
from tests.backends import opened
from tests.panel.sso.conftest import RelyingParty


class ContractProvider:
    """A provider written against the contract alone (the shape a SAML build would have):
    ``state_nonce`` travels as RelayState, the callback echoes it with a NameID."""

    def __init__(self, provider_id: str, protocol: ProtocolName, org: str = "eng") -> None:
        self.id = provider_id
        self.protocol = protocol
        self.tenant_id = "acme"
        self.organization_id = org
        self.answer_org = org
        self.begun: list[tuple[str, str]] = []

    async def begin_login(self, return_url: str, state_nonce: str) -> BeginResult:
        self.begun.append((return_url, state_nonce))
        if self.protocol == "webauthn":
            return Challenge(b"\x01\x02challenge", stash="server-side")
        return Redirect(f"https://idp.example/sso?RelayState={state_nonce}", stash="kept")

    async def complete_login(
        self, callback_data: bytes, state_nonce: str, stash: str | None
    ) -> Principal:
        fields = parse_callback(callback_data)
        if fields.get("RelayState") != state_nonce:
            raise InvalidNonce("RelayState differs")
        assert stash in ("kept", "server-side")
        return Principal(fields["NameID"], "acme", self.answer_org, groups=("saml-admins",))


def _saml_callback(client: TestClient[Litestar], provider_id: str, **fields: str) -> object:
    started = client.get(f"/sso/{provider_id}/start?return_url=/tenants/acme",
                         follow_redirects=False)  # fmt: skip
    relay = parse_qs(urlsplit(started.headers["location"]).query)["RelayState"][0]
    data = base64.b64encode(urlencode({"RelayState": relay, **fields}).encode()).decode()
    return client.post(
        f"/sso/{provider_id}/callback", json={"state_nonce": relay, "callback_data": data}
    )


def test_a_contract_provider_satisfies_the_protocol() -> None:
    assert isinstance(ContractProvider("x", "saml"), SsoProvider)


def test_registering_an_id_twice_fails_and_keeps_the_first(rp: RelyingParty) -> None:
    first = ContractProvider("dup", "saml")
    rp.call(rp.registry.register, first)
    with pytest.raises(DuplicateProvider, match="'dup' is already registered"):
        rp.call(rp.registry.register, ContractProvider("dup", "webauthn"))
    assert rp.call(rp.registry.resolve, "dup") is first


def test_provider_ids_follow_the_identifier_rule(rp: RelyingParty) -> None:
    with pytest.raises(RegistrationError, match="not an identifier"):
        rp.call(rp.registry.register, ContractProvider("no spaces", "saml"))


def test_saml_providers_register_through_the_saml_entry_point(rp: RelyingParty) -> None:
    assert SAML_IMPLEMENTATION_AVAILABLE is False
    provider = ContractProvider("acme-saml", "saml")
    rp.call(register_saml_provider, rp.registry, provider)
    assert rp.call(rp.registry.resolve, "acme-saml") is provider
    with pytest.raises(RegistrationError, match="not 'saml'"):
        rp.call(register_saml_provider, rp.registry, ContractProvider("other", "webauthn"))
    with pytest.raises(DuplicateProvider):
        rp.call(register_saml_provider, rp.registry, ContractProvider("acme-saml", "saml"))


def test_a_saml_login_runs_through_the_same_completion_path(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    provider = ContractProvider("acme-saml", "saml")
    rp.call(register_saml_provider, rp.registry, provider)
    started = client.get("/sso/acme-saml/start?return_url=/tenants/acme", follow_redirects=False)
    assert started.status_code == 307
    relay = parse_qs(urlsplit(started.headers["location"]).query)["RelayState"][0]
    assert provider.begun == [("/tenants/acme", relay)]
    assert "kept" not in started.headers["location"]
    data = base64.b64encode(urlencode({"RelayState": relay, "NameID": "dana@acme.test"}).encode())
    response = client.post(
        "/sso/acme-saml/callback", json={"state_nonce": relay, "callback_data": data.decode()}
    )
    assert response.status_code == 200
    assert response.json() == {"ok": True, "redirect": "/tenants/acme"}
    session = rp.session_of(response.headers["set-cookie"])
    assert isinstance(session, TenantSession)
    assert (session.subject, session.org_id, session.role) == ("dana@acme.test", "eng", "viewer")


def test_a_mismatched_relay_state_is_refused_by_the_provider(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    rp.call(register_saml_provider, rp.registry, ContractProvider("acme-saml", "saml"))
    started = client.get("/sso/acme-saml/start", follow_redirects=False)
    relay = parse_qs(urlsplit(started.headers["location"]).query)["RelayState"][0]
    data = base64.b64encode(b"RelayState=other&NameID=dana").decode()
    response = client.post(
        "/sso/acme-saml/callback", json={"state_nonce": relay, "callback_data": data}
    )
    assert response.status_code == 401 and response.content == b""


def test_a_subject_with_the_cookie_separator_is_refused(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    rp.call(register_saml_provider, rp.registry, ContractProvider("acme-saml", "saml"))
    response = _saml_callback(client, "acme-saml", NameID="dana|globex|hq|9999999999")
    assert getattr(response, "status_code") == 401  # noqa: B009


def test_webauthn_via_provider_answers_a_json_challenge(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    rp.call(rp.registry.register, ContractProvider("acme-keys", "webauthn"))
    response = client.get("/sso/acme-keys/start", follow_redirects=False)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"kind", "state_nonce", "challenge"}
    assert body["kind"] == "challenge"
    assert base64.b64decode(body["challenge"]) == b"\x01\x02challenge"
    assert "server-side" not in response.text


def test_a_principal_of_another_organization_is_an_internal_error_flagged_for_escalation(
    rp: RelyingParty, client: TestClient[Litestar], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="recordseal")
    provider = ContractProvider("acme-saml", "saml")
    provider.answer_org = "ops"
    rp.call(register_saml_provider, rp.registry, provider)
    response = _saml_callback(client, "acme-saml", NameID="dana")
    assert getattr(response, "status_code") == 500  # noqa: B009
    assert getattr(response, "content") == b""  # noqa: B009
    audit = [r for r in caplog.records if r.name == "recordseal.panel.audit"]
    assert audit[-1].levelno == logging.ERROR
    assert "error=Internal status=500 escalate=yes" in Formatter().format(audit[-1])


# -- the principal -----------------------------------------------------------------------


def test_a_principal_needs_a_subject_of_1_to_256_characters_and_a_tenant() -> None:
    with pytest.raises(PrincipalError, match="empty"):
        Principal("", "acme", "eng")
    with pytest.raises(PrincipalError, match="257 characters"):
        Principal("x" * 257, "acme", "eng")
    with pytest.raises(PrincipalError, match="tenant_id"):
        Principal("a", "", "eng")
    assert Principal("x" * 256, "acme", "eng").subject_id == "x" * 256
    for subject in ("6f1c2d3e-4b5a-4c6d-8e7f-8091a2b3c4d5", "a@b.example", "AbC-_dEf"):
        assert Principal(subject, "acme", "eng").subject_id == subject


def test_claims_serialise_with_sorted_keys() -> None:
    one = Principal("a", "acme", "eng", claims={"z": "1", "a": "2", "m": "3"})
    two = Principal("a", "acme", "eng", claims={"m": "3", "z": "1", "a": "2"})
    assert one.claims_json() == two.claims_json() == b'{"a":"2","m":"3","z":"1"}'


# -- pending nonces ----------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _pending(tmp_path: Path, test: Callable[[PendingLogins, _Clock], Awaitable[None]]) -> None:
    """Run ``test`` with a pending map on a real store (SQLite in ``tmp_path``)."""

    async def body() -> None:
        async with opened(SQLiteStore(tmp_path / "recordseal.sqlite3")) as store:
            clock = _Clock()
            await test(PendingLogins(store.panel, clock=clock), clock)

    asyncio.run(body())


def test_a_nonce_is_single_use(tmp_path: Path) -> None:
    async def test(pending: PendingLogins, clock: _Clock) -> None:
        nonce = pending.new_nonce()
        await pending.put(nonce, "acme-okta", "/tenants", "verifier")
        status, login = await pending.take(nonce)
        assert status == "ok" and login is not None
        assert (login.provider_ref, login.return_url, login.stash) == (
            "acme-okta",
            "/tenants",
            "verifier",
        )
        assert await pending.take(nonce) == ("unknown", None)
        assert "verifier" not in repr(login)

    _pending(tmp_path, test)


def test_a_nonce_expires_after_ten_minutes_and_expired_rows_are_purged(tmp_path: Path) -> None:
    async def test(pending: PendingLogins, clock: _Clock) -> None:
        early, late = pending.new_nonce(), pending.new_nonce()
        await pending.put(early, "p", "/", None)
        clock.now += NONCE_LIFETIME - 1
        await pending.put(late, "p", "/", None)
        assert (await pending.take(early))[0] == "ok"
        clock.now += NONCE_LIFETIME
        assert await pending.take(late) == ("expired", None)
        stale = pending.new_nonce()
        await pending.put(stale, "p", "/", None)
        clock.now += NONCE_LIFETIME + 1
        await pending.put(pending.new_nonce(), "p", "/", None)
        assert await pending.count() == 1
        assert await pending.take(stale) == ("unknown", None)

    _pending(tmp_path, test)


def test_nonces_are_shared_by_processes_on_one_database(tmp_path: Path) -> None:
    async def body() -> None:
        database = tmp_path / "recordseal.sqlite3"
        async with opened(SQLiteStore(database)) as one, opened(SQLiteStore(database)) as two:
            first, second = PendingLogins(one.panel), PendingLogins(two.panel)
            nonce = first.new_nonce()
            await first.put(nonce, "p", "/", None)
            assert (await second.take(nonce))[0] == "ok"
            assert await first.take(nonce) == ("unknown", None)

    asyncio.run(body())


def test_nonces_are_long_and_distinct(tmp_path: Path) -> None:
    async def test(pending: PendingLogins, clock: _Clock) -> None:
        nonces = {pending.new_nonce() for _ in range(100)}
        assert len(nonces) == 100
        assert all(len(n) >= 43 for n in nonces)

    _pending(tmp_path, test)


def test_the_registry_lists_an_organizations_providers(rp: RelyingParty) -> None:
    rp.call(rp.registry.register, ContractProvider("a", "saml"))
    rp.call(rp.registry.register, ContractProvider("b", "webauthn", org="ops"))
    assert [p.id for p in rp.call(rp.registry.for_organization, "acme", "eng")] == ["a"]
    assert [p.id for p in rp.call(rp.registry.for_organization, "acme", "ops")] == ["b"]
    assert rp.call(rp.registry.remove, "a")
    assert not rp.call(rp.registry.remove, "a")


def test_a_tenant_id_the_cookie_cannot_carry_is_an_internal_error(
    rp: RelyingParty, client: TestClient[Litestar]
) -> None:
    provider = ContractProvider("odd-saml", "saml")
    provider.tenant_id = "not an identifier"
    rp.call(register_saml_provider, rp.registry, provider)

    async def complete(callback_data: bytes, state_nonce: str, stash: str | None) -> Principal:
        return Principal("dana", "not an identifier", "eng")

    provider.complete_login = complete  # type: ignore[method-assign]
    response = _saml_callback(client, "odd-saml", NameID="dana")
    assert getattr(response, "status_code") == 500  # noqa: B009
    assert getattr(response, "content") == b""  # noqa: B009
    assert "set-cookie" not in getattr(response, "headers")  # noqa: B009


def test_the_stash_is_sealed_under_the_nonce_in_a_database_only_the_owner_reads(
    tmp_path: Path,
) -> None:
    verifier = "pkce-verifier-" + "v" * 60
    nonces = []

    async def test(pending: PendingLogins, clock: _Clock) -> None:
        nonce = pending.new_nonce()
        nonces.append(nonce)
        await pending.put(nonce, "acme-okta", "/tenants", verifier, "binding-value")

    _pending(tmp_path, test)
    (nonce,) = nonces
    database = tmp_path / "recordseal.sqlite3"
    assert stat.S_IMODE(os.stat(database).st_mode) == 0o600
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert verifier.encode() not in data and nonce.encode() not in data
    assert b"binding-value" not in data
    sealed = seal_stash(nonce, verifier)
    assert open_stash(nonce, sealed) == verifier
    assert open_stash("another nonce", sealed) is None
    assert open_stash(nonce, sealed[:-1] + bytes([sealed[-1] ^ 1])) is None

    async def take(pending: PendingLogins, clock: _Clock) -> None:
        status, login = await pending.take(nonce)
        assert status == "ok" and login is not None and login.stash == verifier
        assert login.binding == binding_hash("binding-value")

    _pending(tmp_path, take)


def test_a_database_created_with_a_loose_mode_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "recordseal.sqlite3"
    path.touch(mode=0o644)
    path.chmod(0o644)
    _pending(tmp_path, lambda pending, clock: pending.count())  # type: ignore[arg-type,return-value]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
