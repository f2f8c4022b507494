"""The deployment's aggregate log (issue 32, item 3; docs/tlog.md, "The aggregate log"): its
entries commit to the tenant logs' checkpoints by hash alone, it is signed with the log key
under the service's origin, sealed at most once a second, journaled, and read as tiles by
anyone. On each storage backend."""

from __future__ import annotations

import asyncio
import hashlib
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from litestar.testing import TestClient

from recordseal.core import leaf_hash, merkle_root, verify_consistency
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.identifiers import DEFAULT_FLEET as DEFAULT
from recordseal.ledger.log_keys import RELOAD_SECONDS, LogKeyring, complete, log_keys, rotate
from recordseal.ledger.sealer import AGGREGATE_INTERVAL, Sealer, Witness
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.network.witness_client import WitnessClient
from recordseal.ops.recover import run_recover as recover_with_settings
from recordseal.ops.tokens import create_token
from recordseal.services.errors import NotFound
from recordseal.services.records import RecordService
from recordseal.services.tiles import OPERATOR, TileService
from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.storage.postgres import schema as postgres_schema
from recordseal.storage.rows import CheckpointRow, SealedBatch
from recordseal.storage.sqlite import schema as sqlite_schema
from recordseal.tlog import (
    MLDSA44,
    Checkpoint,
    Ed25519Signer,
    cosigner_verifier,
    open_checkpoint,
    parse_note,
)
from recordseal.tlog.tiles import Tile, parse_entry_bundle
from recordseal.verify.sealing import signed_algorithms
from recordseal.web.app import create_app
from recordseal.web.state import AppServices
from tests import continuity_support
from tests.backends import opened, query
from tests.continuity_support import Backup, Service, fresh_continuity
from tests.ingesting import ingest
from tests.ledger.test_recovery import run_recover
from tests.servers import free_port, witness_key, witness_server
from tests.storage.schema_support import take_back

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
        await ingest(records, tenant, "orders", "t", "2026-01-01T00:00:00Z", f"s{n}", b'{"n":1}')


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


def test_the_aggregate_is_signed_as_the_tenant_logs_are_through_a_rotation(
    store: Store, tmp_path: Path
) -> None:
    """Every aggregate checkpoint is signed by the sealer's one signing function
    (``log_keys.checkpoint_signer``) with every log key not retired, as a tenant log's:
    Ed25519 and ML-DSA-44 (dual-signed), both generations during a rotation, the newest alone
    once it is complete. What a trust store requiring both algorithms asks of it (rule 5.14)
    holds at every step."""
    keys_dir = tmp_path / "keys"
    clock = Clock()
    keyring = LogKeyring(log_keys(keys_dir), keys_dir, clock=clock)  # generation 1 made
    continuity = fresh_continuity()
    sealer = Sealer(store.logs, keyring, SERVICE, clock=clock, continuity=continuity)
    tenant = f"{SERVICE}/acme/default"

    def log_lines(note: str, origin: str) -> list[tuple[int, bytes]]:
        """(signature type, public key) of every log signature of ``note``, each verified
        with the keys the sealer holds for ``origin``."""
        verifiers = [signer.verifier() for signer in sealer.every(origin)]
        _, opened_note = open_checkpoint(note, verifiers)
        assert len(opened_note.verified) == len(parse_note(note).signatures)
        keys = {(v.name, v.key_id): v for v in verifiers}
        policy = signed_algorithms(opened_note.verified, verifiers)
        assert policy == {"Ed25519", "ML-DSA-44"}  # what checkpoint_signatures may require
        found = [keys[(s.name, s.key_id)] for s in opened_note.verified]
        return sorted((v.SIGNATURE_TYPE, v.public_key) for v in found)

    async def seal_round(records: RecordService) -> tuple[str, str]:
        """A record sealed, then the aggregate: the newest notes of the tenant log and of
        the aggregate."""
        await _ingest(records, "acme", 1)
        clock.now += max(AGGREGATE_INTERVAL, RELOAD_SECONDS)  # the keys directory re-read
        await sealer.seal_pending()
        aggregate = await sealer.seal_aggregate()
        assert aggregate is not None
        newest = await store.logs.newest_checkpoint(tenant)
        assert newest is not None
        return newest.note, aggregate.note

    async def scenario() -> None:
        async with opened(store):
            records = RecordService(
                store,
                KeyWrapper(bytes(32)),
                HeaderSigner.from_seed(bytes(32)),
                continuity=fresh_continuity(),
            )
            await records.create_stream("acme", "orders", None, False)
            generations = []
            for step in ("one generation", "rotating", "rotation complete"):
                if step == "rotating":
                    rotate(keys_dir)
                elif step == "rotation complete":
                    complete(keys_dir)
                tenant_note, aggregate_note = await seal_round(records)
                lines = log_lines(aggregate_note, SERVICE)
                # The same keys as the tenant log's, under the service's origin.
                assert lines == log_lines(tenant_note, tenant)
                assert [kind for kind, _ in lines].count(MLDSA44) == len(lines) // 2
                generations.append(len(lines))
            assert generations == [2, 4, 2]  # Ed25519 and ML-DSA-44 of each live generation

    asyncio.run(scenario())


