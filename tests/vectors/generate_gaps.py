"""Write ``gaps.json``: gap headers (docs/records.md, "Gap declarations") and bundles whose
coverage meets one (docs/bundle.md, check 6).

The bundles are built by the verifier tests' factory (``tests/verify/factory.py``) from fixed
seeds, so every byte is reproducible: the stream ``acme/orders`` holds records 1-4, the gap
header at 1003 declaring seqs 5-1002 lost, and records 1004-1005; each bundle discloses
record 4. The expected verdicts and check statuses are written here by hand from the rules of
docs/bundle.md; the script refuses to write unless the Python verifier gives them. The
example gap header's RFC 8785 bytes, chain leaf and signature are computed twice: with the
project's ``recordseal.chain`` and independently here (``json``, ``hashlib``,
``cryptography``), and must agree.
Run: ``.venv/bin/python tests/vectors/generate_gaps.py`` from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from tests.verify.factory import ORIGIN, WITNESS, World  # noqa: E402

from recordseal.chain import canonical_header, chain_leaf  # noqa: E402
from recordseal.crypto.signing import HeaderSigner  # noqa: E402
from recordseal.tlog import CosignatureSigner, Ed25519Signer  # noqa: E402
from recordseal.verify import (  # noqa: E402
    load_key_directory,
    load_trust_store,
    verify_bundle,
)

#: The header-signing key's RFC 8032 seed: the bytes 00 01 02 ... 1f.
HEADER_SEED = bytes(range(32))
LOG_SEED = hashlib.sha256(b"recordseal gap vectors: log key").digest()
WITNESS_SEED = hashlib.sha256(b"recordseal gap vectors: witness key").digest()
GAP = (5, 1002)
LAST_SEQ = 1005
#: Record seq s is ingested at BASE + 10 s + 0.123456 s, so the gap (seq 1003) is declared at
#: 2026-11-26T08:00:00.123456Z.
BASE = datetime(2026, 11, 26, 8, 0, tzinfo=UTC) - timedelta(seconds=10 * (GAP[1] + 1))
NOW = datetime(2026, 11, 27, tzinfo=UTC)
P, F, U = "passed", "failed", "unchecked"
Doc = dict[str, Any]


def world() -> World:
    return World(
        base=BASE,
        header_signer=HeaderSigner.from_seed(HEADER_SEED),
        log_signer=Ed25519Signer.from_seed(ORIGIN, LOG_SEED),
        witness=CosignatureSigner.from_seed(WITNESS, WITNESS_SEED),
        gap=GAP,
        last_seq=LAST_SEQ,
        seed=b"recordseal gap vectors",
    )


def gap_item(document: Doc) -> Doc:
    item: Doc = next(
        i for i in document["coverage"]["records"] if i["header"]["format"] == "recordseal/gap/v1"
    )
    return item


def tampered_signature(document: Doc) -> None:
    item = gap_item(document)
    signature = bytearray.fromhex(item["signature"])
    signature[10] ^= 0x01
    item["signature"] = signature.hex()


def broken_prev(w: World) -> Callable[[Doc], None]:
    def edit(document: Doc) -> None:
        item = gap_item(document)
        header = {**item["header"], "prev": "11" * 32}
        item.update(header=header, signature=w.sign_gap(header).hex())

    return edit


def next_unlinked(w: World) -> Callable[[Doc], None]:
    def edit(document: Doc) -> None:
        item = next(i for i in document["coverage"]["records"] if i["header"]["seq"] == 1004)
        header = {**item["header"], "prev": "22" * 32}
        item.update(header=header, signature=w.sign(header).hex())

    return edit


def independent_canonical(header: Doc) -> bytes:
    """RFC 8785 of a header whose values are ASCII strings and small integers: sorted
    members, no whitespace (RFC 8785 sections 3.2.2-3.2.3 need nothing more here)."""
    assert all(isinstance(v, int) or v.isascii() for v in header.values())
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode()


def example(w: World) -> Doc:
    header, signature = next((h, s) for h, s in w.covered if h["format"] == "recordseal/gap/v1")
    canonical = canonical_header(header)
    assert canonical == independent_canonical(header)
    leaf = hashlib.sha256(b"\x00" + canonical).digest()
    assert leaf == chain_leaf(canonical)
    message = b"recordseal/gap/v1\x00" + canonical
    assert signature == Ed25519PrivateKey.from_private_bytes(HEADER_SEED).sign(message)
    before = next(h for h, _ in w.covered if h["seq"] == GAP[0] - 1)
    return {
        "seed": HEADER_SEED.hex(),
        "public_key": w.header_signer.public_key.hex(),
        "header": header,
        "canonical": canonical.decode(),
        "chain_leaf": leaf.hex(),
        "signature": signature.hex(),
        "previous_header": {
            "seq": before["seq"],
            "canonical": canonical_header(before).decode(),
        },
    }


def cases(w: World) -> list[tuple[str, bytes, str, list[str], str | None]]:
    """(name, bundle, verdict, statuses of checks 1-7, check 6's detail or None)."""

    def edited(edit: Callable[[Doc], None], window: tuple[int, int] = (1, LAST_SEQ)) -> bytes:
        document = json.loads(w.bundle(coverage=window))
        edit(document)
        return json.dumps(document).encode()

    lost = "seqs 5\u20131002 declared lost on 2026-11-26 (store_rolled_back)"
    every = (1, LAST_SEQ)
    return [
        ("a window across the gap", w.bundle(coverage=every), "VERIFICATION INCOMPLETE",
         [P, P, P, P, P, U, P], lost),
        ("a window that ends at the gap header", w.bundle(coverage=(1, GAP[1] + 1)),
         "VERIFICATION INCOMPLETE", [P, P, P, P, P, U, P], lost),
        ("a window entirely before the gap", w.bundle(coverage=(1, GAP[0] - 1)), "VERIFIED",
         [P] * 7, "seq 1..4: 4 headers, each signed and linked"),
        ("the gap's signature tampered", edited(tampered_signature), "FAILED",
         [P, P, P, P, P, F, P], None),
        ("the gap's prev does not link to seq 4", edited(broken_prev(w), (1, GAP[1] + 1)),
         "FAILED", [P, P, P, P, P, F, P], None),
        ("seq 1004 does not link to the gap", edited(next_unlinked(w)), "FAILED",
         [P, P, P, P, P, F, P], None),
    ]  # fmt: skip


def main() -> None:
    w = world()
    keys, trust = w.keys_document(), w.trust_document()
    directory = load_key_directory(json.dumps(keys))
    store = load_trust_store(json.dumps(trust))
    written = []
    for name, bundle, verdict, statuses, detail in cases(w):
        result = verify_bundle(bundle, directory, store, now=NOW)
        got = (result.verdict, [check.status for check in result.checks])
        if got != (verdict, statuses) or (detail is not None and result.check(6).detail != detail):
            raise SystemExit(f"{name}: the verifier gives {got}, {result.check(6).detail!r}")
        expected: Doc = {"verdict": verdict, "statuses": statuses}
        if detail is not None:
            expected["detail_6"] = detail
        written.append({"name": name, "bundle": json.loads(bundle), "expected": expected})
    out = Path(__file__).with_name("gaps.json")
    document = {
        "now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "keys": keys,
        "trust": trust,
        "example": example(w),
        "cases": written,
    }
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
