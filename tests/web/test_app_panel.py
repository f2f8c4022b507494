"""The panel is part of the record service's application (create_app)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from litestar.testing import TestClient

from recordseal.panel.bootstrap import BootstrapError
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession
from recordseal.settings import from_env
from recordseal.web.app import create_app
from tests.panel_support import grant_in


@pytest.fixture
def seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [
                    {"id": "acme", "display_name": "Acme Corp", "active": True},
                    {"id": "frozen", "display_name": "Frozen Ltd", "active": False},
                ],
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
    with TestClient(create_app(from_env(data_dir=seeded / "data", seal_interval=0))) as client:
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


def test_operators_create_and_revoke_api_tokens_from_the_panel(seeded: Path):
    with TestClient(create_app(from_env(data_dir=seeded / "data", seal_interval=0))) as client:
        panel = client.app.state.panel
        grant_in(client, "op")
        operator = panel.keyring.issue(LegacySession("op", int(time.time()) + 600))
        viewer = panel.keyring.issue(LegacySession("someone", int(time.time()) + 600))
        json_headers = {"Accept": "application/json"}

        client.cookies.set(COOKIE_NAME, viewer)
        csrf = client.get("/tenants/acme/tokens", headers=json_headers).json()["session"][
            "csrf_token"
        ]
        refused = client.post(
            "/tenants/acme/tokens",
            json={"label": "x"},
            headers={**json_headers, "X-CSRF-Token": csrf},
        )
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_role")

        client.cookies.set(COOKIE_NAME, operator)
        csrf = client.get("/tenants/acme/tokens", headers=json_headers).json()["session"][
            "csrf_token"
        ]
        no_csrf = client.post("/tenants/acme/tokens", json={"label": "ci"}, headers=json_headers)
        assert no_csrf.status_code == 403
        created = client.post(
            "/tenants/acme/tokens",
            json={"label": "ci"},
            headers={**json_headers, "X-CSRF-Token": csrf},
        )
        assert created.status_code == 201, created.text
        token = created.json()["new_token"]
        (listed,) = created.json()["tokens"]
        assert listed["label"] == "ci" and listed["revoked_at"] is None
        assert token not in client.get("/tenants/acme/tokens", headers=json_headers).text

        api = {"Authorization": f"Bearer {token}"}
        assert client.post("/v1/streams", json={"name": "s"}, headers=api).status_code == 201
        revoked = client.post(
            f"/tenants/acme/tokens/{listed['token_id']}/revoke",
            headers={**json_headers, "X-CSRF-Token": csrf},
        )
        assert revoked.status_code == 200
        assert revoked.json()["tokens"][0]["revoked_at"] is not None
        assert client.post("/v1/streams", json={"name": "t"}, headers=api).status_code == 401
        again = client.post(
            f"/tenants/acme/tokens/{listed['token_id']}/revoke",
            headers={**json_headers, "X-CSRF-Token": csrf},
        )
        assert again.status_code == 404


def test_a_frozen_tenant_gets_no_new_api_token(seeded: Path):
    with TestClient(create_app(from_env(data_dir=seeded / "data", seal_interval=0))) as client:
        panel = client.app.state.panel
        grant_in(client, "op")
        client.cookies.set(
            COOKIE_NAME, panel.keyring.issue(LegacySession("op", int(time.time()) + 600))
        )
        json_headers = {"Accept": "application/json"}
        page = client.get("/tenants/frozen/tokens", headers=json_headers)
        assert page.status_code == 200 and page.json()["tokens"] == []
        refused = client.post(
            "/tenants/frozen/tokens",
            json={"label": "ci"},
            headers={**json_headers, "X-CSRF-Token": page.json()["session"]["csrf_token"]},
        )
        assert (refused.status_code, refused.json()["code"]) == (409, "tenant_inactive")
        assert client.get("/tenants/frozen/tokens", headers=json_headers).json()["tokens"] == []


def test_a_dangling_organization_in_the_seed_aborts_startup_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [{"id": "acme", "display_name": "Acme", "active": True}],
                "organizations": [{"id": "lost", "tenant_id": "nobody", "display_name": "Lost"}],
                "fleets": [],
            }
        )
    )
    monkeypatch.setenv("RECORDSEAL_PANEL_TENANT_SEED", str(seed))
    with pytest.raises(BootstrapError, match="nobody"):
        create_app(from_env(data_dir=tmp_path / "data", seal_interval=0))
