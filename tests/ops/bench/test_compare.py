"""What ``--compare`` calls a regression (ops/bench/compare.py): a native time grown, or a ratio
shrunk, by more than the threshold; for a service route, native records/s fallen or the ratio
shrunk. Judged on figures written here, so nothing depends on this machine's speed."""

from __future__ import annotations

from recordseal.ops.bench.compare import Change, compare
from recordseal.ops.bench.results import (
    SCHEMA,
    Build,
    Machine,
    Operation,
    Rates,
    Result,
    Route,
    RunSettings,
    Timing,
)


def timing(seconds: float) -> Timing:
    return Timing(median=seconds, spread=0.0, per_second=1 / seconds, calls_per_round=1,
                  samples=[seconds, seconds])  # fmt: skip


def result(native: float, ratio: float, rate: float = 1000.0, rate_ratio: float = 5.0) -> Result:
    operation = Operation(name="commit_record 4096 fields", group="records", unit="record",
                          per_call=1, native=timing(native), reference=timing(native * ratio),
                          ratio=ratio)  # fmt: skip
    rates = Rates(median=rate, samples=[rate], p99_ms=[1.0], non_2xx=0)
    slow = Rates(median=rate / rate_ratio, samples=[rate / rate_ratio], p99_ms=[1.0], non_2xx=0)
    route = Route(route="/v1/records", records_per_request=1, connections=32, seconds=5,
                  native=rates, reference=slow, ratio=rate_ratio)  # fmt: skip
    machine = Machine(cpu="cpu", cores=2, usable_cores=2, memory_bytes=None, os="os",
                      python="CPython 3.11", rustc=None, load_before=[0, 0, 0],
                      load_after=[0, 0, 0])  # fmt: skip
    return Result(schema=SCHEMA, started_at="2026-11-28T00:00:00Z", seconds=1.0,
                  settings=RunSettings(rounds=2, round_seconds=0.02, quick=False),
                  machine=machine, build=Build(recordseal="0.1.0", commit=None, dirty=None,
                                               extension_profile="release"),
                  operations=[operation], service=[route])  # fmt: skip


def test_the_same_figures_never_regress() -> None:
    base = result(0.002, 30.0)
    assert compare(base, base).regressed(0.15) == []


def test_a_native_time_grown_beyond_the_threshold_regresses() -> None:
    found = compare(result(0.0024, 30.0), result(0.002, 30.0))
    assert found.regressed(0.15) == [("commit_record 4096 fields", ["native time +20%"])]
    assert found.regressed(0.25) == []


def test_a_ratio_shrunk_beyond_the_threshold_regresses() -> None:
    """The native time held, the reference got faster: native lost its lead."""
    found = compare(result(0.002, 24.0), result(0.002, 30.0))
    assert found.regressed(0.15) == [("commit_record 4096 fields", ["ratio 30x -> 24x"])]
    assert compare(result(0.002, 27.0), result(0.002, 30.0)).regressed(0.15) == []


def test_a_faster_build_does_not_regress() -> None:
    assert compare(result(0.001, 60.0), result(0.002, 30.0)).regressed(0.15) == []


def test_a_route_regresses_when_its_native_rate_falls() -> None:
    found = compare(result(0.002, 30.0, rate=800.0), result(0.002, 30.0, rate=1000.0))
    assert found.regressed(0.15) == [("/v1/records", ["native records/s +25%"])]
    higher = compare(result(0.002, 30.0, rate=1200.0), result(0.002, 30.0, rate=1000.0))
    assert higher.regressed(0.15) == []


def test_operations_in_one_result_only_are_listed_not_judged() -> None:
    now, then = result(0.002, 30.0), result(0.002, 30.0)
    renamed = Result(**{**{f: getattr(then, f) for f in then.__struct_fields__},
                        "operations": []})  # fmt: skip
    found = compare(now, renamed)
    assert found.only_now == ["commit_record 4096 fields"] and found.only_then == []
    assert found.regressed(0.15) == []


def test_a_change_says_how_much_slower() -> None:
    assert Change("x", 1.0, 1.5, 10.0, 10.0).native_slowdown == 0.5
    assert Change("x", 1000.0, 500.0, 10.0, 10.0, is_rate=True).native_slowdown == 1.0
