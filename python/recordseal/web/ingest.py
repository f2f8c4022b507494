"""The ingest routes (docs/records.md, "Ingest"): ``POST /v1/records`` and
``POST /v1/records:batch``, and what they share with the other record routes (the bearer
token's tenant, the JSON media types).

Both routes are the service's hot path: they take what they need straight from the request and
the typed state (``web/state.py``), with no dependency injection and no guard. The body is
read once by the service's read stage (``services/reading.py``: the core's reader, the schema,
the key and each record's hash); the route maps a refusal of the request as a whole to its
problem, and the answer is written from the signed records by the native core
(``encode_answers``, rust-core/src/answer.rs), byte for byte the msgspec encoding of
``RecordOut`` and ``BatchOut`` that :func:`reference_answer` makes (the oracle, and the answer
when the extension is not built).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from litestar import Request, Response, post
from litestar.datastructures import State
from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIType, Parameter, Schema

from recordseal import metrics
from recordseal.core.backend import extension
from recordseal.core.errors import CommitError
from recordseal.services.errors import ServiceError, Unauthenticated
from recordseal.services.reading import MAX_BATCH
from recordseal.services.records import Ingested, RecordService, header_members, refusal_of
from recordseal.storage.requests import NewRecord
from recordseal.storage.rows import RecordRow
from recordseal.web import examples
from recordseal.web.bodies import body_refusal, require_json
from recordseal.web.controller import DomainController
from recordseal.web.observe import note_tenant
from recordseal.web.openapi import documented, inline_schema, refusal
from recordseal.web.problems import service_problem
from recordseal.web.ratelimit import RateLimiter, peer_address
from recordseal.web.schemas import (
    BatchBody,
    BatchOut,
    BatchResult,
    Problem,
    RecordBody,
    RecordOut,
)
from recordseal.web.state import services_in, services_of, typed_state

JSON = "application/json"
#: Payloads and bundles hold customer values: no cache keeps them.
NO_STORE = {"Cache-Control": "no-store"}
#: A batch may carry up to 1,000 records of up to 256 KiB each; bodies above this are refused
#: (413) before they are read: send large records in smaller batches.
MAX_BATCH_BYTES = 32 * 1024 * 1024

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

#: Refusals of a request as a whole by the read stage (the others are the reader's faults).
_REQUEST_RULES = frozenset({"request_invalid", "batch_size_invalid", "idempotency_key_invalid"})

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


class IngestController(DomainController):
    """The two ingest routes of the record API."""

    tags = ["records"]  # noqa: RUF012

    @post(
        "/v1/records",
        status_code=201,
        **documented(
            summary="Ingest a record",
            bearer=True,
            body=RecordBody,
            examples={"an order": examples.RECORD},
            parameters=[IDEMPOTENCY_KEY],
            answers={201: (RecordOut, "the record was committed, chained and stored")},
            refusals=RECORD_REFUSALS,
        ),
    )
    async def post_record(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        """Commit one record: canonicalise, commit every field, sign, chain, encrypt, store."""
        tenant = await authenticate(request)
        body = await request.body()
        require_json(request)
        key = request.headers.get("idempotency-key")
        answer = await record_answer(services_of(request).records, tenant, body, key)
        return Response(answer, status_code=201, media_type=JSON)

    @post(
        "/v1/records:batch",
        status_code=200,
        request_max_body_size=MAX_BATCH_BYTES,
        **documented(
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
                    " malformed, or a record's payload is not JSON the core reads (`field`"
                    " names the record)",
                    "batch_size_invalid",
                    "idempotency_key_invalid",
                    core_rules=True,
                )
            ],
        ),
    )
    async def post_batch(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        """Ingest up to 1,000 records: each is accepted (201) or refused (its problem) on its own,
        and the results come back in the order sent. With an ``Idempotency-Key``, item ``i`` is
        keyed ``<key>#<i>``: a retried batch returns the stored records and stores nothing new."""
        tenant = await authenticate(request)
        body = await request.body()
        require_json(request)
        key = request.headers.get("idempotency-key")
        answer = await batch_answer(services_of(request).records, tenant, body, key)
        return Response(answer, status_code=200, media_type=JSON)


async def record_answer(
    records: RecordService, tenant: str, body: bytes, idempotency_key: str | None
) -> bytes:
    """The 201 answer of ``POST /v1/records`` (a refusal raises its ``ServiceError``)."""
    try:
        result = await records.post_record(tenant, body, idempotency_key)
    except CommitError as fault:
        raise _refused(fault, payload_steps=1) from None
    return encode_answers(_answers([result]), False)


