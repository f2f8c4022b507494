"""Timing both cores in the same rounds: one worker process per core (``worker.py``), each
importing the package with ``RECORDSEAL_CORE`` set, so each runs every path the way a service
on that core would. For each operation the command first asks each worker how long a call
takes (and checks both give the same result), then runs the rounds: in every round each core
times the calls that fill ``round_seconds``, the cores taking turns and the one going first
alternating, so that whatever else the machine does falls on both alike; both workers run on
the same CPU, so neither is timed on a CPU that the other never sees. An operation's ratio
is the median of its rounds' ratios, each of two timings made back to back.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from recordseal.ops.bench.cases import Case
from recordseal.ops.bench.errors import BenchError
from recordseal.ops.bench.results import Operation, Timing
from recordseal.ops.bench.worker import write_world
from recordseal.ops.bench.world import make_world

CORES = ("native", "reference")


class Worker:
    """One core's worker process (``worker.py``)."""

    def __init__(self, core: str, world_dir: Path, cpu: int | None) -> None:
        self.core = core
        env = {**os.environ, "RECORDSEAL_CORE": core}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recordseal.ops.bench.worker", str(world_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, text=True,
        )  # fmt: skip
        if cpu is not None:
            os.sched_setaffinity(self.process.pid, {cpu})
        hello = self._answer()
        if hello.get("backend") != core:
            raise BenchError(f"the {core} worker runs the {hello.get('backend')} core")
        self.backend: str = hello["backend"]
        self.profile: str | None = hello.get("profile")

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            assert self.process.stderr is not None
            why = self.process.stderr.read().strip().splitlines()
            raise BenchError(f"the {self.core} core did not start: {why[-1] if why else '?'}")
        answer: dict[str, Any] = msgspec.json.decode(line)
        return answer

    def ask(self, case: Case, calls: int, seconds: float = 0.0) -> dict[str, Any]:
        assert self.process.stdin is not None
        request = {"case": case.name, "calls": calls, "seconds": seconds}
        self.process.stdin.write(msgspec.json.encode(request).decode() + "\n")
        self.process.stdin.flush()
        answer = self._answer()
        if "error" in answer:
            raise BenchError(f"{case.name} failed on the {self.core} core: {answer['error']}")
        return answer

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@contextmanager
def workers() -> Iterator[dict[str, Worker]]:
    """A worker of each core, sharing one bundle to verify (``world.py``)."""
    started: dict[str, Worker] = {}
    # Both on one CPU, where the system can pin processes (Linux): what slows it slows both.
    cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_setaffinity") else None
    with tempfile.TemporaryDirectory(prefix="recordseal-bench-") as scratch:
        write_world(make_world(), Path(scratch))
        try:
            for core in CORES:
                started[core] = Worker(core, Path(scratch), cpu)
            yield started
        finally:
            for worker in started.values():
                worker.close()


def timing(samples: list[float], calls: int, case: Case) -> Timing:
    median = statistics.median(samples)
    low, _, high = statistics.quantiles(samples, n=4, method="inclusive")
    return Timing(
        median=median,
        spread=(high - low) / median,
        per_second=case.per_call / median,
        calls_per_round=calls,
        samples=samples,
    )


def measure(running: dict[str, Worker], case: Case, rounds: int, round_seconds: float) -> Operation:
    """``case`` on both cores over ``rounds`` interleaved rounds."""
    calls, prints = {}, {}
    for core, worker in running.items():
        answer = worker.ask(case, 0, min(round_seconds, 0.05))
        calls[core] = max(1, round(round_seconds / answer["per_call"]))
        prints[core] = answer["fingerprint"]
    if prints["native"] != prints["reference"]:
        raise BenchError(f"{case.name}: the native and the reference core gave different results")
    samples: dict[str, list[float]] = {core: [] for core in running}
    for number in range(rounds):
        order = CORES if number % 2 == 0 else CORES[::-1]
        for core in order:
            seconds = running[core].ask(case, calls[core])["seconds"]
            samples[core].append(seconds / calls[core])
    pairs = zip(samples["reference"], samples["native"], strict=True)
    return Operation(
        name=case.name,
        group=case.group,
        unit=case.unit,
        per_call=case.per_call,
        native=timing(samples["native"], calls["native"], case),
        reference=timing(samples["reference"], calls["reference"], case),
        ratio=statistics.median(reference / native for reference, native in pairs),
    )


def run(
    cases: Sequence[Case],
    rounds: int,
    round_seconds: float,
    done: Callable[[Operation], None],
) -> tuple[list[Operation], str]:
    """Every case on both cores; ``done`` is told of each as it ends. Gives the operations
    and the native extension's build profile."""
    with workers() as running:
        operations = []
        for case in cases:
            operation = measure(running, case, rounds, round_seconds)
            done(operation)
            operations.append(operation)
        return operations, running["native"].profile or "unknown"
