"""A disclosure bundle to verify, made by the service's own classes in a scratch directory: a
stream of 1 KB records sealed over two rounds into one log whose checkpoints a witness
cosigned, and the bundle of one record disclosing all its fields, proving against the newest
witnessed checkpoint, as the service answers it. With the key directory and the trust store an
auditor verifies it with (``recordseal verify``), offline."""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from recordseal.clock import utc_now
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.continuity import Continuity
from recordseal.ledger.log_keys import LogKeyring
from recordseal.ledger.sealer import Sealer
from recordseal.ops.bench.payloads import DECLARATIONS_1K, record_1k
from recordseal.services.bundles import leaf_values
from recordseal.services.disclosure import DisclosureService
from recordseal.services.keys import key_directory
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService
from recordseal.storage.journal import DirectoryJournal
from recordseal.storage.rows import SigningKeyRow
from recordseal.storage.sqlite import SQLiteStore
from recordseal.tlog import CosignatureSigner
from recordseal.verify import encode_bundle
from recordseal.witness.witness import Witness

WITNESS = "witness.bench"
RECORDS = 8


@dataclass(frozen=True)
class World:
    """What ``recordseal verify`` reads: a bundle, the key directory, the trust store."""

    bundle: bytes
    keys: bytes
    trust: bytes


def _body(subject: str, payload: bytes) -> bytes:
    envelope = {"stream": "orders", "record_type": "order.placed",
                "occurred_at": "2026-11-21T08:00:00Z", "subject_id": subject}  # fmt: skip
    return json.dumps(envelope)[:-1].encode() + b',"payload":' + payload + b"}"


async def _make(scratch: Path) -> World:
    payload = record_1k()
    store = SQLiteStore(scratch / "db.sqlite3")
    await store.open()
    try:
        signer = HeaderSigner.from_seed(bytes(32))
        await store.records.register_signing_key(
            SigningKeyRow(signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None)
        )
        journal = DirectoryJournal(scratch / "journal")
        journal.open()
        records = RecordService(
            store, KeyWrapper(bytes(32)), signer, continuity=Continuity(journal)
        )
        witness_key = CosignatureSigner.from_seed(WITNESS, bytes(range(1, 33)))
        sealer = Sealer(store.logs, LogKeyring.of_seed(bytes(range(32))), "bench.local",
                        continuity=Continuity(journal))  # fmt: skip
        await records.create_stream("acme", "orders", DECLARATIONS_1K, False)
        witness = None
        posted = []
        for round_ in range(2):
            for k in range(RECORDS // 2):
                body = _body(f"customer-{round_}-{k}", payload)
                posted.append(await records.post_record("acme", body))
            for batch in await sealer.seal_pending():
                if witness is None:
                    log_key = [s.verifier() for s in sealer.every(batch.origin)]
                    witness = Witness(scratch / "witness", witness_key, {batch.origin: log_key})
                old = witness.latest(batch.origin)
                size = old.size if old else 0
                proof = await sealer.consistency(batch.origin, size, batch.size) if size else []
                line = witness.add_checkpoint(size, proof, batch.note).line
                await store.logs.add_cosignature(batch.origin, batch.size, WITNESS, line)
        proofs = ProofService(store, sealer)
        fields = list(leaf_values(json.loads(payload)))
        chosen = posted[len(posted) // 2]
        bundle = await DisclosureService(store, records, proofs).disclose(
            "acme", chosen.record_id, fields, None
        )
        keys = json.dumps(await key_directory(store, sealer.every)).encode()
    finally:
        await store.close()
    trust = {"format": "recordseal/trust/v1", "quorum": 1,
             "witnesses": [{"name": WITNESS, "vkey": witness_key.vkey}]}  # fmt: skip
    return World(encode_bundle(bundle), keys, json.dumps(trust).encode())


def make_world() -> World:
    """A witnessed bundle of a 20-field record, with its key directory and trust store."""
    with tempfile.TemporaryDirectory(prefix="recordseal-bench-") as scratch:
        return asyncio.run(_make(Path(scratch)))
