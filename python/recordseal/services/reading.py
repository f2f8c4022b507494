"""The read stage of ingest: a request's body to its records (docs/records.md, "Ingest").

The body of ``POST /v1/records`` or ``POST /v1/records:batch`` is read once, by the native
core's ``read_request`` (``rust-core/src/request.rs``): the core's JSON reader with its limits
and refusals, the request schema below, the ``Idempotency-Key`` and each record's hash, the
envelope rules; each record keeps its payload as the parsed tree ``prepare_records`` commits.
:func:`read_request` here is the reference of that read, composed of the Python pieces the
service used before it (the reference core's reader, msgspec's strict decoding of the schema,
the envelope rules): the oracle the native read is tested against, and the read of
``ReferencePipeline``. Both give the same refusals, word for word.

A read gives, per record, a :class:`RecordRead` or the ``CommitError`` of a record whose shape
the schema refuses (``request_invalid``); it raises the ``CommitError`` of a body the reader
refuses, of a batch's envelope (``request_invalid``) or size (``batch_size_invalid``), or of
a malformed key (``idempotency_key_invalid``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Annotated, Protocol, TypeVar

import msgspec

from recordseal.core import reference
from recordseal.core.errors import CommitError
from recordseal.verify.encoding import Timestamp

T = TypeVar("T")

#: Records of one ``POST /v1/records:batch``.
MAX_BATCH = 1000
MAX_RECORD_TYPE = 128
MAX_SUBJECT_ID = 256
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9._:-]{1,255}")
#: A payload's text may be this long (the core's limit): a body no longer holds none longer.
MAX_PAYLOAD_LEN = 262_144

#: The schema of a payload: msgspec documents ``msgspec.Raw`` as any JSON value.
PAYLOAD = msgspec.Meta(
    extra_json_schema={"type": "object", "additionalProperties": True},
    description="any JSON object; each member is committed as a field (docs/records.md)",
)


class RecordBody(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/records``: all five members are required."""

    stream: str
    record_type: str
    occurred_at: Timestamp
    subject_id: str
    #: Kept as received for exact checks.
    payload: Annotated[msgspec.Raw, PAYLOAD]


class BatchBody(msgspec.Struct, forbid_unknown_fields=True):
    """``POST /v1/records:batch``: up to 1,000 records, each shaped as ``RecordBody``."""

    records: list[msgspec.Raw]


class RecordRead(Protocol):
    """One record of a request as read (``recordseal._native.RecordRead``, or
    :class:`ReferenceRead`)."""

    @property
    def stream(self) -> str: ...
    @property
    def record_type(self) -> str: ...
    @property
    def occurred_at(self) -> str:
        """In UTC, as the kind ``timestamp`` writes it (empty when ``refusal`` refuses it)."""
        ...

    @property
    def subject_id(self) -> str: ...
    @property
    def payload_len(self) -> int | None:
        """The payload's text's size as sent; None when the body is no longer than a payload
        may be."""
        ...

    @property
    def idempotency(self) -> tuple[str, bytes] | None:
        """``(key, SHA-256 of the record's text as sent)`` (a batch's item ``i``:
        ``<key>#<i>``), with an ``Idempotency-Key``."""
        ...

    @property
    def refusal(self) -> CommitError | None:
        """The first envelope rule broken: ``record_type``, ``subject_id``, ``occurred_at``;
        reported after the stream's own checks."""
        ...

    def canonical_payload(self) -> bytes: ...


@dataclass(frozen=True, slots=True)
class ReferenceRead:
    """A record read by :func:`read_request`: its payload is its text as sent."""

    stream: str
    record_type: str
    occurred_at: str
    subject_id: str
    payload: bytes
    payload_len: int | None
    idempotency: tuple[str, bytes] | None
    refusal: CommitError | None

    def canonical_payload(self) -> bytes:
        return reference.canonicalize(self.payload)


