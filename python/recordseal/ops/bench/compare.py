"""A run against a saved one (``--compare BASELINE.json``): per operation, how the native time
and the ratio moved, and which moved the wrong way by more than the threshold (``--fail-over``).

An operation regresses when its native time grew by more than the threshold (now > then x
(1 + t)), or its ratio, how many times faster native is than the reference, shrank by more than
it (now < then x (1 - t)). For a service route, the native records/s and the ratio. Operations in
one result only are listed, never counted as regressions.
"""

from __future__ import annotations

from dataclasses import dataclass

from recordseal.ops.bench.results import Result
from recordseal.ops.bench.table import NAME, duration, ratio


@dataclass(frozen=True)
class Change:
    """One operation or route in both results. ``native_*`` is a time per call (larger is
    worse) for an operation, a rate (larger is better) for a route."""

    name: str
    native_then: float
    native_now: float
    ratio_then: float
    ratio_now: float
    is_rate: bool = False

    @property
    def native_slowdown(self) -> float:
        """How much slower native is now, as a fraction (0.2: 20% slower; negative: faster)."""
        if self.is_rate:
            return self.native_then / self.native_now - 1
        return self.native_now / self.native_then - 1

    @property
    def ratio_change(self) -> float:
        """The ratio now over then, less one (negative: native's lead shrank)."""
        return self.ratio_now / self.ratio_then - 1

    def regressions(self, threshold: float) -> list[str]:
        found = []
        if self.native_slowdown > threshold:
            what = "native records/s" if self.is_rate else "native time"
            found.append(f"{what} {self.native_slowdown:+.0%}")
        if self.ratio_change < -threshold:
            found.append(f"ratio {ratio(self.ratio_then)} -> {ratio(self.ratio_now)}")
        return found


@dataclass(frozen=True)
class Comparison:
    changes: list[Change]
    only_now: list[str]
    only_then: list[str]

    def regressed(self, threshold: float) -> list[tuple[str, list[str]]]:
        found = [(c.name, c.regressions(threshold)) for c in self.changes]
        return [(name, what) for name, what in found if what]


def compare(now: Result, then: Result) -> Comparison:
    changes: list[Change] = []
    before = {operation.name: operation for operation in then.operations}
    for operation in now.operations:
        old = before.get(operation.name)
        if old is not None:
            changes.append(
                Change(operation.name, old.native.median, operation.native.median, old.ratio,
                       operation.ratio)
            )  # fmt: skip
    routes = {route.route: route for route in then.service}
    for route in now.service:
        old_route = routes.get(route.route)
        if old_route is not None:
            changes.append(
                Change(route.route, old_route.native.median, route.native.median,
                       old_route.ratio, route.ratio, is_rate=True)
            )  # fmt: skip
    names_now = {o.name for o in now.operations} | {r.route for r in now.service}
    names_then = set(before) | set(routes)
    return Comparison(changes, sorted(names_now - names_then), sorted(names_then - names_now))


def report(comparison: Comparison, now: Result, then: Result, threshold: float) -> list[str]:
    build, machine = then.build, then.machine
    commit = build.commit[:12] if build.commit else "no commit"
    lines = [
        f"against the baseline of {then.started_at} ({commit}, {machine.cpu},"
        f" {machine.usable_cores} usable CPUs); regression: beyond {threshold:.0%}",
    ]
    if (
        machine.cpu != now.machine.cpu
        or then.build.extension_profile != now.build.extension_profile
    ):
        lines.append(
            "the baseline was measured on another CPU or build: native times compare only"
            " roughly across them, ratios better"
        )
    lines.append(
        f"{'operation':<{NAME}} {'native then':>11} {'now':>9} {'change':>7}"
        f" {'ratio then':>10} {'now':>7} {'change':>7}"
    )
    for change in comparison.changes:
        show = (lambda v: f"{v:.0f}/s") if change.is_rate else duration
        flag = "  REGRESSED" if change.regressions(threshold) else ""
        lines.append(
            f"{change.name:<{NAME}} {show(change.native_then):>11} {show(change.native_now):>9}"
            f" {change.native_slowdown:>+7.0%} {ratio(change.ratio_then):>10}"
            f" {ratio(change.ratio_now):>7} {change.ratio_change:>+7.0%}{flag}"
        )
    for name in comparison.only_now:
        lines.append(f"{name:<{NAME}} not in the baseline")
    if comparison.only_then:
        lines.append(f"not run: {len(comparison.only_then)} operations of the baseline")
    return lines
