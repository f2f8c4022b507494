"""Passkey sign-in in a real browser: Debian's Chromium, Playwright, a CDP virtual authenticator.

Granian serves the service (``recordseal.web.asgi:app``) with two worker processes on
127.0.0.1, as ``make run`` does; the browser goes to ``http://localhost:<port>`` because
WebAuthn needs a secure context and ``localhost`` is one. The registration link comes from
``recordseal panel link``, as an operator gets it. The virtual authenticator (CTAP2,
internal, resident keys, user verification) answers the ceremonies without a person.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright import sync_api

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import TenantSession
from tests.servers import asgi_server, chromium, screenshot_dir, virtual_authenticator

SCREENSHOTS = screenshot_dir()
SEED = {
    "tenants": [
        {"id": "acme", "display_name": "Acme Corp", "contact_email": "ops@acme.test"},
        {"id": "globex", "display_name": "Globex", "active": True},
    ],
    "organizations": [
        {"id": "eng", "tenant_id": "acme", "display_name": "Engineering"},
        {"id": "hq", "tenant_id": "globex", "display_name": "Globex HQ"},
    ],
    "fleets": [],
}


class Server:
    def __init__(self, url: str, data_dir: Path) -> None:
        self.url = url
        self.data_dir = data_dir


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("passkeys")
    seed = folder / "seed.json"
    seed.write_text(json.dumps(SEED))
    data_dir = folder / "data"
    environment = {
        **os.environ,
        "RECORDSEAL_DATA_DIR": str(data_dir),
        "RECORDSEAL_PANEL_TENANT_SEED": str(seed),
        "RECORDSEAL_SEAL_INTERVAL": "0",
    }
    for name in ("RECORDSEAL_PANEL_RP_ID", "RECORDSEAL_PANEL_ORIGINS"):
        environment.pop(name, None)
    with asgi_server("recordseal.web.asgi:app", "/login", environment) as port:
        url = f"http://localhost:{port}"
        yield Server(url, data_dir)


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def panel_link(server: Server, url: str) -> str:
    """``recordseal panel link``: the link, from the last line of its output."""
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "panel", "link", "--data-dir",
         str(server.data_dir), "--base-url", url],
        capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != "RECORDSEAL_DATABASE_URL"},
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def _session_cookie(context: sync_api.BrowserContext) -> str | None:
    for cookie in context.cookies():
        if cookie["name"] == COOKIE_NAME and cookie["value"]:
            return cookie["value"]
    return None


def _set_session_cookie(page: sync_api.Page, url: str, token: str) -> None:
    """Sets the session cookie from a page of the panel's origin (a ``__Host-`` cookie may
    carry no Domain, which CDP's cookie API always sets); ``/login`` needs no session."""
    if not page.url.startswith(url):
        page.goto(f"{url}/login")
    page.evaluate(
        "([name, value]) => {"
        " document.cookie = `${name}=${value}; Path=/; Secure; SameSite=Lax`; }",
        [COOKIE_NAME, token],
    )


def test_register_sign_in_scope_and_sign_out_everywhere(
    browser: sync_api.Browser, server: Server
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    url = server.url
    link = panel_link(server, url)
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    scoped = browser.new_context(viewport={"width": 1100, "height": 760})
    try:
        page = context.new_page()
        virtual_authenticator(context, page)

        # 1. The one-time link registers a passkey and signs the new operator in.
        page.goto(link)
        page.get_by_role("button", name="Create a passkey").click()
        page.wait_for_url(f"{url}/tenants")
        header = page.locator("header.site")
        assert "Signed in as" in header.inner_text()
        assert page.get_by_label("role").inner_text() == "operator"

        # The link is single use.
        assert httpx.get(link.replace("localhost", "127.0.0.1")).status_code == 410

        # 2. Sign out, then sign in again with the passkey.
        page.get_by_role("button", name="Sign out", exact=True).click()
        page.wait_for_url(f"{url}/login")
        assert _session_cookie(context) is None
        page.screenshot(path=str(SCREENSHOTS / "login.png"))
        page.get_by_role("button", name="Sign in with a passkey").click()
        page.wait_for_url(f"{url}/tenants")

        # 3. A legacy (passkey) session sees every tenant.
        rows = page.locator("table tbody tr")
        assert rows.count() == 2
        assert "Acme Corp" in rows.nth(0).inner_text()
        assert "Globex" in rows.nth(1).inner_text()
        page.screenshot(path=str(SCREENSHOTS / "tenants.png"), full_page=True)
        page.get_by_role("link", name="Acme Corp").click()
        page.wait_for_url(f"{url}/tenants/acme")
        assert "Engineering" in page.inner_text("main")
        page.screenshot(path=str(SCREENSHOTS / "tenant.png"), full_page=True)
        operator_cookie = _session_cookie(context)
        assert operator_cookie is not None

        # 4. A tenant-scoped session for acme is refused globex with 403.
        key = (server.data_dir / "keys" / "panel-cookie.key").read_bytes()
        keyring = CookieKeyring(SigningKey("panel-1", key))
        token = keyring.issue(
            TenantSession("alice@acme.test", "acme", "eng", int(time.time()) + 3600, "viewer")
        )
        scoped_page = scoped.new_page()
        _set_session_cookie(scoped_page, url, token)
        response = scoped_page.goto(f"{url}/tenants/globex")
        assert response is not None and response.status == 403
        assert "403" in scoped_page.inner_text("main")
        scoped_page.screenshot(path=str(SCREENSHOTS / "forbidden.png"), full_page=True)
        response = scoped_page.goto(f"{url}/tenants/acme")
        assert response is not None and response.status == 200

        # 5. Sign out everywhere (operator passkey user): every earlier cookie stops working.
        page.get_by_role("button", name="Sign out everywhere").click()
        page.wait_for_url(f"{url}/login")
        _set_session_cookie(page, url, operator_cookie)
        page.goto(f"{url}/tenants")
        assert page.url == f"{url}/login"
        scoped_page.goto(f"{url}/tenants/acme")
        assert scoped_page.url == f"{url}/login"

        # 6. The passkey still signs in afterwards, with a fresh cookie.
        page.get_by_role("button", name="Sign in with a passkey").click()
        page.wait_for_url(f"{url}/tenants")
        assert page.locator("table tbody tr").count() == 2
    finally:
        scoped.close()
        context.close()
