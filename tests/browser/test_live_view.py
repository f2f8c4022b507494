"""The live view in a real browser (Debian's Chromium, Playwright, a CDP virtual
authenticator), against ``recordseal serve`` sealing as it does by default: an operator signs
in with a passkey, a tenant ingests records in two rounds, and the operator reads the tenant's
live view (figures, the two server-drawn charts, the log with its checkpoint, the streams)
and the service-wide view, with no Content-Security-Policy violation reported by the browser.

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


def record(n: int) -> dict[str, object]:
    return {
        "stream": "orders" if n % 3 else "refunds",
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": f"customer-{n % 5}",
        "payload": {"amount": 100 + n},
    }


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    data_dir = tmp_path_factory.mktemp("live") / "data"
    data_dir.mkdir()
    port = free_port()
    server = start_service(data_dir, port, env={"RECORDSEAL_SEAL_INTERVAL": "1"})
    try:
        yield data_dir, port
    finally:
        kill_service(server)


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with chromium() as launched:
        yield launched


def _eventually(check: Callable[[], bool], seconds: float = 120) -> bool:
    """Wait for the event ``check`` tests; the bound only keeps a broken run from hanging."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def test_an_operator_reads_the_live_views_of_a_tenant_and_of_the_service(
    browser: sync_api.Browser, service: tuple[Path, int]
) -> None:
    data_dir, port = service
    url, api = f"http://localhost:{port}", f"http://127.0.0.1:{port}"
    shots = screenshot_dir()
    auth = {"Authorization": f"Bearer {create_token(data_dir, 'acme')}"}
    create_token(data_dir, "globex")
    for name in ("orders", "refunds"):
        made = httpx.post(f"{api}/v1/streams", json={"name": name}, headers=auth, timeout=30)
        assert made.status_code == 201, made.text
    for n in range(12):
        posted = httpx.post(f"{api}/v1/records", json=record(n), headers=auth, timeout=30)
        assert posted.status_code == 201, posted.text

    context = browser.new_context(viewport={"width": 1200, "height": 900})
    violations: list[str] = []
    try:
        page = context.new_page()
        page.on(
            "console",
            lambda message: (
                violations.append(message.text)
                if "Content Security Policy" in message.text
                else None
            ),
        )
        virtual_authenticator(context, page)
        page.goto(f"{url}/login")
        command = page.locator("#first-link-command").inner_text()
        printed = subprocess.run(
            shlex.split(command), capture_output=True, text=True, env=ENV, check=False, timeout=120
        )
        assert printed.returncode == 0, printed.stderr
        page.goto(printed.stdout.strip().splitlines()[-1])
        page.get_by_role("button", name="Create a passkey").click()
        page.wait_for_url(f"{url}/tenants")

        # The tenant page links to its live view; the sealer has sealed the first round.
        page.get_by_role("link", name="acme").click()
        page.wait_for_url(f"{url}/tenants/acme")
        page.get_by_role("link", name="Live view").click()
        page.wait_for_url(f"{url}/tenants/acme/live")

        def sealed() -> bool:
            body = page.request.get(
                f"{url}/tenants/acme/live", headers={"Accept": "application/json"}
            ).json()
            return bool(body["logs"]) and body["logs"][0]["checkpoint"]["size"] == 13

        assert _eventually(sealed)
        for n in range(12, 20):  # a second round
            posted = httpx.post(f"{api}/v1/records", json=record(n), headers=auth, timeout=30)
            assert posted.status_code == 201, posted.text
        page.reload()
        main = page.locator("main")
        assert page.get_by_role("heading", level=1).inner_text() == "acme: live"
        assert page.locator("#rate-hour").inner_text() == "20"
        charts = page.locator("svg.chart")
        assert charts.count() == 2
        assert "Records ingested" in (charts.first.get_attribute("aria-label") or "")
        bars = page.locator("svg.chart.ingest rect.bar")
        assert bars.count() == 60
        assert bars.last.bounding_box()["height"] > 0  # type: ignore[index]
        streams = page.get_by_role("table").last
        assert "orders" in streams.inner_text() and "refunds" in streams.inner_text()
        assert "fleet default" in main.inner_text()
        assert "witness.two_roots" not in main.inner_text()
        page.screenshot(path=str(shots / "live-tenant.png"), full_page=True)

        # The service view: both tenants, acme's figures, a link to its view.
        page.get_by_role("link", name="Live", exact=True).click()
        page.wait_for_url(f"{url}/live")
        rows = page.locator("table tbody tr")
        assert rows.count() == 2
        assert "globex" in rows.nth(1).inner_text()
        assert "20" in rows.nth(0).inner_text()
        page.screenshot(path=str(shots / "live-service.png"), full_page=True)
        page.get_by_role("link", name="acme").first.click()
        page.wait_for_url(f"{url}/tenants/acme/live")
        assert violations == []
    finally:
        context.close()
