"""Routes of the record API (spec section 4), all scoped to the token's tenant."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import unquote

import msgspec
from litestar import Request, Response, get, post
from litestar.datastructures import State
from litestar.di import NamedDependency
from litestar.enums import ParamType
from litestar.exceptions import NotFoundException
from litestar.openapi.spec import OpenAPIType, Parameter, Schema
from litestar.params import FromPath, PathParameter

from recordseal import metrics
from recordseal.services.disclosure import Window
from recordseal.services.errors import Unauthenticated
from recordseal.services.records import (
    Ingested,
    RecordIn,
    RecordService,
    Retry,
    header_members,
)
from recordseal.storage.rows import RecordRow
from recordseal.verify.bundle import Bundle, encode_bundle
from recordseal.web.bodies import decode_strict, read_json, strict_decoder
from recordseal.web.observe import note_tenant
from recordseal.web.openapi import documented, refusal
from recordseal.web.ratelimit import enforce
from recordseal.web.schemas import (
    DisclosureIn,
    ErasureOut,
    PayloadOut,
    RecordBody,
    RecordOut,
    RecordView,
    StreamIn,
    StreamOut,
)
from recordseal.web.services import services_in, services_of
from recordseal.web.waiting import WAIT_PARAMETER, wait_of

_record_decoder = strict_decoder(RecordBody)
_stream_decoder = strict_decoder(StreamIn)
_disclosure_decoder = strict_decoder(DisclosureIn)
_encode = msgspec.json.Encoder().encode
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
    """Dependency: :func:`authenticate`."""
    return await authenticate(request)


def records_of(state: State) -> RecordService:
    service = services_in(state).records
    return service


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


def _view(row: RecordRow) -> RecordView:
    header = header_members(row.header)
    return RecordView(
        record_id=row.record_id,
        stream=row.stream,
        seq=row.seq,
        root=header["root"],
        chain_leaf=row.chain_leaf.hex(),
        header=header,
        signature=row.signature.hex(),
        key_id=header["key_id"],
        field_count=header["field_count"],
    )


#: Refusals shared by the routes that name one record.
RECORD_NOT_FOUND = refusal(
    404, "no record with this id in the token's tenant", "record_not_found", "not_found"
)
SUBJECT_ERASED = refusal(410, "the record's subject was erased", "subject_erased")


@post(
    "/v1/streams",
    status_code=201,
    tags=["records"],
    **documented(
        bearer=True,
        body=StreamIn,
        refusals=[
            refusal(403, "the fleet belongs to another tenant", "fleet_forbidden"),
            refusal(409, "a stream with this name exists", "stream_exists"),
            refusal(
                422,
                "the name, a declaration, `strict` or the fleet breaks a rule (`field` names it)",
                "stream_name_invalid",
                "declaration_invalid",
                "unknown_kind",
                "strict_without_declarations",
                "fleet_invalid",
                "fleet_unknown",
                "fleet_without_tenant",
                core_rules=True,
            ),
        ],
    ),
)
async def create_stream(
    request: Request,  # type: ignore[type-arg]
    tenant: NamedDependency[str],
    records: NamedDependency[RecordService],
) -> StreamOut:
    """Declare a stream: its name, optional field kinds by path pattern, strictness, and the
    fleet whose log seals its records (``default`` unless the manifest binds one)."""
    data = read_json(request, await request.body(), _stream_decoder)
    stream = await records.create_stream(
        tenant, data.name, data.declarations, data.strict, data.fleet
    )
    return StreamOut(
        name=stream.name,
        declarations=stream.declarations,
        strict=stream.strict,
        created_at=stream.created_at,
        next_seq=stream.next_seq,
        fleet=stream.fleet,
    )


#: The refusals of a record post that a batch reports per item (docs/records.md).
RECORD_REFUSALS = [
    refusal(404, "the stream does not exist", "stream_not_found"),
    refusal(409, "the subject was being created concurrently: retry", "subject_busy"),
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


@post(
    "/v1/records",
    status_code=201,
    tags=["records"],
    **documented(
        bearer=True,
        body=RecordBody,
        parameters=[IDEMPOTENCY_KEY],
        answers={201: (RecordOut, "the record was committed, chained and stored")},
        refusals=RECORD_REFUSALS,
    ),
)
async def post_record(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    """Commit one record: canonicalise, commit every field, sign, chain, encrypt, store.

    The hot path of the service, so it skips the framework's argument machinery: the body is
    decoded here (the payload kept as the exact bytes received, ``msgspec.Raw``, for the
    core's checks) and the services come straight from the application state.
    """
    tenant = await authenticate(request)
    records = services_of(request).records
    raw = await request.body()
    body = read_json(request, raw, _record_decoder, payload_steps=1)
    retry = Retry.of(request.headers.get("idempotency-key"), raw)
    result = await records.ingest(tenant, record_in(body), retry)
    count_ingested(result)
    return Response(_encode(record_out(result)), status_code=201, media_type=JSON)


def count_ingested(result: Ingested) -> None:
    """The ingest metrics: a stored record, or the replay of one stored before."""
    (metrics.RECORDS_REPLAYED if result.replayed else metrics.RECORDS_INGESTED).inc()


def decode_record(raw: bytes) -> RecordBody:
    """One record of a batch whose body was checked as a whole (strict; 400 naming the
    member of a wrong shape)."""
    return decode_strict(raw, _record_decoder)


def record_in(body: RecordBody) -> RecordIn:
    return RecordIn(
        stream=body.stream,
        record_type=body.record_type,
        occurred_at=body.occurred_at,
        subject_id=body.subject_id,
        payload=bytes(body.payload),
    )


@get(
    "/v1/records/{record_id:str}",
    tags=["records"],
    **documented(bearer=True, refusals=[RECORD_NOT_FOUND]),
)
async def get_record(
    record_id: FromPath[str], tenant: NamedDependency[str], records: NamedDependency[RecordService]
) -> RecordView:
    """The record view: signed header, key reference, committed field count, sealing."""
    view = _view(await records.record(tenant, record_id))
    view.seal = await records.seal(tenant, record_id)
    return view


@get(
    "/v1/records/{record_id:str}/payload",
    tags=["records"],
    **documented(
        bearer=True,
        answers={200: (PayloadOut, "the decrypted payload")},
        refusals=[RECORD_NOT_FOUND, SUBJECT_ERASED],
    ),
)
async def get_payload(
    record_id: FromPath[str], tenant: NamedDependency[str], records: NamedDependency[RecordService]
) -> Response[bytes]:
    """The decrypted payload (RFC 8785 form); 410 once the subject is erased."""
    row, payload = await records.payload(tenant, record_id)
    body = PayloadOut(
        record_id=row.record_id, stream=row.stream, seq=row.seq, payload=msgspec.Raw(payload)
    )
    return Response(_encode(body), media_type=JSON, headers=NO_STORE)


@post(
    "/v1/records/{record_id:str}/disclosure",
    status_code=200,
    tags=["records"],
    **documented(
        bearer=True,
        body=DisclosureIn,
        answers={200: (Bundle, "the disclosure bundle (docs/bundle.md)")},
        refusals=[
            RECORD_NOT_FOUND,
            SUBJECT_ERASED,
            refusal(
                422,
                "a path is not a committed field of the record or is asked for twice, the"
                " coverage window is not one of the record's stream, or `wait` is not a number"
                " of seconds within the service's bound",
                "unknown_field",
                "field_repeated",
                "coverage_invalid",
                "wait_invalid",
            ),
        ],
        parameters=[WAIT_PARAMETER],
    ),
)
async def disclose(
    request: Request,  # type: ignore[type-arg]
    record_id: FromPath[str],
    tenant: NamedDependency[str],
    state: State,
) -> Response[bytes]:
    """A disclosure bundle (docs/bundle.md) of the chosen fields, verifiable offline. The
    bundle's signed header carries ``attestation``; the answer is the bundle itself. With
    ``?wait=<seconds>``, the answer waits (up to that long) for the record to be sealed and
    its checkpoint witnessed."""
    wait = wait_of(request)
    data = read_json(request, await request.body(), _disclosure_decoder)
    service = services_in(state).disclosure
    window = Window(data.coverage.from_seq, data.coverage.to_seq) if data.coverage else None
    bundle = await service.disclose(tenant, record_id, data.fields, window, wait=wait)
    return Response(encode_bundle(bundle), media_type=JSON, headers=NO_STORE)


@post(
    "/v1/subjects/{subject_id:str}/erase",
    status_code=200,
    tags=["records"],
    **documented(
        bearer=True,
        refusals=[
            refusal(404, "no record names this subject in the token's tenant", "subject_not_found")
        ],
    ),
)
async def erase_subject(
    request: Request,  # type: ignore[type-arg]
    subject_id: Annotated[str, PathParameter(description="the subject_id used in records")],
    tenant: NamedDependency[str],
    records: NamedDependency[RecordService],
) -> ErasureOut:
    """Destroy the subject's key and delete its payloads; a repeat is reported as a no-op.

    Send the subject id percent-encoded as one path segment (``/`` as ``%2F``)."""
    return await _erase(request, records, tenant, subject_id)


@post("/v1/subjects/{subject_path:path}", status_code=200, include_in_schema=False)
async def erase_subject_with_slash(
    request: Request,  # type: ignore[type-arg]
    subject_path: FromPath[str],
    tenant: NamedDependency[str],
    records: NamedDependency[RecordService],
) -> ErasureOut:
    """The erasure of a subject id with ``/`` in it, which the route above cannot match once
    the server has decoded ``%2F``; any other path under ``/v1/subjects/`` is 404."""
    return await _erase(request, records, tenant, None)


async def _erase(
    request: Request,  # type: ignore[type-arg]
    records: RecordService,
    tenant: str,
    decoded: str | None,
) -> ErasureOut:
    subject_id = _subject_in_path(request, decoded)
    if subject_id is None:
        raise NotFoundException()
    erasure = await records.erase(tenant, subject_id)
    return ErasureOut(
        status="erased" if erasure.erased_now else "already_erased",
        erased_at=erasure.erased_at,
        payloads_deleted=erasure.payloads_deleted,
    )


_SUBJECTS, _ERASE = "/v1/subjects/", "/erase"


def _subject_in_path(request: Request, decoded: str | None) -> str | None:  # type: ignore[type-arg]
    """The subject id of ``/v1/subjects/<subject_id>/erase`` exactly as the client encoded it.

    Servers decode ``%2F`` before routing and collapse ``//``, so ``a%2F`` or ``%2Fa`` would
    reach the route as ``a`` and erase another subject: the id is read from the raw path.
    ``decoded`` (the routed parameter) serves when the server gives no raw path. None when
    the raw path is not an erasure at all (``/v1/subjects/a%2Ferase`` routes as the erasure
    of ``a`` once decoded, but names no action).
    """
    raw = request.scope.get("raw_path")
    if not raw:
        return decoded
    path = raw.decode("latin-1").partition("?")[0]
    shaped = path.startswith(_SUBJECTS) and path.endswith(_ERASE)
    if not shaped or len(path) == len(_SUBJECTS) + len(_ERASE):  # no action, or no id
        return None
    return unquote(path[len(_SUBJECTS) : -len(_ERASE)])
