"""The sealer keeps each witness's health for the live view (issue 30, item 2;
storage/activity.py): the last cosignature, and the failures in a row with their reason,
``witness.two_roots`` when the witness holds another root for a size it cosigned. The witness
is a real ``recordseal witness serve`` process; the two histories are two stores of the same
service seed (a restore from another copy)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from recordseal.ledger.sealer import Sealer, Witness
from recordseal.network.witness_client import WitnessClient
from recordseal.settings import Settings
from recordseal.storage.activity import TWO_ROOTS, WitnessActivity
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.tlog import CosignatureVerifier
from tests.backends import opened
from tests.continuity_support import fresh_continuity
from tests.ledger.test_witnessing import ORIGIN, SEED, SERVICE, WITNESS, ingest, witness_of
from tests.servers import witness_key, witness_server


async def _witnesses(store: Store) -> list[WitnessActivity]:
    [log] = (await store.activity.tenant_activity("acme", int(time.time()) // 60 - 59)).logs
    return log.witnesses


def test_a_cosignature_then_a_forked_history_are_kept_per_witness(
    store: Store, tmp_path: Path
) -> None:
    vkey = witness_key(tmp_path / "w", WITNESS)
    plain = Sealer(store.logs, SEED, SERVICE, continuity=fresh_continuity())
    log_key = plain.signer(ORIGIN).verifier().vkey
    restored = open_store(Settings(data_dir=tmp_path / "restored"))

    async def scenario(url: str) -> None:
        async with opened(store):
            await ingest(store, 2)
            sealer = Sealer(
                store.logs, SEED, SERVICE, [witness_of(url, vkey)], continuity=fresh_continuity()
            )
            await sealer.seal_pending()
            await sealer.load_offers()
            await sealer.offer_due()
            [health] = await _witnesses(store)
            assert (health.witness, health.cosigned_size, health.failures) == (WITNESS, 3, 0)
            assert health.cosigned_at is not None and health.code is None
        # Another history of the same log (other records, same size): the witness refuses it.
        async with opened(restored):
            (tmp_path / "restored").mkdir(exist_ok=True)
            await ingest(restored, 1)
            await ingest(restored, 1)
            # attempts: the first answer tells the new sealer the witness's size (409)
            client = WitnessClient(url, CosignatureVerifier.from_vkey(vkey), attempts=3)
            sealer = Sealer(
                restored.logs,
                SEED,
                SERVICE,
                [Witness(WITNESS, client)],
                retry_delays=(0.01, 0.05),
                continuity=fresh_continuity(),
            )
            await sealer.seal_pending()
            await sealer.load_offers()
            deadline = time.monotonic() + 60
            while sealer.offer_failures().get((ORIGIN, WITNESS), (0, ""))[0] < 2:
                assert time.monotonic() < deadline, sealer.offer_failures()
                await sealer.offer_due()
                await asyncio.sleep(0.02)
            [health] = await _witnesses(restored)
            assert (health.code, health.reason, health.two_roots) == (
                "witness_refused",
                TWO_ROOTS,
                True,
            )
            assert health.failures >= 2 and health.failed_at is not None
            assert health.cosigned_at is None

    with witness_server(tmp_path / "w", WITNESS, {ORIGIN: log_key}) as url:
        asyncio.run(scenario(url))