async def batch_answer(
    records: RecordService, tenant: str, body: bytes, idempotency_key: str | None
) -> bytes:
    """The 200 answer of ``POST /v1/records:batch`` (a refusal of the batch as a whole
    raises its ``ServiceError``; each record's own is in the answer)."""
    try:
        reads = records.read(body, idempotency_key, batch=True)
    except CommitError as fault:
        raise _refused(fault, payload_steps=3) from None
    return encode_answers(_answers(await records.ingest(tenant, reads)), True)


def _refused(fault: CommitError, payload_steps: int) -> ServiceError:
    """A request refused as a whole: by the read stage's rules, or a fault of its JSON text
    (``web/bodies.py`` says where it lies)."""
    if fault.code in _REQUEST_RULES:
        return refusal_of(fault)
    return body_refusal(fault, payload_steps)


#: What the answer of a record is written from: ``(header, signature, chain_leaf, replayed)``
#: of a stored record, ``(status, problem as JSON text)`` of a refused one.
Answer = tuple[bytes, bytes, bytes, bool] | tuple[int, bytes]


def _answers(results: list[Ingested]) -> list[Answer]:
    """Each record's answer, and the ingest metrics of the request (one update per series)."""
    answers: list[Answer] = []
    fresh = replayed = 0
    refused: dict[str, int] = {}
    for result in results:
        if isinstance(result, NewRecord):
            fresh += 1
            answers.append((result.header, result.signature, result.chain_leaf, False))
        elif isinstance(result, RecordRow):
            replayed += 1
            answers.append((result.header, result.signature, result.chain_leaf, True))
        else:
            problem = service_problem(result)
            refused[problem.code] = refused.get(problem.code, 0) + 1
            answers.append((problem.status, _encode(problem)))
    if fresh:
        metrics.RECORDS_INGESTED.inc(fresh)
    if replayed:
        metrics.RECORDS_REPLAYED.inc(replayed)
    for code, count in refused.items():
        metrics.RECORDS_REFUSED.labels(code).inc(count)
    return answers


def reference_answer(results: Sequence[Answer], batch: bool) -> bytes:
    """``encode_answers`` composed of the msgspec structs the answers are documented by."""
    answers = [_result(index, result) for index, result in enumerate(results)]
    if not batch:
        (answer,) = answers
        assert answer.record is not None
        return _encode(answer.record)
    accepted = sum(1 for answer in answers if answer.record is not None)
    return _encode(BatchOut(accepted=accepted, refused=len(answers) - accepted, results=answers))


def _result(index: int, answer: Answer) -> BatchResult:
    if len(answer) == 2:
        status, problem = answer
        decoded = msgspec.json.decode(problem, type=Problem)
        return BatchResult(index=index, status=status, problem=decoded)
    header_text, signature, chain_leaf, replayed = answer
    header = header_members(header_text)
    record = RecordOut(
        record_id=header["record_id"],
        stream=header["stream"],
        seq=header["seq"],
        root=header["root"],
        chain_leaf=chain_leaf.hex(),
        header=msgspec.Raw(header_text),
        signature=signature.hex(),
        key_id=header["key_id"],
        field_count=header["field_count"],
        replayed=replayed,
    )
    return BatchResult(index=index, status=201, record=record)


if extension is not None:
    from recordseal._native import encode_answers
else:
    encode_answers = reference_answer


async def authenticate(request: Request) -> str:  # type: ignore[type-arg]
    """The tenant of the request's bearer token (:func:`bearer_tenant`)."""
    authorization = request.headers.get("authorization")
    return await bearer_tenant(request.app.state, request.scope, authorization)


async def bearer_tenant(state: State, asgi_scope: Any, authorization: str | None) -> str:
    """The tenant of the bearer token in ``authorization``: 401 otherwise, 429 once this
    address has failed too often (web/ratelimit.py). A valid token is always served: only
    failures are counted. The ingest gate (web/ingest_gate.py) calls it with no request
    object; the framework's routes through :func:`authenticate`."""
    try:
        tenant = await services_in(state).tokens.tenant_of(authorization)
    except Unauthenticated:
        limiter = typed_state(state, "rate_limiter", RateLimiter)
        limiter.check("bearer", peer_address(asgi_scope))
        raise
    note_tenant(asgi_scope, tenant)
    return tenant


async def tenant_of(request: Request) -> str:  # type: ignore[type-arg]
    """Dependency of the other record routes: :func:`authenticate`."""
    return await authenticate(request)