def test_witnesses_ahead_of_a_restored_store_never_see_a_second_history(
    store_settings: Settings, backup: Backup, tmp_path: Path
) -> None:
    """After a restore the aggregate's witnesses may hold a size the store lost (docs/
    continuity.md, "Recover"). Checkpoints are journaled before they are offered, so the
    journal's last one is at least what any witness cosigned: ``recover`` takes the aggregate
    up there (its origin, its checkpoint), and real witnesses then see one history. Witness A
    cosigned that last checkpoint: it cosigns the next one, consistent with it. Witness B
    was down when it was offered and holds an earlier size inside what the store lost: no
    consistency proof from there can be made (``consistency_unavailable``), so B cosigns
    nothing more, and neither witness ever holds a second root for a size."""
    aggregate = continuity_support.SERVICE
    log_vkey = Ed25519Signer.from_seed(aggregate, SEED).verifier().vkey
    dirs = {name: tmp_path / name for name in ("a", "b")}
    vkeys = {name: witness_key(folder, f"witness.{name}") for name, folder in dirs.items()}
    port_b = free_port()

    def witness(name: str, url: str) -> Witness:
        client = WitnessClient(
            url, [cosigner_verifier(vkeys[name])], attempts=2, backoff_seconds=0.01
        )
        return Witness(f"witness.{name}", client, "aggregate")

    async def monitored(url: str) -> Checkpoint:
        """The checkpoint the witness last cosigned (its monitoring API)."""
        origin_hash = hashlib.sha256(aggregate.encode()).hexdigest()
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{url}/monitor/{origin_hash}/checkpoint")
        assert answer.status_code == 200, answer.text
        return Checkpoint.parse(parse_note(answer.text).text)

    async def round_(witnesses: list[Witness], n: int) -> SealedBatch:
        """A record, the tenant log sealed, an aggregate checkpoint, offered to witnesses."""
        async with Service(store_settings, witnesses) as service:
            if n == 1:
                await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "bob", n)
            await service.sealer.seal_pending()
            sealed = await service.sealer.seal_aggregate()
            assert sealed is not None and sealed.size == n
            await service.sealer.offer_due()
            failing = service.sealer.offer_failures()
            assert {name for _, name in failing} <= {"witness.b"}, failing
            return sealed

    async def scenario(url_a: str) -> None:
        signed: dict[int, SealedBatch] = {}
        with witness_server(dirs["b"], "witness.b", {aggregate: log_vkey}, port_b) as url_b:
            both = [witness("a", url_a), witness("b", url_b)]
            signed[1] = await round_(both, 1)
            backup.take()  # the store's aggregate at size 1
            for n in (2, 3):
                signed[n] = await round_(both, n)
            assert (await monitored(url_b)).size == 3
        # B is down: size 4 is signed, journaled and cosigned by A alone.
        signed[4] = await round_([witness("a", url_a), witness("b", url_b)], 4)
        assert (await monitored(url_a)).size == 4
        backup.restore()
        async with Service(store_settings) as service:
            assert aggregate in service.continuity.logs  # the journal says 4 was signed
            assert await service.sealer.seal_aggregate() is None
        report = await run_recover(store_settings)
        assert report.aggregate is not None
        assert (report.aggregate.size, report.aggregate.root) == (4, signed[4].root)
        with witness_server(dirs["b"], "witness.b", {aggregate: log_vkey}, port_b) as url_b:
            async with Service(store_settings, [witness("a", url_a), witness("b", url_b)]) as s:
                await s.post("acme", "s", "bob", 5)
                await s.sealer.seal_pending()
                fifth = await s.sealer.seal_aggregate()
                # The successor's first checkpoint (from recover) and the new one.
                assert fifth is not None and (fifth.first_index, fifth.size) == (4, 6)
                await s.sealer.offer_due()
                failing = s.sealer.offer_failures()
                assert failing == {(aggregate, "witness.b"): (1, "consistency_unavailable")}
            # A goes on from the checkpoint it cosigned; B keeps its own, unchanged.
            cosigned_a, cosigned_b = await monitored(url_a), await monitored(url_b)
            assert (cosigned_a.size, cosigned_a.root_hash) == (6, fifth.root)
            assert (cosigned_b.size, cosigned_b.root_hash) == (3, signed[3].root)

    with witness_server(dirs["a"], "witness.a", {aggregate: log_vkey}) as url_a:
        asyncio.run(scenario(url_a))


