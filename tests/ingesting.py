"""Records posted to a ``RecordService`` in process, as ``POST /v1/records`` posts them."""

from __future__ import annotations

import json

from recordseal.services.records import RecordService
from recordseal.storage.requests import NewRecord
from recordseal.storage.rows import RecordRow


def record_body(
    stream: str, record_type: str, occurred_at: str, subject_id: str, payload: bytes
) -> bytes:
    """The body of a record post: its envelope, then its payload's text as given."""
    envelope = {"stream": stream, "record_type": record_type, "occurred_at": occurred_at,
                "subject_id": subject_id}  # fmt: skip
    return json.dumps(envelope)[:-1].encode() + b',"payload":' + payload + b"}"


def batch_body(records: list[bytes]) -> bytes:
    return b'{"records":[' + b",".join(records) + b"]}"


async def ingest(
    records: RecordService,
    tenant: str,
    stream: str,
    record_type: str,
    occurred_at: str,
    subject_id: str,
    payload: bytes,
) -> NewRecord | RecordRow:
    """Post one record; a refusal raises."""
    body = record_body(stream, record_type, occurred_at, subject_id, payload)
    return await records.post_record(tenant, body)
