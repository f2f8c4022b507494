"""One example request body per route of the OpenAPI document (``documented(examples=...)``).

They follow one another, as a client's first session would: the stream of ``STREAM`` takes
``RECORD``; ``DISCLOSURE`` discloses a field of that record. ``bundle.json`` is a real
disclosure of such a record, made by a running service (its keys are not yours: verified
elsewhere it is not VERIFIED, refreshed elsewhere it is 404 ``record_not_found``).
``tests/web/test_openapi.py`` posts every example to a running service.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

STREAM = {"name": "orders", "declarations": {"o:/amount": "money"}}
RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 1250, "currency": "EUR"},
}
BATCH = {
    "records": [
        RECORD,
        {**RECORD, "subject_id": "customer-2", "payload": {"amount": 990, "currency": "EUR"}},
    ]
}
DISCLOSURE = {"fields": ["o:/amount"]}


def bundle() -> dict[str, Any]:
    """A disclosure bundle (docs/bundle.md) as a service answered it."""
    loaded: dict[str, Any] = json.loads(files(__name__).joinpath("bundle.json").read_text())
    return loaded
