"""The streams of the record API (docs/records.md): ``StreamController``, every route scoped to
the bearer token's tenant.

``POST /v1/streams`` declares a stream; ``GET /v1/streams`` lists the tenant's streams,
``GET /v1/streams/{name}`` reads one and ``GET /v1/streams/{name}/records`` lists its records
(signed headers and seal status), each listing a keyset page with ``Link: rel="next"``
(``web/paging.py``). Another tenant's stream is answered exactly as one that does not exist
(404 ``stream_not_found``), and never listed: the token's tenant is the only one a query names.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import msgspec
from litestar import Request, Response, get, post
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath

from recordseal import chain
from recordseal.services.listing import DEFAULT_PAGE, Listing
from recordseal.services.records import RecordService, header_members
from recordseal.storage.rows import ListedRecord, StreamRow
from recordseal.web import examples, paging
from recordseal.web.bodies import read_json, strict_decoder
from recordseal.web.controller import DomainController
from recordseal.web.ingest import JSON, tenant_of
from recordseal.web.openapi import documented, refusal
from recordseal.web.schemas import (
    RecordList,
    SealOut,
    StreamIn,
    StreamList,
    StreamOut,
    StreamRecord,
)
from recordseal.web.state import provide_listing, provide_records

_stream_decoder = strict_decoder(StreamIn)
_encode = msgspec.json.Encoder().encode

STREAM_NOT_FOUND = refusal(404, "no stream of this name in the token's tenant", "stream_not_found")


def stream_out(stream: StreamRow) -> StreamOut:
    return StreamOut(
        name=stream.name,
        declarations=stream.declarations,
        strict=stream.strict,
        created_at=stream.created_at,
        next_seq=stream.next_seq,
        fleet=stream.fleet,
        record_count=stream.record_count,
    )


def _record_out(listed: ListedRecord) -> StreamRecord:
    row = listed.record
    return StreamRecord(
        record_id=row.record_id,
        seq=row.seq,
        kind="gap" if header_members(row.header)["format"] == chain.GAP_FORMAT else "record",
        chain_leaf=row.chain_leaf.hex(),
        header=msgspec.Raw(row.header),
        signature=row.signature.hex(),
        seal=None if listed.seal is None else SealOut(*listed.seal),
    )


def _page(body: StreamList | RecordList) -> Response[bytes]:
    return Response(_encode(body), media_type=JSON, headers=paging.link_headers(body.next))


class StreamController(DomainController):
    """Declare, list and read the token's tenant's streams, and list a stream's records."""

    tags = ["records"]  # noqa: RUF012

    dependencies = {  # noqa: RUF012
        "tenant": Provide(tenant_of),
        "records": Provide(provide_records, sync_to_thread=False),
        "listing": Provide(provide_listing, sync_to_thread=False),
    }

    @post(
        "/v1/streams",
        status_code=201,
        **documented(
            summary="Create a stream",
            bearer=True,
            body=StreamIn,
            examples={"a stream of orders": examples.STREAM},
            refusals=[
                refusal(403, "the fleet belongs to another tenant", "fleet_forbidden"),
                refusal(
                    409,
                    "a stream with this name exists, or the tenant is frozen read-only",
                    "stream_exists",
                    "tenant_inactive",
                ),
                refusal(
                    422,
                    "the name, a declaration, `strict` or the fleet breaks a rule (`field`"
                    " names it)",
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
        self,
        request: Request[Any, Any, Any],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> StreamOut:
        """Declare a stream: its name, optional field kinds by path pattern, strictness, and the
        fleet whose log seals its records (``default`` unless the manifest binds one)."""
        data = read_json(request, await request.body(), _stream_decoder)
        stream = await records.create_stream(
            tenant, data.name, data.declarations, data.strict, data.fleet
        )
        return stream_out(stream)

    @get(
        "/v1/streams",
        **documented(
            summary="List the token's tenant's streams",
            bearer=True,
            parameters=[paging.AFTER_PARAMETER, paging.LIMIT_PARAMETER],
            answers={200: (StreamList, "a page of the tenant's streams, by name")},
            refusals=[paging.refusal_of("after", "limit")],
            answer_headers=paging.LINK_HEADER,
        ),
    )
    async def list_streams(
        self,
        request: Request[Any, Any, Any],
        tenant: NamedDependency[str],
        listing: NamedDependency[Listing],
    ) -> Response[bytes]:
        """The streams of the token's tenant by name (byte order), each with its declarations,
        fleet, record count and next sequence number; ``?after=NAME`` starts after a name,
        ``?limit=`` (1 to 1,000, 100 by default) bounds the page."""
        after = paging.text(request, "after")
        limit = paging.whole_number(request, "limit", DEFAULT_PAGE)
        page = await listing.streams(tenant, after, limit)
        streams = [stream_out(stream) for stream in page.items]
        following = None
        if page.more:
            following = paging.next_link("/v1/streams", {"after": streams[-1].name, "limit": limit})
        return _page(StreamList(streams=streams, next=following))

    @get(
        "/v1/streams/{name:str}",
        **documented(
            summary="Read a stream's declarations, record count and next sequence number",
            bearer=True,
            refusals=[STREAM_NOT_FOUND],
        ),
    )
    async def get_stream(
        self,
        name: FromPath[str],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> StreamOut:
        """A stream as declared (its declarations, strictness and fleet), how many records it
        holds, and the sequence number its next record takes: what a client checks before
        ingesting into it."""
        return stream_out(await records.current_stream(tenant, name))

    @get(
        "/v1/streams/{name:str}/records",
        **documented(
            summary="List a stream's records: signed headers and seal status",
            bearer=True,
            parameters=[paging.FROM_SEQ_PARAMETER, paging.LIMIT_PARAMETER],
            answers={200: (RecordList, "a page of the stream's records, by sequence number")},
            refusals=[STREAM_NOT_FOUND, paging.refusal_of("from_seq", "limit")],
            answer_headers=paging.LINK_HEADER,
        ),
    )
    async def list_records(
        self,
        request: Request[Any, Any, Any],
        name: FromPath[str],
        tenant: NamedDependency[str],
        listing: NamedDependency[Listing],
    ) -> Response[bytes]:
        """The stream's records by sequence number from ``?from_seq=`` (1 by default), at
        most ``?limit=`` (1 to 1,000, 100 by default): each signed header with its chain leaf,
        signature and seal (null while pending). Gap headers are listed as ``kind: gap``."""
        from_seq = paging.whole_number(request, "from_seq", 1)
        limit = paging.whole_number(request, "limit", DEFAULT_PAGE)
        page = await listing.records(tenant, name, from_seq, limit)
        entries = [_record_out(listed) for listed in page.items]
        following = None
        if page.more:
            following = paging.next_link(
                f"/v1/streams/{quote(name, safe='')}/records",
                {"from_seq": entries[-1].seq + 1, "limit": limit},
            )
        return _page(RecordList(stream=name, records=entries, next=following))
