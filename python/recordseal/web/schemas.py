"""Request and response bodies of the record API (msgspec structs, documented in OpenAPI).

The bodies of the two ingest routes, ``RecordBody`` and ``BatchBody``, are defined by the read
stage that reads them (``services/reading.py``) and documented from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from recordseal.identifiers import DEFAULT_FLEET

# The request bodies of ingest are the read stage's schema (services/reading.py).
from recordseal.services.reading import PAYLOAD
from recordseal.services.reading import BatchBody as BatchBody
from recordseal.services.reading import RecordBody as RecordBody
from recordseal.verify.bundle import GapHeader, Header, SignedReceipt
from recordseal.verify.encoding import Timestamp
from recordseal.verify.result import VerificationResult

Attestation = Literal["hosted-ingest"]


@dataclass(frozen=True)
class DocumentedAs:
    """``Annotated`` metadata: the OpenAPI document shows the field as ``kind``
    (``web/openapi.py``). For members kept as exact bytes (``msgspec.Raw``) or as loose
    mappings that hold a known shape, such as a signed header; msgspec ignores it."""

    kind: Any


#: A JSON object of any members (a payload).
JsonObject = dict[str, Any]


class StreamIn(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/streams``."""

    name: str
    declarations: dict[str, str] | None = None
    strict: bool = False
    #: The fleet whose (tenant, fleet) log seals its records (docs/fleets.md).
    fleet: str = DEFAULT_FLEET


class StreamOut(msgspec.Struct):
    name: str
    declarations: dict[str, str]
    strict: bool
    created_at: Timestamp
    #: The sequence number the stream's next record takes.
    next_seq: int
    fleet: str
    #: The records the stream holds: ``next_seq - 1``, less the sequence numbers a gap header
    #: declared lost (docs/continuity.md); a gap header counts as a record.
    record_count: int
    attestation: Attestation = "hosted-ingest"


class StreamList(msgspec.Struct):
    """``GET /v1/streams``: a page of the token's tenant's streams, by name."""

    streams: list[StreamOut]
    #: The next page (the ``Link: rel="next"``), or null on the last page.
    next: str | None
    attestation: Attestation = "hosted-ingest"


class SealOut(msgspec.Struct):
    """Where a record's chain leaf is sealed: its log and its index in it."""

    log: str
    index: int


class StreamRecord(msgspec.Struct):
    """A record of a stream's listing: its signed header and where it is sealed. ``kind`` is
    ``gap`` for a gap header (docs/records.md, "Gap declarations"), which declares
    sequence numbers lost and holds no fields."""

    record_id: str
    seq: int
    kind: Literal["record", "gap"]
    chain_leaf: str
    #: The signed header, in its RFC 8785 form.
    header: Annotated[msgspec.Raw, DocumentedAs(Header | GapHeader)]
    signature: str
    #: Null until the record's chain leaf is sealed.
    seal: SealOut | None


class RecordList(msgspec.Struct):
    """``GET /v1/streams/{name}/records``: a page of a stream's records, by sequence number."""

    stream: str
    records: list[StreamRecord]
    #: The next page (the ``Link: rel="next"``), or null on the last page.
    next: str | None
    attestation: Attestation = "hosted-ingest"


class RecordOut(msgspec.Struct):
    """The answer to an accepted record. Binary values are lowercase hex."""

    record_id: str
    stream: str
    seq: int
    root: str
    chain_leaf: str
    #: The signed header, in its RFC 8785 form.
    header: Annotated[msgspec.Raw, DocumentedAs(Header)]
    signature: str
    key_id: str
    field_count: int
    attestation: Attestation = "hosted-ingest"
    #: True when an Idempotency-Key named an earlier request: this is its record, unchanged.
    replayed: bool = False


class RecordView(msgspec.Struct):
    record_id: str
    stream: str
    seq: int
    root: str
    chain_leaf: str
    header: Annotated[dict[str, Any], DocumentedAs(Header)]
    signature: str
    key_id: str
    field_count: int
    #: The sealed batch holding the record's chain leaf; null until it is sealed.
    seal: dict[str, Any] | None = None
    attestation: Attestation = "hosted-ingest"


class PayloadOut(msgspec.Struct):
    record_id: str
    stream: str
    seq: int
    payload: Annotated[msgspec.Raw, DocumentedAs(JsonObject), PAYLOAD]
    attestation: Attestation = "hosted-ingest"


class CoverageIn(msgspec.Struct, forbid_unknown_fields=True):
    from_seq: int
    to_seq: int


class DisclosureIn(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/records/{id}/disclosure``: the committed paths to reveal, and optionally a
    window of the stream claimed complete."""

    fields: list[str]
    coverage: CoverageIn | None = None


class ErasureOut(msgspec.Struct):
    status: Literal["erased", "already_erased"]
    erased_at: Timestamp
    payloads_deleted: int
    #: signed by the header key: ``recordseal verify-receipt`` checks it (docs/records.md)
    erasure_receipt: SignedReceipt
    attestation: Attestation = "hosted-ingest"


class Health(msgspec.Struct):
    status: Literal["ok"] = "ok"


class Problem(msgspec.Struct, omit_defaults=True):
    """RFC 9457 problem details, with a stable ``code`` and the offending ``field``; like
    every answer of the record API it carries ``attestation`` (docs/records.md, "Endpoints")."""

    type: Annotated[str, msgspec.Meta(description="a URI naming the problem: its code")]
    title: Annotated[str, msgspec.Meta(description="the HTTP status in words")]
    status: Annotated[int, msgspec.Meta(description="the HTTP status of the answer")]
    code: Annotated[
        str, msgspec.Meta(description="the rule that refused the request; stable, for programs")
    ]
    attestation: Attestation
    detail: Annotated[
        str | None, msgspec.Meta(description="what to do, for people; never quotes a value")
    ] = None
    field: Annotated[
        str | None,
        msgspec.Meta(description="the offending member, header or committed path"),
    ] = None


class BatchResult(msgspec.Struct, omit_defaults=True):
    """One item's outcome: ``record`` when stored (or replayed), ``problem`` when refused."""

    index: int
    status: int
    record: RecordOut | None = None
    problem: Problem | None = None


class BatchOut(msgspec.Struct):
    accepted: int
    refused: int
    results: list[BatchResult]
    attestation: Attestation = "hosted-ingest"


class VerificationOut(VerificationResult, kw_only=True):
    """``POST /v1/verify``: the verification result (docs/bundle.md) with ``attestation``."""

    attestation: Attestation = "hosted-ingest"
