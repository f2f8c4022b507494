"""Deterministic payloads shared by the benchmarks: those of ``recordseal bench``
(``recordseal/ops/bench/payloads.py``), so every benchmark times the same records."""

from recordseal.ops.bench.payloads import (
    DECLARATIONS_1K,
    RECORD_ID,
    SALT_KEY,
    record_1k,
    record_4096,
)

__all__ = ["DECLARATIONS_1K", "RECORD_ID", "SALT_KEY", "record_1k", "record_4096"]
