"""``GET /tenants/{tenant}/streams/{stream}``: a stream's records in the panel, a page at a
time (docs/panel.md, "A stream's records"), linked from each stream of the live view.

Tenant-scoped like every panel route (``tenant_scope``: another tenant's id is 403 before any
lookup); a missing tenant or stream is 404. The records come from the listing the record API
uses (``services/listing.py``: keyset pages by sequence number, no count), shown as their
signed headers say: sequence number, type, times, and where each is sealed. No payload or
subject: the headers hold none. JSON for ``Accept: application/json``, as every panel page.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from litestar.params import FromPath, Parameter

from recordseal import chain
from recordseal.services.errors import NotFound
from recordseal.services.listing import DEFAULT_PAGE, MAX_SEQ
from recordseal.services.records import header_members
from recordseal.storage.rows import ListedRecord
from recordseal.web.controller import DomainController
from recordseal.web.panel.call import Call
from recordseal.web.panel.guards import tenant_scope
from recordseal.web.panel.session import PanelDenied


def _row(listed: ListedRecord) -> dict[str, Any]:
    header = header_members(listed.record.header)
    seal = listed.seal
    gap = header["format"] == chain.GAP_FORMAT
    return {
        "seq": listed.record.seq,
        "record_id": listed.record.record_id,
        "kind": "gap" if gap else "record",
        "record_type": header.get("record_type"),
        "occurred_at": header.get("occurred_at"),
        "ingested_at": header.get("ingested_at"),
        "seal": None if seal is None else {"origin": seal[0], "index": seal[1]},
    }


class StreamRecordsController(DomainController):
    """One stream's records, for every role of the tenant's sessions."""

    @get(
        "/tenants/{tenant_id:str}/streams/{stream:str}",
        name="panel_stream",
        guards=[tenant_scope],
    )
    async def stream_records(
        self,
        call: Call,
        tenant_id: FromPath[str],
        stream: FromPath[str],
        from_seq: int = Parameter(default=1, ge=1, le=MAX_SEQ),
    ) -> Response[Any]:
        """A page of the stream's records from ``?from_seq=`` on; 404 for a missing one."""
        listing = call.context.records
        if listing is None:
            raise PanelDenied(404, "records_unavailable", "this panel has no store to read")
        tenant = await call.tenant(tenant_id)
        try:
            page = await listing.records(tenant_id, stream, from_seq, DEFAULT_PAGE)
        except NotFound:
            raise call.not_found("stream") from None
        records = [_row(listed) for listed in page.items]
        following = records[-1]["seq"] + 1 if page.more and records else None
        view = {"stream": stream, "from_seq": from_seq, "records": records, "next": following}
        extra = {"tenant": tenant, "now": call.context.clock()}
        return call.render("panel/stream.html", view, page=extra)
