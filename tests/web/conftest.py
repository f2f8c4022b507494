"""A record service on a fresh data directory and each storage backend, driven through HTTP
(Litestar's test client)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from recordseal.ops.tokens import create_token
from recordseal.settings import Settings
from recordseal.web.app import create_app


@dataclass
class Api:
    client: TestClient  # type: ignore[type-arg]
    settings: Settings
    headers: dict[str, str]

    @property
    def data_dir(self) -> Path:
        return self.settings.data_dir

    def token_headers(self, tenant: str) -> dict[str, str]:
        token = asyncio.run(create_token(self.settings, tenant, "test"))
        return {"Authorization": f"Bearer {token}"}

    def stream(self, name: str = "orders", **body: Any) -> httpx.Response:
        return self.client.post("/v1/streams", json={"name": name, **body}, headers=self.headers)

    def post(self, payload: Any, *, headers: dict[str, str] | None = None, **envelope: Any):
        body = {
            "stream": "orders",
            "record_type": "order.placed",
            "occurred_at": "2026-11-21T08:00:00Z",
            "subject_id": "customer-1",
            "payload": payload,
            **envelope,
        }
        return self.client.post("/v1/records", json=body, headers=headers or self.headers)

    def post_raw(self, body: bytes) -> httpx.Response:
        return self.client.post(
            "/v1/records",
            content=body,
            headers={**self.headers, "Content-Type": "application/json"},
        )

    def get(self, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.get(path, headers=self.headers if headers is None else headers)


@pytest.fixture
def api(store_settings: Settings) -> Iterator[Api]:
    """The service on each storage backend, with a token of tenant ``acme``."""
    app = create_app(store_settings)
    with TestClient(app) as client:
        token = asyncio.run(create_token(store_settings, "acme", "t"))
        yield Api(client, store_settings, {"Authorization": f"Bearer {token}"})
