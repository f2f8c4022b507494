"""Verifiers from vkeys of either algorithm: a log's key (Ed25519 0x01 or ML-DSA-44 0x06)
and a cosigner's key (Ed25519 0x04 or ML-DSA-44 0x06), as key directories, trust stores and
witnesses name them (docs/tlog.md, "Keys and vkeys")."""

from __future__ import annotations

from .cosignature import CosignatureVerifier, CosignerKey
from .errors import TlogError
from .keys import ALGORITHMS, COSIGNATURE_V1, ED25519, MLDSA44, Ed25519Verifier, parse_vkey
from .subtree import MLDSA44CosignatureVerifier

#: A log's checkpoint key: Ed25519 note signatures, or ML-DSA-44 cosignatures by the log.
LogVerifier = Ed25519Verifier | MLDSA44CosignatureVerifier


def log_verifier(vkey: str) -> LogVerifier:
    """The verifier of a log key's vkey: type 0x01 (Ed25519) or 0x06 (ML-DSA-44)."""
    key = parse_vkey(vkey)
    if key.signature_type == ED25519:
        return Ed25519Verifier(key.name, key.public_key)
    if key.signature_type == MLDSA44:
        return MLDSA44CosignatureVerifier(key.name, key.public_key)
    message = (
        f"vkey of {key.name} has type 0x{key.signature_type:02x}, not a log key's (0x01 Ed25519"
        " or 0x06 ML-DSA-44)"
    )
    raise TlogError("key_unsupported", message, {"vkey": vkey})


def cosigner_verifier(vkey: str) -> CosignerKey:
    """The verifier of a cosigner's vkey: type 0x04 (Ed25519) or 0x06 (ML-DSA-44)."""
    key = parse_vkey(vkey)
    if key.signature_type == COSIGNATURE_V1:
        return CosignatureVerifier(key.name, key.public_key)
    if key.signature_type == MLDSA44:
        return MLDSA44CosignatureVerifier(key.name, key.public_key)
    message = (
        f"vkey of {key.name} has type 0x{key.signature_type:02x}, not a cosigner's (0x04"
        " Ed25519 or 0x06 ML-DSA-44)"
    )
    raise TlogError("key_unsupported", message, {"vkey": vkey})


def algorithm_of(verifier: LogVerifier | CosignerKey) -> str:
    """``Ed25519`` or ``ML-DSA-44``."""
    return ALGORITHMS[verifier.SIGNATURE_TYPE]
