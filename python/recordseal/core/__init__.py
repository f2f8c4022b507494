"""The commitment core: canonical JSON, field commitments and RFC 6962 trees (docs/spec.md).

The native core (``rust-core/``) is used when it is built; otherwise the pure-Python reference,
which gives the same results and refusals (code, field and message), more slowly. ``BACKEND``
says which one is in use.
Every refusal is a :class:`CommitError`.
"""

from typing import TYPE_CHECKING

from .errors import CommitError

if TYPE_CHECKING:
    # Typed as the native API (recordseal/_native.pyi); the reference has the same signatures.
    from .native import (
        KINDS,
        UNICODE_VERSION,
        CommittedRecord,
        Leaf,
        canonicalize,
        commit_field,
        commit_record,
        consistency_proof,
        derive_salt,
        encode_value,
        inclusion_proof,
        leaf_hash,
        merkle_root,
        validate_declarations,
        verify_consistency,
        verify_inclusion,
    )

    BACKEND: str
else:
    try:
        from .native import *  # noqa: F403
    except ModuleNotFoundError as missing:
        # Only an absent extension falls back; a broken or stale build must fail loudly.
        if missing.name != "recordseal._native":
            raise
        from .reference import *  # noqa: F403

        BACKEND = "reference"
    else:
        BACKEND = "native"

__all__ = [
    "BACKEND",
    "KINDS",
    "UNICODE_VERSION",
    "CommitError",
    "CommittedRecord",
    "Leaf",
    "canonicalize",
    "commit_field",
    "commit_record",
    "consistency_proof",
    "derive_salt",
    "encode_value",
    "inclusion_proof",
    "leaf_hash",
    "merkle_root",
    "validate_declarations",
    "verify_consistency",
    "verify_inclusion",
]
