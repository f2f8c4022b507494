"""Sign-on in a real browser: Debian's Chromium (Playwright) signs in through pyop.

The service runs as the real application (``recordseal.web.asgi:app`` under granian, two
worker processes as ``make run`` starts it) with the sign-on settings in its environment; pyop
runs in this process over TLS on 127.0.0.1. The provider is registered through the panel's
form after the server started, by an operator whose passkey another process (this one) put
into the database, with real discovery against the OP. The browser starts at
``/sso/acme-okta/start``, signs in at the IdP's page, and lands on the tenant page with the
role mapped from the IdP groups.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright import sync_api

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import LegacySession
from recordseal.storage.sqlite import SQLiteStore
from tests.backends import opened
from tests.panel.sso.conftest import BASIC_SECRET
from tests.panel.sso.op_server import OpenIdProvider, client_entry, running_op
from tests.panel.sso.tls import LocalTls
from tests.panel_support import grant
from tests.servers import asgi_server, chromium, screenshot_dir

SCREENSHOTS = screenshot_dir()
SEED = {
    "tenants": [
        {"id": "acme", "display_name": "Acme Corp"},
        {"id": "globex", "display_name": "Globex"},
    ],
    "organizations": [
        {"id": "eng", "tenant_id": "acme", "display_name": "Engineering",
         "sso_provider_ref": "acme-okta"},
        {"id": "hq", "tenant_id": "globex", "display_name": "Globex HQ"},
    ],
    "fleets": [],
}  # fmt: skip


@dataclass
class Service:
    url: str
    op: OpenIdProvider


@pytest.fixture(scope="module")
def module_tls(tmp_path_factory: pytest.TempPathFactory) -> LocalTls:
    from tests.panel.sso.tls import make_tls

    return make_tls(tmp_path_factory.mktemp("browser-tls"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, module_tls: LocalTls) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("sso-browser")
    seed = folder / "seed.json"
    seed.write_text(json.dumps(SEED))
    data_dir = folder / "data"
    clients: dict[str, dict[str, object]] = {}
    with running_op(clients, module_tls) as op:
        environment = {
            **os.environ,
            "RECORDSEAL_DATA_DIR": str(data_dir),
            "RECORDSEAL_SEAL_INTERVAL": "0",
            "RECORDSEAL_PANEL_TENANT_SEED": str(seed),
            "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": "127.0.0.1/32",
            "RECORDSEAL_PANEL_SSO_CA_FILE": str(module_tls.ca_file),
            "RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS": "panel-operators; admins",
        }
        with asgi_server("recordseal.web.asgi:app", "/health", environment) as port:
            url = f"http://localhost:{port}"
            redirect_uri = f"{url}/sso/acme-okta/callback"
            clients["panel-browser"] = client_entry([redirect_uri], BASIC_SECRET)
            _register(url, data_dir, op, redirect_uri)
            op.interactive = True
            yield Service(url, op)


def _register(url: str, data_dir: Path, op: OpenIdProvider, redirect_uri: str) -> None:
    """An operator registers the provider through the panel's form (JSON), as a client of
    the running service; its passkey role is put into the database by this process."""

    async def operator_passkey() -> None:
        async with opened(SQLiteStore(data_dir / "recordseal.sqlite3")) as store:
            await grant(store.panel, {"root": "operator"})

    # Playwright's sync API may hold this thread's event loop: use the store from another.
    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, operator_passkey()).result()
    keyring = CookieKeyring(
        SigningKey("panel-1", (data_dir / "keys" / "panel-cookie.key").read_bytes())
    )
    cookie = keyring.issue(LegacySession("root", int(time.time()) + 600))
    page = f"{url.replace('localhost', '127.0.0.1')}/tenants/acme/orgs/eng/sso"
    headers = {"Cookie": f"{COOKIE_NAME}={cookie}", "Accept": "application/json"}
    csrf = httpx.get(page, headers=headers).json()["session"]["csrf_token"]
    form = {
        "flavour": "code-exchange",
        "id": "acme-okta",
        "issuer": op.issuer,
        "client_id": "panel-browser",
        "client_secret": BASIC_SECRET,
        "redirect_uri": redirect_uri,
    }
    answer = httpx.post(page, json=form, headers={**headers, "X-CSRF-Token": csrf}, timeout=30)
    assert answer.status_code == 201, answer.text


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def _sign_in(page: sync_api.Page, service: Service, user: str) -> None:
    page.goto(f"{service.url}/sso/acme-okta/start?return_url=/tenants/acme")
    assert page.url.startswith(f"{service.op.issuer}/authorize")
    page.get_by_label("User name").fill(user)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{service.url}/tenants/acme")


def test_an_operator_signs_in_through_the_oidc_provider(
    browser: sync_api.Browser, service: Service
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1100, "height": 760})
    try:
        page = context.new_page()
        # From the sign-in page: the organization's sign-on id, then the IdP.
        page.goto(f"{service.url}/login")
        page.get_by_label("Sign-on id of your organization").fill("acme-okta")
        page.get_by_role("button", name="Continue").click()
        page.wait_for_url(f"{service.op.issuer}/authorize*")
        page.get_by_label("User name").fill("alice")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{service.url}/tenants/acme")  # via /dashboard
        header = page.locator("header.site")
        assert "alice@acme.test" in header.inner_text()
        assert page.get_by_label("role").inner_text() == "operator"
        assert page.get_by_label("tenant scope").inner_text() == "tenant acme"
        assert "Engineering" in page.inner_text("main")
        page.screenshot(path=str(SCREENSHOTS / "sso-tenant.png"), full_page=True)

        # The session is scoped: another tenant is refused with 403.
        response = page.goto(f"{service.url}/tenants/globex")
        assert response is not None and response.status == 403

        # An operator sees the organization's sign-on page with its provider.
        page.goto(f"{service.url}/tenants/acme/orgs/eng/sso")
        assert "acme-okta" in page.inner_text("main")
        assert BASIC_SECRET not in page.content()
        page.screenshot(path=str(SCREENSHOTS / "sso-registration.png"), full_page=True)
    finally:
        context.close()


def test_a_member_of_no_operator_group_lands_as_a_viewer(
    browser: sync_api.Browser, service: Service
) -> None:
    context = browser.new_context(ignore_https_errors=True)
    try:
        page = context.new_page()
        _sign_in(page, service, "bob")
        assert page.get_by_label("role").inner_text() == "viewer"
        assert page.get_by_role("button", name="Sign out everywhere").count() == 0
    finally:
        context.close()
