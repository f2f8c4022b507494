"""Passkey routes with Litestar's TestClient: link pages, error paths, single-use challenges.

The ceremonies' cryptography is covered by the browser test (a real authenticator); here
py_webauthn's verify functions are replaced where a test needs a ceremony to succeed.
"""

from __future__ import annotations

import base64
import functools
import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.passkey_store import LINK_LIFETIME, PasskeyStore, hash_token
from recordseal.panel.sessions import LegacySession
from recordseal.panel.tenants import InMemoryTenantStore
from recordseal.settings import Settings
from recordseal.web.panel import passkeys
from recordseal.web.panel.context import PanelContext
from recordseal.web.panel.passkeys import PASSKEY_ROUTES, PasskeyConfig
from recordseal.web.panel.routes import PANEL_ROUTES, panel_template_config
from recordseal.web.ratelimit import RateLimiter
from tests.panel_support import PanelDatabase

BASE = "http://localhost:8000"
pytestmark = pytest.mark.filterwarnings("ignore:The base_url:UserWarning")
NOW = 1_800_000_000.0


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Clock:
    now = NOW

    def __call__(self) -> float:
        return self.now


class OnTheAppLoop:
    """The ``PasskeyStore`` of the app under test, called from the test's thread: each call
    runs on the app's event loop (where its store was opened)."""

    def __init__(self, store: PasskeyStore) -> None:
        self.store = store
        self.client: TestClient[Litestar] | None = None

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            assert self.client is not None, "start the test client first"
            return self.client.blocking_portal.call(functools.partial(method, *args, **kwargs))

        return call


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.clock = Clock()
        self.database = PanelDatabase(tmp_path)
        self.keyring = CookieKeyring(SigningKey("test-key", b"k" * 32))
        self.context = PanelContext(
            tenants=InMemoryTenantStore(),
            keyring=self.keyring,
            store=self.database.store,
            clock=self.clock,
        )
        self.store = OnTheAppLoop(self.context.passkeys)
        self.app = Litestar(
            route_handlers=[*PANEL_ROUTES, *PASSKEY_ROUTES],
            template_config=panel_template_config(),
            logging_config=None,
            debug=False,
            lifespan=[self.database.lifespan],
        )
        self.app.state.panel = self.context
        # A service's configuration: default settings (rp id localhost), rate limits off.
        settings = Settings(data_dir=tmp_path, rate_limit_login=None, rate_limit_sso=None)
        self.app.state.passkey_config = PasskeyConfig.of(settings)
        self.app.state.rate_limiter = RateLimiter.of(settings)

    def client(self, base_url: str = BASE) -> TestClient[Litestar]:
        client = TestClient(self.app, base_url=base_url)
        self.store.client = client
        return client


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


@pytest.fixture
def client(env: Env) -> Iterator[TestClient[Litestar]]:
    with env.client() as test_client:
        yield test_client


def assertion(raw_id: bytes) -> dict[str, Any]:
    return {
        "id": b64u(raw_id),
        "rawId": b64u(raw_id),
        "type": "public-key",
        "response": {
            "clientDataJSON": b64u(b"{}"),
            "authenticatorData": b64u(b"\x00" * 37),
            "signature": b64u(b"sig"),
            "userHandle": b64u(b"operator-1"),
        },
        "clientExtensionResults": {},
    }


def registered(env: Env, role: str = "operator") -> bytes:
    token = env.store.create_link(role)  # type: ignore[arg-type]
    env.store.register_with_link(hash_token(token), f"{role}-1", b"cred-1", b"public-key", 0)
    return b"cred-1"


# -- pages -------------------------------------------------------------------------------


def test_the_login_page_offers_the_passkey_button(client: TestClient[Litestar]) -> None:
    response = client.get("/login")
    assert response.status_code == 200
    assert "Sign in with a passkey" in response.text
    assert '<script src="/static/panel/passkey.js" defer></script>' in response.text
    script = client.get("/static/panel/passkey.js")
    assert "navigator.credentials.get" in script.text
    assert response.headers["cache-control"] == "no-store"


def test_an_unauthenticated_browser_lands_on_the_login_page(
    client: TestClient[Litestar],
) -> None:
    response = client.get("/tenants", headers={"Accept": "text/html"})
    assert response.status_code == 200
    assert response.url.path == "/login"


@pytest.mark.parametrize("query", ["", "?token=", "?token=not-a-real-token"])
def test_a_bad_link_is_400_with_a_clear_page(client: TestClient[Litestar], query: str) -> None:
    response = client.get(f"/login/register{query}")
    assert response.status_code == 400
    assert "not valid" in response.text
    assert "Create a passkey" not in response.text


