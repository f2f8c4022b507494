"""What the ingest routes share (``POST /v1/records`` and ``POST /v1/records:batch``): the bearer
token's tenant, the record in and out, the ``Idempotency-Key`` header, the ingest metrics.

Both routes are the service's hot path: they take what they need straight from the request
and the typed state (``web/state.py``), with no dependency injection and no guard.
"""

from __future__ import annotations

import msgspec
from litestar import Request
from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIType, Parameter, Schema

from recordseal import metrics
from recordseal.services.errors import Unauthenticated
from recordseal.services.records import Ingested, RecordIn
from recordseal.web.bodies import decode_strict, strict_decoder
from recordseal.web.observe import note_tenant
from recordseal.web.openapi import refusal
from recordseal.web.ratelimit import enforce
from recordseal.web.schemas import RecordBody, RecordOut
from recordseal.web.state import services_of

record_decoder = strict_decoder(RecordBody)
JSON = "application/json"
#: Payloads and bundles hold customer values: no cache keeps them.
NO_STORE = {"Cache-Control": "no-store"}

IDEMPOTENCY_KEY = Parameter(
    name="Idempotency-Key",
    param_in=ParamType.HEADER,
    required=False,
    description=(
        "Makes a retry safe: a request repeated with the same key returns the first result"
        " and stores nothing new (docs/records.md, Retries)"
    ),
    schema=Schema(type=OpenAPIType.STRING, pattern=r"^[A-Za-z0-9._:-]{1,255}$"),
)

#: The refusals of a record post that a batch reports per item (docs/records.md).
RECORD_REFUSALS = [
    refusal(404, "the stream does not exist", "stream_not_found"),
    refusal(
        409,
        "the subject was being created concurrently: retry; or the tenant is frozen read-only"
        " (`tenant_inactive`: a retry of a record stored before still gets its answer)",
        "subject_busy",
        "tenant_inactive",
    ),
    refusal(410, "the subject was erased: it is never re-keyed", "subject_erased"),
    refusal(413, "the payload is larger than 256 KiB", "payload_too_large"),
    refusal(
        422,
        "the envelope or the payload breaks a rule, or the Idempotency-Key is malformed or"
        " was used with another request (`field` names the member or the committed path)",
        "record_type_invalid",
        "subject_id_invalid",
        "occurred_at_invalid",
        "idempotency_key_invalid",
        "idempotency_key_reused",
        core_rules=True,
    ),
]


async def authenticate(request: Request) -> str:  # type: ignore[type-arg]
    """The tenant of the bearer token: 401 otherwise, 429 once this address has failed too
    often (web/ratelimit.py). A valid token is always served: only failures are counted."""
    tokens = services_of(request).tokens
    try:
        tenant = await tokens.tenant_of(request.headers.get("authorization"))
    except Unauthenticated:
        enforce(request, "bearer")
        raise
    note_tenant(request.scope, tenant)
    return tenant


async def tenant_of(request: Request) -> str:  # type: ignore[type-arg]
    """Dependency of the other record routes: :func:`authenticate`."""
    return await authenticate(request)


def record_out(result: Ingested) -> RecordOut:
    return RecordOut(
        record_id=result.record_id,
        stream=result.stream,
        seq=result.seq,
        root=result.root.hex(),
        chain_leaf=result.chain_leaf.hex(),
        header=msgspec.Raw(result.header),
        signature=result.signature.hex(),
        key_id=result.key_id,
        field_count=result.field_count,
        replayed=result.replayed,
    )


def count_ingested(result: Ingested) -> None:
    """The ingest metrics: a stored record, or the replay of one stored before."""
    (metrics.RECORDS_REPLAYED if result.replayed else metrics.RECORDS_INGESTED).inc()


def decode_record(raw: bytes) -> RecordBody:
    """One record of a batch whose body was checked as a whole (strict; 400 naming the
    member of a wrong shape)."""
    return decode_strict(raw, record_decoder)


def record_in(body: RecordBody) -> RecordIn:
    return RecordIn(
        stream=body.stream,
        record_type=body.record_type,
        occurred_at=body.occurred_at,
        subject_id=body.subject_id,
        payload=bytes(body.payload),
    )
