"""A frozen tenant (``active`` false) is read-only (spec panel 2.1; docs/panel.md, "Freezing a
tenant"), on both backends: no new stream, record or API token (409 ``tenant_inactive``, and
nothing stored), while its records, payloads and disclosures are still read, a retry of a
record stored before the freeze still gets its first answer, and erasure still works. A freeze
through the panel holds at once in its process; one made elsewhere (the command line, another
process) within the cache time."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from recordseal.panel.cookies import COOKIE_NAME
from recordseal.panel.sessions import LegacySession
from recordseal.services.errors import Frozen
from recordseal.services.tokens import TokenService
from recordseal.storage.backends import open_store
from tests.backends import count
from tests.panel_support import grant_in
from tests.web.conftest import Api

RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 5},
}


def _panel(api: Api) -> dict[str, str]:
    """JSON headers of an operator-admin's panel session, with its CSRF token."""
    grant_in(api.client, "op")
    cookie = api.client.app.state.panel.keyring.issue(LegacySession("op", int(time.time()) + 600))
    headers = {"Accept": "application/json", "Cookie": f"{COOKIE_NAME}={cookie}"}
    csrf = api.client.get("/tenants", headers=headers).json()["session"]["csrf_token"]
    return {**headers, "X-CSRF-Token": csrf}


def _refused(answer: httpx.Response) -> None:
    assert answer.status_code == 409, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["code"] == "tenant_inactive"
    assert "frozen read-only" in answer.json()["detail"]


def test_a_frozen_tenant_is_read_only(api: Api) -> None:
    assert api.stream().status_code == 201
    retried = {**api.headers, "Idempotency-Key": "order-1"}
    first = api.post({"amount": 5}, headers=retried)
    assert first.status_code == 201
    record_id = first.json()["record_id"]
    panel = _panel(api)

    frozen = api.client.post("/tenants/acme/freeze", headers=panel)
    assert frozen.status_code == 200, frozen.text
    assert (frozen.json()["tenant"]["active"], frozen.json()["changed"]) == (False, True)
    stored = (count(api.settings, "records"), count(api.settings, "streams"))

    _refused(api.stream("returns"))
    _refused(api.post({"amount": 6}))
    batch = api.client.post(
        "/v1/records:batch", json={"records": [RECORD, RECORD]}, headers=api.headers
    )
    assert batch.status_code == 200
    assert batch.json()["accepted"] == 0
    assert [r["problem"]["code"] for r in batch.json()["results"]] == ["tenant_inactive"] * 2
    tokens = api.client.post("/tenants/acme/tokens", json={"label": "x"}, headers=panel)
    assert (tokens.status_code, tokens.json()["code"]) == (409, "tenant_inactive")
    with pytest.raises(Frozen):
        api.client.blocking_portal.call(_token, api, "acme")
    assert (count(api.settings, "records"), count(api.settings, "streams")) == stored
    assert count(api.settings, "tokens") == 1  # the fixture's

    # What is there is still read, and a retry of a stored record gets its first answer.
    again = api.post({"amount": 5}, headers=retried)
    assert again.status_code == 201 and again.json()["replayed"] is True
    assert again.json()["record_id"] == record_id
    assert api.get(f"/v1/records/{record_id}").status_code == 200
    assert api.get(f"/v1/records/{record_id}/payload").status_code == 200
    disclosed = api.client.post(
        f"/v1/records/{record_id}/disclosure", json={"fields": ["o:/amount"]}, headers=api.headers
    )
    assert disclosed.status_code == 200
    # Erasure only takes data away, a duty a freeze does not suspend.
    assert api.client.post("/v1/subjects/customer-1/erase", headers=api.headers).status_code == 200

    thawed = api.client.post("/tenants/acme/unfreeze", headers=panel)
    assert thawed.json()["tenant"]["active"] is True
    assert api.stream("returns").status_code == 201
    assert api.post({"amount": 7}, subject_id="customer-2").status_code == 201


def test_other_tenants_are_not_frozen_with_it(api: Api) -> None:
    globex = api.token_headers("globex")
    assert api.client.post("/tenants/acme/freeze", headers=_panel(api)).status_code == 200
    _refused(api.stream())
    answer = api.client.post("/v1/streams", json={"name": "orders"}, headers=globex)
    assert answer.status_code == 201


def test_a_freeze_made_elsewhere_holds_within_the_cache_time(api: Api) -> None:
    """As ``recordseal tenant freeze`` does it: another store on the same database."""
    assert api.stream().status_code == 201
    assert api.post({"amount": 1}).status_code == 201

    async def set_active(active: bool) -> None:
        store = open_store(api.settings)
        await store.open()
        try:
            await store.hierarchy.set_tenant_active("acme", active)
        finally:
            await store.close()

    asyncio.run(set_active(False))
    assert _eventually(lambda: api.post({"amount": 2}).status_code == 409)
    asyncio.run(set_active(True))
    assert _eventually(lambda: api.post({"amount": 3}).status_code == 201)


def _eventually(check: Any, seconds: float = 60) -> bool:
    """Wait for the event ``check`` tests (the cache is 1 s; the bound is generous)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


async def _token(api: Api, tenant: str) -> str:
    tokens: TokenService = api.client.app.state.services.tokens
    return await tokens.create(tenant, "refused")


def test_a_frozen_tenants_batch_is_refused_record_by_record_in_the_reads_order(api: Api) -> None:
    """Each record of a batch to a frozen tenant in the order ingest refuses (docs/records.md,
    "The ingest pipeline"): a record whose shape the read refuses keeps its 400; a retried
    record gets its first answer; every other record, whatever its stream or envelope, is
    refused 409 ``tenant_inactive`` before either is looked at; nothing is stored."""
    assert api.stream().status_code == 201
    keyed = {**api.headers, "Idempotency-Key": "batch-1"}
    first = api.client.post("/v1/records:batch", json={"records": [RECORD]}, headers=keyed)
    assert first.json()["accepted"] == 1
    assert api.client.post("/tenants/acme/freeze", headers=_panel(api)).status_code == 200
    stored = count(api.settings, "records"), count(api.settings, "subjects")

    shapeless = {k: v for k, v in RECORD.items() if k != "stream"}
    unknown = {**RECORD, "stream": "nowhere"}
    bad_type = {**RECORD, "record_type": ""}
    new = {**RECORD, "subject_id": "customer-9"}
    batch = [RECORD, shapeless, unknown, bad_type, new]
    answer = api.client.post("/v1/records:batch", json={"records": batch}, headers=keyed)
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert results[0]["status"] == 201 and results[0]["record"]["replayed"] is True
    assert results[0]["record"]["record_id"] == first.json()["results"][0]["record"]["record_id"]
    assert (results[1]["status"], results[1]["problem"]["code"]) == (400, "request_invalid")
    for result in results[2:]:
        assert (result["status"], result["problem"]["code"]) == (409, "tenant_inactive")
    assert (count(api.settings, "records"), count(api.settings, "subjects")) == stored
