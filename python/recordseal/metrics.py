"""The service's Prometheus metrics (docs/operations.md, "Metrics").

``recordseal serve`` runs several worker processes, so the metrics use prometheus_client's
multiprocess mode: ``serve`` points ``PROMETHEUS_MULTIPROC_DIR`` at an empty directory before
any process imports prometheus_client, each worker writes its values to files there, and
``GET /metrics`` sums them (:func:`exposition`). A process without that variable (tests that
build the app in process) keeps its values in memory and shows them alone.

Labels never carry a customer value: routes are templates (``/v1/records/{record_id}``),
refusals are codes, witnesses and authorities are public configuration. No label names a
tenant: ``/metrics`` needs no credentials, and which tenants exist is not public (the panel
answers no such oracle either).
"""

from __future__ import annotations

import os
import time

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

#: From 1 ms (a cached read) to 10 s (a 1,000-record batch on a busy disk).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

REQUESTS = Counter(
    "recordseal_http_requests",
    "HTTP requests answered, by method, route template and status",
    ["method", "route", "status"],
)
REQUEST_SECONDS = Histogram(
    "recordseal_http_request_duration_seconds",
    "Time from a request's arrival to the end of its answer, by method and route template",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
RECORDS_INGESTED = Counter(
    "recordseal_records_ingested",
    "Records stored (a replayed Idempotency-Key stores nothing and is counted apart)",
)
RECORDS_REPLAYED = Counter(
    "recordseal_records_replayed",
    "Ingest requests answered with the record an earlier request with the same key stored",
)
RECORDS_REFUSED = Counter(
    "recordseal_records_refused",
    "Records refused, by problem code (a single-record request or one item of a batch)",
    ["code"],
)
SEALED_THROUGH = Gauge(
    "recordseal_sealed_through_timestamp_seconds",
    "Every record acknowledged before this time (Unix seconds) is in a signed checkpoint",
    multiprocess_mode="max",
)
KEY_CREATED = Gauge(
    "recordseal_key_created_timestamp_seconds",
    "When each key in use came into use (Unix seconds), by purpose and key id; its age is"
    " time() minus this (docs/operations.md, Keys)",
    ["purpose", "key_id"],
    multiprocess_mode="max",
)
FENCED = Gauge(
    "recordseal_fenced",
    "Streams and logs fenced because the store is behind what the service signed"
    " (docs/continuity.md), by kind",
    ["kind"],
    multiprocess_mode="max",
)
SEALED_RECORDS = Counter("recordseal_sealed_records", "Chain leaves sealed into checkpoints")
WITNESS_FAILURES = Counter(
    "recordseal_witness_failures",
    "Checkpoints a witness did not cosign when asked, by witness and error code",
    ["witness", "code"],
)
COSIGNATURES = Counter(
    "recordseal_cosignatures", "Cosignatures received and stored, by witness", ["witness"]
)
TSA_FAILURES = Counter(
    "recordseal_tsa_failures",
    "Checkpoint roots a time-stamping authority did not stamp, by authority and error code",
    ["authority", "code"],
)
BACKGROUND_TASK_FAILURES = Counter(
    "recordseal_background_task_failures",
    "Background tasks (sealing, idempotency_purge, manifest_watch, transparency_files) that"
    " ended while the service ran, by task (web/background.py)",
    ["task"],
)
PANEL_DENIALS = Counter(
    "recordseal_panel_denials",
    "Panel requests refused, by status (403 another tenant's or a forbidden action, 404 no"
    " such thing) and code",
    ["status", "code"],
)


class _SealLag(Collector):
    """``recordseal_seal_lag_seconds``: now minus the sealed-through time, at scrape time."""

    def __init__(self, source: CollectorRegistry) -> None:
        self._source = source

    def collect(self) -> list[Metric]:
        through = [
            sample.value
            for family in self._source.collect()
            if family.name == "recordseal_sealed_through_timestamp_seconds"
            for sample in family.samples
        ]
        if not through:
            return []
        lag = GaugeMetricFamily(
            "recordseal_seal_lag_seconds",
            "Upper bound on how long an acknowledged record has waited for its checkpoint",
        )
        lag.add_metric([], max(0.0, time.time() - max(through)))
        return [lag]


def exposition() -> bytes:
    """The metrics of every worker of this service, in Prometheus text format."""
    source: CollectorRegistry
    if os.environ.get(MULTIPROCESS_ENV):
        source = CollectorRegistry()
        multiprocess.MultiProcessCollector(source)  # type: ignore[no-untyped-call]
    else:
        source = REGISTRY
    shown = CollectorRegistry()
    shown.register(_Source(source))
    shown.register(_SealLag(source))
    return generate_latest(shown)


class _Source(Collector):
    def __init__(self, registry: CollectorRegistry) -> None:
        self._registry = registry

    def collect(self) -> list[Metric]:
        return list(self._registry.collect())
