"""The continuity journal in a PostgreSQL database on another server than the store's
(``RECORDSEAL_JOURNAL=postgresql://…``, docs/continuity.md): writers merge by maximum, a
running writer is seen, and a restore of the store is fenced and recovered as with a
directory. Two real clusters: the store's (``postgres``) and the journal's
(``journal_server``)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from pathlib import Path

import pytest

from recordseal.settings import Settings
from recordseal.storage.backends import BackendError, open_journal
from recordseal.storage.journal import Erased, Head, JournalError, Retired, Signed
from recordseal.storage.postgres.journal import PostgresJournal, redacted
from tests.continuity_support import SERVICE, Backup, Service
from tests.ledger.test_recovery import run_recover
from tests.pg_cluster import Cluster


def test_writers_of_a_journal_database_merge_by_maximum(journal_server: Cluster) -> None:
    url = journal_server.url()

    async def scenario() -> None:
        one, two = PostgresJournal(url), PostgresJournal(url)
        assert (await one.load()).heads == {}
        await two.load()
        assert await one.other_writers() == 1 and await two.other_writers() == 1
        leaf = bytes(32)
        await asyncio.gather(
            one.append([Head("acme", "s", 5, leaf), Signed("o", 4, b"r" * 32, "acme", "f")]),
            two.append([Head("acme", "s", 3, b"x" * 32), Head("acme", "t", 1, leaf)]),
        )
        await two.append([Signed("o", 2, b"q" * 32), Signed("o", 4, b"z" * 32)])
        early, late = "2026-11-26T08:00:00Z", "2026-11-26T09:00:00Z"
        await one.append([Erased("acme", b"i" * 32, "ref", late)])
        await two.append([Erased("acme", b"i" * 32, "ref", early)])
        await one.append([Retired("o", 4, b"r" * 32, "o/2")])
        await two.append([Retired("o", 9, b"w" * 32, "o/3")])  # the first retirement stays
        reader = PostgresJournal(url)
        state = await reader.read()
        await reader.aclose()
        assert state.heads[("acme", "s")] == Head("acme", "s", 5, leaf)
        assert state.heads[("acme", "t")].seq == 1
        assert state.checkpoints["o"] == Signed("o", 4, b"r" * 32, "acme", "f")
        assert state.conflicts == [(Signed("o", 4, b"r" * 32), Signed("o", 4, b"z" * 32))]
        assert state.erasures[("acme", b"i" * 32)].erased_at == early
        assert state.retired["o"].successor == "o/2"
        await two.aclose()
        assert await one.other_writers() == 0  # the lock went with its holder
        await one.aclose()

    asyncio.run(scenario())


def test_a_restore_with_the_journal_on_another_server_is_fenced_and_recovered(
    postgres: Cluster, journal_server: Cluster, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path, database_url=postgres.url(), journal=journal_server.url()
    )
    backup = Backup(settings, postgres, tmp_path / "backup")

    async def scenario() -> None:
        async with Service(settings) as service:
            await service.records.create_stream("acme", "s", None, False)
            await service.post("acme", "s", "bob", 1)
            await service.sealer.seal_pending()
        backup.take()
        async with Service(settings) as service:
            assert (await service.post("acme", "s", "bob", 2)).seq == 2
            await service.sealer.seal_pending()
        backup.restore()  # the store only: the journal's server is not touched
        async with Service(settings) as service:
            assert set(service.continuity.streams) == {("acme", "s")}
            assert set(service.continuity.logs) == {f"{SERVICE}/acme/default"}
        report = await run_recover(settings)
        assert [(g.from_seq, g.seq) for g in report.gaps] == [(2, 3)]
        assert [s.origin for s in report.successions] == [f"{SERVICE}/acme/default/2"]
        async with Service(settings) as service:
            assert service.continuity.streams == {} and service.continuity.logs == {}
            assert (await service.post("acme", "s", "bob", 4)).seq == 4
            [batch] = await service.sealer.seal_pending()
            assert batch.origin == f"{SERVICE}/acme/default/2"
        assert not list(tmp_path.glob("journal"))  # nothing was journaled in the data dir

    asyncio.run(scenario())


def test_a_journal_on_the_stores_own_server_is_refused(postgres: Cluster, tmp_path: Path) -> None:
    """It would be restored and failed over with the store: it could not remember."""
    store = postgres.url()
    same = Settings(data_dir=tmp_path, database_url=store, journal=postgres.url())
    with pytest.raises(BackendError, match="store's own PostgreSQL server"):
        open_journal(same)
    refused = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "recover", "--data-dir", str(tmp_path),
         "--database-url", store],
        capture_output=True, text=True, env={"RECORDSEAL_JOURNAL": postgres.url(), "PATH": ""},
        timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert "store's own PostgreSQL server" in refused.stderr


def test_a_journal_url_is_named_without_its_password() -> None:
    assert (
        redacted("postgresql://u:s3cret@db.example:5433/j")
        == "postgresql://u:***@db.example:5433/j"
    )
    assert redacted("postgresql://db.example/j") == "postgresql://db.example/j"


def test_a_journal_whose_server_went_away_closes_without_leaving_a_connection_open() -> None:
    """``aclose`` after the journal's server stopped: no error, and neither the lock holder nor
    the pool's connections are left open (each would be a ResourceWarning, an error here)."""
    cluster = Cluster.start()
    url = cluster.url()
    journal = PostgresJournal(url)
    stopped = False

    async def scenario() -> None:
        nonlocal stopped
        await journal.load()
        holder, pool = journal._holder, journal._pool
        assert holder is not None and pool is not None
        cluster.stop()
        stopped = True
        await journal.aclose()
        assert holder.is_closed()
        assert pool._closed  # asyncpg's own flag: close() or terminate() ran
        assert journal._holder is None and journal._pool is None
        with pytest.raises(JournalError):  # and one that cannot start holds nothing open
            await PostgresJournal(url).load()

    try:
        asyncio.run(scenario())
    finally:
        if not stopped:
            cluster.stop()
    gc.collect()  # an unclosed connection's ResourceWarning would surface now


