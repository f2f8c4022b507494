"""The deployment's aggregate log (issue 32, item 3; docs/tlog.md, "The aggregate log"): its
entries commit to the tenant logs' checkpoints by hash alone, it is signed with the log key
under the service's origin, sealed at most once a second, journaled, and read as tiles by
anyone. On each storage backend."""

from __future__ import annotations

import asyncio
import hashlib
import struct

import pytest

from recordseal.core import leaf_hash, merkle_root, verify_consistency
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.sealer import AGGREGATE_INTERVAL, Sealer
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.services.errors import NotFound
from recordseal.services.records import RecordIn, RecordService
from recordseal.services.tiles import OPERATOR, TileService
from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.storage.rows import CheckpointRow
from recordseal.tlog import open_checkpoint
from recordseal.tlog.tiles import Tile, parse_entry_bundle
from tests import continuity_support
from tests.backends import opened
from tests.continuity_support import Backup, Service, fresh_continuity
from tests.ledger.test_recovery import run_recover

SEED = bytes(range(32))
SERVICE = "aggregate.test"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_entry_is_the_documented_hash() -> None:
    """SHA-256(tag ‖ le32(len(origin)) ‖ origin ‖ le64(size) ‖ root), spelt out here."""
    root = bytes(range(32))
    origin = "example.com/recordseal/tenant-a/fleet-1"
    expected = hashlib.sha256(
        b"recordseal-aggregate-entry-v1"
        + struct.pack("<I", 39)
        + origin.encode()
        + (5).to_bytes(8, "little")
        + root
    ).digest()
    assert aggregate_entry(origin, 5, root) == expected
    assert aggregate_entry(origin, 6, root) != expected
    assert aggregate_entry(origin + "x", 5, root) != expected
    with pytest.raises(ValueError):
        aggregate_entry(origin, 5, root[:31])


async def _ingest(records: RecordService, tenant: str, count: int) -> None:
    for n in range(count):
        await records.ingest(
            tenant, RecordIn("orders", "t", "2026-01-01T00:00:00Z", f"s{n}", b'{"n":1}')
        )


def test_the_aggregate_takes_every_tenant_checkpoint_once_a_second_at_most(store: Store) -> None:
    clock = Clock()
    continuity = fresh_continuity()
    sealer = Sealer(store.logs, SEED, SERVICE, clock=clock, continuity=continuity)

    async def scenario() -> None:
        async with opened(store):
            records = RecordService(
                store,
                KeyWrapper(bytes(32)),
                HeaderSigner.from_seed(bytes(32)),
                continuity=fresh_continuity(),
            )
            assert await sealer.seal_aggregate() is None  # no tenant checkpoint yet
            assert await store.logs.newest_checkpoint(SERVICE) is None
            for tenant in ("acme", "globex"):
                await records.create_stream(tenant, "orders", None, False)
            await _ingest(records, "acme", 2)
            await sealer.seal_pending()  # acme 3
            await _ingest(records, "acme", 1)
            await _ingest(records, "globex", 4)
            await sealer.seal_pending()  # acme 4, globex 5
            first = await sealer.seal_aggregate()
            assert first is not None and (first.first_index, first.size) == (0, 3)

            tenant_checkpoints: list[CheckpointRow] = [
                *await store.logs.checkpoints("acme", "default"),
                *await store.logs.checkpoints("globex", "default"),
            ]
            entries = [aggregate_entry(c.origin, c.size, c.root) for c in tenant_checkpoints]
            verifier = sealer.signer(SERVICE).verifier()
            checkpoint, _ = open_checkpoint(first.note, [verifier])
            assert (checkpoint.origin, checkpoint.size) == (SERVICE, 3)
            assert checkpoint.root_hash == merkle_root(entries)
            assert continuity.state.checkpoints[SERVICE].size == 3  # journaled

            # The entries are hashes: no tenant's name is in the aggregate's tiles.
            tiles = TileService(store.logs, SERVICE, public=[SERVICE])
            assert tiles.is_public(SERVICE) and not tiles.is_public(f"{SERVICE}/acme/default")
            log = await tiles.log(SERVICE, OPERATOR)
            bundle = await tiles.tile(log, Tile(None, 0, 3))
            assert parse_entry_bundle(bundle) == entries
            assert b"acme" not in bundle and b"globex" not in bundle
            hashes = await tiles.tile(log, Tile(0, 0, 3))
            assert hashes == b"".join(leaf_hash(entry) for entry in entries)
            with pytest.raises(NotFound):
                await tiles.tile(log, Tile(None, 0, 4))
            assert (await tiles.checkpoint(log)) == first.note

            # Where each checkpoint is in the aggregate.
            acme = f"{SERVICE}/acme/default"
            found = await store.logs.aggregated(acme, 0, None, newest=True)
            assert found is not None and (found[0].size, found[1]) == (4, 1)
            found = await store.logs.aggregated(acme, 0, None, newest=False)
            assert found is not None and (found[0].size, found[1]) == (3, 0)
            assert await store.logs.aggregated(acme, 0, 1, newest=True) == (
                tenant_checkpoints[0],
                0,
            )
            assert await store.logs.aggregated(acme, 3, 1, newest=True) is None
            assert await store.logs.aggregated(acme, 4, None, newest=True) is None

            # A new tenant checkpoint waits for the next second.
            await _ingest(records, "acme", 2)
            await sealer.seal_pending()  # acme 6
            clock.now += AGGREGATE_INTERVAL / 2
            assert await sealer.seal_aggregate() is None
            assert (await store.logs.newest_checkpoint(SERVICE)).size == 3  # type: ignore[union-attr]
            clock.now += AGGREGATE_INTERVAL / 2
            second = await sealer.seal_aggregate()
            assert second is not None and (second.first_index, second.size) == (3, 4)
            newest = await store.logs.checkpoints("acme", "default")
            entries.append(aggregate_entry(acme, 6, newest[-1].root))
            assert open_checkpoint(second.note, [verifier])[0].root_hash == merkle_root(entries)
            # Nothing new: no checkpoint, however long it waits.
            clock.now += 10 * AGGREGATE_INTERVAL
            assert await sealer.seal_aggregate() is None
            assert (await store.logs.newest_checkpoint(SERVICE)).size == 4  # type: ignore[union-attr]
            # It is a log like the others: listed for the key directory, not as an anchor.
            assert SERVICE in await store.logs.log_origins()
            assert SERVICE not in {a.origin for a in await store.logs.anchor_logs()}

    asyncio.run(scenario())


