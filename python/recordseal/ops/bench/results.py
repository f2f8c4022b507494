"""What ``recordseal bench --json FILE`` writes, and ``--compare`` reads: one run's figures,
with the machine and the build that made them.

The schema is versioned by ``schema`` (``recordseal/bench/v1``): a change that removes or
renames a member, or changes its meaning, is a new version. Its JSON Schema is generated from
these types (``python -m recordseal.ops.bench.results``) into
``docs/benchmarks/result-v1.schema.json``, which a test keeps current; docs/performance.md
describes each member.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from msgspec import Meta

SCHEMA: Final = "recordseal/bench/v1"


def doc(text: str) -> Meta:
    return Meta(description=text)


class Timing(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One core's figures for one operation, over the run's rounds."""

    median: Annotated[float, doc("CPU seconds per call: the median of the rounds")]
    spread: Annotated[float, doc("the interquartile range of the rounds over the median")]
    per_second: Annotated[float, doc("units (the operation's unit) per second at the median")]
    calls_per_round: Annotated[int, doc("calls timed in a row in each round")]
    samples: Annotated[list[float], doc("CPU seconds per call of each round, in order")]


class Operation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One operation, timed on both cores in the same rounds."""

    name: str
    group: Annotated[str, doc("RFC 8785, field kinds, records, RFC 6962, ingest, verify")]
    unit: Annotated[str, doc("what per_second counts: call, record or bundle")]
    per_call: Annotated[int, doc("units one call handles (records of a request)")]
    native: Timing
    reference: Timing
    ratio: Annotated[
        float,
        doc(
            "how many times faster native is: the median over the rounds of reference time"
            " over native time"
        ),
    ]


class Rates(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One core's service, driven by wrk, over the run's rounds."""

    median: Annotated[float, doc("records per second: the median of the rounds")]
    samples: Annotated[list[float], doc("records per second of each round")]
    p99_ms: Annotated[list[float], doc("wrk's 99th-percentile latency of each round")]
    non_2xx: Annotated[int, doc("answers that were not 2xx, over all rounds (0 when sound)")]


class Route(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One ingest route, driven with the same load on a service of each core."""

    route: str
    records_per_request: int
    connections: int
    seconds: Annotated[float, doc("length of each round")]
    native: Rates
    reference: Rates
    ratio: Annotated[float, doc("native records/s over reference records/s")]


class Machine(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    cpu: Annotated[str, doc("the CPU's model name")]
    cores: Annotated[int, doc("logical CPUs of the machine")]
    usable_cores: Annotated[int, doc("logical CPUs this run could use (its affinity; 0: unknown)")]
    memory_bytes: int | None
    os: str
    python: str
    rustc: Annotated[str | None, doc("rustc --version on PATH when the run was made")]
    load_before: Annotated[list[float], doc("load averages (1, 5, 15 min) at the start")]
    load_after: Annotated[list[float], doc("load averages at the end")]


class Build(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    recordseal: Annotated[str, doc("the package's version")]
    commit: Annotated[str | None, doc("git commit of the checkout, when it is one")]
    dirty: Annotated[bool | None, doc("whether the checkout had uncommitted changes")]
    extension_profile: Annotated[str, doc("release or debug: how the extension was built")]


class RunSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    rounds: int
    round_seconds: Annotated[
        float,
        doc(
            "CPU time each core is given per round and operation; with --service, the"
            " seconds of each wrk run"
        ),
    ]
    quick: Annotated[bool, doc("a smoke run (--quick): its figures are not for comparing")]


class Result(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One run of ``recordseal bench``."""

    schema: Literal["recordseal/bench/v1"]
    started_at: Annotated[str, doc("UTC, RFC 3339")]
    seconds: Annotated[float, doc("the run's wall-clock time")]
    settings: RunSettings
    machine: Machine
    build: Build
    operations: list[Operation]
    service: list[Route] = []


def encode(result: Result) -> bytes:
    return msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n"


def decode(data: bytes) -> Result:
    """``data`` as a result; msgspec.ValidationError naming the member that breaks the
    schema (another version, a missing or unknown member)."""
    return msgspec.json.decode(data, type=Result)


def json_schema() -> bytes:
    """The JSON Schema of :class:`Result` (docs/benchmarks/result-v1.schema.json)."""
    schema = msgspec.json.schema(Result)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"recordseal bench result, {SCHEMA}"
    return msgspec.json.format(msgspec.json.encode(schema), indent=2) + b"\n"


if __name__ == "__main__":
    import sys

    sys.stdout.buffer.write(json_schema())