def test_a_used_link_is_410(env: Env, client: TestClient[Litestar]) -> None:
    token = env.store.create_link()
    env.store.register_with_link(hash_token(token), "operator-1", b"c", b"k", 0)
    response = client.get(f"/login/register?token={token}")
    assert response.status_code == 410
    assert "already been used" in response.text
    start = client.post("/login/register/start", json={"token": token})
    assert start.status_code == 410
    assert start.json()["error"] == "used"


def test_an_expired_link_is_410(env: Env, client: TestClient[Litestar]) -> None:
    token = env.store.create_link()
    env.clock.now += LINK_LIFETIME
    response = client.get(f"/login/register?token={token}")
    assert response.status_code == 410
    assert "expired" in response.text
    assert client.post("/login/register/start", json={"token": token}).status_code == 410


def test_a_valid_link_shows_the_registration_page(env: Env, client: TestClient[Litestar]) -> None:
    token = env.store.create_link()
    response = client.get(f"/login/register?token={token}")
    assert response.status_code == 200
    assert "Create a passkey" in response.text
    assert '<script src="/static/panel/passkey.js" defer></script>' in response.text
    assert "navigator.credentials.create" in client.get("/static/panel/passkey.js").text
    assert env.store.link_status(token)[0] == "valid"  # viewing does not consume it


# -- ceremony start ----------------------------------------------------------------------


def test_registration_options_require_user_verification(
    env: Env, client: TestClient[Litestar]
) -> None:
    token = env.store.create_link()
    response = client.post("/login/register/start", json={"token": token})
    assert response.status_code == 200
    options = response.json()["options"]
    assert options["rp"]["id"] == "localhost"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert response.json()["state"]


def test_authentication_options_require_user_verification(client: TestClient[Litestar]) -> None:
    response = client.post("/login/authenticate/start", json={})
    assert response.status_code == 200
    assert response.json()["options"]["userVerification"] == "required"
    assert response.json()["options"]["rpId"] == "localhost"


def test_an_unconfigured_origin_is_refused(env: Env) -> None:
    with env.client("http://evil.example") as other:
        assert other.post("/login/authenticate/start", json={}).status_code == 400
    with env.client() as same:
        response = same.post(
            "/login/authenticate/start", json={}, headers={"Origin": "http://evil.example"}
        )
        assert response.status_code == 400


def test_configured_origins_replace_the_default(env: Env, tmp_path: Path) -> None:
    env.app.state.passkey_config = PasskeyConfig.of(
        Settings(
            data_dir=tmp_path, panel_rp_id="panel.example", panel_origins=("https://panel.example",)
        )
    )
    with env.client("https://panel.example") as configured:
        response = configured.post("/login/authenticate/start", json={})
        assert response.status_code == 200
        assert response.json()["options"]["rpId"] == "panel.example"
    with env.client() as local:
        assert local.post("/login/authenticate/start", json={}).status_code == 400


def test_a_form_post_is_refused(client: TestClient[Litestar]) -> None:
    response = client.post("/login/authenticate/start", data={"x": "1"})
    assert response.status_code == 415


# -- ceremony finish ---------------------------------------------------------------------


def test_an_unknown_state_is_401_with_an_empty_body(env: Env, client: TestClient[Litestar]) -> None:
    registered(env)
    response = client.post(
        "/login/authenticate/finish", json={"state": "nope", "credential": assertion(b"cred-1")}
    )
    assert response.status_code == 401
    assert response.content == b""


def test_an_unknown_credential_is_401_with_an_empty_body(client: TestClient[Litestar]) -> None:
    state = client.post("/login/authenticate/start", json={}).json()["state"]
    response = client.post(
        "/login/authenticate/finish", json={"state": state, "credential": assertion(b"other")}
    )
    assert response.status_code == 401
    assert response.content == b""
    assert COOKIE_NAME not in response.headers.get("set-cookie", "")


def test_a_bad_assertion_is_401_with_an_empty_body(env: Env, client: TestClient[Litestar]) -> None:
    registered(env)
    state = client.post("/login/authenticate/start", json={}).json()["state"]
    response = client.post(
        "/login/authenticate/finish", json={"state": state, "credential": assertion(b"cred-1")}
    )
    assert response.status_code == 401
    assert response.content == b""


