"""The terminal's table of a run: a row per operation as it ends, then the service's rates."""

from __future__ import annotations

from recordseal.ops.bench.results import Build, Machine, Operation, Route, RunSettings

UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
NAME = 40


def duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it at 1 or more, three significant digits."""
    for scale, unit in UNITS:
        if seconds >= scale or unit == "ns":
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    raise AssertionError("unreachable")


def rate(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.3g}"


def ratio(value: float) -> str:
    return f"{value:.3g}x" if value < 1000 else f"{value:.0f}x"


def spread(value: float) -> str:
    return f"{value * 100:.0f}%"


def header(machine: Machine, build: Build, settings: RunSettings) -> list[str]:
    memory = f", {machine.memory_bytes / 2**30:.1f} GiB" if machine.memory_bytes else ""
    commit = "not a git checkout"
    if build.commit:
        commit = f"commit {build.commit[:12]}" + (
            " with uncommitted changes" if build.dirty else ""
        )
    lines = [
        f"recordseal {build.recordseal} bench: the native core ({build.extension_profile} build)"
        " against the pure-Python reference",
        f"{machine.cpu}, {machine.cores} logical CPUs ({machine.usable_cores} usable){memory}",
        f"{machine.os}, {machine.python}, {machine.rustc or 'no rustc on PATH'}; {commit}",
        f"load average at the start: {' '.join(f'{v:.2f}' for v in machine.load_before)}",
    ]
    if settings.quick:
        lines.append("--quick: a smoke run, its figures are not for comparing")
    return lines


COLUMNS = (
    f"{'operation':<{NAME}} {'native':>9} {'±':>4} {'reference':>9} {'±':>4} {'ratio':>7}"
    f"  {'native/s':>9} {'reference/s':>11}  unit"
)


def row(operation: Operation) -> str:
    native, reference = operation.native, operation.reference
    return (
        f"{operation.name:<{NAME}} {duration(native.median):>9} {spread(native.spread):>4}"
        f" {duration(reference.median):>9} {spread(reference.spread):>4}"
        f" {ratio(operation.ratio):>7}  {rate(native.per_second):>9}"
        f" {rate(reference.per_second):>11}  {operation.unit}s"
    )


def operations_header(settings: RunSettings) -> list[str]:
    return [
        f"{settings.rounds} interleaved rounds of {settings.round_seconds:g} s per core and"
        " operation; CPU time per call, the median of the rounds; ± the interquartile range"
        " over the median; ratio: how many times faster native is (the median of the rounds'"
        " reference time / native time)",
        "",
        COLUMNS,
    ]


def service_header(rounds: int, seconds: float) -> list[str]:
    return [
        f"{rounds} interleaved rounds of {seconds:g} s of wrk per core and route, a service of"
        " each core (2 workers, SQLite); records/s the median of the rounds; ratio: native"
        " records/s / reference records/s",
        "",
        ROUTE_COLUMNS,
    ]


ROUTE_COLUMNS = (
    f"{'route':<{NAME}} {'native rec/s':>12} {'reference rec/s':>15} {'ratio':>7}"
    f" {'p99 native':>11} {'p99 ref':>9}"
)


def route_row(route: Route) -> str:
    name = f"{route.route} ({route.records_per_request}/request, {route.connections} conn.)"
    p99_native = sorted(route.native.p99_ms)[len(route.native.p99_ms) // 2]
    p99_reference = sorted(route.reference.p99_ms)[len(route.reference.p99_ms) // 2]
    return (
        f"{name:<{NAME}} {route.native.median:>12.0f} {route.reference.median:>15.0f}"
        f" {ratio(route.ratio):>7} {p99_native:>8.1f} ms {p99_reference:>6.1f} ms"
    )
