"""Streams made idempotent (``exist_ok``), read back (``stream``), and the trust store the
service publishes (``trust_store``), against a real service process (issue 33, item 1)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from recordseal.client import Client, Record, Refused, RetryPolicy
from tests.client.conftest import Forwarding, Service

FAST = RetryPolicy(attempts=4, first_delay=0.01, max_delay=0.05)
MONEY = {"o:/amount": "money"}


class LoseFirstStreamAnswer(Forwarding):
    """Forwards to the real service, but loses the answer to the first stream creation: the
    service created it, the client sees a timeout."""

    def __init__(self) -> None:
        super().__init__()
        self.creations = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and request.url.path == "/v1/streams":
            self.creations += 1
            if self.creations == 1:
                await response.aread()
                raise httpx.ReadTimeout("answer lost", request=request)
        return response


def test_exist_ok_takes_a_stream_declared_the_same_way(service: Service) -> None:
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            first = await client.create_stream("again", MONEY, exist_ok=True)
            assert (first.name, first.declarations, first.next_seq) == ("again", MONEY, 1)
            await client.ingest(Record("again", "t", "2026-11-21T08:00:00Z", "s", {"amount": 1}))
            second = await client.create_stream("again", MONEY, exist_ok=True)
            assert (second.created_at, second.next_seq) == (first.created_at, 2)
            with pytest.raises(Refused) as plain:
                await client.create_stream("again", MONEY)
            assert plain.value.problem.code == "stream_exists"

    asyncio.run(scenario())


def test_exist_ok_refuses_a_stream_declared_otherwise(service: Service) -> None:
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            await client.create_stream("declared", MONEY)
            with pytest.raises(Refused) as other:
                await client.create_stream("declared", {"o:/amount": "integer"}, exist_ok=True)
            problem = other.value.problem
            assert (problem.status, problem.code, problem.field) == (
                409,
                "stream_exists",
                "declarations",
            )
            assert problem.detail == (
                "the stream 'declared' exists with declarations {'o:/amount': 'money'} and"
                " strict=False, not {'o:/amount': 'integer'} and strict=False"
            )
            with pytest.raises(Refused, match="strict=True"):
                await client.create_stream("declared", MONEY, strict=True, exist_ok=True)

    asyncio.run(scenario())


def test_exist_ok_makes_creation_safe_to_retry(service: Service) -> None:
    """Without exist_ok a lost answer is final (a retry would be refused as stream_exists);
    with it the client retries and takes the stream its first attempt created."""

    async def scenario() -> None:
        lossy = LoseFirstStreamAnswer()
        async with Client(service.url, service.token, retry=FAST, transport=lossy) as client:
            stream = await client.create_stream("retried", MONEY, exist_ok=True)
            assert (stream.name, stream.next_seq, lossy.creations) == ("retried", 1, 2)

    asyncio.run(scenario())


def test_a_stream_is_read_back_with_its_next_seq(service: Service) -> None:
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            created = await client.create_stream("read", MONEY)
            for n in range(3):
                await client.ingest(Record("read", "t", "2026-11-21T08:00:00Z", "s", {"amount": n}))
            stream = await client.stream("read")
            assert (stream.declarations, stream.created_at, stream.next_seq) == (
                MONEY,
                created.created_at,
                4,
            )
            with pytest.raises(Refused) as missing:
                await client.stream("nothing-here")
            problem = missing.value.problem
            assert (problem.status, problem.code, problem.field) == (
                404,
                "stream_not_found",
                "name",
            )

    asyncio.run(scenario())


def test_the_published_trust_store_is_what_keys_export_writes(
    service: Service, tmp_path: Path
) -> None:
    async def scenario() -> bytes:
        async with Client(service.url, None) as anyone:  # public, as the key directory
            return await anyone.trust_store()

    published = json.loads(asyncio.run(scenario()))
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "keys", "export", "--data-dir",
         str(service.data_dir), "--keys-out", str(tmp_path / "keys.json"),
         "--trust-out", str(tmp_path / "trust.json")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert published == json.loads((tmp_path / "trust.json").read_text())
    assert published["format"] == "recordseal/trust/v1"


def test_streams_and_records_are_iterated_across_pages(service: Service) -> None:
    async def scenario() -> None:
        async with Client(service.url, service.token, retry=FAST) as client:
            await client.create_stream("paged-a", MONEY)
            await client.create_stream("paged-b")
            records = [
                Record("paged-a", "t", "2026-11-21T08:00:00Z", f"s{n}", {"amount": n})
                for n in range(5)
            ]
            receipts = [await client.ingest(record) for record in records]
            streams = {s.name: s async for s in client.streams(page_size=1)}
            a, b = streams["paged-a"], streams["paged-b"]
            assert (a.declarations, a.record_count, a.next_seq, a.fleet) == (MONEY, 5, 6, "default")
            assert (b.record_count, b.next_seq) == (0, 1)
            listed = [r async for r in client.records("paged-a", page_size=2)]
            assert [r.seq for r in listed] == [1, 2, 3, 4, 5]
            for record, receipt in zip(listed, receipts, strict=True):
                assert (record.record_id, record.header, record.signature, record.kind) == (
                    receipt.record_id,
                    receipt.header,
                    receipt.signature,
                    "record",
                )
            assert [r.seq async for r in client.records("paged-a", 4)] == [4, 5]
            assert [r async for r in client.records("paged-b")] == []
            with pytest.raises(Refused) as missing:
                [r async for r in client.records("nothing-here")]
            assert (missing.value.problem.status, missing.value.problem.code) == (
                404,
                "stream_not_found",
            )
            with pytest.raises(ValueError, match="page_size"):
                [s async for s in client.streams(page_size=1001)]

    asyncio.run(scenario())
