"""The offline verifier of disclosure bundles (docs/bundle.md).

It needs neither the server nor the database: the commitment core, the chain rules and the
transparency-log formats only. It imports neither the web layer nor storage.

``verify_bundle(bundle_bytes, keys, trust)`` runs the seven checks and returns a
:class:`VerificationResult`; it never raises on a bad bundle (the verdict is then ``FAILED``
with the reason in check 1). The parse functions raise :class:`BundleError`.
"""

from .build import (
    DisclosureError,
    DuplicateField,
    UnknownField,
    build_bundle,
    coverage_of,
    field_disclosures,
    leaf_values,
    seal_of,
    tlog_proof_text,
)
from .bundle import (
    Bundle,
    Coverage,
    DirectoryKey,
    DisclosedField,
    Header,
    KeyDirectory,
    LogKey,
    Seal,
    SignedHeader,
    TimestampReceipt,
    TrustedAuthority,
    TrustedWitness,
    TrustStore,
    decode_bundle,
    encode_bundle,
    load_key_directory,
    load_trust_store,
)
from .errors import BundleError
from .result import (
    FAILED,
    INCOMPLETE,
    VERIFIED,
    CheckResult,
    RecordRef,
    TimeBracket,
    VerificationResult,
)
from .verifier import verify_bundle

__all__ = [
    "FAILED",
    "INCOMPLETE",
    "VERIFIED",
    "Bundle",
    "BundleError",
    "CheckResult",
    "Coverage",
    "DirectoryKey",
    "DisclosedField",
    "DisclosureError",
    "DuplicateField",
    "Header",
    "KeyDirectory",
    "LogKey",
    "RecordRef",
    "Seal",
    "SignedHeader",
    "TimeBracket",
    "TimestampReceipt",
    "TrustStore",
    "TrustedAuthority",
    "TrustedWitness",
    "UnknownField",
    "VerificationResult",
    "build_bundle",
    "coverage_of",
    "decode_bundle",
    "encode_bundle",
    "field_disclosures",
    "leaf_values",
    "load_key_directory",
    "load_trust_store",
    "seal_of",
    "tlog_proof_text",
    "verify_bundle",
]
