"""The C2SP transparency-log family: signed notes, checkpoints, cosignatures, witnesses.

This package's top level holds the formats a verifier needs (no web layer, no storage):

- :mod:`.keys` — key names, key IDs, vkeys, Ed25519 signers and verifiers;
- :mod:`.note` — c2sp.org/signed-note;
- :mod:`.checkpoint` — c2sp.org/tlog-checkpoint;
- :mod:`.cosignature` — c2sp.org/tlog-cosignature (``cosignature/v1``).

RFC 3161 tokens (:mod:`.tsa`, offline verification) and the network parts — the witness
(:mod:`.witness`, :mod:`.witness_app`, :mod:`.witness_cli`), the witness client (:mod:`.client`)
and the RFC 3161 client (:mod:`.tsa_client`) — are imported from their modules; the verifier
imports none of the network parts (the import contract in ``pyproject.toml``).
Every failure is a :class:`TlogError` (docs/tlog.md).
"""

from .checkpoint import Checkpoint, open_checkpoint, sign_checkpoint
from .cosignature import (
    Cosignature,
    CosignatureSigner,
    CosignatureVerifier,
    cosigned_message,
    verify_cosignatures,
)
from .errors import TlogError
from .keys import (
    COSIGNATURE_V1,
    ED25519,
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

__all__ = [
    "COSIGNATURE_V1",
    "ED25519",
    "Checkpoint",
    "Cosignature",
    "CosignatureSigner",
    "CosignatureVerifier",
    "Ed25519Signer",
    "Ed25519Verifier",
    "Note",
    "NoteSignature",
    "NoteSigner",
    "NoteVerifier",
    "TlogError",
    "VerifiedNote",
    "VerifierKey",
    "cosigned_message",
    "encode_vkey",
    "key_id",
    "open_checkpoint",
    "open_note",
    "parse_note",
    "parse_vkey",
    "sign_checkpoint",
    "sign_note",
    "verify_cosignatures",
    "verify_note",
]
