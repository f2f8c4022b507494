"""The ingest pipeline (services/pipeline.py) on 100 records of the 1 KB shape, against the
floor: the same records' ``commit_record`` and Ed25519 header signatures alone, one after the
other. The ratio pipeline / floor is printed at the end (target: at most 1.3).

The read of a batch request is measured too (group "read of a batch request"): the native
one-pass read, read and prepare, and the steps the service took before issue 29.

Run with ``pytest benchmarks/test_pipeline.py --benchmark-only``. The pipeline spreads each
call over rayon's pool (every core) with the interpreter released; the floor is one thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from payloads import DECLARATIONS_1K, record_1k
from recordseal import chain
from recordseal._native import Ed25519Signer
from recordseal.core import CommitError, commit_record
from recordseal.crypto.signing import HEADER_CONTEXT, HeaderSigner
from recordseal.crypto.vault import SubjectKeys
from recordseal.services.pipeline import NativePipeline, RecordInput

RECORDS = 100
STREAMS = 4
SEED = bytes(range(100, 132))
INGESTED_AT = "2026-11-21T07:20:26.123456Z"
SUBJECTS = [SubjectKeys.derive(bytes([n]) * 32) for n in range(3)]
PIPELINE = NativePipeline(SEED)
SIGNER = HeaderSigner.from_seed(SEED)
ITEMS = [
    RecordInput(
        tenant="acme",
        stream=f"orders-{n % STREAMS}",
        record_type="order.placed",
        occurred_at="2026-11-21T07:20:26.123456Z",
        subject_ref=f"sr_{n % len(SUBJECTS):012d}",
        record_id=f"0193a1b2-c3d4-7e5f-8a9b-{n:012d}",
        payload=record_1k(),
        declarations=DECLARATIONS_1K,
        strict=False,
        salt_key=SUBJECTS[n % len(SUBJECTS)].salt_key,
        payload_key=SUBJECTS[n % len(SUBJECTS)].payload_key,
    )
    for n in range(RECORDS)
]
SLOTS = [n % STREAMS for n in range(RECORDS)]
HEADS = [(1, chain.stream_genesis("acme", f"orders-{s}")) for s in range(STREAMS)]
PREPARED = PIPELINE.prepare(ITEMS)
assert not any(isinstance(p, CommitError) for p in PREPARED)
# A header of the pipeline's size for the floor's signatures.
HEADER = PIPELINE.sign(PREPARED[:1], [0], list(HEADS), INGESTED_AT)[0].header

#: (min, median) seconds per batch of each case, for the ratio printed at the end.
times: dict[str, tuple[float, float]] = {}


@pytest.fixture(scope="module", autouse=True)
def ratio(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if {"pipeline", "floor"} <= times.keys():
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        lines = [
            f"{name}: {low * 1e6 / RECORDS:.1f} µs/record min, {mid * 1e6 / RECORDS:.1f} median"
            for name, (low, mid) in times.items()
        ]
        (pipeline_min, pipeline_median), (floor_min, floor_median) = (
            times["pipeline"],
            times["floor"],
        )
        lines.append(
            f"pipeline / floor = {pipeline_min / floor_min:.2f} on minima,"
            f" {pipeline_median / floor_median:.2f} on medians (target ≤ 1.3)"
        )
        with capture.global_and_fixture_disabled():
            reporter.write_line("")
            for line in lines:
                reporter.write_line(line)


def record_times(name: str, benchmark: Any) -> None:
    if benchmark.stats is not None:
        times[name] = (benchmark.stats.stats.min, benchmark.stats.stats.median)


def test_floor_commit_and_sign_100(benchmark: Any) -> None:
    """The unavoidable work, one record at a time: commit_record and one Ed25519 signature."""
    benchmark.group = "ingest pipeline, 100 records of 1 KB"
    sign = Ed25519Signer(SEED).sign

    def floor() -> None:
        for item in ITEMS:
            commit_record(
                item.payload, item.declarations, item.strict, item.salt_key, item.record_id
            )
            sign(HEADER, HEADER_CONTEXT)

    benchmark(floor)
    record_times("floor", benchmark)


def test_pipeline_prepare_and_sign_100(benchmark: Any) -> None:
    benchmark.group = "ingest pipeline, 100 records of 1 KB"

    def pipeline() -> None:
        prepared = PIPELINE.prepare(ITEMS)
        PIPELINE.sign(prepared, SLOTS, list(HEADS), INGESTED_AT)  # type: ignore[arg-type]

    benchmark(pipeline)
    record_times("pipeline", benchmark)


def test_pipeline_prepare_100(benchmark: Any) -> None:
    benchmark.group = "ingest pipeline, 100 records of 1 KB"
    benchmark(PIPELINE.prepare, ITEMS)
    record_times("prepare", benchmark)


def test_pipeline_sign_100(benchmark: Any) -> None:
    benchmark.group = "ingest pipeline, 100 records of 1 KB"
    benchmark(lambda: PIPELINE.sign(PREPARED, SLOTS, list(HEADS), INGESTED_AT))  # type: ignore[arg-type]
    record_times("sign", benchmark)


def test_python_path_100(benchmark: Any) -> None:
    """What services/records.py did per record before the pipeline: commit, encrypt, build
    the header, canonicalise, sign, hash."""
    benchmark.group = "ingest pipeline, 100 records of 1 KB"
    keys = {item.salt_key: SubjectKeys(item.salt_key, item.payload_key) for item in ITEMS}

    def python_path() -> None:
        heads = list(HEADS)
        for item, slot in zip(ITEMS, SLOTS, strict=True):
            committed = commit_record(
                item.payload, item.declarations, item.strict, item.salt_key, item.record_id
            )
            keys[item.salt_key].encrypt_payload(item.record_id, committed.canonical)
            seq, prev = heads[slot]
            header = chain.canonical_header(
                chain.build_header(
                    tenant=item.tenant,
                    stream=item.stream,
                    seq=seq,
                    record_id=item.record_id,
                    record_type=item.record_type,
                    occurred_at=item.occurred_at,
                    subject_ref=item.subject_ref,
                    root=committed.root,
                    field_count=committed.field_count,
                    prev=prev,
                    key_id=SIGNER.key_id,
                    ingested_at=INGESTED_AT,
                )
            )
            SIGNER.sign(header)
            heads[slot] = (seq + 1, chain.chain_leaf(header))

    benchmark(python_path)
    record_times("python path", benchmark)


# --- the read of a request (issue 29) -----------------------------------------------------

BATCH_BODY = (
    b'{"records":['
    + b",".join(
        b'{"stream":"orders-%d","record_type":"order.placed","occurred_at":'
        b'"2026-11-21T08:20:26.123456+01:00","subject_id":"customer-%d","payload":%s}'
        % (n % STREAMS, n, record_1k())
        for n in range(RECORDS)
    )
    + b"]}"
)


def test_read_native_100(benchmark: Any) -> None:
    """The read stage: one native pass over a batch of 100 (services/reading.py)."""
    benchmark.group = "read of a batch request, 100 records of 1 KB"
    benchmark(PIPELINE.read, BATCH_BODY, "retry-key", True)


def test_read_then_prepare_100(benchmark: Any) -> None:
    """Read and prepare: the payloads committed from the trees the read parsed."""
    benchmark.group = "read of a batch request, 100 records of 1 KB"
    keys = SUBJECTS[0]

    def read_and_prepare() -> None:
        reads = PIPELINE.read(BATCH_BODY, "retry-key", True)
        PIPELINE.prepare(
            [
                (r, "acme", "sr", DECLARATIONS_1K, False, keys.salt_key, keys.payload_key)
                for r in reads
            ]
        )

    benchmark(read_and_prepare)


def test_read_as_before_100(benchmark: Any) -> None:
    """The read before issue 29: the whole body through the core's reader as a check,
    msgspec for the batch and for each record, the key's hash and the envelope's checks in
    Python, then prepare parses every payload again (services/reading.py's reference read
    keeps those steps; its reference core is swapped for the native one here, as before)."""
    benchmark.group = "read of a batch request, 100 records of 1 KB"
    import hashlib

    import msgspec

    from recordseal.core import canonicalize, encode_value
    from recordseal.services.reading import BatchBody, RecordBody, label_refusal

    batch_decoder = msgspec.json.Decoder(BatchBody, strict=True)
    record_decoder = msgspec.json.Decoder(RecordBody, strict=True)
    keys = SUBJECTS[0]

    def read_as_before() -> None:
        canonicalize(BATCH_BODY)
        items = []
        for index, text in enumerate(batch_decoder.decode(BATCH_BODY).records):
            hashlib.sha256(text).digest()
            record = record_decoder.decode(text)
            label_refusal(record.record_type, "record_type", 128)
            label_refusal(record.subject_id, "subject_id", 256)
            occurred_at = encode_value("timestamp", record.occurred_at)[5:].decode()
            items.append(
                RecordInput(
                    "acme",
                    record.stream,
                    record.record_type,
                    occurred_at,
                    "sr",
                    f"r{index}",
                    bytes(record.payload),
                    DECLARATIONS_1K,
                    False,
                    keys.salt_key,
                    keys.payload_key,
                )
            )
        PIPELINE.prepare(items)

    benchmark(read_as_before)
