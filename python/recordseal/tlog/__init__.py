"""The C2SP transparency-log family: signed notes, checkpoints, cosignatures, witnesses.

This package's top level holds the formats a verifier needs (no web layer, no storage):

- :mod:`.keys` — key names, key IDs, vkeys, Ed25519 signers and verifiers;
- :mod:`.note` — c2sp.org/signed-note;
- :mod:`.checkpoint` — c2sp.org/tlog-checkpoint;
- :mod:`.cosignature` — c2sp.org/tlog-cosignature (``cosignature/v1``, Ed25519);
- :mod:`.subtree` — c2sp.org/tlog-cosignature v1.1 (``subtree/v1``, ML-DSA-44);
- :mod:`.vkeys` — verifiers of either algorithm from vkeys.

RFC 3161 tokens (:mod:`.tsa`, offline verification) and the witness wire format
(:mod:`.protocol`) are imported from their modules. The package holds formats only: the
witness server is :mod:`recordseal.witness`, the HTTP clients of witnesses and time-stamping
authorities :mod:`recordseal.network` (the import contracts in ``pyproject.toml``).
Every failure is a :class:`TlogError` (docs/tlog.md).
"""

from .checkpoint import Checkpoint, open_checkpoint, sign_checkpoint
from .cosignature import (
    Cosignature,
    CosignatureSigner,
    CosignatureVerifier,
    CosignerKey,
    cosigned_message,
    verify_cosignatures,
)
from .errors import TlogError
from .keys import (
    COSIGNATURE_V1,
    ED25519,
    MLDSA44,
    Ed25519Signer,
    Ed25519Verifier,
    NoteSigner,
    NoteVerifier,
    VerifierKey,
    encode_vkey,
    key_id,
    parse_vkey,
)
from .note import (
    Note,
    NoteSignature,
    VerifiedNote,
    open_note,
    parse_note,
    sign_note,
    verify_note,
)
from .subtree import MLDSA44CosignatureSigner, MLDSA44CosignatureVerifier, subtree_message
from .vkeys import LogVerifier, algorithm_of, cosigner_verifier, log_verifier

__all__ = [
    "COSIGNATURE_V1",
    "ED25519",
    "MLDSA44",
    "Checkpoint",
    "Cosignature",
    "CosignatureSigner",
    "CosignatureVerifier",
    "CosignerKey",
    "Ed25519Signer",
    "Ed25519Verifier",
    "LogVerifier",
    "MLDSA44CosignatureSigner",
    "MLDSA44CosignatureVerifier",
    "Note",
    "NoteSignature",
    "NoteSigner",
    "NoteVerifier",
    "TlogError",
    "VerifiedNote",
    "VerifierKey",
    "algorithm_of",
    "cosigned_message",
    "cosigner_verifier",
    "encode_vkey",
    "key_id",
    "log_verifier",
    "open_checkpoint",
    "open_note",
    "parse_note",
    "parse_vkey",
    "sign_checkpoint",
    "sign_note",
    "subtree_message",
    "verify_cosignatures",
    "verify_note",
]
