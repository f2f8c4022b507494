"""The migration that leads every key of tenant data with the tenant (SQLite 15, PostgreSQL
13; docs/records.md, "Distributing by tenant"): a store of the version before, holding
sealed records, a log, signed checkpoints, idempotency keys and a legacy fleet's log of no
tenant (and the deployment's aggregate log, of no tenant too, with its entries), is upgraded
in place; every record reads back the same, its disclosure verifies
against the same checkpoint, a retried request is answered from its idempotency key, and
the log grows on from where it was."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
from litestar.testing import TestClient

from recordseal.ops.tokens import create_token
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.requests import SealRequest
from recordseal.storage.sqlite import schema as sqlite_schema
from recordseal.verify import INCOMPLETE
from recordseal.web.app import create_app
from tests.backends import query
from tests.storage.schema_support import take_back

ORIGIN = "test.recordseal"
JSON = {"Content-Type": "application/json"}


def _latest(settings: Settings) -> int:
    return len(postgres_schema.MIGRATIONS if settings.database_url else sqlite_schema.MIGRATIONS)


def _record(i: int) -> dict[str, Any]:
    return {
        "stream": "orders",
        "record_type": "order",
        "subject_id": f"c{i}",
        "occurred_at": "2026-11-21T08:00:00Z",
        "payload": {"amount": 100 + i, "note": f"n{i}"},
    }


def _sealed(client: TestClient, headers: dict[str, str], record_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        record: dict[str, Any] = client.get(f"/v1/records/{record_id}", headers=headers).json()
        if record["seal"] is not None:
            return record
        assert time.monotonic() < deadline, "never sealed"
        time.sleep(0.05)


def _disclose(client: TestClient, headers: dict[str, str], record_id: str) -> httpx.Response:
    response = client.post(
        f"/v1/records/{record_id}/disclosure", headers=headers, json={"fields": ["o:/amount"]}
    )
    assert response.status_code == 200, response.text
    return response


def _verdict(client: TestClient, bundle: bytes) -> Any:
    """The service's verification of ``bundle``, whose every check a store answers passed:
    field commitments, record tree, header signature, sealed batch (the proof from the log's
    nodes to a signed checkpoint) and sequence continuity. With no witness configured the
    receipts, and so the verdict, stay incomplete."""
    answer = client.post("/v1/verify", content=bundle, headers=JSON)
    assert answer.status_code == 200, answer.text
    checks = {check["number"]: check["status"] for check in answer.json()["checks"]}
    assert [checks[n] for n in (1, 2, 3, 4, 6)] == ["passed"] * 5, answer.text
    assert answer.json()["verdict"] == INCOMPLETE
    return answer.json()


async def _legacy_log(settings: Settings) -> None:
    """A fleet's log of no tenant, sealed once (docs/fleets.md, legacy fleets)."""
    store = open_store(settings)
    await store.open()
    try:
        sealed = await store.logs.seal(
            SealRequest(
                None, "legacy", f"{ORIGIN}/legacy", b"g" * 32, lambda size, root: "note", "now"
            )
        )
        assert sealed is not None and sealed.size == 1
    finally:
        await store.close()


def test_a_store_of_the_version_before_is_upgraded_with_its_rows(store_settings: Settings):
    settings = Settings(
        data_dir=store_settings.data_dir,
        database_url=store_settings.database_url,
        origin=ORIGIN,
        seal_interval=0.05,
    )
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"}
        created = client.post(
            "/v1/streams",
            json={"name": "orders", "declarations": {"o:/amount": "money"}},
            headers=headers,
        )
        assert created.status_code == 201, created.text
        posted = [
            client.post(
                "/v1/records", json=_record(i), headers={**headers, "Idempotency-Key": f"k{i}"}
            )
            for i in range(3)
        ]
        assert [p.status_code for p in posted] == [201] * 3, [p.text for p in posted]
        ids = [p.json()["record_id"] for p in posted]
        before = [_sealed(client, headers, record_id) for record_id in ids]
        bundle = _disclose(client, headers, ids[1]).content
        verdict = _verdict(client, bundle)
        deadline = time.monotonic() + 60  # the sealer takes the checkpoints into the aggregate
        while query(settings, "SELECT count(*) FROM aggregate_entries") == [(0,)]:
            assert time.monotonic() < deadline, "the aggregate never sealed"
            time.sleep(0.05)
    entries = query(settings, "SELECT idx, log_id, size, entry FROM aggregate_entries ORDER BY idx")
    asyncio.run(_legacy_log(settings))

    latest = _latest(settings)
    take_back(settings, latest - 1)
    assert query(settings, "SELECT max(version) FROM schema_version") == [(latest - 1,)]
    # The legacy fleet's log and the aggregate log.
    assert query(settings, "SELECT count(*) FROM logs WHERE tenant IS NULL") == [(2,)]

    with TestClient(create_app(settings)) as client:  # migrates on start
        assert query(settings, "SELECT max(version) FROM schema_version") == [(latest,)]
        # Every record reads back the same, sealed where it was.
        assert [client.get(f"/v1/records/{i}", headers=headers).json() for i in ids] == before
        # The bundle made before verifies, and a new one for the record is the same.
        assert _verdict(client, bundle) == verdict
        assert _disclose(client, headers, ids[1]).content == bundle
        # A retry is answered from its idempotency key: the record stored before.
        retried = client.post(
            "/v1/records", json=_record(1), headers={**headers, "Idempotency-Key": "k1"}
        )
        assert retried.json()["record_id"] == ids[1], retried.text
        # The log grows on: a new record takes the next position and is sealed; the old
        # record's disclosure then proves it in the larger log.
        new = client.post("/v1/records", json=_record(3), headers=headers)
        assert new.status_code == 201, new.text
        sealed = _sealed(client, headers, new.json()["record_id"])
        assert sealed["seal"]["index"] == before[-1]["seal"]["index"] + 1, sealed
        _verdict(client, _disclose(client, headers, ids[0]).content)

    async def legacy() -> list[tuple[str | None, str, int]]:
        store = open_store(settings)
        await store.open()
        try:
            anchors = await store.logs.anchors(None, "legacy")
            return [(a.tenant, a.origin, a.size) for a in anchors]
        finally:
            await store.close()

    # The log of no tenant is read back as before: tenant None, its checkpoint kept.
    assert asyncio.run(legacy()) == [(None, f"{ORIGIN}/legacy", 1)]
    assert query(settings, "SELECT count(*) FROM logs WHERE tenant = ''") == [(2,)]
    # The aggregate's entries are kept under its tenant '', each naming its checkpoint's
    # tenant: acme's log's.
    upgraded = query(
        settings,
        "SELECT idx, log_id, size, entry FROM aggregate_entries WHERE tenant = ''"
        " AND log_tenant = 'acme' ORDER BY idx",
    )
    assert upgraded[: len(entries)] == entries
