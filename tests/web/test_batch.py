"""Batch ingest and idempotency keys through HTTP, on both backends."""

from __future__ import annotations

import asyncio

import pytest

from recordseal import chain
from recordseal.core.errors import CommitError
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.services.errors import AlreadyExists
from recordseal.services.reading import RecordRead
from recordseal.services.records import RACE_RETRIES, RecordService
from recordseal.storage.backends import open_store
from recordseal.storage.requests import NewRecord
from tests.backends import count, opened
from tests.continuity_support import fresh_continuity
from tests.ingesting import batch_body, ingest, record_body


def item(payload, **envelope):
    return {
        "stream": "orders",
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": "customer-1",
        "payload": payload,
        **envelope,
    }


@pytest.fixture
def orders(api):
    assert api.stream(declarations={"o:/amount": "money"}).status_code == 201
    return api


def batch(api, records, key: str | None = None, headers=None):
    extra = {"Idempotency-Key": key} if key else {}
    return api.client.post(
        "/v1/records:batch",
        json={"records": records},
        headers={**(api.headers if headers is None else headers), **extra},
    )


def headers_of(api, stream: str = "orders") -> list[bytes]:
    async def read() -> list[bytes]:
        async with opened(open_store(api.settings)) as store:
            return [row.header for row in await store.records.stream_records("acme", stream)]

    return asyncio.run(read())


def test_each_item_is_accepted_or_refused_alone_in_order(orders):
    response = batch(
        orders,
        [
            item({"amount": 100}),
            item({"amount": "lots"}),  # not money
            item({"amount": 200}, subject_id="customer-2"),
            {"stream": "orders", "payload": {}},  # envelope members missing
            item({"amount": 300}, occurred_at="yesterday"),
            item({"amount": 400}),
        ],
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["accepted"], body["refused"]) == (3, 3)
    results = body["results"]
    assert [r["index"] for r in results] == list(range(6))
    assert [r["status"] for r in results] == [201, 422, 201, 400, 422, 201]
    assert results[1]["problem"]["field"] == "o:/amount"
    assert results[3]["problem"]["code"] == "request_invalid"
    assert results[3]["problem"]["field"] == "record_type"
    assert results[4]["problem"]["field"] == "occurred_at"
    assert "lots" not in response.text  # refusals never echo the value
    # Accepted items are stored in order with dense sequence numbers; refused ones take none.
    assert [results[i]["record"]["seq"] for i in (0, 2, 5)] == [1, 2, 3]
    assert all(results[i]["record"]["attestation"] == "hosted-ingest" for i in (0, 2, 5))
    assert count(orders.settings, "records") == 3
    chain.verify_links("acme", "orders", headers_of(orders))
    # Each accepted item is a record like any other.
    record_id = results[2]["record"]["record_id"]
    payload = orders.get(f"/v1/records/{record_id}/payload").json()["payload"]
    assert payload == {"amount": 200}


def test_a_new_subject_twice_in_one_batch_gets_one_key(orders):
    response = batch(orders, [item({"n": i}, subject_id="new-subject") for i in range(5)])
    assert response.json()["accepted"] == 5
    assert count(orders.settings, "subjects") == 1
    erased = orders.client.post("/v1/subjects/new-subject/erase", headers=orders.headers).json()
    assert erased["payloads_deleted"] == 5


def test_an_erased_subject_is_refused_within_a_batch(orders):
    orders.post({"a": 1}, subject_id="gone")
    assert orders.client.post("/v1/subjects/gone/erase", headers=orders.headers).status_code == 200
    results = batch(orders, [item({"a": 2}, subject_id="gone"), item({"a": 3})]).json()["results"]
    assert results[0]["status"] == 410
    assert results[0]["problem"]["code"] == "subject_erased"
    assert results[1]["status"] == 201 and results[1]["record"]["seq"] == 2


@pytest.mark.parametrize("size", [0, 1001])
def test_a_batch_holds_1_to_1000_records(orders, size):
    response = batch(orders, [item({"n": 1})] * size)
    assert response.status_code == 422
    assert (response.json()["code"], response.json()["field"]) == ("batch_size_invalid", "records")
    assert count(orders.settings, "records") == 0


def test_a_full_batch_of_1000_is_stored(orders):
    response = batch(orders, [item({"n": i}, subject_id=f"s{i % 50}") for i in range(1000)])
    assert response.json()["accepted"] == 1000
    assert count(orders.settings, "records") == 1000
    assert [r["record"]["seq"] for r in response.json()["results"]] == list(range(1, 1001))


def test_batches_are_tenant_scoped_and_need_a_token(orders):
    other = orders.token_headers("globex")
    response = batch(orders, [item({"a": 1})], headers=other)
    assert response.json()["results"][0]["status"] == 404
    assert response.json()["results"][0]["problem"]["code"] == "stream_not_found"
    assert batch(orders, [item({"a": 1})], headers={}).status_code == 401
    assert count(orders.settings, "records") == 0


# --- idempotency keys ---------------------------------------------------------------------------


