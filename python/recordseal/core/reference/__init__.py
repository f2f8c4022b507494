"""The commitment core in plain Python: the specification you can read (docs/spec.md).

Same names, signatures, results and errors as the native core, :mod:`recordseal._native`,
which the tests cross-check against it. One module per concept: :mod:`.rfc8259` (parsing),
:mod:`.rfc8785` (canonical form), :mod:`.number` (number text), :mod:`.kinds` (``enc(value)``),
:mod:`.paths` (committed paths), :mod:`.leaves` (committing a record), :mod:`.rfc6962` (trees).
"""

import unicodedata

from .kinds import KINDS, encode_value
from .leaves import (
    CommittedRecord,
    Leaf,
    commit_field,
    commit_record,
    derive_salt,
    validate_declarations,
)
from .rfc6962 import (
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    merkle_root,
    verify_consistency,
    verify_inclusion,
)
from .rfc8785 import canonicalize

#: Unicode version of the NFC tables used by the kind ``text``.
UNICODE_VERSION: str = unicodedata.unidata_version

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
