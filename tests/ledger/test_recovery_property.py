"""The property of docs/continuity.md: whatever operators do, in any order — ingest, seal,
erase, back up, restore, restart, recover — the service never signs two headers for one
(tenant, stream, seq) nor two checkpoints for one (log, size), and an erased subject is never
readable again. Hypothesis draws the interleavings; SQLite, restores by file copy.

Every signature the service gives out is collected as it is given (ingest answers, seals,
recover's successor checkpoints) and every header and checkpoint the store holds after each
step, so a second signature for a taken (stream, seq) or (log, size) cannot go unseen."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recordseal.core import leaf_hash
from recordseal.crypto.signing import HeaderSigner
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.recovery import recover
from recordseal.services.errors import Gone, NotFound, Unavailable
from recordseal.settings import Settings
from recordseal.storage.backends import open_journal, open_store
from recordseal.tlog import Ed25519Signer
from tests.continuity_support import SEED, SERVICE, Service

STREAMS = ("s", "t")
SUBJECTS = ("bob", "carol", "dave")

step = st.one_of(
    st.tuples(st.just("ingest"), st.sampled_from(STREAMS), st.sampled_from(SUBJECTS)),
    st.tuples(st.just("seal")),
    st.tuples(st.just("erase"), st.sampled_from(SUBJECTS)),
    st.tuples(st.just("backup"), st.integers(0, 1)),
    st.tuples(st.just("restore"), st.integers(0, 1)),
    st.tuples(st.just("restart")),
    st.tuples(st.just("recover")),
)


@dataclass
class Signed:
    """Every signature seen: (tenant, stream, seq) -> chain leaf, (origin, size) -> root."""

    headers: dict[tuple[str, str, int], bytes] = field(default_factory=dict)
    checkpoints: dict[tuple[str, int], bytes] = field(default_factory=dict)
    erased: dict[str, list[str]] = field(default_factory=dict)  # subject -> its record ids

    def header(self, tenant: str, stream: str, seq: int, leaf: bytes) -> None:
        known = self.headers.setdefault((tenant, stream, seq), leaf)
        assert known == leaf, f"two headers signed for {tenant}/{stream} seq {seq}"

    def checkpoint(self, origin: str, size: int, root: bytes) -> None:
        known = self.checkpoints.setdefault((origin, size), root)
        assert known == root, f"two checkpoints signed for {origin} size {size}"


class Run:
    def __init__(self, data: Path) -> None:
        self.settings = Settings(data_dir=data)
        self.copies = data.parent / "copies"
        self.signed = Signed()
        self.ids: dict[str, list[str]] = {s: [] for s in SUBJECTS}
        self.service: Service | None = None

    async def start(self) -> Service:
        self.service = await Service(self.settings).__aenter__()
        return self.service

    async def stop(self) -> None:
        if self.service is not None:
            await self.service.__aexit__()
            self.service = None

    async def apply(self, action: tuple) -> None:  # type: ignore[type-arg]
        service = self.service or await self.start()
        match action:
            case ("ingest", stream, subject):
                try:
                    done = await service.post("acme", stream, subject, len(self.signed.headers))
                except (Unavailable, Gone):
                    return  # fenced, or an erased subject: nothing signed
                self.signed.header("acme", stream, done.seq, done.chain_leaf)
                self.ids.setdefault(subject, []).append(done.record_id)
            case ("seal",):
                for batch in await service.sealer.seal_pending():
                    self.signed.checkpoint(batch.origin, batch.size, batch.root)
            case ("erase", subject):
                try:
                    await service.records.erase("acme", subject)
                except NotFound:
                    return  # no record of the subject yet
                self.signed.erased[subject] = list(self.ids.get(subject, []))
            case ("backup", slot):
                await self.stop()  # a file copy, taken while the service is stopped
                target = self.copies / str(slot)
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir(parents=True)
                for path in self.settings.data_dir.glob("recordseal.sqlite3*"):
                    if not path.name.endswith(".lock"):
                        shutil.copy2(path, target / path.name)
            case ("restore", slot):
                source = self.copies / str(slot)
                if not source.is_dir():
                    return
                await self.stop()
                for path in self.settings.data_dir.glob("recordseal.sqlite3*"):
                    if not path.name.endswith(".lock"):
                        path.unlink()
                for path in source.iterdir():
                    shutil.copy2(path, self.settings.data_dir / path.name)
            case ("restart",):
                await self.stop()
            case ("recover",):
                await self.stop()
                await self.recover()

    async def recover(self) -> None:
        store = open_store(self.settings)
        await store.open()
        continuity = Continuity(open_journal(self.settings))
        try:
            report = await recover(
                store,
                continuity,
                HeaderSigner.from_seed(SEED),
                lambda origin: Ed25519Signer.from_seed(origin, SEED),
                SERVICE,
            )
        finally:
            await continuity.close()
            await store.close()
        for s in report.successions:
            self.signed.checkpoint(s.origin, 1, leaf_hash(s.leaf))
        for g in report.gaps:
            self.signed.header(g.tenant, g.stream, g.seq, g.chain_leaf)

    async def observe(self) -> None:
        """What the store holds now: every header and checkpoint, and no erased payload."""
        service = self.service or await self.start()
        for stream in STREAMS:
            for row in await service.store.records.stream_records("acme", stream):
                self.signed.header("acme", stream, row.seq, row.chain_leaf)
        for origin in await service.store.logs.log_origins():
            for size in range(1, 64):
                row = await service.store.logs.checkpoint_at(origin, size)
                if row is not None:
                    self.signed.checkpoint(origin, size, row.root)
        for record_ids in self.signed.erased.values():
            for record_id in record_ids:
                try:
                    await service.records.payload("acme", record_id)
                except (Gone, NotFound):
                    continue
                raise AssertionError(f"the payload of erased record {record_id} is readable")


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(step, min_size=1, max_size=24))
def test_no_interleaving_signs_two_histories(steps: list[tuple]) -> None:  # type: ignore[type-arg]
    async def scenario(root: Path) -> None:
        run = Run(root / "data")
        run.settings.data_dir.mkdir()
        service = await run.start()
        for stream in STREAMS:
            await service.records.create_stream("acme", stream, None, False)
        try:
            for action in steps:
                await run.apply(action)
                await run.observe()
            # And a last recover always leaves a service that can sign again.
            await run.stop()
            await run.recover()
            service = await run.start()
            assert service.continuity.streams == {} and service.continuity.logs == {}
            await run.apply(("ingest", "s", "zoe"))
            await run.apply(("seal",))
            await run.observe()
        finally:
            await run.stop()

    with tempfile.TemporaryDirectory(prefix="recordseal-property-") as root:
        asyncio.run(scenario(Path(root)))
