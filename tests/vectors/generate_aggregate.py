"""Write ``aggregate.json``: the deployment's aggregate log (docs/tlog.md, "The aggregate log")
and bundles proven through it (docs/bundle.md, check 5, rules 5.7 to 5.14).

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

The last cases are of a service with ML-DSA-44 log keys: the sealing checkpoint and the
aggregate's are dual-signed (Ed25519 and ML-DSA-44, one key of each under both names, as a
service signs them), under a trust store whose ``checkpoint_signatures`` requires both (rules
4.9 and 5.14). ML-DSA-44 signing is randomized (FIPS 204's hedged variant: ``cryptography``
offers no other), so running this script again writes other ML-DSA-44 signature bytes in
those cases with the same outcomes; every other byte is reproducible.
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

from recordseal.core import inclusion_proof, merkle_root  # noqa: E402
from recordseal.crypto.signing import HeaderSigner  # noqa: E402
from recordseal.merkle.aggregate import AGGREGATE_ENTRY_TAG, aggregate_entry  # noqa: E402
from recordseal.tlog import (  # noqa: E402
    Checkpoint,
    CosignatureSigner,
    Ed25519Signer,
    MLDSA44CosignatureSigner,
)
from recordseal.verify import load_key_directory, load_trust_store, verify_bundle  # noqa: E402

HEADER_SEED = bytes(range(32))
#: The log key of docs/tlog.md's worked example: its tenant logs and the aggregate share it.
LOG_SEED = hashlib.sha256(b"recordseal docs: log key").digest()
WITNESS_SEED = hashlib.sha256(b"recordseal docs: witness key").digest()
PUBLIC_SEED = hashlib.sha256(b"recordseal docs: public witness key").digest()
#: The ML-DSA-44 log key of the dual-signed cases (tenant logs and the aggregate share it).
LOG_MLDSA_SEED = hashlib.sha256(b"recordseal aggregate vectors: log ML-DSA-44 key").digest()
BOTH = ["Ed25519", "ML-DSA-44"]
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


def dual_world(aggregate_dual: bool = True) -> World:
    """The same world, its log keys dual: the aggregate signed with both keys, or with its
    Ed25519 key alone (``aggregate_dual`` False: an aggregate checkpoint signed before the
    ML-DSA-44 key was made, under a directory that lists it now)."""
    w = world()
    w.log_mldsa = MLDSA44CosignatureSigner.from_seed(ORIGIN, LOG_MLDSA_SEED, clock=None)
    if aggregate_dual:
        w.aggregate_mldsa = MLDSA44CosignatureSigner.from_seed(SERVICE, LOG_MLDSA_SEED, clock=None)
    return w


def undated(w: World, through: bytes) -> bytes:
    """``through`` with the public witness's cosignature on the aggregate checkpoint replaced
    by its valid cosignature dated 0 (rule 5.6: it vouches for nothing)."""
    entries = w.aggregate_entries()
    text = Checkpoint(SERVICE, len(entries), merkle_root(entries)).text()
    line = w.public_witness.cosign(text, 0).line.removesuffix("\n")
    document = json.loads(through)
    lines = document["seal"]["aggregate"]["proof"].split("\n")
    at = next(i for i, x in enumerate(lines) if x.startswith(f"— {PUBLIC_WITNESS} "))
    lines[at] = line
    document["seal"]["aggregate"]["proof"] = "\n".join(lines)
    return json.dumps(document).encode()


def dual_cases() -> list[Case]:
    """A service with ML-DSA-44 log keys, under a trust store requiring both algorithms."""
    w, single = dual_world(), dual_world(aggregate_dual=False)
    through = w.bundle(aggregate=True, cosigned=False, coverage=None)
    keys = w.keys_document(aggregate=True)
    both = w.trust_document(witnesses=[w.public_witness], checkpoint_signatures=BOTH)
    mldsa = w.aggregate_mldsa.vkey if w.aggregate_mldsa is not None else ""
    without = {**keys, "logs": [log for log in keys["logs"] if log["vkey"] != mldsa]}
    unsigned = "the aggregate checkpoint is not signed as the trust store requires (ML-DSA-44"
    return [
        ("dual-signed through the aggregate, both algorithms required", through, keys, both,
         "VERIFIED", [P] * 7,
         {"4": "signed with Ed25519 and ML-DSA-44", "5": "public.witness"}),
        ("the aggregate signed with Ed25519 alone, both algorithms required",
         single.bundle(aggregate=True, cosigned=False, coverage=None),
         keys, both, "VERIFICATION INCOMPLETE",
         [P, P, P, P, U, P, U],
         {"5": f"{unsigned} signatures): the checkpoint carries no ML-DSA-44 signature"}),
        ("no ML-DSA-44 key of the aggregate in the directory, both algorithms required",
         through, without, both, "VERIFICATION INCOMPLETE", [P, P, P, P, U, P, U],
         {"5": "the directory has no ML-DSA-44 key for 'recordseal.local'"}),
        ("dual-signed through the aggregate, the default policy", through, without,
         w.trust_document(witnesses=[w.public_witness]), "VERIFIED", [P] * 7,
         {"5": "public.witness"}),
    ]  # fmt: skip


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
        ("the aggregate's cosignature dated 0", undated(w, through), keys, public,
         "VERIFICATION INCOMPLETE", [P, P, P, P, U, P, U],
         {"5": "no witness receipts from a trusted witness"}),
        *dual_cases(),
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
