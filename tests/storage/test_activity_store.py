"""The live view's store query (issue 30, item 2; storage/activity.py), on both backends:
streams with counts, last seq and last ingest time; per log the minutes counted at append,
the unsealed records and the minute of the oldest, the latest checkpoint, the witnesses' last
cosignature and failures (``witness.two_roots``); erasures and tokens; the service summary.
Records go through the real API; sealing through the service's sealer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from recordseal.clock import utc_now
from recordseal.ops.tokens import create_token
from recordseal.settings import Settings
from recordseal.storage.activity import TWO_ROOTS, TenantActivity, TenantSummary
from recordseal.storage.backends import open_store
from recordseal.storage.logs import WitnessNote
from recordseal.web.app import create_app
from tests.backends import opened, query

DAY = "2026-11-21T08:00:00Z"


class Service:
    def __init__(self, client: TestClient, settings: Settings) -> None:  # type: ignore[type-arg]
        self.client = client
        self.settings = settings
        self.acme = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"}
        self.beta = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'beta', 't'))}"}

    def stream(self, auth: dict[str, str], name: str) -> None:
        answer = self.client.post("/v1/streams", json={"name": name}, headers=auth)
        assert answer.status_code == 201, answer.text

    def post(self, auth: dict[str, str], stream: str, n: int, subject: str = "s") -> None:
        body: dict[str, Any] = {
            "stream": stream,
            "record_type": "t",
            "occurred_at": DAY,
            "subject_id": subject,
            "payload": {"n": n},
        }
        answer = self.client.post("/v1/records", json=body, headers=auth)
        assert answer.status_code == 201, answer.text

    def seal(self) -> None:
        sealer = self.client.app.state.services.sealer
        self.client.blocking_portal.call(sealer.seal_pending)

    def tenant(self, tenant: str) -> TenantActivity:
        return asyncio.run(_tenant(self.settings, tenant))

    def service(self) -> list[TenantSummary]:
        return asyncio.run(_service(self.settings))


def _since() -> int:
    return int(time.time()) // 60 - 59


async def _tenant(settings: Settings, tenant: str) -> TenantActivity:
    async with opened(open_store(settings)) as store:
        return await store.activity.tenant_activity(tenant, _since())


async def _service(settings: Settings) -> list[TenantSummary]:
    async with opened(open_store(settings)) as store:
        return await store.activity.service_activity(_since())


async def _note(settings: Settings, origin: str, witness: str, note: WitnessNote) -> None:
    async with opened(open_store(settings)) as store:
        await store.logs.note_witness(origin, witness, utc_now(), note)


@pytest.fixture
def service(store_settings: Settings) -> Iterator[Service]:
    settings = Settings(
        data_dir=store_settings.data_dir,
        database_url=store_settings.database_url,
        seal_interval=0,
        transparency_interval=0,
    )
    with TestClient(create_app(settings)) as client:
        yield Service(client, settings)


def test_streams_logs_and_minutes_come_from_rows_kept_at_append_and_seal(
    service: Service,
) -> None:
    before = int(time.time()) // 60
    service.stream(service.acme, "orders")
    service.stream(service.acme, "empty")
    for n in range(5):
        service.post(service.acme, "orders", n)
    after = int(time.time()) // 60
    activity = service.tenant("acme")
    streams = {s.name: s for s in activity.streams}
    assert (streams["orders"].record_count, streams["orders"].last_seq) == (5, 5)
    assert streams["orders"].last_ingest_at is not None
    assert streams["orders"].last_ingest_at[:4] == utc_now()[:4]
    assert (streams["empty"].record_count, streams["empty"].last_seq) == (0, 0)
    assert streams["empty"].last_ingest_at is None
    [log] = activity.logs
    assert sum(n for _, n in log.minutes) == 5
    assert all(before <= minute <= after for minute, _ in log.minutes)
    assert log.unsealed == 5
    assert log.oldest_unsealed_minute is not None
    assert before <= log.oldest_unsealed_minute <= after
    assert log.checkpoint_at is None and log.checkpoint_size is None

    service.seal()
    [log] = service.tenant("acme").logs
    assert log.unsealed == 0 and log.oldest_unsealed_minute is None
    assert log.checkpoint_size == log.sealed_size == 6  # the genesis leaf and five records
    assert log.checkpoint_at is not None
    assert [size for _, size in log.checkpoints][-1] == 6
    # more records after the seal: only they are unsealed
    service.post(service.acme, "orders", 9)
    [log] = service.tenant("acme").logs
    assert log.unsealed == 1
    assert sum(n for _, n in log.minutes) == 6


def test_another_tenants_rows_are_not_in_a_tenants_activity(service: Service) -> None:
    service.stream(service.acme, "orders")
    service.post(service.acme, "orders", 1)
    service.stream(service.beta, "ledger")
    beta = service.tenant("beta")
    assert [s.name for s in beta.streams] == ["ledger"]
    assert all(log.unsealed == 0 and not log.minutes for log in beta.logs)
    assert [log.fleet for log in service.tenant("acme").logs] == ["default"]


def test_erasures_and_tokens_are_counted_with_their_last_times(service: Service) -> None:
    service.stream(service.acme, "orders")
    service.post(service.acme, "orders", 1, subject="alice")
    service.post(service.acme, "orders", 2, subject="bob")
    erased = service.client.post("/v1/subjects/alice/erase", headers=service.acme)
    assert erased.status_code == 200, erased.text
    activity = service.tenant("acme")
    assert activity.erasures == 1 and activity.last_erasure_at is not None
    assert activity.tokens == 1
    assert activity.token_last_used_at is not None
    assert service.tenant("beta").erasures == 0


def test_witness_cosignatures_and_refusals_are_kept_per_log(service: Service) -> None:
    service.stream(service.acme, "orders")
    service.post(service.acme, "orders", 1)
    service.seal()
    [(origin,)] = query(service.settings, "SELECT origin FROM logs WHERE tenant = 'acme'")
    settings = service.settings
    asyncio.run(_note(settings, origin, "w1", WitnessNote(cosigned_size=2)))
    asyncio.run(
        _note(
            settings,
            origin,
            "w2",
            WitnessNote(failures=3, code="witness_refused", reason=TWO_ROOTS),
        )
    )
    [log] = service.tenant("acme").logs
    w1, w2 = log.witnesses
    assert (w1.witness, w1.cosigned_size, w1.failures, w1.code) == ("w1", 2, 0, None)
    assert w1.cosigned_at is not None
    assert (w2.witness, w2.failures, w2.code, w2.two_roots) == ("w2", 3, "witness_refused", True)
    summary = {s.tenant: s for s in service.service()}
    assert (summary["acme"].failing_witnesses, summary["acme"].two_roots) == (1, 1)
    assert (summary["beta"].failing_witnesses, summary["beta"].two_roots) == (0, 0)
    # a cosignature clears the failure, and keeps when it happened
    asyncio.run(_note(settings, origin, "w2", WitnessNote(cosigned_size=2)))
    [log] = service.tenant("acme").logs
    w2 = log.witnesses[1]
    assert (w2.failures, w2.code, w2.reason, w2.two_roots) == (0, None, None, False)
    assert service.service()[0].failing_witnesses == 0


def test_the_service_summary_has_every_tenant_with_its_totals(service: Service) -> None:
    service.stream(service.acme, "orders")
    service.stream(service.acme, "audit")
    for n in range(3):
        service.post(service.acme, "orders", n)
    service.post(service.acme, "audit", 7)
    summary = {s.tenant: s for s in service.service()}
    acme = summary["acme"]
    assert (acme.streams, acme.records, acme.unsealed, acme.ingested_in_window) == (2, 4, 4, 4)
    assert acme.last_ingest_at is not None and acme.active
    beta = summary["beta"]
    assert (beta.streams, beta.records, beta.unsealed, beta.ingested_in_window) == (0, 0, 0, 0)
    service.seal()
    assert {s.tenant: s for s in service.service()}["acme"].unsealed == 0
