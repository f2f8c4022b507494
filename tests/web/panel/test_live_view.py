"""The live view's routes (issue 30, item 2; docs/panel.md, "Live view") in the whole
application: ``/tenants/{id}/live`` for every role of the tenant and legacy sessions, refused
403 ``forbidden_tenant`` for another tenant's id before any lookup and 404 for a missing
tenant; ``/live`` for operator-admin sessions only; JSON with ``Accept: application/json`` and
HTML otherwise, with server-drawn SVG charts under the panel's CSP."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from recordseal.clock import utc_now
from recordseal.ops.tokens import create_token
from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession, Role, TenantSession
from recordseal.settings import from_env
from recordseal.storage.activity import TWO_ROOTS
from recordseal.storage.logs import WitnessNote
from recordseal.web.app import create_app
from tests.panel_support import grant_in

JSON = {"Accept": "application/json"}
HTML = {"Accept": "text/html"}
DAY = "2026-11-21T08:00:00Z"


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient[Any]]:
    seed = tmp_path / "seed.json"
    seed.write_text(
        json.dumps(
            {
                "tenants": [
                    {"id": "acme", "display_name": "Acme Corp", "active": True},
                    {"id": "globex", "display_name": "Globex", "active": True},
                ],
                "organizations": [
                    {"id": "eng", "tenant_id": "acme", "display_name": "Engineering"},
                    {"id": "hq", "tenant_id": "globex", "display_name": "HQ"},
                ],
                "fleets": [],
            }
        )
    )
    monkeypatch.setenv("RECORDSEAL_PANEL_TENANT_SEED", str(seed))
    settings = from_env(data_dir=tmp_path / "data", seal_interval=0, transparency_interval=0)
    with TestClient(create_app(settings)) as test_client:
        token = asyncio.run(create_token(settings, "acme", "t"))
        auth = {"Authorization": f"Bearer {token}"}
        assert (
            test_client.post("/v1/streams", json={"name": "orders"}, headers=auth).status_code
            == 201
        )
        for n in range(3):
            body = {
                "stream": "orders",
                "record_type": "t",
                "occurred_at": DAY,
                "subject_id": "s",
                "payload": {"n": n},
            }
            assert test_client.post("/v1/records", json=body, headers=auth).status_code == 201
        grant_in(test_client, "root")
        yield test_client


def sign_in(client: TestClient[Any], cookie: str) -> None:
    client.cookies.set(COOKIE_NAME, cookie)


def legacy(client: TestClient[Any], user: str = "root") -> str:
    keyring = client.app.state.panel.keyring
    return keyring.issue(LegacySession(user, int(time.time()) + 600))  # type: ignore[no-any-return]


def scoped(client: TestClient[Any], tenant: str, org: str, role: Role = "viewer") -> str:
    keyring = client.app.state.panel.keyring
    session = TenantSession(f"someone@{tenant}.test", tenant, org, int(time.time()) + 600, role)
    return keyring.issue(session)  # type: ignore[no-any-return]


def test_a_tenant_session_sees_its_live_view_as_json_and_html(client: TestClient[Any]) -> None:
    sign_in(client, scoped(client, "acme", "eng"))
    answer = client.get("/tenants/acme/live", headers=JSON)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["tenant_id"] == "acme"
    [stream] = body["streams"]
    assert (stream["name"], stream["record_count"], stream["last_seq"]) == ("orders", 3, 3)
    assert stream["last_ingest_at"] is not None
    assert body["ingest_rate"]["last_hour"] == 3
    assert body["ingest_rate"]["last_minute"] >= 1
    assert len(body["ingest_series"]["values"]) == 60 and sum(body["ingest_series"]["values"]) == 3
    [log] = body["logs"]
    assert log["sealing_lag"]["records"] == 3
    assert body["lag_series"]["values"][-1] == 3
    assert body["tokens"]["count"] == 1 and body["erasures"]["count"] == 0
    assert body["session"]["tenant_id"] == "acme"
    page = client.get("/tenants/acme/live", headers=HTML)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "<svg" in page.text and 'role="img"' in page.text
    assert "<script" not in page.text and "style=" not in page.text
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "style-src 'self';" in policy  # nothing inline
    assert "orders" in page.text
    assert '<meta http-equiv="refresh" content="30">' in page.text  # it stays live, no script


def test_sealing_shows_a_checkpoint_and_clears_the_lag(client: TestClient[Any]) -> None:
    sealer = client.app.state.services.sealer
    client.blocking_portal.call(sealer.seal_pending)
    sign_in(client, legacy(client))
    [log] = client.get("/tenants/acme/live", headers=JSON).json()["logs"]
    assert log["sealing_lag"]["records"] == 0 and log["sealing_lag"]["seconds"] is None
    assert log["checkpoint"]["size"] == 4 and log["checkpoint"]["age_seconds"] is not None


def test_another_tenants_live_view_is_403_before_any_lookup(client: TestClient[Any]) -> None:
    sign_in(client, scoped(client, "globex", "hq", role="operator"))
    metrics = client.app.state.panel.metrics
    before = dict(metrics)
    for tenant in ("acme", "no-such-tenant"):  # the same answer: no oracle of which exist
        refused = client.get(f"/tenants/{tenant}/live", headers=JSON)
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_tenant")
        assert "orders" not in refused.text
    assert metrics["forbidden_cross_tenant"] == before["forbidden_cross_tenant"] + 2
    assert metrics["not_found"] == before["not_found"]  # refused before any lookup
    own = client.get("/tenants/globex/live", headers=JSON)
    assert own.status_code == 200 and own.json()["streams"] == []


def test_a_missing_tenant_is_404_for_a_legacy_session(client: TestClient[Any]) -> None:
    sign_in(client, legacy(client))
    missing = client.get("/tenants/no-such-tenant/live", headers=JSON)
    assert (missing.status_code, missing.json()["code"]) == (404, "tenant_not_found")


def test_without_a_session_the_live_views_are_401(client: TestClient[Any]) -> None:
    for path in ("/tenants/acme/live", "/live"):
        answer = client.get(path, headers=JSON)
        assert (answer.status_code, answer.json()["code"]) == (401, "unauthenticated")


def test_the_service_view_is_for_legacy_sessions_only(client: TestClient[Any]) -> None:
    for role in ("viewer", "operator"):
        sign_in(client, scoped(client, "acme", "eng", role=role))  # type: ignore[arg-type]
        refused = client.get("/live", headers=JSON)
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden_tenant")
        assert "globex" not in refused.text
        page = client.get("/tenants/acme/live", headers=HTML)
        assert 'href="/live"' not in page.text  # no link to a page it may not read
    sign_in(client, legacy(client, "someone-without-a-passkey"))  # a legacy viewer reads it
    viewer = client.get("/live", headers=JSON)
    assert viewer.status_code == 200 and viewer.json()["session"]["role"] == "viewer"
    sign_in(client, legacy(client))
    answer = client.get("/live", headers=JSON)
    assert answer.status_code == 200, answer.text
    tenants = {t["tenant_id"]: t for t in answer.json()["tenants"]}
    assert set(tenants) == {"acme", "globex"}
    assert (tenants["acme"]["records"], tenants["acme"]["unsealed"]) == (3, 3)
    assert tenants["acme"]["ingested_last_hour"] == 3
    assert answer.json()["totals"]["records"] == 3
    page = client.get("/live", headers=HTML)
    assert page.status_code == 200 and 'href="/tenants/acme/live"' in page.text
    assert 'href="/live"' in page.text


def test_a_witness_holding_two_roots_is_shown_prominently(client: TestClient[Any]) -> None:
    sealer = client.app.state.services.sealer
    client.blocking_portal.call(sealer.seal_pending)
    store = client.app.state.services.store
    [origin] = [o for o in client.blocking_portal.call(store.logs.log_origins) if "acme" in o]
    note = WitnessNote(failures=4, code="witness_refused", reason=TWO_ROOTS)
    client.blocking_portal.call(store.logs.note_witness, origin, "demo-witness", utc_now(), note)
    sign_in(client, legacy(client))
    body = client.get("/tenants/acme/live", headers=JSON).json()
    assert body["two_roots"] == [{"origin": origin, "witness": "demo-witness"}]
    [witness] = body["logs"][0]["witnesses"]
    assert (witness["failing"], witness["failures"], witness["two_roots"]) == (True, 4, True)
    page = client.get("/tenants/acme/live", headers=HTML).text
    alert = page.index('role="alert"')
    assert "witness.two_roots" in page[alert : alert + 400]
    service = client.get("/live", headers=JSON).json()
    assert service["totals"]["two_roots"] == 1


def test_the_live_views_show_numbers_for_people(client: TestClient[Any]) -> None:
    """Rates with their unit, times to the second with their age, each stream a link to its
    records (the JSON keeps the raw values)."""
    sign_in(client, legacy(client))
    page = client.get("/tenants/acme/live", headers=HTML).text
    assert re.search(r'id="rate-minute">[\d.,]+ <small class="unit">records/min</small>', page)
    assert " records/s</small>" in page
    assert 'id="rate-hour">3</span><small>records, 0.1 records/min on average' in page
    assert '<a href="/tenants/acme/streams/orders"><code>orders</code></a>' in page
    assert re.search(r"<time datetime=\"[^\"]+\">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC</time>"
                     r" <small>\(\d+ s ago\)</small>", page)  # fmt: skip
    shown = re.sub(r'datetime="[^"]*"', "", page)
    assert not re.search(r"\d\d:\d\d:\d\d\.\d+", shown), "no microseconds on the page"
    service = client.get("/live", headers=HTML).text
    assert 'id="total-hour">3</span><small>records, 0.1 records/min on average' in service
    assert " s ago)</small>" in service


def test_the_tenant_list_shows_streams_records_and_last_ingest(client: TestClient[Any]) -> None:
    sign_in(client, legacy(client))
    page = client.get("/tenants", headers=HTML).text
    acme = page.split("<code>acme</code>", 1)[1].split("</tr>", 1)[0]
    numbers = re.findall(r'<td class="number">([^<]*)</td>', acme)
    assert numbers == ["1", "3"], acme  # one stream, three records
    assert " s ago)</small>" in acme
    globex = page.split("<code>globex</code>", 1)[1].split("</tr>", 1)[0]
    assert re.findall(r'<td class="number">([^<]*)</td>', globex) == ["0", "0"], globex
    assert "<td>—</td>" in globex  # never ingested
