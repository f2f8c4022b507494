"""The native core, :mod:`recordseal._native` (``rust-core/``), under the public names.

Importing this module raises :class:`ImportError` when the extension is not built.
"""

from recordseal._native import (
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

__all__ = [
    "KINDS",
    "UNICODE_VERSION",
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
