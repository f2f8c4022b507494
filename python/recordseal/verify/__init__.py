"""The offline verifier of disclosure bundles (docs/bundle.md).

It needs neither the server nor the database: the commitment core, the chain rules and the
transparency-log formats only. It imports neither the web layer nor storage.

``verify_bundle(bundle_bytes, keys, trust)`` runs the seven checks and returns a
:class:`VerificationResult`; it never raises on a bad bundle (the verdict is then ``FAILED``
with the reason in check 1). The parse functions raise :class:`BundleError`.

``verify_erasure_receipt(document, keys)`` checks an erasure receipt (docs/records.md,
"Erasure receipts") and returns a :class:`ReceiptResult`; it never raises on its input.

``replay_log_file(data, expected=LogFileName.parse(name))`` replays a daily transparency log
file of a (tenant, fleet) log back to its genesis root, and checks it is the file of that name
(docs/fleets.md); it raises :class:`TransparencyLogError`.
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
    ErasureReceipt,
    GapHeader,
    Header,
    KeyDirectory,
    LogKey,
    Seal,
    SignedHeader,
    SignedReceipt,
    TimestampReceipt,
    TrustedAuthority,
    TrustedWitness,
    TrustStore,
    decode_bundle,
    decode_erasure_receipt,
    encode_bundle,
)
from .context import load_key_directory, load_trust_store
from .errors import BundleError, VerificationError
from .receipt import ReceiptResult, verify_erasure_receipt
from .result import (
    FAILED,
    INCOMPLETE,
    VERIFIED,
    CheckResult,
    RecordRef,
    TimeBracket,
    VerificationResult,
)
from .transparency import (
    LogFileName,
    ReplayedLog,
    TransparencyLogError,
    check_days_link,
    replay_log_file,
)
from .verifier import Verifier, verify_bundle

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
    "ErasureReceipt",
    "GapHeader",
    "Header",
    "KeyDirectory",
    "LogFileName",
    "LogKey",
    "ReceiptResult",
    "RecordRef",
    "ReplayedLog",
    "Seal",
    "SignedHeader",
    "SignedReceipt",
    "TimeBracket",
    "TimestampReceipt",
    "TransparencyLogError",
    "TrustStore",
    "TrustedAuthority",
    "TrustedWitness",
    "UnknownField",
    "VerificationError",
    "VerificationResult",
    "Verifier",
    "build_bundle",
    "check_days_link",
    "coverage_of",
    "decode_bundle",
    "decode_erasure_receipt",
    "encode_bundle",
    "field_disclosures",
    "leaf_values",
    "load_key_directory",
    "load_trust_store",
    "replay_log_file",
    "seal_of",
    "tlog_proof_text",
    "verify_bundle",
    "verify_erasure_receipt",
]
