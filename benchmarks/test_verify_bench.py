"""Offline bundle verification: 5 disclosed fields out of 20, sealed and witnessed.

The bundle is made by the real service classes (store, record service, sealer, disclosure)
on a temporary SQLite database; the witness is the real witness core.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import msgspec
import pytest

from payloads import DECLARATIONS_1K, record_1k
from recordseal.clock import utc_now
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.sealer import Sealer
from recordseal.services.disclosure import DisclosureService
from recordseal.services.keys import key_directory
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordIn, RecordService
from recordseal.storage.rows import SigningKeyRow
from recordseal.storage.sqlite import SQLiteStore
from recordseal.tlog import CosignatureSigner
from recordseal.tlog.witness import Witness
from recordseal.verify import VERIFIED, load_key_directory, load_trust_store, verify_bundle

FIELDS = ["o:/amount_minor", "o:/currency", "o:/placed_at", "oo:/location/lat", "o:/document"]


async def _make_bundle(tmp: Path) -> tuple[bytes, bytes, bytes]:
    store = SQLiteStore(tmp / "db.sqlite3")
    await store.open()
    try:
        signer = HeaderSigner.from_seed(bytes(32))
        await store.records.register_signing_key(
            SigningKeyRow(signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None)
        )
        records = RecordService(store, KeyWrapper(bytes(32)), signer)
        sealer = Sealer(store.logs, bytes(range(32)), "bench.local")
        await records.create_stream("acme", "orders", DECLARATIONS_1K, False)
        posted = [
            await records.ingest(
                "acme", RecordIn("orders", "order", "2026-11-21T08:00:00Z", f"c{i}", record_1k())
            )
            for i in range(8)
        ]
        (batch,) = await sealer.seal_pending()
        witness_key = CosignatureSigner.from_seed("witness.bench", bytes(range(1, 33)))
        witness = Witness(
            tmp / "witness", witness_key, {batch.origin: [sealer.signer(batch.origin).verifier()]}
        )
        cosignature = witness.add_checkpoint(0, [], batch.note)
        await store.logs.add_cosignature(
            batch.origin, batch.size, "witness.bench", cosignature.line
        )
        bundle = await DisclosureService(store, records, ProofService(store, sealer)).disclose(
            "acme", posted[5].record_id, FIELDS, None
        )
        keys = json.dumps(await key_directory(store, sealer)).encode()
    finally:
        await store.close()
    trust = json.dumps(
        {
            "format": "recordseal/trust/v1",
            "quorum": 1,
            "timestamp_authorities": [],
            "witnesses": [{"name": "witness.bench", "vkey": witness_key.vkey}],
        }
    ).encode()
    return msgspec.json.encode(bundle), keys, trust


@pytest.fixture(scope="module")
def sealed_bundle():
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_make_bundle(Path(tmp)))


def test_verify_bundle_5_of_20_fields(benchmark, sealed_bundle):
    bundle, keys, trust = sealed_bundle
    directory, store = load_key_directory(keys), load_trust_store(trust)
    benchmark.group = "verify bundle, 5 of 20 fields, sealed and witnessed"
    result = benchmark(verify_bundle, bundle, directory, store)
    assert result.verdict == VERIFIED, [(c.number, c.status, c.detail) for c in result.checks]