def test_a_retried_post_returns_the_first_result_and_stores_nothing(orders):
    headers = {**orders.headers, "Idempotency-Key": "order-17-attempt"}
    first = orders.post({"amount": 100}, headers=headers)
    again = orders.post({"amount": 100}, headers=headers)
    assert first.status_code == again.status_code == 201
    first_body, again_body = first.json(), again.json()
    assert again_body.pop("replayed") is True
    assert "replayed" not in first_body or first_body.pop("replayed") is False
    assert again_body == first_body
    assert count(orders.settings, "records") == 1
    # A new key makes a new record with the next sequence number.
    headers["Idempotency-Key"] = "order-18"
    assert orders.post({"amount": 100}, headers=headers).json()["seq"] == 2


def test_an_idempotency_key_with_another_request_is_refused(orders):
    headers = {**orders.headers, "Idempotency-Key": "k1"}
    assert orders.post({"amount": 100}, headers=headers).status_code == 201
    reused = orders.post({"amount": 900}, headers=headers)
    assert reused.status_code == 422
    assert (reused.json()["code"], reused.json()["field"]) == (
        "idempotency_key_reused",
        "Idempotency-Key",
    )
    assert count(orders.settings, "records") == 1


@pytest.mark.parametrize("key", ["", "has space", "x" * 256, "a#b"])
def test_a_malformed_idempotency_key_is_refused_and_stores_nothing(orders, key):
    response = orders.post({"amount": 100}, headers={**orders.headers, "Idempotency-Key": key})
    assert response.status_code == 422
    assert (response.json()["code"], response.json()["field"]) == (
        "idempotency_key_invalid",
        "Idempotency-Key",
    )
    assert count(orders.settings, "records") == 0


def test_idempotency_keys_are_per_tenant(orders):
    other = orders.token_headers("globex")
    assert (
        orders.client.post("/v1/streams", json={"name": "orders"}, headers=other).status_code == 201
    )
    mine = orders.post({"a": 1}, headers={**orders.headers, "Idempotency-Key": "same"}).json()
    theirs = orders.post({"a": 1}, headers={**other, "Idempotency-Key": "same"}).json()
    assert mine["record_id"] != theirs["record_id"]
    assert theirs.get("replayed", False) is False
    assert count(orders.settings, "records") == 2


def test_a_retried_batch_returns_the_first_results_and_stores_nothing(orders):
    records = [item({"amount": 100}), item({"amount": "bad"}), item({"amount": 200})]
    first = batch(orders, records, key="batch-1").json()
    again = batch(orders, records, key="batch-1").json()
    assert (first["accepted"], again["accepted"]) == (2, 2)
    for before, after in zip(first["results"], again["results"], strict=True):
        assert before["status"] == after["status"]
        if before["status"] == 201:
            assert after["record"].pop("replayed") is True
            before["record"].pop("replayed", None)
            assert after["record"] == before["record"]
        else:
            assert after["problem"] == before["problem"]
    assert count(orders.settings, "records") == 2
    # Batch item keys never collide with a single post's key.
    single = orders.post({"amount": 100}, headers={**orders.headers, "Idempotency-Key": "batch-1"})
    assert single.status_code == 201 and single.json().get("replayed", False) is False
    # The same batch key with other records: each changed item is refused, nothing stored.
    changed = batch(orders, [item({"amount": 500})], key="batch-1").json()
    assert changed["results"][0]["problem"]["code"] == "idempotency_key_reused"
    assert count(orders.settings, "records") == 3


def test_concurrent_retries_with_one_key_store_one_record(orders):
    """Two copies of one request in flight at once (a client retrying after a timeout)."""
    import httpx

    from recordseal.web.app import create_app

    async def scenario() -> list[dict]:
        app = create_app(orders.settings)
        async with app.lifespan():
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                headers = {**orders.headers, "Idempotency-Key": "twin"}
                body = item({"amount": 100})
                responses = await asyncio.gather(
                    *(client.post("/v1/records", json=body, headers=headers) for _ in range(8))
                )
        return [r.json() for r in responses]

    bodies = asyncio.run(scenario())
    assert len({b["record_id"] for b in bodies}) == 1
    assert sum(1 for b in bodies if not b.get("replayed")) == 1
    assert count(orders.settings, "records") == 1


