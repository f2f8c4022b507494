"""``recordseal.client`` against a real service process on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import httpx
import msgspec
import pytest

from recordseal.client import (
    Client,
    IngestIncomplete,
    Problem,
    Receipt,
    Record,
    Refreshed,
    Refused,
    RetryPolicy,
    Unavailable,
)
from recordseal.verify import BundleError
from recordseal.verify.refresh import CONSISTENCY_HEADER, check_refresh
from recordseal.verify.result import FAILED
from tests.client.conftest import Forwarding, Service

FAST = RetryPolicy(attempts=4, first_delay=0.01, max_delay=0.05)


def record(stream: str, payload: dict, subject: str = "alice") -> Record:
    return Record(stream, "order.placed", "2026-11-21T08:00:00Z", subject, payload)


class LoseFirstAnswer(Forwarding):
    """Forwards to the real service, but loses the answer to the first POST of a record:
    the service stored it, the client sees a timeout (what a flaky network does)."""

    def __init__(self) -> None:
        super().__init__()
        self.lost = 0
        self.keys: list[str | None] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.url.path.startswith("/v1/records") and request.method == "POST":
            self.keys.append(request.headers.get("Idempotency-Key"))
            if self.lost == 0:
                self.lost += 1
                await response.aread()
                raise httpx.ReadTimeout("answer lost", request=request)
        return response


class Busy(Forwarding):
    """Answers 503 the first ``failures`` times (never reaching the service), then forwards."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.calls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.calls <= self.failures:
            return httpx.Response(503, headers={"Retry-After": "0"})
        return await self.inner.handle_async_request(request)


