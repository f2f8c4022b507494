"""``GET /readyz``: 200 once keys are loaded and the store answers, 503 naming what is not."""

from __future__ import annotations

import msgspec
from litestar.testing import TestClient

from recordseal.settings import Settings
from recordseal.web.app import create_app


def test_ready_then_not_once_the_store_is_gone(store_settings: Settings) -> None:
    app = create_app(
        msgspec.structs.replace(store_settings, seal_interval=0, transparency_interval=0)
    )
    with TestClient(app) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"status": "ready", "checks": {"keys": "ok", "store": "ok"}}
        assert client.get("/health").json() == {"status": "ok"}
        client.blocking_portal.call(app.state.services.store.close)  # the database goes away
        gone = client.get("/readyz")
        assert gone.status_code == 503
        assert gone.headers["content-type"] == "application/problem+json"
        assert gone.json()["code"] == "not_ready"
        assert gone.json()["detail"].startswith("store:")
        assert client.get("/health").status_code == 200  # alive, not ready
