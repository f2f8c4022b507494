"""Write ``aggregate.json``: the deployment's aggregate log (docs/tlog.md, "The aggregate log")
and bundles proven through it (docs/bundle.md, check 5, rules 5.7 to 5.13).

The bundles are built by the verifier tests' factory (``tests/verify/factory.py``) from fixed
seeds, so every byte is reproducible: the stream ``acme/orders`` holds records 1-6 in the log
``recordseal.local/acme/default`` (8 entries); each bundle discloses record 4 (entry 5). The
aggregate log ``recordseal.local`` holds three entries, the sealing checkpoint's at index 1,
and is signed by the same log key under its own name (as a service signs it); the public
witness ``public.witness`` cosigned it at 08:00:01Z. The example's preimage and entry are
also spelt out here byte by byte with ``hashlib`` alone and must agree with
``recordseal.merkle.aggregate``. The expected verdicts, check statuses and the words the
named details hold are written here by hand from docs/bundle.md; the script refuses to write
unless the Python verifier gives exactly them.
Run: ``.venv/bin/python tests/vectors/generate_aggregate.py`` from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from tests.verify.factory import ORIGIN, PUBLIC_WITNESS, SERVICE, WITNESS, World  # noqa: E402

from recordseal.core import inclusion_proof  # noqa: E402
from recordseal.crypto.signing import HeaderSigner  # noqa: E402
from recordseal.merkle.aggregate import AGGREGATE_ENTRY_TAG, aggregate_entry  # noqa: E402
from recordseal.tlog import CosignatureSigner, Ed25519Signer  # noqa: E402
from recordseal.verify import load_key_directory, load_trust_store, verify_bundle  # noqa: E402

HEADER_SEED = bytes(range(32))
#: The log key of docs/tlog.md's worked example: its tenant logs and the aggregate share it.
LOG_SEED = hashlib.sha256(b"recordseal docs: log key").digest()
WITNESS_SEED = hashlib.sha256(b"recordseal docs: witness key").digest()
PUBLIC_SEED = hashlib.sha256(b"recordseal docs: public witness key").digest()
#: Record seq s is ingested at BASE + 10 s + 0.123456 s; the sealing checkpoint is cosigned
#: (when it is) at 07:59:58Z, the aggregate checkpoint at 08:00:01Z.
BASE = datetime(2026, 11, 26, 7, 58, 53, tzinfo=UTC)
NOW = datetime(2026, 11, 27, tzinfo=UTC)
P, F, U = "passed", "failed", "unchecked"
Doc = dict[str, Any]


def world() -> World:
    return World(
        base=BASE,
        header_signer=HeaderSigner.from_seed(HEADER_SEED),
        log_signer=Ed25519Signer.from_seed(ORIGIN, LOG_SEED),
        witness=CosignatureSigner.from_seed(WITNESS, WITNESS_SEED),
        aggregate_signer=Ed25519Signer.from_seed(SERVICE, LOG_SEED),
        public_witness=CosignatureSigner.from_seed(PUBLIC_WITNESS, PUBLIC_SEED),
        seed=b"recordseal aggregate vectors",
    )


def example(w: World) -> Doc:
    """The worked example: the sealing checkpoint, its entry spelt out, the aggregate."""
    size, root = len(w.log), w.sealing_root()
    name = ORIGIN.encode()
    preimage = AGGREGATE_ENTRY_TAG + struct.pack("<I", len(name)) + name
    preimage += struct.pack("<Q", size) + root
    entry = hashlib.sha256(preimage).digest()
    if entry != aggregate_entry(ORIGIN, size, root):
        raise SystemExit("the spelt-out entry is not merkle.aggregate's")
    entries = w.aggregate_entries()
    return {
        "sealing": {
            "origin": ORIGIN,
            "size": size,
            "root": root.hex(),
            "checkpoint": w.signed_checkpoint(size, None),
        },
        "preimage": preimage.hex(),
        "entry": entry.hex(),
        "leaf_hash": hashlib.sha256(b"\x00" + entry).hexdigest(),
        "aggregate_entries": [e.hex() for e in entries],
        "index": 1,
        "path": [node.hex() for node in inclusion_proof(entries, 1)],
        "aggregate_checkpoint": w.aggregate_checkpoint(),
        "aggregate_vkey": w.aggregate_signer.verifier().vkey,
        "public_witness_vkey": w.public_witness.vkey,
        "proof": w.aggregate_proof(),
    }


Case = tuple[str, bytes, Doc, Doc | None, str, list[str], dict[str, str]]


def cases(w: World) -> list[Case]:
    """(name, bundle, keys, trust, verdict, statuses of checks 1-7, {check: text its detail
    holds})."""
    through = w.bundle(aggregate=True, cosigned=False, coverage=None)
    keys = w.keys_document(aggregate=True)
    public = w.trust_document(witnesses=[w.public_witness])
    aggregate_time = "2026-11-26T08:00:02Z"  # the end of the public witness's second
    named = {"5": "public.witness", "7": f"not after {aggregate_time} (public.witness"}
    lines = json.loads(through)["seal"]["aggregate"]["proof"].split("\n")
    lines[1] = "index 2"
    moved = json.loads(through)
    moved["seal"]["aggregate"]["proof"] = "\n".join(lines)
    before = "2026-11-26T08:00:00Z"
    after = "2026-11-26T08:00:02Z"
    return [
        ("through the aggregate", through, keys, public, "VERIFIED", [P] * 7, named),
        ("no key of the aggregate in the directory", through, w.keys_document(), public,
         "VERIFICATION INCOMPLETE", [P, P, P, P, U, P, U],
         {"5": "no log key for the aggregate log 'recordseal.local'"}),
        ("a trust store without the aggregate's witness", through, keys, w.trust_document(),
         "VERIFICATION INCOMPLETE", [P, P, P, P, U, P, U], {}),
        ("cosigned and through the aggregate, quorum 2",
         w.bundle(aggregate=True, coverage=None), keys,
         w.trust_document(witnesses=[w.witness, w.public_witness], quorum=2), "VERIFIED",
         [P] * 7, {"5": "public.witness, witness.example", "7": "witness.example"}),
        ("the path at another index", json.dumps(moved).encode(), keys, public, "FAILED",
         [P, P, P, P, F, P, U], {"5": "is not entry 2 of the aggregate checkpoint"}),
        ("the aggregate's key compromised before its witness time", through,
         w.keys_document(aggregate=True, aggregate_compromised_at=before), public, "FAILED",
         [P, P, P, P, F, P, U], {"5": f"compromised at {before}"}),
        ("the header key compromised after the aggregate's witness time", through,
         w.keys_document(aggregate=True, compromised_at=after), public, "VERIFIED", [P] * 7,
         {"3": f"compromised at {after}, after public.witness saw it by {aggregate_time}"}),
        ("the header key compromised before the aggregate's witness time", through,
         w.keys_document(aggregate=True, compromised_at=before), public, "FAILED",
         [P, P, F, P, P, P, P], {"3": f"compromised at {before}"}),
        ("a bundle without the path", w.bundle(coverage=None), keys, w.trust_document(),
         "VERIFIED", [P] * 7, {"5": "witness.example"}),
    ]  # fmt: skip


def main() -> None:
    w = world()
    if w.aggregated_at != BASE + timedelta(seconds=68, microseconds=123456):
        raise SystemExit("the factory's times moved: update the docs")
    written = []
    for name, bundle, keys, trust, verdict, statuses, details in cases(w):
        directory = load_key_directory(json.dumps(keys))
        store = None if trust is None else load_trust_store(json.dumps(trust))
        result = verify_bundle(bundle, directory, store, now=NOW)
        got = (result.verdict, [check.status for check in result.checks])
        missing = {n: t for n, t in details.items() if t not in result.check(int(n)).detail}
        if got != (verdict, statuses) or missing:
            detail = {n: result.check(int(n)).detail for n in missing}
            raise SystemExit(f"{name}: the verifier gives {got}, details lack {detail}")
        expected: Doc = {"verdict": verdict, "statuses": statuses, "details": details}
        written.append(
            {"name": name, "bundle": json.loads(bundle), "keys": keys, "trust": trust,
             "expected": expected}
        )  # fmt: skip
    out = Path(__file__).with_name("aggregate.json")
    document = {
        "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "example": example(w),
        "cases": written,
    }
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
