"""Bundles of one log for the verification benchmarks, made by the service's own classes.

One stream of records sealed over several rounds (so bundles carry a ``previous``
checkpoint), each newest checkpoint cosigned by a real witness core when ``witnessed``; every
bundle discloses all fields of its record and proves against the newest witnessed checkpoint
(``services.proofs``), as the service answers. With ``post_quantum`` the log signs with an
Ed25519 and an ML-DSA-44 key (as a service does), the witness cosigns with ML-DSA-44, and the
trust store requires both log signatures: every signature of a bundle but the header's is then
checked in both algorithms or in ML-DSA-44.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest

from recordseal.clock import utc_now
from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.log_keys import LogKeyring
from recordseal.ledger.sealer import Sealer
from recordseal.services.disclosure import DisclosureService
from recordseal.services.keys import key_directory
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService
from recordseal.storage.rows import SigningKeyRow
from recordseal.storage.sqlite import SQLiteStore
from recordseal.tlog import CosignatureSigner, MLDSA44CosignatureSigner
from recordseal.verify import encode_bundle
from recordseal.witness.witness import Witness

WITNESS = "witness.bench"


@dataclass(frozen=True)
class Bundles:
    bundles: list[bytes]
    keys: bytes  # the key directory (JSON)
    trust: bytes  # the trust store (JSON): the witness, quorum 1


async def _make(
    tmp: Path,
    payload: bytes,
    declarations: dict[str, str],
    count: int,
    rounds: int,
    witnessed: bool,
    post_quantum: bool,
) -> Bundles:
    store = SQLiteStore(tmp / "db.sqlite3")
    await store.open()
    try:
        signer = HeaderSigner.from_seed(bytes(32))
        await store.records.register_signing_key(
            SigningKeyRow(signer.key_id, "Ed25519", signer.public_key, utc_now(), None, None)
        )
        records = RecordService(store, KeyWrapper(bytes(32)), signer, continuity=fresh_continuity())
        witness_key: CosignatureSigner | MLDSA44CosignatureSigner
        witness_key = CosignatureSigner.from_seed(WITNESS, bytes(range(1, 33)))
        log_keys = LogKeyring.of_seed(bytes(range(32)))
        if post_quantum:
            witness_key = MLDSA44CosignatureSigner.from_seed(WITNESS, bytes(range(1, 33)))
            log_keys = LogKeyring.of_seed(bytes(range(32)), bytes(range(2, 34)))
        sealer = Sealer(store.logs, log_keys, "bench.local", continuity=fresh_continuity())
        witness = None
        await records.create_stream("acme", "orders", declarations, False)
        posted = []
        for round_ in range(rounds):
            for _ in range(count // rounds + (round_ < count % rounds)):
                subject = f"c{len(posted) % 7}"
                posted.append(
                    await ingest(
                        records, "acme", "orders", "order", "2026-11-21T08:00:00Z", subject, payload
                    )
                )
            for batch in await sealer.seal_pending():
                if not witnessed:
                    continue
                if witness is None:
                    log_key = [s.verifier() for s in sealer.every(batch.origin)]
                    witness = Witness(tmp / "witness", witness_key, {batch.origin: log_key})
                old = witness.latest(batch.origin)
                size = old.size if old else 0
                proof = await sealer.consistency(batch.origin, size, batch.size) if size else []
                line = witness.add_checkpoint(size, proof, batch.note).line
                await store.logs.add_cosignature(batch.origin, batch.size, WITNESS, line)
        disclosure = DisclosureService(store, records, ProofService(store, sealer))
        bundles = []
        for receipt in posted:
            fields = [leaf for leaf in _paths(payload)]
            bundle = await disclosure.disclose("acme", receipt.record_id, fields, None)
            bundles.append(encode_bundle(bundle))
        keys = json.dumps(await key_directory(store, sealer.every)).encode()
    finally:
        await store.close()
    policy = {"checkpoint_signatures": ["Ed25519", "ML-DSA-44"]} if post_quantum else {}
    trust = json.dumps(
        {
            "format": "recordseal/trust/v1",
            "quorum": 1,
            "witnesses": [{"name": WITNESS, "vkey": witness_key.vkey}],
            **policy,
        }
    ).encode()
    return Bundles(bundles, keys, trust)


def _paths(payload: bytes) -> list[str]:
    from recordseal.services.bundles import leaf_values

    return list(leaf_values(json.loads(payload)))


def make_bundles(
    payload: bytes,
    declarations: dict[str, str],
    count: int,
    *,
    rounds: int = 4,
    witnessed: bool = True,
    post_quantum: bool = False,
) -> Bundles:
    """``count`` bundles of one log, each disclosing every field of its record."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(
            _make(Path(tmp), payload, declarations, count, rounds, witnessed, post_quantum)
        )
