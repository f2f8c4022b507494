"""The client's typed view of the record API (msgspec structs, decoded from responses)."""

from __future__ import annotations

from typing import Any

import msgspec

from recordseal.client.errors import ClientError


class Record(msgspec.Struct, frozen=True):
    """A record to ingest: the five members of ``POST /v1/records``."""

    stream: str
    record_type: str
    occurred_at: str
    subject_id: str
    payload: dict[str, Any]


class _RecordFields(msgspec.Struct, frozen=True):
    """The members a record's receipt and its view share."""

    record_id: str
    stream: str
    seq: int
    root: str
    chain_leaf: str
    header: dict[str, Any]
    signature: str
    key_id: str
    field_count: int
    attestation: str


class Receipt(_RecordFields, frozen=True):
    """What the service answered for an accepted record."""

    #: True when the service recognised a retry: this is the first attempt's record.
    replayed: bool = False


class Problem(msgspec.Struct, frozen=True):
    """An RFC 9457 problem: why the service refused a request (or one item of a batch)."""

    status: int
    code: str
    title: str = ""
    type: str = ""
    detail: str | None = None
    field: str | None = None


class Stream(msgspec.Struct, frozen=True):
    name: str
    declarations: dict[str, str]
    strict: bool
    created_at: str
    #: The sequence number the stream's next record takes.
    next_seq: int
    fleet: str = "default"
    #: The records the stream holds (gap headers included; docs/records.md); None from a
    #: service that does not say.
    record_count: int | None = None


class Seal(msgspec.Struct, frozen=True):
    """Where a record's chain leaf is sealed: its log and its index in it."""

    log: str
    index: int


class StreamRecord(msgspec.Struct, frozen=True):
    """A record of a stream's listing (``GET /v1/streams/{name}/records``): its signed header
    and seal. ``kind`` is ``"gap"`` for a gap header, which declares sequence numbers lost."""

    record_id: str
    seq: int
    kind: str
    chain_leaf: str
    header: dict[str, Any]
    signature: str
    seal: Seal | None = None


class StreamPage(msgspec.Struct, frozen=True):
    streams: list[Stream]
    next: str | None = None


class RecordPage(msgspec.Struct, frozen=True):
    stream: str
    records: list[StreamRecord]
    next: str | None = None


class Erasure(msgspec.Struct, frozen=True):
    status: str
    erased_at: str
    payloads_deleted: int
    #: the service's signed statement of the erasure, ``{"receipt": {...}, "signature": hex}``
    #: (docs/records.md, "Erasure receipts"); None from a service that does not give one
    erasure_receipt: dict[str, Any] | None = None


class RecordView(_RecordFields, frozen=True):
    """A stored record (``GET /v1/records/{id}``), with where it was sealed, once it is."""

    seal: dict[str, Any] | None = None


class BatchResult(msgspec.Struct, frozen=True):
    index: int
    status: int
    record: Receipt | None = None
    problem: Problem | None = None


class BatchOut(msgspec.Struct, frozen=True):
    accepted: int
    refused: int
    results: list[BatchResult]


class Refreshed(msgspec.Struct, frozen=True):
    """A refreshed bundle (its bytes, to hand on as they are) and its checkpoint sizes:
    ``old_size`` None when the old bundle had no seal, ``new_size`` None while the record is
    not sealed."""

    bundle: bytes
    old_size: int | None
    new_size: int | None


class Refused(ClientError):
    """The service refused the request; ``problem`` says why (no retry helps)."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(f"{problem.status} {problem.code}: {problem.detail or problem.title}")
        self.problem = problem


class Unavailable(ClientError):
    """The service could not be reached, or kept failing, through every retry: ``attempts``
    were made, the last failing for ``reason`` (an error class or ``HTTP <status>``)."""

    def __init__(self, message: str, *, attempts: int = 0, reason: str | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.reason = reason


class IngestIncomplete(ClientError):
    """Some batches of ``ingest_many`` failed as a whole: refused (:class:`Refused`),
    unreachable (:class:`Unavailable`), or answered with something that is not a batch
    result (the error reading it; such a batch may have been stored).

    ``results`` has one entry per record, in order: its receipt or problem when its batch was
    answered, None when its batch failed (``errors`` holds each failed batch's exception).
    Calling ``ingest_many`` again with the same records (and ``idempotency_key``, when it is
    not None: the keys were not derived from the records) is safe: the stored records come
    back as replays and only the rest are ingested.
    """

    def __init__(
        self,
        results: list[Receipt | Problem | None],
        errors: list[Exception],
        idempotency_key: str | None,
    ) -> None:
        missing = sum(result is None for result in results)
        again = (
            "send the same records again (their keys are derived from them)"
            if idempotency_key is None
            else f"send them again with idempotency_key={idempotency_key!r}"
        )
        super().__init__(
            f"{missing} of {len(results)} records were not ingested ({len(errors)} batches"
            f" failed, first: {errors[0]}); {again}"
        )
        self.results = results
        self.errors = errors
        self.idempotency_key = idempotency_key
