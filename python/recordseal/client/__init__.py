"""``recordseal.client``: an async client of the record API.

Ingest with bounded concurrency, batching and retries (every attempt of a request carries the
same ``Idempotency-Key``, so a retry after a timeout never stores a second record), plus
streams (declared, read and listed), a stream's records (listed a page at a time), record
views, payloads, erasure, disclosure bundles (waiting for their proof, and
refreshing it later) and offline verification.

``Client`` and ``RetryPolicy`` load on first use (with httpx and the verifier), so that the
command line's other commands, which import this package's models, start without them.
"""

from typing import TYPE_CHECKING

from recordseal.client.models import (
    Erasure,
    IngestIncomplete,
    Problem,
    Receipt,
    Record,
    RecordView,
    Refreshed,
    Refused,
    Seal,
    Stream,
    StreamRecord,
    Unavailable,
)

if TYPE_CHECKING:
    from recordseal.client.session import Client, RetryPolicy

__all__ = [
    "Client",
    "Erasure",
    "IngestIncomplete",
    "Problem",
    "Receipt",
    "Record",
    "RecordView",
    "Refreshed",
    "Refused",
    "RetryPolicy",
    "Seal",
    "Stream",
    "StreamRecord",
    "Unavailable",
]


def __getattr__(name: str) -> object:
    if name in ("Client", "RetryPolicy"):
        from recordseal.client import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
