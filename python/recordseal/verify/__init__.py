"""The offline verifier of disclosure bundles (docs/bundle.md).

It needs neither the server nor the database: the commitment core, the chain rules and the
transparency-log formats only. It imports neither the web layer, nor storage, nor an HTTP
client; it builds nothing (the service builds bundles: ``recordseal.services.bundles``).

``verify_bundle(bundle_bytes, keys, trust)`` (or a :class:`Verifier` kept for many bundles)
runs the seven checks and returns a :class:`VerificationResult`; it never raises on a bad
bundle (the verdict is then ``FAILED`` with the reason in check 1). The documents are read
with ``decode_bundle``, ``load_key_directory`` and ``load_trust_store``, which raise
:class:`BundleError`; the parts of a document are the structs of :mod:`.bundle`.

``verify_erasure_receipt(document, keys)`` checks an erasure receipt (docs/records.md,
"Erasure receipts") and returns a :class:`ReceiptResult`; it never raises on its input.

``replay_log_file(data, expected=LogFileName.parse(name))`` replays a daily transparency log
file of a (tenant, fleet) log back to its genesis root, and checks it is the file of that name
(docs/fleets.md); it raises :class:`TransparencyLogError`.

Every error the package raises is a :class:`VerificationError` (:mod:`.errors`).
"""

from .bundle import Bundle, KeyDirectory, TrustStore, decode_bundle, encode_bundle
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
    "KeyDirectory",
    "LogFileName",
    "ReceiptResult",
    "RecordRef",
    "ReplayedLog",
    "TimeBracket",
    "TransparencyLogError",
    "TrustStore",
    "VerificationError",
    "VerificationResult",
    "Verifier",
    "check_days_link",
    "decode_bundle",
    "encode_bundle",
    "load_key_directory",
    "load_trust_store",
    "replay_log_file",
    "verify_bundle",
    "verify_erasure_receipt",
]
