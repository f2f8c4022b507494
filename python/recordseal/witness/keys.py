"""The witness's keys in its data directory, by algorithm (``witness serve --algorithm``).

``witness-key.ed25519`` (a 32-byte RFC 8032 seed) cosigns with Ed25519 (``cosignature/v1``),
``witness-key.ml-dsa-44`` (a 32-byte FIPS 204 seed) with ML-DSA-44 (``subtree/v1``); each is
made (mode 0600) on first use. With ``both`` the witness answers the Ed25519 line first.
Both keys are under the witness's one name: a trust store lists the witness once per key, and
a verifier counts it once.
"""

from __future__ import annotations

from pathlib import Path

from recordseal.crypto.keyfiles import read_or_create_secret
from recordseal.tlog.cosignature import CosignatureSigner
from recordseal.tlog.subtree import MLDSA44CosignatureSigner

ED25519_KEY_FILE = "witness-key.ed25519"
MLDSA44_KEY_FILE = "witness-key.ml-dsa-44"
ALGORITHM_CHOICES = ("ed25519", "ml-dsa-44", "both")


def load_signers(
    key_dir: Path, name: str, algorithm: str
) -> list[CosignatureSigner | MLDSA44CosignatureSigner]:
    """The witness's cosigning keys for ``algorithm`` (one of :data:`ALGORITHM_CHOICES`),
    Ed25519 first."""
    signers: list[CosignatureSigner | MLDSA44CosignatureSigner] = []
    if algorithm in ("ed25519", "both"):
        seed = read_or_create_secret(key_dir / ED25519_KEY_FILE)
        signers.append(CosignatureSigner.from_seed(name, seed))
    if algorithm in ("ml-dsa-44", "both"):
        seed = read_or_create_secret(key_dir / MLDSA44_KEY_FILE)
        signers.append(MLDSA44CosignatureSigner.from_seed(name, seed))
    if not signers:
        raise ValueError(f"unknown algorithm {algorithm!r}: one of {', '.join(ALGORITHM_CHOICES)}")
    return signers
