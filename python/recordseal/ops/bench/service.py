"""``recordseal bench --service``: the ingest routes of a service on each core, driven by wrk
with the same load in the same run.

Two services start side by side, each ``recordseal serve`` with two workers on a scratch data
directory (SQLite) and ``RECORDSEAL_CORE`` set to its core. Each route is then driven for
``seconds`` per round, the cores taking turns and the one going first alternating, with a
second's pause after each so that the sealer of one is done before the other is timed: single
records from 32 connections, and batches of 100 from 4, each record 1 KB of 20 fields, its
subject one of 997 in turn. Records per second are the medians of the rounds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from recordseal.ops.bench.errors import BenchError
from recordseal.ops.bench.payloads import record_1k
from recordseal.ops.bench.results import Rates, Route
from recordseal.ops.bench.runner import CORES

WORKERS, SUBJECTS, WRK_THREADS = 2, 997, 2
#: (route, records per request, connections)
ROUTES = (("/v1/records", 1, 32), ("/v1/records:batch", 100, 4))

# Record k of request n of wrk thread t is subject ((n * threads + t) * per_request + k) modulo
# the subjects: the threads' subjects interleave.
LUA = """
local threads, per_request, subjects = %d, %d, %d
local template = [==[%s]==]
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
local function subject(k)
  return "subject-" .. tostring(((n * threads + id) * per_request + tonumber(k)) %% subjects)
end
request = function()
  local body = template:gsub("SUBJECT%%-(%%d+)", subject)
  n = n + 1
  return wrk.format(nil, "%s", nil, body)
end
"""


def _body(per_request: int) -> str:
    record = {"stream": "orders", "record_type": "order.placed",
              "occurred_at": "2026-11-21T08:00:00Z", "subject_id": "SUBJECT-0",
              "payload": json.loads(record_1k())}  # fmt: skip
    if per_request == 1:
        return json.dumps(record)
    return json.dumps({"records": [{**record, "subject_id": f"SUBJECT-{k}"}
                                   for k in range(per_request)]})  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Service:
    """``recordseal serve`` on one core, in ``home``, with a token and the stream ``orders``."""

    def __init__(self, core: str, home: Path) -> None:
        self.core, self.home = core, home
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "RECORDSEAL_CORE": core}
        for name in [n for n in self.env if n.startswith("RECORDSEAL_") and n != "RECORDSEAL_CORE"]:
            del self.env[name]  # the scratch service, not the caller's settings
        cli = [sys.executable, "-m", "recordseal.cli"]
        data = ["--data-dir", str(home / "data")]
        self.log = (home / "serve.log").open("wb")
        self.process = subprocess.Popen(
            [*cli, "serve", *data, "--port", str(self.port), "--workers", str(WORKERS)],
            stdout=self.log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
        )  # fmt: skip
        self._wait_ready()
        if f"core={core}" not in (home / "serve.log").read_text(errors="replace"):
            raise BenchError(f"the service started for the {core} core says it runs another")
        made = subprocess.run(
            [*cli, "token", "create", *data, "--tenant", "bench"],
            capture_output=True, text=True, env=self.env, timeout=60, check=False,
        )  # fmt: skip
        if made.returncode != 0:
            raise BenchError(f"the {core} service gave no token: {made.stderr.strip()}")
        self.token = made.stdout.strip().splitlines()[-1]
        headers = {"Authorization": f"Bearer {self.token}"}
        httpx.post(f"{self.url}/v1/streams", json={"name": "orders"}, headers=headers,
                   timeout=30).raise_for_status()  # fmt: skip

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                text = (self.home / "serve.log").read_text(errors="replace").strip()
                last = text.splitlines()[-1] if text else "no output"
                raise BenchError(f"the {self.core} service did not start: {last}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise BenchError(f"the {self.core} service was not ready within 90 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


@contextmanager
def services(scratch: Path) -> Iterator[dict[str, Service]]:
    started: dict[str, Service] = {}
    try:
        for core in CORES:
            home = scratch / core
            home.mkdir()
            started[core] = Service(core, home)
        yield started
    finally:
        for service in started.values():
            service.stop()


def run_wrk(url: str, script: Path, seconds: float, connections: int) -> tuple[float, float, int]:
    """Requests per second, p99 latency in ms and non-2xx answers of one wrk run."""
    out = subprocess.run(
        ["wrk", f"-t{WRK_THREADS}", f"-c{connections}", f"-d{max(1, round(seconds))}s",
         "--latency", "-s", str(script), url],
        capture_output=True, text=True, check=False, timeout=seconds + 60,
    )  # fmt: skip
    requests = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out.stdout, re.M)
    if out.returncode != 0 or requests is None or p99 is None:
        raise BenchError(f"wrk failed: {(out.stderr or out.stdout).strip()[:200]}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    return (
        float(requests.group(1)),
        float(p99.group(1)) * scale,
        int(errors.group(1)) if errors else 0,
    )


def drive(rounds: int, seconds: float, done: Callable[[Route], None]) -> list[Route]:
    """Each route on both cores over ``rounds`` interleaved rounds; ``done`` is told of each."""
    if shutil.which("wrk") is None:
        raise BenchError(
            "--service drives the service with wrk, which is not on PATH (Debian: apt-get"
            " install wrk; make system installs it)"
        )
    routes = []
    with tempfile.TemporaryDirectory(prefix="recordseal-bench-") as tmp, services(Path(tmp)) as on:
        for path, per_request, connections in ROUTES:
            rates: dict[str, list[float]] = {core: [] for core in CORES}
            p99s: dict[str, list[float]] = {core: [] for core in CORES}
            failed = dict.fromkeys(CORES, 0)
            for number in range(rounds):
                for core in CORES if number % 2 == 0 else CORES[::-1]:
                    service = on[core]
                    script = Path(tmp) / f"{core}-{per_request}.lua"
                    script.write_text(LUA % (WRK_THREADS, per_request, SUBJECTS,
                                             _body(per_request), service.token, path))  # fmt: skip
                    rate, p99, non_2xx = run_wrk(service.url, script, seconds, connections)
                    rates[core].append(rate * per_request)
                    p99s[core].append(p99)
                    failed[core] += non_2xx
                    time.sleep(1.0)  # the sealer catches up before the other core is timed
            figures = {
                core: Rates(statistics.median(rates[core]), rates[core], p99s[core], failed[core])
                for core in CORES
            }
            route = Route(
                route=path,
                records_per_request=per_request,
                connections=connections,
                seconds=max(1, round(seconds)),
                native=figures["native"],
                reference=figures["reference"],
                ratio=figures["native"].median / max(figures["reference"].median, 1e-9),
            )
            done(route)
            routes.append(route)
    return routes