def test_a_store_behind_the_journal_fences_the_aggregate(store: Store) -> None:
    """The aggregate never signs a second checkpoint of one size: a journal that says more
    was signed than the store holds stops it (docs/continuity.md)."""
    continuity = fresh_continuity()
    clock = Clock()
    sealer = Sealer(store.logs, SEED, SERVICE, clock=clock, continuity=continuity)

    async def scenario() -> None:
        async with opened(store):
            records = RecordService(
                store,
                KeyWrapper(bytes(32)),
                HeaderSigner.from_seed(bytes(32)),
                continuity=fresh_continuity(),
            )
            await records.create_stream("acme", "orders", None, False)
            await _ingest(records, "acme", 1)
            await sealer.seal_pending()
            # The journal has a larger aggregate checkpoint than the store: a restore.
            await continuity.signed_checkpoint(SERVICE, 7, bytes(32), None, "")
            clock.now += AGGREGATE_INTERVAL
            assert await sealer.seal_aggregate() is None
            assert SERVICE in continuity.logs
            assert await store.logs.newest_checkpoint(SERVICE) is None

    asyncio.run(scenario())


def test_a_restore_fences_the_aggregate_and_recover_takes_it_up_from_its_frontier(
    store_settings: Settings, backup: Backup
) -> None:
    """A store put back behind the aggregate's last journaled checkpoint: at the next start
    the aggregate is fenced and signs nothing; ``recordseal recover`` takes it up again at that
    checkpoint from the frontier the journal keeps, so it goes on consistent with what the
    witnesses saw, its lost entries 404 as tiles (docs/tlog.md)."""
    aggregate = continuity_support.SERVICE

    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "bob", 1)
            await service.sealer.seal_pending()
            assert await service.sealer.seal_aggregate() is not None
        backup.take()
        async with Service(store_settings) as service:
            for n in (2, 3):
                await service.post("acme", "s", "bob", n)
                await service.sealer.seal_pending()
            signed = await service.sealer.seal_aggregate()
            assert signed is not None and signed.size == 3
            journaled = service.continuity.state.checkpoints[aggregate]
            assert journaled.size == 3 and len(journaled.frontier) == 2  # nodes (1,0), (0,2)
        backup.restore()
        async with Service(store_settings) as service:
            assert aggregate in service.continuity.logs
            assert await service.sealer.seal_aggregate() is None
            newest = await service.store.logs.newest_checkpoint(aggregate)
            assert newest is not None and newest.size == 1  # nothing signed twice for size 3
        report = await run_recover(store_settings)
        assert report.refused == []
        assert report.aggregate is not None and (report.aggregate.size, report.aggregate.root) == (
            3,
            signed.root,
        )
        assert [s.origin for s in report.successions] == [f"{aggregate}/acme/default/2"]
        async with Service(store_settings) as service:
            assert service.continuity.logs == {}
            taken_up = await service.store.logs.newest_checkpoint(aggregate)
            assert taken_up is not None and taken_up.note == signed.note  # the same checkpoint
            await service.post("acme", "s", "carol", 4)
            await service.sealer.seal_pending()
            grown = await service.sealer.seal_aggregate()
            assert grown is not None and grown.first_index == 3
            # Consistent with the checkpoint the witnesses may have cosigned before the restore.
            proof = await service.sealer.consistency(aggregate, 3, grown.size)
            verify_consistency(3, grown.size, signed.root, grown.root, proof)
            tiles = TileService(service.store.logs, aggregate, public=[aggregate])
            log = await tiles.log(aggregate, OPERATOR)
            with pytest.raises(NotFound) as lost:
                await tiles.tile(log, Tile(None, 0, 3))
            assert lost.value.code == "tile_lost"
            with pytest.raises(NotFound):
                await tiles.tile(log, Tile(0, 0, 3))
            assert len(await tiles.tile(log, Tile(0, 0, 1))) == 32  # entry 0 was kept

    asyncio.run(scenario())
