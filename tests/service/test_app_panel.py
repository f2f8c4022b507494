"""The panel is part of the record service's application (create_app)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession
from recordseal.settings import Settings
from recordseal.web.app import create_app


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [{"id": "acme", "display_name": "Acme Corp", "active": True}],
                "organizations": [
                    {"id": "prod", "tenant_id": "acme", "display_name": "Production"}
                ],
                "fleets": [{"fleet_id": "f1", "organization_id": "prod", "tenant_id": "acme"}],
            }
        )
    )
    monkeypatch.setenv("RECORDSEAL_PANEL_TENANT_SEED", str(seed))
    return tmp_path


def test_panel_routes_are_served_by_the_app(seeded: Path):
    with TestClient(create_app(Settings(data_dir=seeded / "data", seal_interval=0))) as client:
        api = client.get("/tenants", headers={"Accept": "application/json"})
        assert (api.status_code, api.json()["code"]) == (401, "unauthenticated")
        browser = client.get("/tenants", headers={"Accept": "text/html"}, follow_redirects=False)
        assert (browser.status_code, browser.headers["location"]) == (303, "/login")

        keyring = client.app.state.panel.keyring
        cookie = keyring.issue(LegacySession("operator-1", int(time.time()) + 600))
        client.cookies.set(COOKIE_NAME, cookie)
        listing = client.get("/tenants", headers={"Accept": "application/json"})
        assert listing.status_code == 200
        assert "acme" in listing.text
        page = client.get("/tenants/acme", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "Production" in page.text
