"""A stream's records in the panel (``web/panel/stream_records.py``; docs/panel.md, "A stream's
records"): linked from the live view, tenant-scoped, paged by sequence number, JSON or HTML."""

from __future__ import annotations

import re
from typing import Any

from litestar.testing import TestClient

from tests.web.panel.test_live_view import HTML, JSON, client, legacy, scoped, sign_in

__all__ = ["client"]  # the fixture: three records in acme's stream "orders"


def test_a_stream_page_lists_its_records_from_their_headers(client: TestClient[Any]) -> None:
    sign_in(client, scoped(client, "acme", "eng"))
    body = client.get("/tenants/acme/streams/orders", headers=JSON).json()
    assert [r["seq"] for r in body["records"]] == [1, 2, 3]
    assert {r["record_type"] for r in body["records"]} == {"t"}
    assert all(r["seal"] is None and r["kind"] == "record" for r in body["records"])
    assert body["next"] is None
    page = client.get("/tenants/acme/streams/orders", headers=HTML)
    assert page.status_code == 200
    assert "<h1>Stream <code>orders</code></h1>" in page.text
    assert page.text.count("<tr>") == 4  # the head and three records
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time> <small>\(", page.text)
    assert "2026-11-21 08:00:00 UTC" in page.text  # occurred_at, to the second


def test_sealed_records_name_their_log_and_index(client: TestClient[Any]) -> None:
    client.blocking_portal.call(client.app.state.services.sealer.seal_pending)
    sign_in(client, legacy(client))
    body = client.get("/tenants/acme/streams/orders", headers=JSON).json()
    seals = [r["seal"] for r in body["records"]]
    assert all(seal is not None and seal["origin"].endswith("/acme/default") for seal in seals)
    assert "/acme/default</code> #" in client.get("/tenants/acme/streams/orders").text


def test_a_page_starts_where_asked(client: TestClient[Any]) -> None:
    sign_in(client, legacy(client))
    body = client.get("/tenants/acme/streams/orders?from_seq=3", headers=JSON).json()
    assert [r["seq"] for r in body["records"]] == [3]
    assert client.get("/tenants/acme/streams/orders?from_seq=0", headers=JSON).status_code == 400


def test_another_tenants_stream_is_403_and_a_missing_one_404(client: TestClient[Any]) -> None:
    sign_in(client, scoped(client, "globex", "hq"))
    refused = client.get("/tenants/acme/streams/orders", headers=JSON)
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_tenant")
    missing = client.get("/tenants/globex/streams/orders", headers=JSON)
    assert (missing.status_code, missing.json()["code"]) == (404, "stream_not_found")