def test_a_replayed_challenge_is_refused(
    env: Env, client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(env)
    seen: list[dict[str, Any]] = []

    def accept(**kwargs: Any) -> SimpleNamespace:
        seen.append(kwargs)
        return SimpleNamespace(new_sign_count=1)

    monkeypatch.setattr(passkeys, "verify_authentication_response", accept)
    state = client.post("/login/authenticate/start", json={}).json()["state"]
    body = {"state": state, "credential": assertion(b"cred-1")}
    first = client.post("/login/authenticate/finish", json=body)
    assert first.status_code == 200
    assert first.json() == {"ok": True, "redirect": "/tenants"}
    assert seen[0]["require_user_verification"] is True
    assert seen[0]["expected_origin"] == BASE
    assert seen[0]["expected_rp_id"] == "localhost"
    replay = client.post("/login/authenticate/finish", json=body)
    assert replay.status_code == 401
    assert replay.content == b""
    assert len(seen) == 1
    assert env.store.credential(b"cred-1").sign_count == 1  # type: ignore[union-attr]


def test_sign_in_issues_a_legacy_cookie_and_applies_the_stored_role(
    env: Env, client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(env, "viewer")
    monkeypatch.setattr(
        passkeys,
        "verify_authentication_response",
        lambda **_: SimpleNamespace(new_sign_count=1),
    )
    client.blocking_portal.call(env.database.store.adopt_signout_epoch, "", 3)
    state = client.post("/login/authenticate/start", json={}).json()["state"]
    credential = assertion(b"cred-1")
    credential["response"]["userHandle"] = b64u(b"viewer-1")
    response = client.post(
        "/login/authenticate/finish", json={"state": state, "credential": credential}
    )
    assert response.status_code == 200
    set_cookie = response.headers["set-cookie"]
    assert "Max-Age=28800" in set_cookie and "HttpOnly" in set_cookie
    token = set_cookie.split(";")[0].split("=", 1)[1]
    session = env.keyring.verify(token, NOW, epoch=3)
    assert session == LegacySession("viewer-1", int(NOW) + 8 * 3600, 3)
    assert env.store.role("viewer-1") == "viewer"


def test_a_mismatched_user_handle_is_refused(
    env: Env, client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    registered(env)
    monkeypatch.setattr(
        passkeys,
        "verify_authentication_response",
        lambda **_: SimpleNamespace(new_sign_count=1),
    )
    state = client.post("/login/authenticate/start", json={}).json()["state"]
    credential = assertion(b"cred-1")
    credential["response"]["userHandle"] = b64u(b"someone-else")
    response = client.post(
        "/login/authenticate/finish", json={"state": state, "credential": credential}
    )
    assert response.status_code == 401


def test_registration_consumes_the_link_and_signs_in(
    env: Env,
    client: TestClient[Litestar],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[dict[str, Any]] = []

    def accept(**kwargs: Any) -> SimpleNamespace:
        calls.append(kwargs)
        return SimpleNamespace(
            credential_id=b"new-cred", credential_public_key=b"cose", sign_count=0
        )

    monkeypatch.setattr(passkeys, "verify_registration_response", accept)
    token = env.store.create_link()
    state = client.post("/login/register/start", json={"token": token}).json()["state"]
    body = {"state": state, "credential": {"id": "x"}}
    with caplog.at_level(logging.DEBUG, "recordseal"):
        response = client.post("/login/register/finish", json=body)
    assert response.status_code == 200
    assert response.json()["redirect"] == "/tenants"
    # A registration is routine (the link was the operator's decision): INFO, not a warning.
    registered = [r for r in caplog.records if r.getMessage() == "panel.passkey_registered"]
    assert [r.levelno for r in registered] == [logging.INFO]
    assert registered[0].role == "operator"
    assert calls[0]["require_user_verification"] is True
    assert env.store.link_status(token)[0] == "used"
    credential = env.store.credential(b"new-cred")
    assert credential is not None and credential.role == "operator"
    assert env.store.role(credential.user_id) == "operator"
    # The cookie is Secure, so the test client (plain http) would not send it back by itself.
    cookie = response.headers["set-cookie"].split(";")[0]
    client.cookies.clear()
    tenants = client.get("/tenants", headers={"Accept": "application/json", "Cookie": cookie})
    assert tenants.json()["session"]["role"] == "operator"
    assert tenants.json()["session"]["kind"] == "legacy"
    # The state is single use, and a second ceremony on the same link is refused.
    assert client.post("/login/register/finish", json=body).status_code == 401
    assert client.post("/login/register/start", json={"token": token}).status_code == 410


def test_a_link_used_between_start_and_finish_is_410(
    env: Env, client: TestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        passkeys,
        "verify_registration_response",
        lambda **_: SimpleNamespace(
            credential_id=b"late", credential_public_key=b"cose", sign_count=0
        ),
    )
    token = env.store.create_link()
    state = client.post("/login/register/start", json={"token": token}).json()["state"]
    env.store.register_with_link(hash_token(token), "operator-x", b"first", b"k", 0)
    response = client.post("/login/register/finish", json={"state": state, "credential": {}})
    assert response.status_code == 410
    assert env.store.credential(b"late") is None
