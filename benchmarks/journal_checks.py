"""What the continuity checks of a running service cost: the journal read before a seal
(``Continuity.before_seal``) and before the first append of a stream a process has not
journaled itself (``before_append``), for both kinds of journal.

    .venv/bin/python benchmarks/journal_checks.py [--streams 1000] [--calls 2000]

A directory journal is filled with ``--streams`` heads from two writers; each timed call
first lets the other writer journal one group of heads (what a seal round meets: the heads
journaled since the last read), then reads what the segments gained. A journal database on a
throwaway PostgreSQL cluster (``tests/pg_cluster.py``) holds the same heads; each timed call
is the one indexed query of a seal's check (``journal.current``) on a pooled connection.
Prints microseconds per check (median and 90th percentile) beside one Ed25519 signature on
one core (``openssl speed ed25519``, measured in the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from recordseal.storage.journal import DirectoryJournal, Head, Signed  # noqa: E402
from recordseal.storage.postgres.journal import PostgresJournal  # noqa: E402


def signature_us() -> float:
    """One Ed25519 signature on one core, in microseconds (``openssl speed``)."""
    out = subprocess.run(
        ["openssl", "speed", "-seconds", "2", "ed25519"], capture_output=True, text=True
    ).stdout
    found = re.search(r"253 bits EdDSA \(Ed25519\)\s+\S+s\s+\S+s\s+([\d.]+)", out)
    if found is None:
        raise RuntimeError("openssl speed ed25519 printed no figure")
    return 1e6 / float(found.group(1))  # its sign/s column


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9)]
    return f"median {statistics.median(ordered):7.1f} us   p90 {p90:7.1f} us"


def directory(streams: int, calls: int) -> list[float]:
    with tempfile.TemporaryDirectory() as root:
        reader, writer = DirectoryJournal(Path(root)), DirectoryJournal(Path(root))
        reader.open()
        writer.open()
        leaf = bytes(32)
        writer.append_now(Head("acme", f"s{n}", 1, leaf) for n in range(streams))
        reader.read_new()
        samples = []
        for call in range(calls):
            writer.append_now(
                [Head("acme", f"s{(call * 7 + k) % streams}", call + 2, leaf) for k in range(8)]
                + [Signed("svc/acme/default", call + 2, leaf)]
            )
            started = time.perf_counter()
            reader.read_new()
            samples.append((time.perf_counter() - started) * 1e6)
        reader.close()
        writer.close()
        return samples


async def database(streams: int, calls: int) -> list[float]:
    from tests.pg_cluster import Cluster

    cluster = Cluster.start()
    try:
        url = cluster.url()
        journal = PostgresJournal(url)
        await journal.load()
        leaf = bytes(32)
        await journal.append([Head("acme", f"s{n}", 1, leaf) for n in range(streams)])
        await journal.append([Signed("svc/acme/default", 2, leaf)])
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            await journal.current((), ("svc/acme/default",))
            samples.append((time.perf_counter() - started) * 1e6)
        await journal.aclose()
        return samples
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    signature = signature_us()
    print(f"one Ed25519 signature, one core: {signature:.1f} us")
    for name, samples in (
        ("directory journal, read what the segments gained", directory(args.streams, args.calls)),
        ("journal database, one indexed query", asyncio.run(database(args.streams, args.calls))),
    ):
        median = statistics.median(samples)
        print(f"{name:52} {percentiles(samples)}   = {median / signature:.2f} signatures")


if __name__ == "__main__":
    main()
