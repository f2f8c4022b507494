"""Continuity: after a restore of the database the service signs no second history, fences
what the store lost, keeps everything else working, and keeps erased subjects erased
(docs/continuity.md). Both backends; a real restore of each (a file copy of SQLite's
database while the service is stopped, ``pg_dump``/``pg_restore`` of PostgreSQL's schema)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from recordseal.crypto.vault import KeyWrapper
from recordseal.services.errors import Gone, Unavailable
from recordseal.settings import Settings
from recordseal.storage.journal import DirectoryJournal, Head, JournalState, Signed, read_segment
from recordseal.storage.placing import place
from recordseal.storage.records import Fenced
from recordseal.storage.requests import Append, Call, SubjectClaim
from tests.continuity_support import SERVICE, Backup, Service
from tests.ledger.test_recovery import run_recover
from tests.pg_cluster import Cluster


def test_a_restore_fences_what_the_store_lost_and_nothing_else(
    store_settings: Settings, backup: Backup
) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            for tenant in ("acme", "beta"):
                await service.records.create_stream(tenant, "s", None, False)
            bob = await service.post("acme", "s", "bob", 1)
            await service.post("acme", "s", "carol", 2)
            await service.post("beta", "s", "dave", 1)
            await service.sealer.seal_pending()
        backup.take()
        async with Service(store_settings) as service:
            third = await service.post("acme", "s", "erin", 3)
            assert third.seq == 3
            await service.sealer.seal_pending()
            await service.records.erase("acme", "bob")
        backup.restore()
        async with Service(store_settings) as service:
            fences = service.continuity
            assert set(fences.streams) == {("acme", "s")}
            assert [f.name for f in fences.logs.values()] == [f"{SERVICE}/acme/default"]
            # Nothing is signed for the fenced stream: 503 store_rolled_back naming it.
            with pytest.raises(Unavailable) as refused:
                await service.post("acme", "s", "frank", 33)
            assert (refused.value.code, refused.value.field) == ("store_rolled_back", "stream")
            assert "stream 's'" in str(refused.value)
            assert (await service.store.records.get_stream("acme", "s")).next_seq == 3  # type: ignore[union-attr]
            # ... nor for its log: no second checkpoint of size 4.
            assert await service.sealer.seal_log("acme", "default") == []
            sizes = [c.size for c in await service.store.logs.checkpoints("acme", "default")]
            assert 4 not in sizes
            # Another tenant's stream and log are not behind: they keep working.
            assert (await service.post("beta", "s", "dave", 2)).seq == 2
            assert [b.size for b in await service.sealer.seal_pending()] == [3]
            # The erasure made after the backup holds: no payload, no new record for bob.
            with pytest.raises(Gone):
                await service.records.payload("acme", bob.record_id)
            index = KeyWrapper(bytes(32)).subject_index("acme", "bob")
            subject = (await service.store.records.get_subjects("acme", [index]))[index]
            assert subject.wrapped_key is None and subject.erased_at is not None

    asyncio.run(scenario())


def test_an_erased_subject_the_backup_never_held_stays_erased(
    store_settings: Settings, backup: Backup
) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            for stream in ("s", "u"):
                await service.records.create_stream("acme", stream, None, False)
            await service.post("acme", "s", "carol", 1)
        backup.take()
        async with Service(store_settings) as service:
            await service.post("acme", "s", "zoe", 2)
            await service.records.erase("acme", "zoe")
        backup.restore()
        async with Service(store_settings) as service:
            # The store never knew zoe; it does now, as erased: never silently re-keyed.
            with pytest.raises(Gone):
                await service.post("acme", "u", "zoe", 3)
            index = KeyWrapper(bytes(32)).subject_index("acme", "zoe")
            subject = (await service.store.records.get_subjects("acme", [index]))[index]
            assert subject.wrapped_key is None

    asyncio.run(scenario())


def test_a_restart_without_a_restore_fences_nothing(store_settings: Settings) -> None:
    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            for n in range(5):
                await service.post("acme", "s", f"s{n}", n)
            await service.sealer.seal_pending()
            await service.post("acme", "s", "late", 9)  # journaled, not sealed
        async with Service(store_settings) as service:
            assert (service.continuity.streams, service.continuity.logs) == ({}, {})
            assert (await service.post("acme", "s", "again", 10)).seq == 7
            assert await service.sealer.seal_pending()

    asyncio.run(scenario())


def test_a_store_ahead_of_the_journal_is_not_behind(store_settings: Settings) -> None:
    """A crash between the commit and the journal write leaves the journal behind the store
    (nobody was answered): that is no rollback."""

    async def scenario() -> None:
        async with Service(store_settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "a", 1)
        for path in store_settings.journal_dir.glob("*.jsonl"):
            path.unlink()  # as if the journal never heard of it
        async with Service(store_settings) as service:
            assert service.continuity.streams == {}
            assert (await service.post("acme", "s", "b", 2)).seq == 2

    asyncio.run(scenario())


def test_placement_refuses_every_append_of_a_stream_found_behind() -> None:
    asked = []

    def behind(next_seq: int, prev: bytes) -> bool:
        asked.append(next_seq)
        return True

    class Rows:
        def stored_key(self, tenant: str, key: str) -> None:
            return None

        def stored_subject(self, tenant: str, subject: SubjectClaim) -> tuple[str, bool]:
            return subject.subject_ref, True

        def head(self, stream_id: int) -> tuple[int, bytes]:
            return (3, b"x" * 32)

    claim = SubjectClaim(b"i", "ref", None)
    calls = [Call("acme", [Append(1, claim, f"r{n}", None, None, behind) for n in range(3)])]

    def build(*args: object) -> list:  # type: ignore[type-arg]
        raise AssertionError("nothing may be built for a fenced stream")

    outcomes = place(calls, Rows(), build).outcomes
    assert outcomes == [Fenced(1)] * 3
    assert asked == [3]  # asked once per stream and transaction


def test_the_journal_merges_by_maximum_and_checks_its_chain(tmp_path: Path) -> None:
    state = JournalState()
    assert state.add(Head("t", "s", 5, b"a" * 32))
    assert not state.add(Head("t", "s", 3, b"b" * 32))
    assert state.add(Signed("o", 4, b"r" * 32))
    assert not state.add(Signed("o", 4, b"x" * 32))
    assert state.conflicts == [(Signed("o", 4, b"r" * 32), Signed("o", 4, b"x" * 32))]

    journal = DirectoryJournal(tmp_path / "j")
    journal.open()
    journal.append_now([Head("t", "s", 1, b"a" * 32)])
    journal.append_now([Head("t", "s", 2, b"b" * 32)])
    # One write keeps the largest head per stream: one line, not one per entry.
    journal.append_now([Head("t", "u", n, b"c" * 32) for n in (3, 5, 4)])
    journal.close()
    (segment,) = (tmp_path / "j").glob("*.jsonl")
    assert [e.seq for e in read_segment(segment).entries] == [1, 2, 5]  # type: ignore[union-attr]
    # A torn last line (a crash mid-write) is left out; a changed line breaks the chain.
    with segment.open("ab") as f:
        f.write(b'{"prev": "00", "k": "head"')
    assert len(read_segment(segment).entries) == 3
    lines = segment.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"seq":1', b'"seq":7')
    segment.write_bytes(b"\n".join(lines))
    with pytest.raises(Exception, match="line 3"):
        read_segment(segment)


def test_a_new_writer_absorbs_the_segments_of_writers_that_died(tmp_path: Path) -> None:
    directory = tmp_path / "j"
    for n in range(3):
        journal = DirectoryJournal(directory)
        journal.open()
        journal.append_now([Head("t", f"s{n}", n + 1, bytes(32))])
        journal.close()  # its process died: the lock is gone
    live = DirectoryJournal(directory)
    state = live.open()
    assert len(list(directory.glob("*.jsonl"))) == 1
    assert {k: h.seq for k, h in state.heads.items()} == {
        ("t", "s0"): 1,
        ("t", "s1"): 2,
        ("t", "s2"): 3,
    }
    live.close()


def test_a_writer_rotates_its_segment_keeping_its_state(tmp_path: Path) -> None:
    journal = DirectoryJournal(tmp_path / "j", rotate_bytes=2000)
    journal.open()
    for seq in range(1, 60):
        journal.append_now([Head("t", "s", seq, bytes(32)), Signed("o", seq, bytes(32))])
    segments = list((tmp_path / "j").glob("*.jsonl"))
    assert len(segments) == 1 and segments[0].stat().st_size < 4000
    state = journal.read_now()
    assert (state.heads[("t", "s")].seq, state.checkpoints["o"].size) == (59, 59)
    journal.close()


def test_a_signed_entry_names_its_logs_scope_and_older_lines_still_read() -> None:
    from recordseal.storage.journal import decode, encode

    scoped = Signed("svc/acme/default", 4, bytes(32), "acme", "default")
    assert decode(encode(scoped)) == scoped
    legacy = Signed("svc/fleet-1", 4, bytes(32), None, "fleet-1")
    assert decode(encode(legacy)) == legacy
    older = {"k": "signed", "origin": "svc/acme/default", "size": 4, "root": "00" * 32}
    assert decode(older) == Signed("svc/acme/default", 4, bytes(32))


def test_a_failover_while_two_processes_run_is_caught_by_the_one_that_never_wrote_the_stream(
    postgres: Cluster, tmp_path: Path
) -> None:
    """Process B never wrote stream s; process A wrote it up to seq 3. The database goes back
    to seq 1 while both run (a restore, as a failover to a late replica does), and every
    connection is cut. B's next append reconnects, reads the journal again, and is fenced:
    without that it would sign a second seq 2 (docs/continuity.md, "Detect and fence")."""
    settings = Settings(data_dir=tmp_path, database_url=postgres.url())
    backup = Backup(settings, postgres, tmp_path / "backup")

    async def scenario() -> None:
        async with Service(settings) as a:
            await a.records.create_stream("acme", "s", None, False)
            await a.records.create_stream("acme", "t", None, False)
            await a.post("acme", "s", "bob", 1)
            backup.take()
            async with Service(settings) as b:
                await b.post("acme", "t", "carol", 1)  # B's writer connection is open
                for n in (2, 3):
                    await a.post("acme", "s", "bob", n)
                backup.restore()
                # The failover cuts the appends' connections (the pools' are left alone
                # here: a pooled connection cut while idle fails its next query once).
                await _terminate(postgres, [b.store.records._writer._conn.get_server_pid()])  # type: ignore[union-attr]
                with pytest.raises(Unavailable) as refused:
                    await b.post("acme", "s", "dave", 2)
                assert refused.value.code == "store_rolled_back"
                assert ("acme", "s") in b.continuity.streams
                stream = await b.store.records.get_stream("acme", "s")
                assert stream is not None and stream.next_seq == 2  # nothing appended

    asyncio.run(scenario())


async def _terminate(cluster: Cluster, pids: list[int]) -> None:
    import asyncpg

    conn = await asyncpg.connect(cluster.base_url)
    try:
        await conn.execute("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", pids)
    finally:
        await conn.close()


@pytest.mark.parametrize("journal_kind", ["directory", "database"])
def test_a_process_that_never_sealed_reads_the_journal_before_it_signs(
    postgres: Cluster, journal_server: Cluster, tmp_path: Path, journal_kind: str
) -> None:
    """The sealing role moves to a process that never sealed this log (a failover: the old
    leader's lock went with the old primary). A sealed the log to a size the store then
    lost (put back while both run, no connection broken); B appends to another stream of
    the same log, so the store's log has pending leaves at positions A had sealed. B's seal
    reads the journal's last signed checkpoint first and refuses: without that read it
    signed a second checkpoint at a size A had signed. Its fence is journaled, and A takes
    it up (every process refuses the same log)."""
    journal = None if journal_kind == "directory" else journal_server.url()
    settings = Settings(data_dir=tmp_path, database_url=postgres.url(), journal=journal)
    backup = Backup(settings, postgres, tmp_path / "backup")

    async def scenario() -> None:
        async with Service(settings) as a:
            await a.records.create_stream("acme", "s", None, False)
            await a.records.create_stream("acme", "t", None, False)
            await a.post("acme", "s", "bob", 1)
            await a.sealer.seal_pending()
            backup.take()
            async with Service(settings) as b:
                for n in (2, 3):
                    await a.post("acme", "s", "bob", n)
                [signed] = await a.sealer.seal_pending()
                backup.restore()
                await b.post("acme", "t", "carol", 1)  # a stream A never wrote: not fenced
                assert await b.sealer.seal_pending() == []
                assert signed.origin in b.continuity.logs
                checkpoints = await b.store.logs.latest_checkpoints()
                assert [c.checkpoint.size for c in checkpoints] == [signed.size - 2]
                await b.continuity.share()
                await a.continuity.adopt_shared()
                assert set(a.continuity.logs) == {signed.origin}
                # A stream B never wrote, rolled back: its first append reads the journal.
                with pytest.raises(Unavailable) as refused:
                    await b.post("acme", "s", "dave", 2)
                assert refused.value.code == "store_rolled_back"

    asyncio.run(scenario())


def test_sqlite_files_put_back_under_a_running_service_are_fenced_at_the_next_start(
    tmp_path: Path,
) -> None:
    """The directory journal's promise for a rollback that breaks no connection: SQLite's
    files replaced by an older copy while a process runs. That process keeps the files it
    opened (what it acknowledges next is lost with them when it stops), so nothing it signs
    meets the older store; the next start compares the store with the journal and fences
    every stream and log the copy lost, and ``recover`` declares the loss
    (docs/continuity.md, "What stays undetected")."""
    settings = Settings(data_dir=tmp_path)
    backup = Backup(settings, None, tmp_path / "backup")

    async def scenario() -> None:
        async with Service(settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "bob", 1)
            await service.sealer.seal_pending()
        backup.take()
        async with Service(settings) as running:
            assert (await running.post("acme", "s", "bob", 2)).seq == 2
            backup.restore()  # under the running process
            assert (await running.post("acme", "s", "bob", 3)).seq == 3
            [sealed] = await running.sealer.seal_pending()
        async with Service(settings) as after:
            assert set(after.continuity.streams) == {("acme", "s")}
            assert set(after.continuity.logs) == {sealed.origin}
            stream = await after.store.records.get_stream("acme", "s")
            assert stream is not None and stream.next_seq == 2
        report = await run_recover(settings)
        assert [(g.from_seq, g.seq) for g in report.gaps] == [(2, 4)]  # 2-3 lost, gap at 4

    asyncio.run(scenario())
