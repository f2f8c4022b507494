"""``POST /v1/records:batch``: many records in one request, each accepted or refused alone.

The route is declared by the records controller (``web/records.py``); its documentation and
the ingest itself are here.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
from litestar import Request, Response

from recordseal import metrics
from recordseal.services.errors import Invalid, ServiceError
from recordseal.services.records import MAX_BATCH, RecordIn, Retry
from recordseal.web import examples
from recordseal.web.bodies import read_json, strict_decoder
from recordseal.web.ingest import (
    IDEMPOTENCY_KEY,
    JSON,
    authenticate,
    decode_record,
    record_in,
    record_out,
)
from recordseal.web.openapi import documented, inline_schema, refusal
from recordseal.web.problems import service_problem
from recordseal.web.schemas import BatchBody, BatchOut, BatchResult, RecordBody
from recordseal.web.state import services_of

#: A batch may carry up to 1,000 records of up to 256 KiB each; bodies above this are refused
#: (413) before they are read: send large records in smaller batches.
MAX_BATCH_BYTES = 32 * 1024 * 1024

_batch_decoder = strict_decoder(BatchBody)
_encode = msgspec.json.Encoder().encode


def _batch_body() -> dict[str, Any]:
    """``BatchBody`` with its records shaped as ``RecordBody`` (they are decoded one by one)."""
    body: dict[str, Any] = inline_schema(BatchBody)
    body["properties"]["records"] = {
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_BATCH,
        "items": inline_schema(RecordBody),
    }
    return body


#: The route's OpenAPI description (``documented``), for the records controller's decorator.
DOCUMENTED = documented(
    summary="Ingest up to 1,000 records at once",
    bearer=True,
    body=_batch_body(),
    examples={"two orders": examples.BATCH},
    parameters=[IDEMPOTENCY_KEY],
    answers={200: (BatchOut, "one result per record, in the order sent")},
    refusals=[
        refusal(
            422,
            "the batch holds no record or more than 1,000, the Idempotency-Key is"
            " malformed, or a record's payload is not JSON the core reads (`field` names"
            " the record)",
            "batch_size_invalid",
            "idempotency_key_invalid",
            core_rules=True,
        )
    ],
)


async def ingest_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    """The answer of ``POST /v1/records:batch`` (``RecordController.post_batch``)."""
    tenant = await authenticate(request)
    records = services_of(request).records
    batch = read_json(request, await request.body(), _batch_decoder, payload_steps=3)
    if not 1 <= len(batch.records) <= MAX_BATCH:
        raise Invalid("batch_size_invalid", f"a batch holds 1 to {MAX_BATCH} records", "records")
    key = request.headers.get("idempotency-key")
    items: list[RecordIn | ServiceError] = []
    retries: list[Retry | None] = []
    malformed: dict[int, BatchResult] = {}
    for index, raw in enumerate(batch.records):
        retries.append(Retry.of(key, raw, index))
        try:
            items.append(record_in(decode_record(raw)))  # the batch parsed: only shapes fail
        except ServiceError as error:
            problem = service_problem(error)
            malformed[index] = BatchResult(index=index, status=problem.status, problem=problem)
            items.append(Invalid(problem.code, problem.detail or "", problem.field))
    outcomes = await records.ingest_batch(tenant, items, retries)
    results: list[BatchResult] = []
    for index, outcome in enumerate(outcomes):
        if index in malformed:
            results.append(malformed[index])
        elif isinstance(outcome, ServiceError):
            problem = service_problem(outcome)
            results.append(BatchResult(index=index, status=problem.status, problem=problem))
        else:
            results.append(BatchResult(index=index, status=201, record=record_out(outcome)))
    _count(results)
    accepted = sum(1 for result in results if result.status == 201)
    body = BatchOut(accepted=accepted, refused=len(results) - accepted, results=results)
    return Response(_encode(body), status_code=200, media_type=JSON)


def _count(results: list[BatchResult]) -> None:
    """The ingest metrics of a batch, one update per series."""
    stored = Counter(bool(r.record.replayed) for r in results if r.record is not None)
    refused = Counter(r.problem.code for r in results if r.problem is not None)
    if stored[False]:
        metrics.RECORDS_INGESTED.inc(stored[False])
    if stored[True]:
        metrics.RECORDS_REPLAYED.inc(stored[True])
    for code, count in refused.items():
        metrics.RECORDS_REFUSED.labels(code).inc(count)
