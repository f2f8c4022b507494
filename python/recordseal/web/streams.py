"""Streams of the record API (spec section 2.1, docs/records.md): ``StreamController``
declares a stream and reads one back, scoped to the bearer token's tenant."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath

from recordseal.services.records import RecordService
from recordseal.storage.rows import StreamRow
from recordseal.web import examples
from recordseal.web.bodies import read_json, strict_decoder
from recordseal.web.controller import DomainController
from recordseal.web.ingest import tenant_of
from recordseal.web.openapi import documented, refusal
from recordseal.web.schemas import StreamIn, StreamOut
from recordseal.web.services import provide_records

_stream_decoder = strict_decoder(StreamIn)


def _stream_out(stream: StreamRow) -> StreamOut:
    return StreamOut(
        name=stream.name,
        declarations=stream.declarations,
        strict=stream.strict,
        created_at=stream.created_at,
        next_seq=stream.next_seq,
        fleet=stream.fleet,
    )


class StreamController(DomainController):
    """The streams of the token's tenant."""

    dependencies = {  # noqa: RUF012
        "tenant": Provide(tenant_of),
        "records": Provide(provide_records, sync_to_thread=False),
    }

    @post(
        "/v1/streams",
        status_code=201,
        tags=["records"],
        **documented(
            summary="Create a stream",
            bearer=True,
            body=StreamIn,
            examples={"a stream of orders": examples.STREAM},
            refusals=[
                refusal(403, "the fleet belongs to another tenant", "fleet_forbidden"),
                refusal(409, "a stream with this name exists", "stream_exists"),
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
        return _stream_out(stream)

    @get(
        "/v1/streams/{name:str}",
        tags=["records"],
        **documented(
            summary="Read a stream's declarations and next sequence number",
            bearer=True,
            refusals=[
                refusal(404, "no stream of this name in the token's tenant", "stream_not_found")
            ],
        ),
    )
    async def get_stream(
        self,
        name: FromPath[str],
        tenant: NamedDependency[str],
        records: NamedDependency[RecordService],
    ) -> StreamOut:
        """A stream as declared (its declarations, strictness and fleet) and the sequence
        number its next record takes: what a client checks before ingesting into it."""
        return _stream_out(await records.current_stream(tenant, name))