def test_ingest_read_and_erase(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            stream = await client.create_stream("basic", {"o:/amount": "money"})
            assert (stream.name, stream.next_seq) == ("basic", 1)
            receipt = await client.ingest(record("basic", {"amount": 100}))
            assert isinstance(receipt, Receipt) and receipt.seq == 1
            assert receipt.attestation == "hosted-ingest"
            view = await client.record(receipt.record_id)
            assert view.header == receipt.header
            assert await client.payload(receipt.record_id) == {"amount": 100}
            with pytest.raises(Refused) as refused:
                await client.ingest(record("basic", {"amount": "lots"}))
            assert (refused.value.problem.status, refused.value.problem.field) == (422, "o:/amount")
            erasure = await client.erase_subject("alice")
            assert (erasure.status, erasure.payloads_deleted) == ("erased", 1)
            with pytest.raises(Refused) as gone:
                await client.payload(receipt.record_id)
            assert gone.value.problem.code == "subject_erased"

    asyncio.run(scenario())


def test_a_subject_id_is_one_path_segment_of_the_erasure(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            await client.create_stream("paths")
            bob = await client.ingest(record("paths", {"a": 1}, "bob"))
            odd = await client.ingest(record("paths", {"a": 2}, "50% off? #1"))
            dotted = await client.ingest(record("paths", {"a": 3}, "x/../bob"))
            # Exactly that subject's erasure, never bob's.
            erasure = await client.erase_subject("x/../bob")
            assert (erasure.status, erasure.payloads_deleted) == ("erased", 1)
            with pytest.raises(Refused):
                await client.payload(dotted.record_id)
            assert await client.payload(bob.record_id) == {"a": 1}
            erasure = await client.erase_subject("50% off? #1")
            assert (erasure.status, erasure.payloads_deleted) == ("erased", 1)
            with pytest.raises(Refused):
                await client.payload(odd.record_id)
            assert await client.payload(bob.record_id) == {"a": 1}

    asyncio.run(scenario())


def test_ingest_many_batches_and_keeps_the_order(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, batch_size=100, concurrency=4) as client:
            await client.create_stream("many", {"o:/n": "integer"})
            records = [record("many", {"n": i}, f"s{i % 9}") for i in range(1234)]
            records[500] = record("many", {"n": "not a number"}, "s500")
            results = await client.ingest_many(records)
            assert len(results) == 1234
            assert isinstance(results[500], Problem) and results[500].field == "o:/n"
            receipts = [r for r in results if isinstance(r, Receipt)]
            assert len(receipts) == 1233
            assert sorted(r.seq for r in receipts) == list(range(1, 1234))
            for i in (0, 499, 501, 1233):
                result = results[i]
                assert isinstance(result, Receipt)
                assert await client.payload(result.record_id) == {"n": i}

    asyncio.run(scenario())


def test_ingest_many_memory_does_not_grow_with_the_number_of_batches(service: Service):
    """A batch's body is encoded when the batch gets one of the ``concurrency`` slots, not
    when ``ingest_many`` starts. Encoding every body up front made the client's peak memory
    grow with the input: eight times the batches, eight times the peak. Now it levels off:
    what remains above the bodies in flight is sent bodies that httpx's response cycles keep
    until the collector runs."""

    async def peak(client: Client, stream: str, batches: int) -> int:
        blob = "x" * 100_000  # one string shared by every record: the input itself is small
        records = [record(stream, {"blob": blob, "n": i}, "bea") for i in range(4 * batches)]
        await client.create_stream(stream)
        tracemalloc.start()
        try:
            results = await client.ingest_many(records)
            _, high = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert sorted(r.seq for r in results if isinstance(r, Receipt)) == list(
            range(1, 4 * batches + 1)
        )
        return high

    async def scenario() -> None:
        async with Client(
            service.url, service.token, retry=FAST, batch_size=4, concurrency=2
        ) as client:
            few = await peak(client, "bulky-16", 16)
            many = await peak(client, "bulky-128", 128)
        assert many < 4 * few, f"peak {many} bytes for 128 batches, {few} for 16"

    asyncio.run(scenario())


class RefuseFirstBatch(Forwarding):
    """Refuses the first batch of ``ingest_many`` at once (400); the others reach the
    service after a delay. Counts the requests still in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.done = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if b'"payload":{"n":0}' in request.content:  # the batch of the first records
            return httpx.Response(400, json={"status": 400, "code": "request_invalid"})
        self.in_flight += 1
        try:
            await asyncio.sleep(0.3)
            return await self.inner.handle_async_request(request)
        finally:
            self.in_flight -= 1
            self.done += 1


def test_a_failed_batch_of_ingest_many_keeps_the_others_receipts(service: Service):
    """ingest_many raises only once every batch has its answer (none runs on unseen against a
    closed client), with the receipts of the batches that were stored and the key to send the
    records again with; sending them again stores only the missing ones."""

    async def scenario() -> None:
        transport = RefuseFirstBatch()
        records = [record("partial", {"n": i}, "paula") for i in range(6)]
        async with Client(
            service.url, service.token, retry=FAST, batch_size=2, transport=transport
        ) as client:
            await client.create_stream("partial")
            with pytest.raises(IngestIncomplete) as incomplete:
                await client.ingest_many(records)
            assert (transport.in_flight, transport.done) == (0, 3)  # the stream and 2 batches
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            assert others == []
        error = incomplete.value
        assert len(error.errors) == 1 and isinstance(error.errors[0], Refused)
        assert error.errors[0].problem.status == 400
        assert error.results[:2] == [None, None]
        stored = error.results[2:]
        assert all(isinstance(r, Receipt) and not r.replayed for r in stored)
        assert sorted(r.seq for r in stored if isinstance(r, Receipt)) == [1, 2, 3, 4]

        async with Client(service.url, service.token, retry=FAST, batch_size=2) as client:
            again = await client.ingest_many(records, idempotency_key=error.idempotency_key)
            assert [r.replayed for r in again if isinstance(r, Receipt)] == [False, False] + [
                True
            ] * 4
            assert [r.record_id for r in again[2:] if isinstance(r, Receipt)] == [
                r.record_id for r in stored if isinstance(r, Receipt)
            ]
            assert sorted(r.seq for r in again[:2] if isinstance(r, Receipt)) == [5, 6]
            for result, sent in zip(again, records, strict=True):
                assert isinstance(result, Receipt)
                assert await client.payload(result.record_id) == sent.payload

    asyncio.run(scenario())


def test_ingest_many_reports_progress_batch_by_batch(service: Service):
    """``progress`` is called once per batch with its number of records, as each batch has
    its outcome, failed batches included: the calls add up to the records."""

    async def scenario() -> None:
        calls: list[int] = []
        async with Client(service.url, service.token, batch_size=100) as client:
            await client.create_stream("progress")
            records = [record("progress", {"n": i}, "pat") for i in range(250)]
            results = await client.ingest_many(records, progress=calls.append)
        assert len(results) == 250
        assert sorted(calls) == [50, 100, 100]

        calls.clear()
        async with Client(
            service.url, service.token, retry=FAST, batch_size=2, transport=RefuseFirstBatch()
        ) as client:
            with pytest.raises(IngestIncomplete):
                await client.ingest_many(
                    [record("progress", {"n": i}, "pat") for i in range(5)], progress=calls.append
                )
        assert sorted(calls) == [1, 2, 2]

    asyncio.run(scenario())


class GarbleSecondBatch(Forwarding):
    """Forwards every request; the service stores the second batch of ``ingest_many``, but
    its answer reaches the client garbled (200 with a body that is not JSON)."""

    def __init__(self) -> None:
        super().__init__()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if b'"payload":{"n":2}' in request.content:  # the second batch of two
            await response.aread()
            assert response.status_code == 200
            return httpx.Response(200, content=b"<html>proxy error</html>")
        return response


def test_an_unreadable_batch_answer_keeps_the_other_receipts_and_resends_safely(
    service: Service,
):
    """A batch answered with something that is not a batch result fails that batch only:
    the receipts of the other batches reach the caller, and sending again with the key
    returns the garbled batch's stored records as replays (nothing is stored twice)."""

    async def scenario() -> None:
        records = [record("garbled", {"n": i}, "gary") for i in range(4)]
        async with Client(
            service.url, service.token, retry=FAST, batch_size=2, concurrency=1,
            transport=GarbleSecondBatch(),
        ) as client:  # fmt: skip
            await client.create_stream("garbled")
            with pytest.raises(IngestIncomplete) as incomplete:
                await client.ingest_many(records)
        error = incomplete.value
        assert len(error.errors) == 1 and isinstance(error.errors[0], msgspec.DecodeError)
        assert error.__cause__ is error.errors[0]
        first = error.results[:2]
        assert all(isinstance(r, Receipt) for r in first) and error.results[2:] == [None, None]

        async with Client(service.url, service.token, retry=FAST, batch_size=2) as client:
            again = await client.ingest_many(records, idempotency_key=error.idempotency_key)
            assert all(isinstance(r, Receipt) and r.replayed for r in again)
            assert [r.seq for r in again if isinstance(r, Receipt)] == [1, 2, 3, 4]
            assert [r.record_id for r in again[:2] if isinstance(r, Receipt)] == [
                r.record_id for r in first if isinstance(r, Receipt)
            ]
            for result, sent in zip(again, records, strict=True):
                assert isinstance(result, Receipt)
                assert await client.payload(result.record_id) == sent.payload
            # Nothing more was stored: the next record is seq 5.
            assert (await client.ingest(record("garbled", {"n": 4}, "gary"))).seq == 5

    asyncio.run(scenario())


class SubjectBusyOnce(Forwarding):
    """Answers the first POST of a record with the service's 409 ``subject_busy`` problem
    (what a request racing another one's new subject gets twice over), then forwards."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.calls == 1:
            return httpx.Response(
                409,
                json={"status": 409, "code": "subject_busy", "field": "subject_id"},
                headers={"Content-Type": "application/problem+json"},
            )
        return await self.inner.handle_async_request(request)


def test_subject_busy_is_retried_but_other_conflicts_are_final(service: Service):
    async def scenario() -> None:
        busy = SubjectBusyOnce()
        async with Client(service.url, service.token, retry=FAST, transport=busy) as client:
            busy.calls = 1  # let the stream through
            await client.create_stream("racing")
            busy.calls = 0
            receipt = await client.ingest(record("racing", {"a": 1}, "new-subject"))
            assert (receipt.seq, busy.calls) == (1, 2)
            busy.calls = 1
            with pytest.raises(Refused) as exists:  # 409 stream_exists: not retried
                await client.create_stream("racing")
            assert (exists.value.problem.code, busy.calls) == ("stream_exists", 2)

    asyncio.run(scenario())


def test_a_lost_answer_is_retried_with_the_same_key_and_stores_one_record(service: Service):
    async def scenario() -> None:
        transport = LoseFirstAnswer()
        async with Client(service.url, service.token, retry=FAST, transport=transport) as client:
            await client.create_stream("flaky")
            receipt = await client.ingest(record("flaky", {"a": 1}, "dave"))
            assert receipt.replayed is True  # the first attempt's record
            assert receipt.seq == 1
            assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1]
            assert (
                await client.ingest(record("flaky", {"a": 2}, "dave"))
            ).seq == 2  # nothing extra

            # The same for a whole batch.
            transport.lost = 0
            results = await client.ingest_many(
                [record("flaky", {"b": i}, "dave") for i in range(3)]
            )
            assert [r.seq for r in results if isinstance(r, Receipt)] == [3, 4, 5]
            assert all(isinstance(r, Receipt) and r.replayed for r in results)
            assert (await client.ingest(record("flaky", {"a": 3}, "dave"))).seq == 6

    asyncio.run(scenario())


def test_busy_answers_are_retried_and_give_up_after_the_last_attempt(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST, transport=Busy(1)) as client:
            # Creating a stream is not idempotent, so it is never retried: its 503 is final.
            with pytest.raises(Unavailable, match=r"1 attempt \(HTTP 503\)"):
                await client.create_stream("busy")
            await client.create_stream("busy")
        busy = Busy(2)
        async with Client(service.url, service.token, retry=FAST, transport=busy) as client:
            assert (await client.ingest(record("busy", {"a": 1}, "bob"))).seq == 1
            assert busy.calls == 3
        async with Client(service.url, service.token, retry=FAST, transport=Busy(99)) as client:
            with pytest.raises(Unavailable, match=r"4 attempts \(HTTP 503\)"):
                await client.ingest(record("busy", {"a": 2}, "bob"))

    asyncio.run(scenario())


def test_disclose_and_verify_offline(service: Service):
    async def scenario() -> tuple[bytes, bytes]:
        async with Client(service.url, service.token) as client:
            await client.create_stream("audit", {"o:/amount": "money"})
            receipt = await client.ingest(record("audit", {"amount": 5, "note": "secret"}, "carol"))
            for _ in range(100):  # sealed within a few sealing rounds (0.1 s)
                if (await client.record(receipt.record_id)).seal is not None:
                    break
                await asyncio.sleep(0.1)
            bundle = await client.disclose(receipt.record_id, ["o:/amount"])
            return bundle, await client.key_directory()

    bundle, keys = asyncio.run(scenario())
    assert b"secret" not in bundle
    result = Client.verify(bundle, keys)
    assert result.verdict != FAILED
    assert result.disclosed == {"o:/amount": 5}
    assert [c.status for c in result.checks][:3] == ["passed"] * 3
    tampered = bundle.replace(b'"value":5', b'"value":6')
    assert tampered != bundle
    assert Client.verify(tampered, keys).verdict == FAILED


def test_a_record_id_is_one_path_segment(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            with pytest.raises(Refused) as refused:
                await client.record("../../keys")  # never resolved to GET /v1/keys (a 200)
            assert refused.value.problem.status == 404
            with pytest.raises(Refused):
                await client.payload("x?y#z")

    asyncio.run(scenario())


def test_an_idempotency_key_of_ingest_many_leaves_room_for_the_batch_number(service: Service):
    async def scenario() -> None:
        async with Client(service.url, service.token, batch_size=10) as client:
            with pytest.raises(ValueError, match="batch number"):
                await client.ingest_many([record("basic", {"a": 1})] * 25, "k" * 254)

    asyncio.run(scenario())


def test_disclose_waits_for_the_seal_and_refresh_brings_a_bundle_up_to_date(
    service: Service, tmp_path: Path
):
    async def scenario() -> tuple[bytes, bytes, Refreshed, Refreshed]:
        async with Client(service.url, service.token) as client:
            await client.create_stream("waits")
            receipt = await client.ingest(record("waits", {"amount": 7}, "dave"))
            bundle = await client.disclose(receipt.record_id, ["o:/amount"], wait=20)
            await client.ingest(record("waits", {"amount": 8}, "dave"))  # the log grows
            await asyncio.sleep(0.5)  # a few sealing rounds: a newer checkpoint
        async with Client(service.url, None) as anyone:  # no token
            unsealed = json.loads(bundle)
            unsealed["seal"] = None
            from_nothing = await anyone.refresh(json.dumps(unsealed).encode())
            newer = await anyone.refresh(bundle, wait=1)
            keys = await anyone.key_directory()
        return bundle, keys, from_nothing, newer

    bundle, keys, from_nothing, newer = asyncio.run(scenario())
    assert json.loads(bundle)["seal"] is not None  # asked right after ingest, with wait
    assert from_nothing.old_size is None and from_nothing.new_size is not None
    assert newer.old_size is not None and newer.new_size is not None
    assert newer.new_size > newer.old_size
    for refreshed in (from_nothing, newer):
        result = Client.verify(refreshed.bundle, keys)
        assert [c.status for c in result.checks][:4] == ["passed"] * 4

    # The same through the command line, into a file.
    source, out = tmp_path / "bundle.json", tmp_path / "refreshed.json"
    source.write_bytes(bundle)
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "bundle", "refresh", str(source),
         "--url", service.url, "--out", str(out)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "consistent" in done.stderr
    assert Client.verify(out.read_bytes(), keys).check(4).status == "passed"
    as_json = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "bundle", "refresh", str(source),
         "--url", service.url, "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    changed = json.loads(as_json.stdout)
    assert changed["new_size"] >= changed["old_size"] and changed["out"] is None
    embedded = json.dumps(changed["bundle"]).encode()
    assert Client.verify(embedded, keys).check(4).status == "passed"
    unknown = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "bundle", "refresh", str(source),
         "--url", "http://127.0.0.1:9"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert unknown.returncode == 3

    # Like disclose: the service from RECORDSEAL_URL, -o FILE, and --in-place.
    def refresh(*argv: str, url: str | None = service.url) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
        env |= {"RECORDSEAL_URL": url} if url else {}
        return subprocess.run(
            [sys.executable, "-m", "recordseal.cli", "bundle", "refresh", *argv],
            capture_output=True, text=True, env=env,
        )  # fmt: skip

    short = tmp_path / "short.json"
    done = refresh(str(source), "-o", str(short))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr.endswith(f"; written to {short}\n")
    assert Client.verify(short.read_bytes(), keys).check(4).status == "passed"
    stale = tmp_path / "stale.json"
    stale.write_bytes(bundle)
    done = refresh(str(stale), "--in-place")
    assert done.returncode == 0, done.stderr
    assert stale.read_bytes() != bundle
    assert Client.verify(stale.read_bytes(), keys).check(4).status == "passed"
    assert [p.name for p in tmp_path.glob(".*refreshing")] == []
    nowhere = refresh(str(source), url=None)
    assert nowhere.returncode == 2
    assert nowhere.stderr == (
        "recordseal bundle refresh: no service: give --url or set RECORDSEAL_URL\n"
    )
    assert refresh("-", "--in-place").returncode == 64
    both = refresh(str(source), "-o", str(short), "--in-place")
    assert both.returncode == 64 and "not allowed with argument" in both.stderr


def test_a_refreshed_bundle_is_checked_against_the_old_one(service: Service):
    async def scenario() -> tuple[bytes, bytes, str]:
        async with Client(service.url, service.token) as client:
            await client.create_stream("checked")
            receipt = await client.ingest(record("checked", {"amount": 9, "n": 1}, "erin"))
            old = await client.disclose(receipt.record_id, ["o:/amount"], wait=20)
            await client.ingest(record("checked", {"amount": 10}, "erin"))
            await asyncio.sleep(0.5)
            response = await client._http.post(
                "/v1/proofs:refresh", content=old, headers={"Content-Type": "application/json"}
            )
            return old, response.content, response.headers[CONSISTENCY_HEADER]

    old, new, consistency = asyncio.run(scenario())
    checked = check_refresh(old, new, consistency)
    assert checked.old_size is not None and checked.new_size is not None

    def changed(bundle: bytes, change) -> bytes:
        document = json.loads(bundle)
        change(document)
        return json.dumps(document).encode()

    low, high, *hashes = consistency.split(" ")
    refusals = {
        "fields": (old, changed(new, lambda d: d.update(fields=[])), consistency),
        "header": (old, changed(new, lambda d: d["header"].update(seq=99)), consistency),
        "seal lost": (old, changed(new, lambda d: d.update(seal=None)), consistency),
        "no proof": (old, new, None),
        "other sizes": (old, new, " ".join([low, str(int(high) + 1), *hashes])),
        "wrong proof": (old, new, " ".join([low, high, *reversed(hashes)]) + " " + hashes[0]),
        "not a proof": (old, new, "x y"),
    }
    for name, (before, after, header) in refusals.items():
        with pytest.raises(BundleError):
            check_refresh(before, after, header)
            pytest.fail(name)


def test_ingest_many_run_again_stores_nothing_twice_unless_told(service: Service):
    """The keys of ``ingest_many`` and ``ingest`` are derived from the records by default: the
    same script run twice gets replays the second time (records appended after are new);
    ``derive_keys=False`` makes them random, and the same records are stored again."""

    async def scenario() -> None:
        records = [record("rerun", {"n": i}, f"s{i % 3}") for i in range(250)]
        async with Client(service.url, service.token, batch_size=100) as client:
            await client.create_stream("rerun")
            first = await client.ingest_many(records)
            single = await client.ingest(record("rerun", {"n": "one"}, "solo"))
        async with Client(service.url, service.token, batch_size=100) as client:  # a rerun
            again = await client.ingest_many(records)
            assert all(isinstance(r, Receipt) and r.replayed for r in again)
            assert [r.record_id for r in again if isinstance(r, Receipt)] == [
                r.record_id for r in first if isinstance(r, Receipt)
            ]
            repeated = await client.ingest(record("rerun", {"n": "one"}, "solo"))
            assert (repeated.replayed, repeated.record_id) == (True, single.record_id)
            assert (await client.stream("rerun")).next_seq == 252
            grown = await client.ingest_many(
                [*records, *(record("rerun", {"n": i}, "s") for i in range(250, 260))]
            )
            # The third batch holds the 50 records sent before and 10 new ones.
            assert [r.replayed for r in grown if isinstance(r, Receipt)] == [True] * 250 + [
                False
            ] * 10
            fresh = await client.ingest_many(records[:10], derive_keys=False)
            assert not any(isinstance(r, Receipt) and r.replayed for r in fresh)
            assert (await client.stream("rerun")).next_seq == 252 + 10 + 10

    asyncio.run(scenario())


def test_a_cancelled_ingest_many_leaves_no_task_behind(service: Service):
    """The caller goes away (its task is cancelled) while batches are in flight: the
    cancellation reaches it once every batch's task has ended, none is left pending."""

    async def scenario() -> None:
        async with Client(service.url, service.token, batch_size=10, concurrency=2) as client:
            await client.create_stream("cancelled")
            answered = asyncio.Event()
            records = [record("cancelled", {"n": i}, "cal") for i in range(500)]
            call = asyncio.create_task(
                client.ingest_many(records, progress=lambda _: answered.set())
            )
            await answered.wait()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task()] == []
            assert (await client.stream("cancelled")).next_seq < 501

    asyncio.run(scenario())
