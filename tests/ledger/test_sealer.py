"""Sealing: every chain leaf lands once in its (tenant, fleet) log under a signed checkpoint."""

from __future__ import annotations

import asyncio
import hashlib
import struct

import pytest

from recordseal.core import verify_consistency, verify_inclusion
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.sealer import Sealer
from recordseal.merkle import tree
from recordseal.merkle.genesis import tenant_genesis
from recordseal.services.records import RecordService
from recordseal.storage.base import Store
from recordseal.storage.requests import SEAL_LIMIT
from recordseal.tlog import open_checkpoint
from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest

SEED = bytes(range(32))


def test_tenant_genesis_matches_the_panel_spec_and_separates_pairs():
    expected = hashlib.sha256(
        b"recordseal-audit-tenant-genesis-v1"
        + struct.pack("<I", 4)
        + b"acme"
        + struct.pack("<I", 5)
        + b"fleet"
    ).digest()
    assert tenant_genesis("acme", "fleet") == expected
    assert tenant_genesis("a", "bc") != tenant_genesis("ab", "c")
    assert tenant_genesis("t1", "f") != tenant_genesis("t2", "f")


class Harness:
    def __init__(self, store: Store, seal_limit: int = SEAL_LIMIT) -> None:
        self.store = store
        self.seal_limit = seal_limit

    async def __aenter__(self) -> Harness:
        await self.store.open()
        self.records = RecordService(
            self.store,
            KeyWrapper(bytes(32)),
            HeaderSigner.from_seed(bytes(32)),
            continuity=fresh_continuity(),
        )
        self.sealer = Sealer(
            self.store.logs,
            SEED,
            "test.local",
            seal_limit=self.seal_limit,
            continuity=fresh_continuity(),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.store.close()

    async def ingest(self, tenant: str, stream: str, count: int) -> list:
        if await self.store.records.get_stream(tenant, stream) is None:
            await self.records.create_stream(tenant, stream, None, False)
        return [
            await ingest(
                self.records, tenant, stream, "t", "2026-01-01T00:00:00Z", f"s{i % 3}", b'{"i":1}'
            )
            for i in range(count)
        ]


async def proof_of(harness: Harness, origin: str, index: int, size: int) -> list[bytes]:
    def compute(node):
        return tree.inclusion_path(index, size, node)

    nodes = await harness.store.logs.log_nodes(origin, tree.nodes_needed(compute))
    return compute(lambda level, i: nodes[(level, i)])


def test_sealing_puts_every_chain_leaf_once_under_a_signed_checkpoint(store, tmp_path):
    async def scenario():
        async with Harness(store) as h:
            first = await h.ingest("acme", "orders", 5)
            batches = await h.sealer.seal_pending()
            assert [(b.first_index, b.size) for b in batches] == [(1, 6)]  # leaf 0 is genesis
            assert await h.sealer.seal_pending() == []  # nothing pending: nothing sealed
            second = await h.ingest("acme", "orders", 3)
            (batch,) = await h.sealer.seal_pending()
            assert (batch.first_index, batch.size) == (6, 9)

            origin = h.sealer.origin("acme")
            verifier = h.sealer.signer(origin).verifier()
            checkpoint, _ = open_checkpoint(batch.note, [verifier])
            assert (checkpoint.origin, checkpoint.size) == (origin, 9)
            for expected_index, record in enumerate(first + second, start=1):
                assert await h.store.logs.record_seal("acme", record.record_id) == (
                    origin,
                    expected_index,
                )
                proof = await proof_of(h, origin, expected_index, 9)
                verify_inclusion(record.header, expected_index, 9, proof, checkpoint.root_hash)
            genesis_proof = await proof_of(h, origin, 0, 9)
            verify_inclusion(
                tenant_genesis("acme", "default"), 0, 9, genesis_proof, checkpoint.root_hash
            )
            # Consecutive checkpoints are consistent.
            rows = await h.store.logs.checkpoints("acme", "default")
            assert [row.size for row in rows] == [6, 9]
            proof = await h.sealer.consistency(origin, 6, 9)
            verify_consistency(6, 9, rows[0].root, rows[1].root, proof)
            # For a leaf: the last checkpoint without it, and the first with it.
            sizes = {
                index: tuple(
                    c and c.size for c in await h.store.logs.checkpoints_around(origin, index)
                )
                for index in (0, 5, 6, 8, 9)
            }
            assert sizes == {0: (None, 6), 5: (None, 6), 6: (6, 9), 8: (6, 9), 9: (9, None)}

    asyncio.run(scenario())


def test_tenants_have_separate_logs(store, tmp_path):
    async def scenario():
        async with Harness(store) as h:
            await h.ingest("acme", "orders", 2)
            await h.ingest("globex", "orders", 1)
            batches = {b.origin: b for b in await h.sealer.seal_pending()}
            assert set(batches) == {"test.local/acme/default", "test.local/globex/default"}
            assert batches["test.local/globex/default"].size == 2

    asyncio.run(scenario())


def test_a_failed_seal_seals_nothing_and_the_next_one_everything(store, tmp_path):
    async def scenario():
        async with Harness(store) as h:
            records = await h.ingest("acme", "orders", 4)
            original = h.sealer.signers

            def broken(origin):
                raise RuntimeError("signing key unavailable")

            h.sealer.signers = broken  # type: ignore[method-assign]
            with pytest.raises(RuntimeError):
                await h.sealer.seal_pending()
            for record in records:
                assert await h.store.logs.record_seal("acme", record.record_id) is None
            assert await h.store.logs.checkpoints("acme", "default") == []
            h.sealer.signers = original  # type: ignore[method-assign]
            (batch,) = await h.sealer.seal_pending()
            assert (batch.first_index, batch.size) == (1, 5)
            indexes = [(await h.store.logs.record_seal("acme", r.record_id))[1] for r in records]
            assert indexes == [1, 2, 3, 4]

    asyncio.run(scenario())


def test_a_backlog_is_sealed_in_bounded_transactions(store, tmp_path):
    async def scenario():
        async with Harness(store, seal_limit=3) as h:
            records = await h.ingest("acme", "orders", 7)
            batches = await h.sealer.seal_pending()
            assert [(b.first_index, b.size) for b in batches] == [(1, 4), (4, 7), (7, 8)]
            indexes = [(await h.store.logs.record_seal("acme", r.record_id))[1] for r in records]
            assert indexes == list(range(1, 8))

    asyncio.run(scenario())
