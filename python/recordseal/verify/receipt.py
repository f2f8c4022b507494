"""Erasure receipts (docs/records.md, "Erasure receipts"): ``verify_erasure_receipt``.

A receipt is valid when it has exactly the documented members, its ``key_id`` is a key of the
key directory that was valid at ``erased_at`` (the rules of check 3.4, docs/bundle.md), and
the Ed25519 signature over ``"recordseal/erasure-receipt/v1" ‖ 0x00 ‖ RFC8785(receipt)``
verifies with it. A key the directory marks compromised never makes a receipt valid: a
receipt carries no witnessed time that could show it was signed before the compromise
(docs/bundle.md, "Compromised keys"). The function never raises on its input: it says
invalid, and why.
"""

from __future__ import annotations

from msgspec import Struct

from recordseal.chain import erasure_receipt_message
from recordseal.crypto.signing import verify_signature

from .boundary import outermost
from .bundle import ErasureReceipt, KeyDirectory, decode_erasure_receipt
from .checks import NO_PUBLIC_KEY
from .context import Keyring
from .encoding import format_instant, parse_instant
from .errors import BundleError
from .sealing import STALE_DIRECTORY


class ReceiptResult(Struct, frozen=True):
    """``valid``, and ``reason`` when it is not; ``receipt`` once it parsed."""

    valid: bool
    reason: str = ""
    receipt: ErasureReceipt | None = None


@outermost(lambda reason: ReceiptResult(False, reason))
def verify_erasure_receipt(document: bytes | str, keys: KeyDirectory) -> ReceiptResult:
    """Verify ``{"receipt", "signature"}`` or a whole erase answer (``erasure_receipt``)."""
    try:
        signed = decode_erasure_receipt(document)
        keyring = Keyring.of(keys)
    except BundleError as error:
        return ReceiptResult(False, str(error))
    receipt = signed.receipt
    key = keyring.header_keys.get(receipt.key_id)
    if key is None:
        reason = f"{NO_PUBLIC_KEY} for key {receipt.key_id}: {STALE_DIRECTORY}"
        return ReceiptResult(False, reason, receipt)
    message = erasure_receipt_message(receipt.canonical())
    if not verify_signature(key.public_key, message, bytes.fromhex(signed.signature)):
        reason = f"the Ed25519 signature does not verify with key {receipt.key_id}"
        return ReceiptResult(False, reason, receipt)
    erased_at = parse_instant(receipt.erased_at)
    if erased_at is None:  # the struct's own check makes this unreachable after decoding
        return ReceiptResult(False, "erased_at is not an RFC 3339 date-time", receipt)
    if (problem := key.problem_at(erased_at)) is not None:
        reason = f"{problem}, and the subject was erased at {receipt.erased_at}"
        return ReceiptResult(False, reason, receipt)
    if key.compromised_at is not None:
        reason = (
            f"signed by key {receipt.key_id} compromised at {format_instant(key.compromised_at)},"
            " and an erasure receipt carries no witnessed time to show it was signed before then"
        )
        return ReceiptResult(False, reason, receipt)
    return ReceiptResult(True, "", receipt)
