"""A continuity journal for tests that build services by hand, and a service over one data
directory with an operator's backup and restore of its database (docs/continuity.md)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.sealer import Sealer, Witness
from recordseal.services.records import RecordService
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store
from recordseal.storage.base import Store
from recordseal.storage.journal import DirectoryJournal
from tests.ingesting import ingest


def fresh_continuity(directory: Path | None = None) -> Continuity:
    """A Continuity over an opened journal in ``directory`` (by default a new temporary one,
    removed when the test run ends); the store is not compared with it."""
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="recordseal-journal-"))
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
    journal = DirectoryJournal(directory)
    journal.open()
    return Continuity(journal)


SEED = bytes(range(32))
SERVICE = "test.local"


class Service:
    """The record service and the sealer over one data directory, started like ``serve``."""

    def __init__(self, settings: Settings, witnesses: Sequence[Witness] = ()) -> None:
        self.settings = settings
        self.witnesses = witnesses

    async def __aenter__(self) -> Service:
        self.store: Store = open_store(self.settings)
        await self.store.open()
        self.continuity = Continuity(open_journal(self.settings))
        await self.continuity.start(self.store)
        self.records = RecordService(
            self.store,
            KeyWrapper(bytes(32)),
            HeaderSigner.from_seed(SEED),
            continuity=self.continuity,
        )
        self.sealer = Sealer(
            self.store.logs, SEED, SERVICE, self.witnesses, continuity=self.continuity
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.store.close()
        await self.continuity.close()

    async def post(self, tenant: str, stream: str, subject: str, n: int):  # type: ignore[no-untyped-def]
        return await ingest(
            self.records, tenant, stream, "t", "2026-11-26T08:00:00Z", subject, b'{"n":%d}' % n
        )


async def lose_a_sealed_record(settings: Settings, backup: Backup):  # type: ignore[no-untyped-def]
    """Stream acme/s with record 1 sealed, a backup, record 2 sealed, the backup restored:
    the store lost seq 2 and the log's checkpoint over it. Returns that lost seal."""
    async with Service(settings) as service:
        await service.records.create_stream("acme", "s", None, False)
        await service.post("acme", "s", "bob", 1)
        await service.sealer.seal_pending()
    backup.take()
    async with Service(settings) as service:
        await service.post("acme", "s", "bob", 2)
        [lost] = await service.sealer.seal_pending()
    backup.restore()
    return lost


class Backup:
    """An operator's backup of the database (never of the journal), and its restore."""

    def __init__(self, settings: Settings, postgres: object, directory: Path) -> None:
        self.settings, self.postgres, self.directory = settings, postgres, directory

    def take(self) -> None:
        self.directory.mkdir()
        if self.settings.database_url:
            self.postgres.dump(self.settings.database_url, self.directory / "db.dump")  # type: ignore[attr-defined]
            return
        for path in self.settings.data_dir.glob("recordseal.sqlite3*"):
            if not path.name.endswith(".lock"):
                shutil.copy2(path, self.directory / path.name)

    def restore(self) -> None:
        if self.settings.database_url:
            self.postgres.restore(self.settings.database_url, self.directory / "db.dump")  # type: ignore[attr-defined]
            return
        for path in self.settings.data_dir.glob("recordseal.sqlite3*"):
            if not path.name.endswith(".lock"):
                path.unlink()
        for path in self.directory.iterdir():
            shutil.copy2(path, self.settings.data_dir / path.name)
