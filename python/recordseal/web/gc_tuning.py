"""Cyclic garbage collector settings for a serving process.

A request allocates thousands of short-lived containers (decoded bodies, header dicts,
framework scopes). At CPython's default threshold the youngest generation is scanned every 700
net allocations, several times per request; scanning every 20,000 gave ingest about 8% more
records/s (docs/performance.md, "2026-11-21: the collector's youngest generation"). Reference
counting still frees everything that is not part of a cycle at once, so memory is not held
longer except for cyclic garbage.
"""

from __future__ import annotations

import gc

#: (youngest generation, collections before the middle one, before the oldest)
THRESHOLDS = (20_000, 50, 100)


def tune_collector() -> None:
    gc.set_threshold(*THRESHOLDS)
