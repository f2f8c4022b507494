"""One ``recordseal bench`` run, from the arguments to the exit code: time (the cores, or the
service with ``--service``), print the table as rows end, then write ``--json``, draw
``--plot`` and judge against ``--compare``."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from recordseal.ops.bench import compare, machine, table
from recordseal.ops.bench.cases import CASES, Case
from recordseal.ops.bench.defaults import (
    QUICK_ROUNDS,
    QUICK_SECONDS,
    QUICK_SERVICE,
    ROUNDS,
    SERVICE_ROUNDS,
)
from recordseal.ops.bench.errors import BenchError
from recordseal.ops.bench.results import (
    SCHEMA,
    Machine,
    Operation,
    Result,
    Route,
    RunSettings,
    decode,
    encode,
)


def read_baseline(path: Path) -> Result:
    try:
        return decode(path.read_bytes())
    except OSError as error:
        raise BenchError(f"--compare {path}: {error.strerror}") from None
    except msgspec.ValidationError as error:
        raise BenchError(f"--compare {path}: not a {SCHEMA} result ({error})") from None
    except msgspec.DecodeError as error:
        raise BenchError(f"--compare {path}: not JSON ({error})") from None


def out(line: str) -> None:
    print(line, flush=True)


def session(args: argparse.Namespace) -> int:
    baseline = read_baseline(args.compare) if args.compare else None
    if args.service:  # a round is wrk's run on one route
        rounds = QUICK_SERVICE[0] if args.quick else args.rounds or SERVICE_ROUNDS
        round_seconds = QUICK_SERVICE[1] if args.quick else args.seconds
    else:
        rounds = QUICK_ROUNDS if args.quick else args.rounds or ROUNDS
        round_seconds = QUICK_SECONDS if args.quick else args.round_seconds
    if rounds < 2 or round_seconds <= 0:
        raise BenchError("--rounds must be 2 or more and --round-seconds more than 0")
    settings = RunSettings(rounds=rounds, round_seconds=round_seconds, quick=args.quick)
    cases = [c for c in CASES if not args.only or any(text in c.name for text in args.only)]
    if not cases:
        raise BenchError("--only matches no operation")
    started, clock, load_before = datetime.now(UTC), time.monotonic(), machine.load()
    host = machine.machine(load_before)
    if args.service:
        operations, profile = [], _profile()
        routes = _service(settings, host, profile)
    else:
        operations, profile, routes = *_cores(cases, settings, host), []
    result = Result(
        schema=SCHEMA,
        started_at=started.isoformat(timespec="seconds").replace("+00:00", "Z"),
        seconds=round(time.monotonic() - clock, 1),
        settings=settings,
        machine=machine.machine(load_before),
        build=machine.build(profile),
        operations=operations,
        service=routes,
    )
    out(f"\n{len(operations) or len(routes)} measured in {result.seconds:.0f} s; load average"
        f" at the end: {' '.join(f'{v:.2f}' for v in result.machine.load_after)}")  # fmt: skip
    if args.json:
        try:
            args.json.write_bytes(encode(result))
        except OSError as error:
            raise BenchError(f"--json {args.json}: {error.strerror}") from None
        out(f"results written to {args.json}")
    if args.plot:
        _plot(result, args.plot)
    if baseline is None:
        return 0
    return _judge(result, baseline, args.fail_over, args.compare)


def _profile() -> str:
    from recordseal.core import backend

    return str(getattr(backend.extension, "BUILD_PROFILE", "unknown"))


def _cores(cases: list[Case], settings: RunSettings, host: Machine) -> tuple[list[Operation], str]:
    from recordseal.ops.bench.runner import run

    lines = table.header(host, machine.build(_profile()), settings)
    for line in [*lines, *table.operations_header(settings)]:
        out(line)
    return run(cases, settings.rounds, settings.round_seconds, lambda op: out(table.row(op)))


def _service(settings: RunSettings, host: Machine, profile: str) -> list[Route]:
    from recordseal.ops.bench.service import drive

    lines = table.header(host, machine.build(profile), settings)
    for line in [*lines, *table.service_header(settings.rounds, settings.round_seconds)]:
        out(line)
    return drive(settings.rounds, settings.round_seconds, lambda r: out(table.route_row(r)))


def _plot(result: Result, path: Path) -> None:
    from recordseal.ops.bench.plot import plot

    if not result.operations:
        raise BenchError("--plot draws the core operations: run without --service")
    plot(result, path)
    out(f"picture written to {path}")


def _judge(result: Result, baseline: Result, threshold: float, path: Path) -> int:
    found = compare.compare(result, baseline)
    out("")
    for line in compare.report(found, result, baseline, threshold):
        out(line)
    regressed = found.regressed(threshold)
    if not regressed:
        out(f"no regression beyond {threshold:.0%} against {path}")
        return 0
    named = "; ".join(f"{name} ({', '.join(what)})" for name, what in regressed)
    print(f"recordseal bench: regressed beyond {threshold:.0%} against {path}: {named}",
          file=sys.stderr)  # fmt: skip
    return 1
