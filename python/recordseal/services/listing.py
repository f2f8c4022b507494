"""Finding things again (docs/records.md, "Listing streams and records"): the streams of a
token's tenant, and a stream's records, a page at a time.

Pages are keyset pages: streams by name (byte order), records by sequence number. A page asks
the store for one row more than it shows, so it knows whether another page follows without
counting anything. Counts come from the stream's row (``StreamRow.record_count``), never from
its records, so both listings cost one index range whatever a tenant holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from recordseal.services.errors import Invalid, NotFound
from recordseal.services.records import STREAM_NAME
from recordseal.storage.base import Store
from recordseal.storage.rows import ListedRecord, StreamRow

#: The most items one page holds, and how many a page holds unless asked otherwise.
MAX_PAGE = 1000
DEFAULT_PAGE = 100
#: The largest sequence number a listing may start from: PostgreSQL's bigint.
MAX_SEQ = 2**63 - 1

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """Up to ``limit`` items; ``more`` when the listing goes on after the last one."""

    items: list[T]
    more: bool


#: What each query parameter of the listings must be (docs/records.md).
RULES = {
    "limit": f"limit must be a whole number from 1 to {MAX_PAGE}",
    "from_seq": f"from_seq must be a whole number from 1 to {MAX_SEQ}",
    "after": "after must be a stream name (the last one of the page before)",
}


def refused(parameter: str) -> Invalid:
    """The 422 of a query parameter that breaks its rule (:data:`RULES`), naming it."""
    return Invalid(f"{parameter}_invalid", RULES[parameter], parameter)


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise refused("limit")


class Listing:
    """A tenant's streams and a stream's records, a page at a time: reads only."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def streams(self, tenant: str, after: str | None, limit: int) -> Page[StreamRow]:
        """The tenant's streams after the name ``after`` (from the first when None)."""
        if after is not None and not STREAM_NAME.fullmatch(after):
            raise refused("after")
        _check_limit(limit)
        rows = await self._store.records.list_streams(tenant, after, limit + 1)
        return Page(rows[:limit], len(rows) > limit)

    async def records(
        self, tenant: str, stream: str, from_seq: int, limit: int
    ) -> Page[ListedRecord]:
        """The stream's records from ``from_seq`` on; 404 ``stream_not_found`` for a name the
        tenant has no stream of (another tenant's included: it is not told apart)."""
        if not 1 <= from_seq <= MAX_SEQ:
            raise refused("from_seq")
        _check_limit(limit)
        found = await self._store.records.get_stream(tenant, stream)
        if found is None:
            raise NotFound("stream_not_found", "no stream of this name", "name")
        rows = await self._store.records.list_records(found, from_seq, limit + 1)
        return Page(rows[:limit], len(rows) > limit)