def test_openapi_documents_the_batch_route_and_the_idempotency_key(orders):
    schema = orders.client.get("/schema/openapi.json").json()
    batch_op = schema["paths"]["/v1/records:batch"]["post"]
    assert any(p["name"] == "Idempotency-Key" for p in batch_op["parameters"])
    single = schema["paths"]["/v1/records"]["post"]
    assert any(p["name"] == "Idempotency-Key" for p in single["parameters"])
    body = batch_op["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["records"]["maxItems"] == 1000


#: The key wrapper and header signer of the race tests' services (both writers share them).
WRAPPER, SIGNER = KeyWrapper(b"k" * 32), HeaderSigner.from_seed(b"s" * 32)


def raced_record(subject: str, n: int, stream: str = "orders") -> bytes:
    return record_body(stream, "t", "2026-11-21T08:00:00Z", subject, b'{"n":%d}' % n)


def post(records: RecordService, subject: str, n: int) -> object:
    return ingest(records, "acme", "orders", "t", "2026-11-21T08:00:00Z", subject, b'{"n":%d}' % n)


def read(records: RecordService, items: list[bytes]) -> list[RecordRead | CommitError]:
    """A batch of ``items`` as the service reads it."""
    return records.read(batch_body(items), None, batch=True)


def service(store) -> RecordService:
    return RecordService(store, WRAPPER, SIGNER, continuity=fresh_continuity())


class LookupBeforeTheOtherWriter:
    """The real store, except that the first lookup of subjects does not see ``hidden``:
    as when another writer commits that new subject just after this batch looked. Counts
    the appends (``records.appends``)."""

    def __init__(self, store, hidden: bytes, every_time: bool = False) -> None:
        """``every_time``: no lookup sees ``hidden`` (the other writer always wins)."""
        self._store = store
        self.records = _RecordsSeenBefore(store.records, hidden, every_time)

    def __getattr__(self, name):
        return getattr(self._store, name)


class _RecordsSeenBefore:
    def __init__(self, records, hidden: bytes, every_time: bool) -> None:
        self._records = records
        self._hidden: bytes | None = hidden
        self._every_time = every_time
        self.appends = 0

    def __getattr__(self, name):
        return getattr(self._records, name)

    async def get_subjects(self, tenant, indexes):
        found = await self._records.get_subjects(tenant, indexes)
        if self._hidden in found:
            del found[self._hidden]
            if not self._every_time:
                self._hidden = None
        return found

    async def append_records(self, *args, **kwargs):
        self.appends += 1
        return await self._records.append_records(*args, **kwargs)


def test_a_batch_keeps_its_order_when_a_new_subject_races_another_writer(store):
    async def scenario() -> None:
        async with opened(store):
            other = service(store)
            await other.create_stream("acme", "orders", None, False)
            await post(other, "known", 0)
            # The other writer creates "racer" between this batch's lookup and its append.
            racer = WRAPPER.subject_index("acme", "racer")
            racing_store = LookupBeforeTheOtherWriter(store, racer)
            racing = service(racing_store)
            await post(other, "racer", 1)
            items = [raced_record(s, n) for s, n in [("known", 2), ("racer", 3), ("known", 4),
                                                      ("known", 5)]]  # fmt: skip
            results = await racing.ingest("acme", read(racing, items))
            assert all(isinstance(r, NewRecord) for r in results)
            assert racing_store.records.appends == 2  # the race did happen
            assert [r.seq for r in results if isinstance(r, NewRecord)] == [3, 4, 5, 6]
            stored = await store.records.stream_records("acme", "orders")
            refs = {r.seq: r.subject_ref for r in stored}
            assert refs[4] == refs[2]  # the racer's record went in under the stored subject

    asyncio.run(scenario())


def test_the_records_behind_a_raced_subject_are_prepared_again_together(store):
    """The raced record and the 49 later records of its stream go in with one more append,
    in order, not one append each (which made such a batch wait for 50 transactions)."""

    async def scenario() -> None:
        async with opened(store):
            other = service(store)
            await other.create_stream("acme", "orders", None, False)
            racer = WRAPPER.subject_index("acme", "racer")
            seen_before = LookupBeforeTheOtherWriter(store, racer)
            racing = service(seen_before)
            await post(other, "racer", 0)
            items = [raced_record("racer", 1)] + [raced_record(f"new-{n}", n) for n in range(2, 51)]
            results = await racing.ingest("acme", read(racing, items))
            assert all(isinstance(r, NewRecord) for r in results), results
            assert [r.seq for r in results if isinstance(r, NewRecord)] == list(range(2, 52))
            # the first try, then every raced record together
            assert seen_before.records.appends == 2
            stored = await store.records.stream_records("acme", "orders")
            assert stored[0].subject_ref == stored[1].subject_ref  # the stored racer's key

    asyncio.run(scenario())


def test_records_whose_subject_keeps_racing_are_refused_as_subject_busy(store):
    """After the first try and ``RACE_RETRIES`` more, the raced record and the later records
    of its stream are refused (409 ``subject_busy``, which a client retries); the others
    are stored."""

    async def scenario() -> None:
        async with opened(store):
            other = service(store)
            await other.create_stream("acme", "orders", None, False)
            await other.create_stream("acme", "audit", None, False)
            await post(other, "racer", 0)
            racer = WRAPPER.subject_index("acme", "racer")
            always = LookupBeforeTheOtherWriter(store, racer, every_time=True)
            racing = service(always)
            items = [
                raced_record("a", 1),
                raced_record("racer", 2),
                raced_record("b", 3, "audit"),
                raced_record("c", 4),
            ]
            results = await racing.ingest("acme", read(racing, items))
            kinds = [type(r) for r in results]
            assert kinds == [NewRecord, AlreadyExists, NewRecord, AlreadyExists]
            for refused in results[1::2]:
                assert isinstance(refused, AlreadyExists)
                assert (refused.code, refused.field) == ("subject_busy", "subject_id")
            assert always.records.appends == 1 + RACE_RETRIES
            assert [r.seq for r in await store.records.stream_records("acme", "orders")] == [1, 2]

    asyncio.run(scenario())