def test_processes_starting_together_on_a_new_journal_database_all_start(
    journal_server: Cluster,
) -> None:
    """Every worker of ``serve --workers N`` opens the journal at once; on a new journal
    database each makes its tables. Made under a lock, they all start (without it, most
    starts failed on a duplicate ``pg_type`` row)."""
    for _ in range(4):
        url = journal_server.url()  # a new, empty schema

        async def scenario(url: str = url) -> None:
            journals = [PostgresJournal(url) for _ in range(6)]
            try:
                states = await asyncio.gather(*(j.load() for j in journals))
                assert all(state.heads == {} for state in states)
                await journals[0].append([Head("acme", "s", 1, bytes(32))])
                assert (await journals[5].read()).heads[("acme", "s")].seq == 1
            finally:
                for journal in journals:
                    await journal.aclose()

        asyncio.run(scenario())


def test_writers_taking_heads_in_opposite_orders_never_deadlock(journal_server: Cluster) -> None:
    """Two writers journal the heads of the same streams, named in opposite orders, at once
    and many times: each write takes its rows in one order (``journal.write_order``), so
    neither waits for the other's rows while holding ones the other wants (a deadlock
    answered a client 500 although its records were stored)."""
    url = journal_server.url()
    names = [f"s{n:02}" for n in range(24)]

    async def scenario() -> None:
        one, two = PostgresJournal(url), PostgresJournal(url)
        await one.load()
        await two.load()
        try:
            for seq in range(1, 41):
                forward = [Head("acme", n, seq, bytes(32)) for n in names]
                await asyncio.gather(one.append(forward), two.append(forward[::-1]))
            state = await one.read()
            assert {head.seq for head in state.heads.values()} == {40}
        finally:
            await one.aclose()
            await two.aclose()

    asyncio.run(scenario())


def test_fences_journaled_by_one_writer_are_read_by_every_other(journal_server: Cluster) -> None:
    """A fence one process found is shared through the journal; ``recordseal recover``
    settles the fences journaled before it (``Recovered``)."""
    from recordseal.storage.journal import Fenced, Recovered

    url = journal_server.url()

    async def scenario() -> None:
        one, two = PostgresJournal(url), PostgresJournal(url)
        await one.load()
        await two.load()
        try:
            fence = Fenced("stream", "acme", "s", "behind", "2026-11-28T10:00:00Z")
            await one.append([fence])
            assert await two.shared() == ([fence], "")
            await two.append([Recovered("2026-11-28T11:00:00Z")])
            assert (await one.read()).live_fences() == []
            again = Fenced("stream", "acme", "s", "behind again", "2026-11-28T12:00:00Z")
            await one.append([again])
            assert (await two.read()).live_fences() == [again]
        finally:
            await one.aclose()
            await two.aclose()

    asyncio.run(scenario())
