"""The record API's reads and changes of stored records (spec section 4, docs/records.md):
``RecordController``, every route scoped to the bearer token's tenant.

A record's view and payload, a subject's erasure and a record's disclosure. Streams are
declared by ``web/streams.py``, records ingested by ``web/ingest.py``; the routes here take the
token's tenant (``tenant``) and their service as dependencies of the controller.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import unquote

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, PathParameter

from recordseal.services.disclosure import DisclosureService, Window
from recordseal.services.records import RecordService, header_members
from recordseal.storage.rows import RecordRow
from recordseal.verify.bundle import Bundle, SignedReceipt, encode_bundle
from recordseal.web import examples
from recordseal.web.bodies import read_json, strict_decoder
from recordseal.web.controller import DomainController
from recordseal.web.ingest import JSON, NO_STORE, tenant_of
from recordseal.web.observe import UNMATCHED
from recordseal.web.openapi import documented, refusal
from recordseal.web.schemas import DisclosureIn, ErasureOut, PayloadOut, RecordView
from recordseal.web.state import provide_disclosure, provide_records
from recordseal.web.waiting import WAIT_PARAMETER, wait_of

#: The erasure's route as OpenAPI names it, and as metrics and the access log name it.
ERASE_TEMPLATE = "/v1/subjects/{subject_id}/erase"

_disclosure_decoder = strict_decoder(DisclosureIn)
_encode = msgspec.json.Encoder().encode


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


class RecordController(DomainController):
    """Records, payloads, erasure and disclosure of the token's tenant."""

    tags = ["records"]  # noqa: RUF012

    dependencies = {  # noqa: RUF012
        "tenant": Provide(tenant_of),
        "records": Provide(provide_records, sync_to_thread=False),
        "disclosure": Provide(provide_disclosure, sync_to_thread=False),
    }

    @get(
        "/v1/records/{record_id:str}",
        **documented(
            summary="Read a record: its signed header and seal",
            bearer=True,
            refusals=[RECORD_NOT_FOUND],
        ),
    )
    async def get_record(
        self,
        record_id: FromPath[str],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> RecordView:
        """The record view: signed header, key reference, committed field count, sealing."""
        view = _view(await records.record(tenant, record_id))
        view.seal = await records.seal(tenant, record_id)
        return view

    @get(
        "/v1/records/{record_id:str}/payload",
        **documented(
            summary="Read a record's decrypted payload",
            bearer=True,
            answers={200: (PayloadOut, "the decrypted payload")},
            refusals=[RECORD_NOT_FOUND, SUBJECT_ERASED],
        ),
    )
    async def get_payload(
        self,
        record_id: FromPath[str],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> Response[bytes]:
        """The decrypted payload (RFC 8785 form); 410 once the subject is erased."""
        row, payload = await records.payload(tenant, record_id)
        body = PayloadOut(
            record_id=row.record_id, stream=row.stream, seq=row.seq, payload=msgspec.Raw(payload)
        )
        return Response(_encode(body), media_type=JSON, headers=NO_STORE)

    @post(
        "/v1/subjects/{subject_id:str}/erase",
        status_code=200,
        **documented(
            summary="Erase a subject's payloads",
            bearer=True,
            refusals=[
                refusal(
                    404, "no record names this subject in the token's tenant", "subject_not_found"
                )
            ],
        ),
    )
    async def erase_subject(
        self,
        request: Request[Any, Any, Any],
        subject_id: Annotated[str, PathParameter(description="the subject_id used in records")],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> ErasureOut:
        """Destroy the subject's key and delete its payloads; a repeat is reported as a no-op.

        Send the subject id percent-encoded as one path segment (``/`` as ``%2F``)."""
        return await _erase(request, records, tenant, subject_id)

    @post("/v1/subjects/{subject_path:path}", status_code=200, include_in_schema=False)
    async def erase_subject_with_slash(
        self,
        request: Request[Any, Any, Any],
        subject_path: FromPath[str],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> ErasureOut:
        """The erasure of a subject id with ``/`` in it, which the route above cannot match once
        the server has decoded ``%2F``; any other path under ``/v1/subjects/`` is 404. Its
        requests are counted and logged under the erasure's own template (its OpenAPI path),
        the others as unmatched."""
        erasure = _subject_in_path(request, None) is not None
        request.scope["path_template"] = ERASE_TEMPLATE if erasure else UNMATCHED
        return await _erase(request, records, tenant, None)

    @post(
        "/v1/records/{record_id:str}/disclosure",
        status_code=200,
        **documented(
            summary="Disclose chosen fields of a record as a bundle",
            bearer=True,
            body=DisclosureIn,
            examples={"the amount only": examples.DISCLOSURE},
            answers={200: (Bundle, "the disclosure bundle (docs/bundle.md)")},
            refusals=[
                RECORD_NOT_FOUND,
                SUBJECT_ERASED,
                refusal(
                    422,
                    "a path is not a committed field of the record or is asked for twice, the"
                    " coverage window is not one of the record's stream, or `wait` is not a"
                    " number of seconds within the service's bound",
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
        self,
        request: Request[Any, Any, Any],
        record_id: FromPath[str],
        tenant: NamedDependency[str],
        disclosure: NamedDependency[DisclosureService],
    ) -> Response[bytes]:
        """A disclosure bundle (docs/bundle.md) of the chosen fields, verifiable offline. The
        bundle's signed header carries ``attestation``; the answer is the bundle itself. With
        ``?wait=<seconds>``, the answer waits (up to that long) for the record to be sealed and
        its checkpoint witnessed."""
        wait = wait_of(request)
        data = read_json(request, await request.body(), _disclosure_decoder)
        window = Window(data.coverage.from_seq, data.coverage.to_seq) if data.coverage else None
        bundle = await disclosure.disclose(tenant, record_id, data.fields, window, wait=wait)
        return Response(encode_bundle(bundle), media_type=JSON, headers=NO_STORE)


async def _erase(
    request: Request[Any, Any, Any],
    records: RecordService,
    tenant: str,
    decoded: str | None,
) -> ErasureOut:
    subject_id = _subject_in_path(request, decoded)
    if subject_id is None:
        raise NotFoundException()
    signed = await records.erase(tenant, subject_id)
    erasure = signed.erasure
    return ErasureOut(
        status="erased" if erasure.erased_now else "already_erased",
        erased_at=erasure.erased_at,
        payloads_deleted=erasure.payloads_deleted,
        erasure_receipt=msgspec.convert(
            {"receipt": signed.receipt, "signature": signed.signature.hex()}, SignedReceipt
        ),
    )


_SUBJECTS, _ERASE = "/v1/subjects/", "/erase"


def _subject_in_path(request: Request[Any, Any, Any], decoded: str | None) -> str | None:
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