_record_decoder = msgspec.json.Decoder(RecordBody, strict=True)
_batch_decoder = msgspec.json.Decoder(BatchBody, strict=True)


def read_request(
    body: bytes, idempotency_key: str | None, batch: bool
) -> list[ReferenceRead | CommitError]:
    """The reference read (module docstring)."""
    reference.canonicalize(body)  # the body's faults, as the core's reader reports them
    measure = len(body) > MAX_PAYLOAD_LEN
    if not batch:
        record = _decoded(body, _record_decoder)
        idempotency = None
        if idempotency_key is not None:
            idempotency = (check_key(idempotency_key), hashlib.sha256(body).digest())
        return [_read(record, idempotency, measure)]
    records = _decoded(body, _batch_decoder).records
    if not 1 <= len(records) <= MAX_BATCH:
        raise CommitError(
            "batch_size_invalid", f"a batch holds 1 to {MAX_BATCH} records", "records"
        )
    if idempotency_key is not None:
        check_key(idempotency_key)
    items: list[ReferenceRead | CommitError] = []
    for index, text in enumerate(records):
        try:
            record = _decoded(text, _record_decoder)
        except CommitError as refusal:
            items.append(refusal)
            continue
        idempotency = None
        if idempotency_key is not None:
            # Items are keyed apart from single posts ('#' never occurs in a key).
            idempotency = (f"{idempotency_key}#{index}", hashlib.sha256(text).digest())
        items.append(_read(record, idempotency, measure))
    return items


def check_key(key: str) -> str:
    """The ``Idempotency-Key``, or its refusal."""
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise CommitError(
            "idempotency_key_invalid",
            "an Idempotency-Key is 1 to 255 letters, digits, '.', '_', ':' or '-'",
            "Idempotency-Key",
        )
    return key


def _read(
    record: RecordBody, idempotency: tuple[str, bytes] | None, measure: bool
) -> ReferenceRead:
    refusal = label_refusal(record.record_type, "record_type", MAX_RECORD_TYPE)
    refusal = refusal or label_refusal(record.subject_id, "subject_id", MAX_SUBJECT_ID)
    try:
        occurred_at = reference.encode_value("timestamp", record.occurred_at)[5:].decode()
    except CommitError:
        occurred_at = ""
        refusal = refusal or CommitError(
            "occurred_at_invalid", "occurred_at must be an RFC 3339 timestamp", "occurred_at"
        )
    payload = bytes(record.payload)
    return ReferenceRead(
        stream=record.stream,
        record_type=record.record_type,
        occurred_at=occurred_at,
        subject_id=record.subject_id,
        payload=payload,
        payload_len=len(payload) if measure else None,
        idempotency=idempotency,
        refusal=refusal,
    )


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def label_refusal(value: str, field: str, limit: int) -> CommitError | None:
    """A label's rule: 1 to ``limit`` characters, none a control character (Unicode Cc)."""
    if not value or len(value) > limit or _CONTROL.search(value) is not None:
        return CommitError(
            f"{field}_invalid",
            f"{field} must be 1 to {limit} characters without control characters",
            field,
        )
    return None


_AT_PATH = re.compile(r" - at `\$\.?([^`]*)`$")
_MISSING = re.compile(r"missing required field `([^`]*)`")


def schema_refusal(error: msgspec.ValidationError) -> tuple[str, str | None]:
    """The rule msgspec states and the member it names (``- at `$.stream```), never the
    value."""
    message = str(error)
    match = _AT_PATH.search(message)
    field = match.group(1) if match else None
    if missing := _MISSING.search(message):
        field = ".".join(part for part in (field, missing.group(1)) if part)
    return _AT_PATH.sub("", message), field


def _decoded(text: bytes, decoder: msgspec.json.Decoder[T]) -> T:
    try:
        return decoder.decode(text)
    except msgspec.ValidationError as error:
        rule, field = schema_refusal(error)
        raise CommitError("request_invalid", rule, field) from None
