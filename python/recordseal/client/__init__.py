"""``recordseal.client``: an async client of the record API.

Ingest with bounded concurrency, batching and retries (every attempt of a request carries the
same ``Idempotency-Key``, so a retry after a timeout never stores a second record), plus
streams (declared, read and listed), a stream's records (listed a page at a time), record
views, payloads, erasure, disclosure bundles (waiting for their proof, and
refreshing it later) and offline verification.
"""

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