def test_an_upgraded_deployment_starts_its_aggregate_and_is_ready(
    store_settings: Settings, backup: Backup
) -> None:
    """A deployment upgraded from a version without the aggregate log (docs/operations.md,
    "The continuity journal after a restore or a failover"): its journal holds tenant
    checkpoints and nothing of the aggregate, so nothing is fenced, ``/readyz`` answers 200,
    and the aggregate starts at size 0 taking every tenant checkpoint. Only a journal that
    proves an aggregate checkpoint was signed, which the store no longer has, fences it."""
    settings = msgspec.structs.replace(store_settings, seal_interval=0, transparency_interval=0)
    origin = settings.origin
    schema = postgres_schema if settings.database_url else sqlite_schema
    ready_detail = "0 streams and 1 logs are fenced"

    def serve(work: Callable[[TestClient[Any], AppServices], Any]) -> Any:
        app = create_app(settings)
        with TestClient(app) as client:
            return work(client, app.state.services)

    def before_the_aggregate(client: TestClient[Any], services: AppServices) -> int:
        token = asyncio.run(create_token(settings, "acme", "t"))
        headers = {"Authorization": f"Bearer {token}"}
        assert client.post("/v1/streams", json={"name": "s"}, headers=headers).status_code == 201
        for n in range(3):
            record = {"stream": "s", "record_type": "t", "occurred_at": "2026-11-26T08:00:00Z",
                      "subject_id": f"s{n}", "payload": {"n": n}}  # fmt: skip
            assert client.post("/v1/records", json=record, headers=headers).status_code == 201
            client.blocking_portal.call(services.sealer.seal_pending)
        # The tenant log's checkpoints: its genesis (size 1) and one per record.
        return len(client.blocking_portal.call(services.store.logs.checkpoints, "acme", DEFAULT))

    tenant_checkpoints = serve(before_the_aggregate)
    # The database of the version before: the aggregate's migration (SQLite 14, PostgreSQL
    # 12) and those after it undone, its rows kept as that version held them
    # (tests/storage/schema_support.py); its journal never had an aggregate entry.
    take_back(settings, (12 if settings.database_url else 14) - 1)
    backup.take()

    def upgraded(client: TestClient[Any], services: AppServices) -> SealedBatch:
        assert client.get("/readyz").status_code == 200
        assert (
            services.continuity.logs == {} and origin not in services.continuity.state.checkpoints
        )
        sealed = client.blocking_portal.call(services.sealer.seal_aggregate)
        assert sealed is not None and (sealed.first_index, sealed.size) == (0, tenant_checkpoints)
        assert services.continuity.state.checkpoints[origin].size == tenant_checkpoints
        assert client.get("/readyz").status_code == 200
        return sealed

    sealed = serve(upgraded)
    assert query(settings, "SELECT max(version) FROM schema_version") == [(len(schema.MIGRATIONS),)]

    # The database put back to before the upgrade: the journal now proves size n was signed.
    backup.restore()

    def fenced(client: TestClient[Any], services: AppServices) -> None:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["code"] == "store_rolled_back"
        assert ready.json()["detail"].startswith(ready_detail)
        assert list(services.continuity.logs) == [origin]
        assert client.blocking_portal.call(services.sealer.seal_aggregate) is None

    serve(fenced)
    report = asyncio.run(recover_with_settings(settings))
    assert (report.aggregate.size, report.aggregate.root) == (sealed.size, sealed.root)
    assert report.successions == [] and report.gaps == [] and report.refused == []

    def recovered(client: TestClient[Any], services: AppServices) -> None:
        assert client.get("/readyz").status_code == 200
        newest = client.blocking_portal.call(services.store.logs.newest_checkpoint, origin)
        assert newest is not None and (newest.size, newest.root) == (sealed.size, sealed.root)

    serve(recovered)
