"""``recordseal recover`` (``ledger.recovery``) after a real restore of each backend: the
fenced stream continues past every sequence number it signed, with a signed gap header; the
fenced log is retired for a successor whose leaf 0 commits to the predecessor's last signed
checkpoint; nothing is signed twice; a window across the gap verifies INCOMPLETE naming it
(docs/continuity.md, "Recover")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from recordseal import chain
from recordseal.clock import utc_datetime
from recordseal.core import leaf_hash
from recordseal.crypto.signing import HeaderSigner
from recordseal.fleet.transparency import write_day
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.recovery import ServiceRunning, recover
from recordseal.merkle.genesis import successor_genesis
from recordseal.services.disclosure import DisclosureService, Window
from recordseal.services.errors import NotFound
from recordseal.services.keys import key_directory
from recordseal.services.listing import Listing
from recordseal.services.proofs import ProofService
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store
from recordseal.storage.rows import SigningKeyRow
from recordseal.tlog import Ed25519Signer
from recordseal.verify.bundle import KeyDirectory
from recordseal.verify.transparency import TransparencyLogError, replay_log_file
from recordseal.verify.verifier import verify_bundle
from tests.continuity_support import SEED, SERVICE, Backup, Service, lose_a_sealed_record
from tests.pg_cluster import Cluster

BASE = f"{SERVICE}/acme/default"


def log_signer(origin: str) -> Ed25519Signer:
    return Ed25519Signer.from_seed(origin, SEED)


async def run_recover(settings: Settings):  # type: ignore[no-untyped-def]
    """What ``recordseal recover`` does, with the test keys and service origin."""
    store = open_store(settings)
    continuity = Continuity(open_journal(settings))
    await store.open()
    try:
        return await recover(store, continuity, HeaderSigner.from_seed(SEED), log_signer, SERVICE)
    finally:
        await continuity.close()
        await store.close()


def test_recover_declares_the_lost_range_and_starts_a_successor(
    store_settings: Settings, backup: Backup
) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.records.create_stream("beta", "s", None, False)
            first = await service.post("acme", "s", "bob", 1)
            await service.post("acme", "s", "carol", 2)
            await service.post("beta", "s", "dave", 1)
            await service.sealer.seal_pending()
        backup.take()
        async with Service(store_settings) as service:
            for n in (3, 4):
                await service.post("acme", "s", "erin", n)
            [sealed] = await service.sealer.seal_pending()
            assert (sealed.origin, sealed.size) == (BASE, 5)
            lost_root = sealed.root
            # Not sealed before the restore brings the store back: stays pending there.
        backup.restore()
        async with Service(store_settings) as service:
            pending = await service.post("beta", "s", "dave", 2)  # beta is not fenced
            assert pending.seq == 2

        report = await run_recover(store_settings)
        assert report.refused == []
        [gap] = report.gaps
        assert (gap.tenant, gap.stream, gap.from_seq, gap.seq) == ("acme", "s", 3, 5)
        [succession] = report.successions
        assert (succession.predecessor, succession.size, succession.root) == (BASE, 5, lost_root)
        assert succession.origin == f"{BASE}/2"
        assert succession.leaf == successor_genesis(BASE, 5, lost_root)

        async with Service(store_settings) as service:
            # Nothing is fenced any more; the stream goes on after the gap header.
            assert service.continuity.streams == {} and service.continuity.logs == {}
            assert service.sealer.origin("acme") == f"{BASE}/2"
            after = await service.post("acme", "s", "frank", 6)
            assert after.seq == 6
            sealed = {b.origin: b for b in await service.sealer.seal_pending()}
            assert sealed[f"{BASE}/2"].size == 3  # leaf 0, the gap header, record 6
            assert f"{SERVICE}/beta/default" in sealed  # beta's pending record, sealed
            # The successor's leaf 0 and first checkpoint.
            [one, three] = await service.store.logs.checkpoints("acme", "default")
            assert (one.origin, one.size, one.root) == (
                f"{BASE}/2",
                1,
                leaf_hash(successor_genesis(BASE, 5, lost_root)),
            )
            assert three.size == 3
            # No two checkpoints of one (log, size): the predecessor keeps its restored ones.
            old = [c.size for c in await _checkpoints_of(service, BASE)]
            assert old == sorted(set(old)) and max(old) == 3
            # The gap header is a record of the stream, never one a client can fetch.
            rows = await service.store.records.stream_records("acme", "s")
            assert [r.seq for r in rows] == [1, 2, 5, 6]
            header = json.loads(rows[2].header)
            assert header["format"] == chain.GAP_FORMAT
            assert (header["from_seq"], header["to_seq"], header["reason"]) == (
                3,
                4,
                "store_rolled_back",
            )
            assert header["prev"] == rows[1].chain_leaf.hex()
            assert json.loads(rows[3].header)["prev"] == rows[2].chain_leaf.hex()
            with pytest.raises(NotFound):
                await service.records.record("acme", rows[2].record_id)
            # A window across the gap: INCOMPLETE naming the declared range, never FAILED.
            signer = HeaderSigner.from_seed(SEED)
            await service.store.records.register_signing_key(
                SigningKeyRow(
                    signer.key_id, "Ed25519", signer.public_key, "2026-01-01T00:00:00Z", None, None
                )
            )
            keys = msgspec.convert(await key_directory(service.store, log_signer), KeyDirectory)
            assert {log.origin for log in keys.logs} >= {BASE, f"{BASE}/2"}
            disclosure = DisclosureService(
                service.store, service.records, ProofService(service.store, service.sealer)
            )
            for window, verdict_detail in (
                (Window(1, 6), f"seqs 3\u20134 declared lost on {header['declared_at'][:10]}"),
                (Window(5, 6), None),
            ):
                bundle = await disclosure.disclose("acme", after.record_id, [], window)
                result = verify_bundle(msgspec.json.encode(bundle), keys)
                check6 = result.checks[5]
                if verdict_detail is None:
                    assert check6.status == "passed", check6
                else:
                    assert check6.status == "unchecked" and verdict_detail in check6.detail
                assert result.verdict != "FAILED", result
            # The old record sealed in the predecessor still proves against it.
            old_bundle = await disclosure.disclose("acme", first.record_id, [], None)
            assert old_bundle.seal is not None and old_bundle.seal.log == BASE

    asyncio.run(scenario())


async def _checkpoints_of(service: Service, origin: str):  # type: ignore[no-untyped-def]
    found = []
    for size in range(1, 10):
        row = await service.store.logs.checkpoint_at(origin, size)
        if row is not None:
            found.append(row)
    return found


def test_a_recovered_stream_counts_and_lists_what_it_holds(
    store_settings: Settings, backup: Backup
) -> None:
    """After a gap declaration the stream's record count is what it holds (the gap header
    counted, the lost numbers not), read from its row; its listing shows the gap header in
    its place (docs/records.md, "Listing streams and records")."""

    async def scenario() -> None:
        await lose_a_sealed_record(store_settings, backup)
        report = await run_recover(store_settings)
        [gap] = report.gaps
        assert (gap.from_seq, gap.seq) == (2, 3)  # seq 2 declared lost, the gap header at 3
        async with Service(store_settings) as service:
            await service.post("acme", "s", "bob", 4)
            stream = await service.store.records.get_stream("acme", "s")
            assert stream is not None
            assert (stream.next_seq, stream.lost_seqs, stream.record_count) == (5, 1, 3)
            rows = await service.store.records.stream_records("acme", "s")
            assert stream.record_count == len(rows)
            page = await Listing(service.store).records("acme", "s", 1, 10)
            assert [item.record.seq for item in page.items] == [1, 3, 4]
            formats = [json.loads(item.record.header)["format"] for item in page.items]
            assert formats[1] == chain.GAP_FORMAT and chain.GAP_FORMAT not in (
                formats[0],
                formats[2],
            )
            assert not page.more
            [listed] = (await Listing(service.store).streams("acme", None, 10)).items
            assert listed.record_count == 3

    asyncio.run(scenario())


def test_recover_with_nothing_fenced_changes_nothing(store_settings: Settings) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "bob", 1)
            await service.sealer.seal_pending()
        report = await run_recover(store_settings)
        assert (report.gaps, report.successions, report.refused) == ([], [], [])
        async with Service(store_settings) as service:
            assert (await service.post("acme", "s", "bob", 2)).seq == 2
            assert service.sealer.origin("acme") == BASE

    asyncio.run(scenario())


def test_recover_refuses_while_a_service_runs(store_settings: Settings) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            assert await service.store.logs.claim_sealing()
            with pytest.raises(ServiceRunning):
                await run_recover(store_settings)

    asyncio.run(scenario())


def test_a_store_put_back_to_before_a_recover_is_fenced_again_and_recovered_again(
    store_settings: Settings, backup: Backup
) -> None:
    """A backup older than a recover: the journal names the successor, the store still has
    the predecessor live. The successor is fenced (never sealed from the predecessor's row)
    and a second recover starts a third log after the successor's last checkpoint."""

    async def scenario() -> None:
        await lose_a_sealed_record(store_settings, backup)
        first = await run_recover(store_settings)
        assert [s.origin for s in first.successions] == [f"{BASE}/2"]
        async with Service(store_settings) as service:
            assert (await service.post("acme", "s", "carol", 4)).seq == 4
            await service.sealer.seal_pending()
        backup.restore()  # the backup from before the recover
        async with Service(store_settings) as service:
            assert set(service.continuity.logs) == {f"{BASE}/2"}
            assert await service.sealer.seal_log("acme", "default") == []
        second = await run_recover(store_settings)
        [succession] = second.successions
        assert (succession.predecessor, succession.origin) == (f"{BASE}/2", f"{BASE}/3")
        [gap] = second.gaps
        assert (gap.from_seq, gap.seq) == (2, 5)  # seq 2..4 lost: 3 was the first gap header
        async with Service(store_settings) as service:
            assert service.continuity.logs == {} and service.continuity.streams == {}
            assert (await service.post("acme", "s", "carol", 6)).seq == 6
            [batch] = await service.sealer.seal_pending()
            assert batch.origin == f"{BASE}/3"

    asyncio.run(scenario())


def test_a_successor_log_has_transparency_files_that_replay_to_its_predecessor(
    store_settings: Settings, backup: Backup, tmp_path: Path
) -> None:
    """The day's file of a (tenant, fleet) after a recover is its successor's: its header names
    the predecessor checkpoint, and the replay checks leaf 0 against it (docs/fleets.md)."""

    async def scenario() -> None:
        lost = await lose_a_sealed_record(store_settings, backup)
        await run_recover(store_settings)
        async with Service(store_settings) as service:
            await service.post("acme", "s", "carol", 4)
            await service.sealer.seal_pending()
            today = utc_datetime().date()
            [path] = await write_day(service.store.logs, tmp_path / "t", today)
        data = path.read_bytes()
        replayed = replay_log_file(data, log_verifiers=[log_signer(f"{BASE}/2").verifier()])
        assert replayed.origin == f"{BASE}/2"
        assert replayed.predecessor == (BASE, lost.size, lost.root)
        assert [a.size for a in replayed.anchors] == [1, 3]
        header, _, rest = data.partition(b"\n")
        for change in ({"size": lost.size - 1}, {"origin": f"{SERVICE}/beta/default"}):
            forged = json.loads(header)
            forged["predecessor"].update(change)
            with pytest.raises(TransparencyLogError) as refused:
                replay_log_file(json.dumps(forged).encode() + b"\n" + rest)
            assert refused.value.code == "genesis_mismatch"
        plain = json.loads(header)
        del plain["predecessor"]  # a successor's file is not a first log's
        with pytest.raises(TransparencyLogError) as refused:
            replay_log_file(json.dumps(plain).encode() + b"\n" + rest)
        assert refused.value.code == "genesis_mismatch"

    asyncio.run(scenario())


def test_records_sealed_under_a_checkpoint_the_journal_never_accepted_move_to_the_successor(
    postgres: Cluster, tmp_path: Path
) -> None:
    """(PostgreSQL: the store is put back under running processes, as a failover does; a SQLite
    process keeps the files it opened.) A seal that raced a failover: process Y read the journal
    before the old leader's checkpoint of size 4 reached it, and signed size 3 over the store it
    now reaches (put back to size 2). Journaling it, Y finds the journal's size 4: the
    checkpoint is ``Unaccepted``, the log fenced, nothing offered. ``recover`` moves the record
    it sealed to the successor, like an unsealed one, so its bundle proves against a checkpoint
    the witnesses can accept."""
    store_settings = Settings(data_dir=tmp_path, database_url=postgres.url())
    backup = Backup(store_settings, postgres, tmp_path / "backup")

    async def scenario() -> None:
        async with Service(store_settings) as x:
            await x.records.create_stream("acme", "s", None, False)
            await x.records.create_stream("acme", "t", None, False)
            await x.post("acme", "s", "bob", 1)
            await x.sealer.seal_pending()
        backup.take()
        async with Service(store_settings) as y:
            async with Service(store_settings) as x:
                for n in (2, 3):
                    await x.post("acme", "s", "bob", n)
                [lost] = await x.sealer.seal_pending()
                assert lost.size == 4
            backup.restore()

            async def late(origin: str) -> None:  # the old leader's write not there yet
                return None

            y.continuity.before_seal = late  # type: ignore[method-assign]
            raced = await y.post("acme", "t", "carol", 1)
            [fork] = await y.sealer.seal_pending()
            assert fork.size == 3  # signed over the store Y reaches ...
            assert fork.origin in y.continuity.logs  # ... found unaccepted, fenced
            assert (fork.origin, 3) in y.continuity.state.unaccepted
        report = await run_recover(store_settings)
        [succession] = report.successions
        assert (succession.size, succession.keep) == (4, 2)
        async with Service(store_settings) as after:
            await after.sealer.seal_pending()
            seal = await after.store.logs.record_seal("acme", raced.record_id)
            assert seal is not None and seal[0] == succession.origin

    asyncio.run(scenario())
