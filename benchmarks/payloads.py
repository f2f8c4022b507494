"""Deterministic payloads shared by the benchmarks: those of ``recordseal bench``
(``recordseal/ops/bench/payloads.py``), so every benchmark times the same records."""

import json
from typing import Any

from recordseal.ops.bench.payloads import (
    DECLARATIONS_1K,
    RECORD_ID,
    SALT_KEY,
    record_1k,
    record_4096,
)

__all__ = [
    "DECLARATIONS_1K",
    "RECORD_ID",
    "SALT_KEY",
    "load_record",
    "record_1k",
    "record_4096",
]


def load_record(subject_id: str) -> dict[str, Any]:
    """The record the ingest load posts: ``record_1k`` in stream ``load``."""
    return {
        "stream": "load",
        "record_type": "order.placed",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": subject_id,
        "payload": json.loads(record_1k()),
    }
