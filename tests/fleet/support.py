"""Helpers of the fleet suites: run a coroutine with an open store, ingest records, seal
logs by hand."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.merkle.genesis import log_origin, tenant_genesis
from recordseal.services.records import RecordService
from recordseal.storage.base import Store
from recordseal.storage.requests import SealRequest
from recordseal.storage.rows import SealedBatch
from recordseal.tlog import Checkpoint, Ed25519Signer, sign_checkpoint
from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest as post

T = TypeVar("T")

SERVICE = "test.local"
LOG_SEED = bytes(range(32))


def using(store: Store, body: Callable[[Store], Awaitable[T]]) -> T:
    """Open ``store``, await ``body(store)`` and close it, all in one event loop."""

    async def main() -> T:
        await store.open()
        try:
            return await body(store)
        finally:
            await store.close()

    return asyncio.run(main())


def log_signer(tenant: str | None, fleet: str) -> Ed25519Signer:
    return Ed25519Signer.from_seed(log_origin(SERVICE, tenant, fleet), LOG_SEED)


async def seal(store: Store, tenant: str | None, fleet: str, now: str) -> SealedBatch | None:
    """One seal of (tenant, fleet) at ``now``, signed with the test log key."""
    origin = log_origin(SERVICE, tenant, fleet)
    signer = log_signer(tenant, fleet)

    def sign(size: int, root: bytes) -> str:
        return sign_checkpoint(Checkpoint(origin, size, root), signer)

    return await store.logs.seal(
        SealRequest(tenant, fleet, origin, tenant_genesis(tenant, fleet), sign, now)
    )


async def ingest(store: Store, tenant: str, count: int) -> None:
    records = RecordService(
        store,
        KeyWrapper(bytes(32)),
        HeaderSigner.from_seed(bytes(32)),
        continuity=fresh_continuity(),
    )
    if await store.records.get_stream(tenant, "s") is None:
        await records.create_stream(tenant, "s", None, False)
    for i in range(count):
        await post(records, tenant, "s", "t", "2026-01-01T00:00:00Z", f"subject-{i}", b'{"i":1}')
