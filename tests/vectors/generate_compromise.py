"""Write ``compromise.json``: bundles verified with key directories that mark a header key or
a log key compromised (docs/bundle.md, "Compromised keys": rules 3.5, 4.8 and 6.16).

The bundles are built by the verifier tests' factory (``tests/verify/factory.py``) from fixed
seeds, so every byte is reproducible: the stream ``acme/orders`` holds records 1-6, each
bundle discloses record 4, ingested at 07:59:33.123456Z on 2026-11-26; the checkpoint that
seals it is cosigned by witness.example at 07:59:58Z, so its ``not_after`` is 07:59:59Z. Each
case names its own key directory and trust store. The expected verdicts and check statuses,
and the text that must appear in the details of the checks that judge the compromise, are
written here by hand from docs/bundle.md; the script refuses to write unless the Python
verifier gives exactly them.
Run: ``.venv/bin/python tests/vectors/generate_compromise.py`` from the repository root.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "python")]

from tests.verify.factory import ORIGIN, WITNESS, World  # noqa: E402

from recordseal.crypto.signing import HeaderSigner  # noqa: E402
from recordseal.tlog import CosignatureSigner, Ed25519Signer  # noqa: E402
from recordseal.verify import (  # noqa: E402
    load_key_directory,
    load_trust_store,
    verify_bundle,
)

#: The header-signing key's RFC 8032 seed: the bytes 00 01 02 ... 1f.
HEADER_SEED = bytes(range(32))
LOG_SEED = hashlib.sha256(b"recordseal compromise vectors: log key").digest()
WITNESS_SEED = hashlib.sha256(b"recordseal compromise vectors: witness key").digest()
OTHER_SEED = hashlib.sha256(b"recordseal compromise vectors: another header key").digest()
#: Record seq s is ingested at BASE + 10 s + 0.123456 s; the sealing checkpoint is cosigned 5 s
#: after record 6, at 07:59:58.123456, a witness time of 07:59:58Z.
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
        seed=b"recordseal compromise vectors",
    )


def with_another_key(keys: Doc, compromised_at: str) -> Doc:
    """The directory listing a second header key, compromised, that signed nothing here."""
    other = HeaderSigner.from_seed(OTHER_SEED)
    key = {**keys["keys"][0], "key_id": other.key_id, "public_key": other.public_key.hex()}
    return {**keys, "keys": [*keys["keys"], {**key, "compromised_at": compromised_at}]}


Case = tuple[str, bytes, Doc, Doc | None, str, list[str], dict[str, str]]


def cases(w: World) -> list[Case]:
    """(name, bundle, keys, trust, verdict, statuses of checks 1-7, {check: text its detail
    holds})."""
    trust = w.trust_document()
    plain, upto, every = w.bundle(coverage=None), w.bundle(coverage=(1, 4)), w.bundle()

    def key(at: str) -> Doc:
        return w.keys_document(compromised_at=at)

    after, before = "2026-11-26T08:00:00Z", "2026-11-26T07:59:00Z"
    signed_by = f"signed by key {w.header_signer.key_id} compromised at {after}"
    named = {"3": f"compromised at {after}"}
    return [
        ("compromised after the witness time", upto, key(after), trust, "VERIFIED",
         [P] * 7, named),
        ("compromised at the end of the witness's second", upto, key("2026-11-26T07:59:59Z"),
         trust, "VERIFIED", [P] * 7, {"3": "compromised at 2026-11-26T07:59:59Z"}),
        ("compromised within the witness's second", plain, key("2026-11-26T07:59:58.5Z"),
         trust, "FAILED", [P, P, F, P, P, P, P], {"3": "compromised at 2026-11-26T07:59:58.5Z"}),
        ("compromised before the witness time", upto, key(before), trust, "FAILED",
         [P, P, F, P, P, F, P], {"3": f"compromised at {before}", "6": f"compromised at {before}"}),
        ("no witness cosigned the checkpoint", w.bundle(cosigned=False, coverage=None),
         key(after), trust, "FAILED", [P, P, F, P, U, P, U], named),
        ("not sealed", w.bundle(sealed=False, coverage=None), key(after), trust, "FAILED",
         [P, P, F, U, U, P, U], named),
        ("no trust store", plain, key(after), None, "FAILED", [P, P, F, P, U, P, U], named),
        ("one witness of a quorum of two", plain, key(after), w.trust_document(quorum=2),
         "VERIFICATION INCOMPLETE", [P, P, P, P, U, P, P], named),
        ("log key compromised before the witness time", plain,
         w.keys_document(log_compromised_at=before), trust, "FAILED", [P, P, P, F, P, P, U],
         {"4": f"compromised at {before}"}),
        ("log key compromised after the witness time", plain,
         w.keys_document(log_compromised_at=after), trust, "VERIFIED", [P] * 7, {}),
        ("header and log key compromised before the witness time", plain,
         w.keys_document(compromised_at=before, log_compromised_at=before), trust, "FAILED",
         [P, P, F, F, P, P, U], {"3": f"compromised at {before}", "4": f"compromised at {before}"}),
        ("covered headers after the record", every, key(after), trust, "FAILED",
         [P, P, P, P, P, F, P], {"6": f"seq 5: {signed_by}"}),
        ("covered headers not linked to the record", drop_seq_3(upto), key(after), trust,
         "FAILED", [P, P, P, P, P, F, P], {"6": f"seq 1: {signed_by}"}),
        ("a directory without the member", every, w.keys_document(), trust, "VERIFIED",
         [P] * 7, {}),
        ("compromised_at null", every, w.keys_document(compromised_at=None), trust, "VERIFIED",
         [P] * 7, {}),
        ("another key of the directory compromised", every,
         with_another_key(w.keys_document(), before), trust, "VERIFIED", [P] * 7, {}),
    ]  # fmt: skip


def drop_seq_3(bundle: bytes) -> bytes:
    document = json.loads(bundle)
    records = document["coverage"]["records"]
    records[:] = [item for item in records if item["header"]["seq"] != 3]
    return json.dumps(document).encode()


def main() -> None:
    w = world()
    written = []
    for name, bundle, keys, trust, verdict, statuses, details in cases(w):
        directory = load_key_directory(json.dumps(keys))
        store = None if trust is None else load_trust_store(json.dumps(trust))
        result = verify_bundle(bundle, directory, store, now=NOW)
        got = (result.verdict, [check.status for check in result.checks])
        missing = {n: t for n, t in details.items() if t not in result.check(int(n)).detail}
        if got != (verdict, statuses) or missing:
            raise SystemExit(f"{name}: the verifier gives {got}, details lack {missing}")
        expected: Doc = {"verdict": verdict, "statuses": statuses, "details": details}
        written.append(
            {"name": name, "bundle": json.loads(bundle), "keys": keys, "trust": trust,
             "expected": expected}
        )  # fmt: skip
    out = Path(__file__).with_name("compromise.json")
    document = {"now": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"), "cases": written}
    out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
