"""How long ``make run`` takes to start when nothing changed (issue 33, item 9): the seconds
from starting ``recordseal serve`` as the Makefile's ``run`` target does (two workers and the
demo witness, on a data directory that exists already) until ``GET /health`` answers 200, and
each as a ratio to ``python -c 'import litestar'`` measured just before it, so a machine
whose load changes during the run still gives comparable ratios.

    .venv/bin/python benchmarks/serve_start.py [--runs 9] [--compare OTHER/python]

``--compare`` also starts the package found under another directory (another checkout's
``python/``, through ``PYTHONPATH``), each run alternating the two, and reports both. Each
start is stopped with SIGTERM to ``serve`` alone before the next one begins. The first start
of each (it makes the keys, the schema and the witness's key) is not counted.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
SERVE_SECONDS = 120  # a start that takes longer is a failure, not a figure


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def answers(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        connection.request("GET", "/health")
        ok = connection.getresponse().status == 200
        connection.close()
        return ok
    except OSError:
        return False


def start(data: Path, python_path: str | None) -> float:
    """Seconds until a started ``serve`` answers; it is stopped before this returns."""
    port = free_port()
    env = dict(os.environ)
    if python_path is not None:
        env["PYTHONPATH"] = python_path
    command = [
        str(BIN / "recordseal"), "serve", "--data-dir", str(data), "--port", str(port),
        "--workers", "2", "--demo-witness", str(data / "demo-witness"),
    ]  # fmt: skip
    with (data.parent / f"{data.name}.log").open("ab") as log:
        began = time.perf_counter()
        server = subprocess.Popen(
            command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            while not answers(port):
                if server.poll() is not None or time.perf_counter() - began > SERVE_SECONDS:
                    raise SystemExit(f"serve did not start: see {log.name}")
                time.sleep(0.01)
            return time.perf_counter() - began
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


def reference() -> float:
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litestar"], check=True)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--compare", help="another package directory, started alternately")
    args = parser.parse_args()
    trees: dict[str, str | None] = {"this": None}
    if args.compare:
        trees["compared"] = str(Path(args.compare).resolve())
    with tempfile.TemporaryDirectory(prefix="serve-start-") as scratch:
        for name, tree in trees.items():
            start(Path(scratch) / name, tree)  # makes the keys, schema and witness key
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        ratios: dict[str, list[float]] = {name: [] for name in trees}
        litestar: list[float] = []
        for run in range(args.runs):
            for name, tree in trees.items():
                litestar.append(reference())
                seconds[name].append(start(Path(scratch) / name, tree))
                ratios[name].append(seconds[name][-1] / litestar[-1])
            figures = ", ".join(f"{name} {seconds[name][-1]:.2f} s" for name in trees)
            print(f"run {run + 1}: {figures}", flush=True)
    print(f"import litestar: median {statistics.median(litestar):.2f} s")
    for name in trees:
        print(
            f"{name}: median {statistics.median(seconds[name]):.2f} s to answer,"
            f" {statistics.median(ratios[name]):.1f} x import litestar (median of the runs' ratios)"
        )
    if args.compare:
        pairs = zip(seconds["this"], seconds["compared"], strict=True)
        paired = [this / other for this, other in pairs]
        print(f"this / compared: {statistics.median(paired):.2f} (median of the runs' ratios)")


if __name__ == "__main__":
    main()
