"""An operator's first hour with the panel in a real browser (Debian's Chromium, Playwright,
a CDP virtual authenticator), against ``recordseal serve`` with two workers as ``make run``
starts it, on a port that is not 8000:

1. the README's quick start has made a token, a stream and a record for tenant ``acme``;
2. the sign-in page of the new install names the command of the first link; typed as shown,
   it prints a link to this port, which registers the first operator's passkey;
3. ``acme`` is on the tenant list (no "No tenants yet");
4. the operator creates a tenant and an organization with the panel's forms, and a refused
   form says which field breaks which rule;
5. the operator freezes ``acme`` and the record API refuses its records through every worker.

Screenshots go to ``docs/screenshots`` under ``make screenshots`` (tests/servers.py).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright import sync_api

from tests.servers import (
    chromium,
    create_token,
    free_port,
    kill_service,
    screenshot_dir,
    start_service,
    virtual_authenticator,
)

ENV = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-17",
    "payload": {"amount": 1500},
}


class Service:
    def __init__(self, data_dir: Path, port: int) -> None:
        self.data_dir = data_dir
        self.port = port
        self.url = f"http://localhost:{port}"
        self.api = f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir = tmp_path_factory.mktemp("tenants") / "data"
    data_dir.mkdir()
    port = free_port()
    server = start_service(data_dir, port, workers=2, env={"RECORDSEAL_SEAL_INTERVAL": "0"})
    try:
        yield Service(data_dir, port)
    finally:
        kill_service(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def _eventually(check: Callable[[], bool], seconds: float = 60) -> bool:
    """Wait for the event ``check`` tests; the bound only keeps a broken run from hanging."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_an_operator_creates_tenants_and_freezes_one_from_the_panel(
    browser: sync_api.Browser, service: Service
) -> None:
    shots = screenshot_dir()
    # 1. The quick start: a token for acme, a stream, a record.
    token = create_token(service.data_dir, "acme")
    api = {"Authorization": f"Bearer {token}"}
    made = httpx.post(f"{service.api}/v1/streams", json={"name": "orders"}, headers=api, timeout=30)
    assert made.status_code == 201, made.text
    assert (
        httpx.post(f"{service.api}/v1/records", json=RECORD, headers=api, timeout=30).status_code
        == 201
    )

    context = browser.new_context(viewport={"width": 1100, "height": 800})
    try:
        page = context.new_page()
        virtual_authenticator(context, page)

        # 2. The sign-in page names the command; its link registers the first passkey.
        page.goto(f"{service.url}/login")
        assert "No operator has a passkey yet" in page.inner_text("main")
        command = page.locator("#first-link-command").inner_text()
        page.screenshot(path=str(shots / "login-first-link.png"), full_page=True)
        printed = subprocess.run(
            shlex.split(command), capture_output=True, text=True, env=ENV, check=False, timeout=120
        )
        assert printed.returncode == 0, printed.stderr
        link = printed.stdout.strip().splitlines()[-1]
        assert link.startswith(f"{service.url}/login/register?token=")
        page.goto(link)
        page.get_by_role("button", name="Create a passkey").click()
        page.wait_for_url(f"{service.url}/tenants")

        # 3. The tenant of the quick start is there.
        main = page.locator("main")
        assert "No tenants yet" not in main.inner_text()
        assert page.locator("table tbody tr").count() == 1
        assert page.get_by_role("link", name="acme").is_visible()

        # 4. A refused form names the field and its rule; then a tenant is made.
        page.get_by_label("Id").fill("initech")
        page.get_by_label("Display name").fill("Initech Corp")
        page.get_by_label("Contact e-mail (optional)").fill("ops@initech.test")
        page.get_by_label("Display name").evaluate("input => { input.value = '   ' }")
        page.get_by_role("button", name="Create tenant").click()
        alert = page.get_by_role("alert")
        assert "display_name" in alert.inner_text() and "not only spaces" in alert.inner_text()
        assert page.get_by_label("Id").input_value() == "initech"  # kept for a second try
        page.get_by_label("Display name").fill("Initech Corp")
        page.get_by_role("button", name="Create tenant").click()
        page.wait_for_url(f"{service.url}/tenants/initech")
        assert page.get_by_role("heading", level=1).inner_text() == "Initech Corp"
        assert "ops@initech.test" in main.inner_text()
        page.get_by_label("Id").fill("eng")
        page.get_by_label("Display name").fill("Engineering")
        page.get_by_role("button", name="Create organization").click()
        page.wait_for_url(f"{service.url}/tenants/initech")
        assert page.get_by_role("link", name="Engineering").is_visible()
        page.screenshot(path=str(shots / "tenant-admin.png"), full_page=True)
        page.get_by_role("link", name="Tenants", exact=True).first.click()
        page.wait_for_url(f"{service.url}/tenants")
        assert page.locator("table tbody tr").count() == 2
        page.screenshot(path=str(shots / "tenants-admin.png"), full_page=True)

        # 5. Freezing acme: its page says so, and every worker refuses its records.
        page.get_by_role("link", name="acme").click()
        page.wait_for_url(f"{service.url}/tenants/acme")
        page.get_by_role("button", name="Freeze (read-only)").click()
        page.wait_for_url(f"{service.url}/tenants/acme")
        assert "frozen (read-only)" in main.inner_text()
        assert page.get_by_role("button", name="Unfreeze").is_visible()

        def refused() -> bool:
            answer = httpx.post(f"{service.api}/v1/records", json=RECORD, headers=api, timeout=30)
            return answer.status_code == 409 and answer.json()["code"] == "tenant_inactive"

        assert _eventually(refused)
        # Each request on a new connection: both workers refuse (each within its cache time).
        assert _eventually(lambda: all(refused() for _ in range(8)))
        page.get_by_role("button", name="Unfreeze").click()
        page.wait_for_url(f"{service.url}/tenants/acme")
        assert _eventually(lambda: not refused())
    finally:
        context.close()
