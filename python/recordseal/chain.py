"""The signed record header and the per-stream chain (docs/records.md).

Pure functions over the commitment core; the verifier uses them without the server.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from collections.abc import Sequence
from typing import Any

import orjson

from recordseal.core import CommitError, canonicalize, leaf_hash

HEADER_FORMAT = "recordseal/header/v1"
GAP_FORMAT = "recordseal/gap/v1"
ERASURE_RECEIPT_FORMAT = "recordseal/erasure-receipt/v1"
ATTESTATION = "hosted-ingest"
STREAM_GENESIS_TAG = b"recordseal-stream-genesis-v1"
#: A gap's ``reason``: a short machine string (``store_rolled_back`` is the one in use).
GAP_REASON = re.compile(r"[a-z0-9_]{1,64}")


def _length_prefixed(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<I", len(data)) + data


def stream_genesis(tenant: str, stream: str) -> bytes:
    """``prev`` of a stream's first record: SHA-256(tag ‖ len ‖ tenant ‖ len ‖ stream).

    Lengths are 4-byte little-endian, so ("a", "bc") and ("ab", "c") never collide.
    """
    return hashlib.sha256(
        STREAM_GENESIS_TAG + _length_prefixed(tenant) + _length_prefixed(stream)
    ).digest()


def build_header(
    *,
    tenant: str,
    stream: str,
    seq: int,
    record_id: str,
    record_type: str,
    occurred_at: str,
    subject_ref: str,
    root: bytes,
    field_count: int,
    prev: bytes,
    key_id: str,
    ingested_at: str,
) -> dict[str, Any]:
    """The header members, in the order docs/records.md lists them."""
    return {
        "format": HEADER_FORMAT,
        "tenant": tenant,
        "stream": stream,
        "seq": seq,
        "record_id": record_id,
        "record_type": record_type,
        "occurred_at": occurred_at,
        "subject_ref": subject_ref,
        "root": root.hex(),
        "field_count": field_count,
        "prev": prev.hex(),
        "key_id": key_id,
        "ingested_at": ingested_at,
        "attestation": ATTESTATION,
    }


def build_gap_header(
    *,
    tenant: str,
    stream: str,
    from_seq: int,
    to_seq: int,
    reason: str,
    declared_at: str,
    prev: bytes,
    key_id: str,
) -> dict[str, Any]:
    """A gap header declaring ``from_seq..to_seq`` of a stream lost; it is the stream's
    record at ``seq = to_seq + 1`` and ``prev`` is the chain leaf of the header at
    ``from_seq - 1`` (the stream genesis when ``from_seq`` is 1). Members in the order
    docs/records.md lists them; ``ValueError`` for a range or reason it does not allow."""
    if not 1 <= from_seq <= to_seq:
        raise ValueError(
            f"a gap declares from_seq..to_seq with 1 <= from_seq <= to_seq, "
            f"not {from_seq}..{to_seq}"
        )
    if not valid_gap_reason(reason):
        raise ValueError(f"a gap reason is 1-64 characters of a-z, 0-9 and _, not {reason!r}")
    return {
        "format": GAP_FORMAT,
        "tenant": tenant,
        "stream": stream,
        "seq": to_seq + 1,
        "from_seq": from_seq,
        "to_seq": to_seq,
        "reason": reason,
        "declared_at": declared_at,
        "prev": prev.hex(),
        "key_id": key_id,
        "attestation": ATTESTATION,
    }


def valid_gap_reason(reason: str) -> bool:
    """Whether ``reason`` is 1-64 characters of ``a-z0-9_``."""
    return GAP_REASON.fullmatch(reason) is not None


def gap_signing_message(canonical: bytes) -> bytes:
    """What the header-signing key signs for a gap: context, a zero byte, RFC 8785 bytes."""
    return GAP_FORMAT.encode() + b"\x00" + canonical


def build_erasure_receipt(
    *, tenant: str, subject_ref: str, erased_at: str, key_id: str
) -> dict[str, Any]:
    """The receipt of a subject's erasure, members in the order docs/records.md lists them."""
    return {
        "format": ERASURE_RECEIPT_FORMAT,
        "tenant": tenant,
        "subject_ref": subject_ref,
        "erased_at": erased_at,
        "key_id": key_id,
        "attestation": ATTESTATION,
    }


def erasure_receipt_message(canonical: bytes) -> bytes:
    """What the header-signing key signs for an erasure receipt (RFC 8785 bytes after the
    context and a zero byte)."""
    return ERASURE_RECEIPT_FORMAT.encode() + b"\x00" + canonical


def canonical_header(header: dict[str, Any]) -> bytes:
    """RFC 8785 bytes of a header: what is signed and what the chain leaf hashes."""
    return canonicalize(orjson.dumps(header))


def chain_leaf(canonical: bytes) -> bytes:
    """RFC 6962 leaf hash of the canonical header bytes."""
    return leaf_hash(canonical)


class ChainError(CommitError):
    """A stream's headers do not form one dense, linked chain (code ``chain_broken``); the
    message says where. A :class:`~recordseal.core.CommitError`: the chain rules are the
    commitment core's, under its one exception root."""

    def __init__(self, message: str) -> None:
        super().__init__("chain_broken", message)

    def __reduce__(self) -> tuple[type[ChainError], tuple[str]]:  # type: ignore[override]
        return (ChainError, (str(self),))


def verify_links(tenant: str, stream: str, headers: Sequence[bytes]) -> None:
    """Check canonical headers of one stream, in order: seq 1, 2, 3... with no gap, each
    ``prev`` the chain leaf of the one before (the genesis hash for the first)."""
    expected_prev = stream_genesis(tenant, stream)
    for position, canonical in enumerate(headers, start=1):
        header = json.loads(canonical)
        if header["tenant"] != tenant or header["stream"] != stream:
            raise ChainError(f"header {position} belongs to another stream")
        if header["seq"] != position:
            raise ChainError(f"expected seq {position}, found {header['seq']}")
        if header["prev"] != expected_prev.hex():
            raise ChainError(f"seq {position}: prev does not link to seq {position - 1}")
        if canonical_header(header) != canonical:
            raise ChainError(f"seq {position}: header is not in RFC 8785 form")
        expected_prev = chain_leaf(canonical)
