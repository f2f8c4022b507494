"""Load script: concurrent clients on 127.0.0.1 post ~1 KB records for a fixed time.

    .venv/bin/python benchmarks/load_ingest.py [--seconds 10] [--connections 64] [--workers 2]
        [--backend sqlite|postgres] [--batch N] [--witnesses N] [--no-references] [--hsm]
        [--rounds N] [--json PATH]

Starts ``recordseal serve`` on a fresh data directory (SQLite, every acknowledged record
committed with synchronous=FULL before its 2xx; or a throwaway PostgreSQL cluster with fsync
and synchronous_commit on) and drives it with wrk (Debian's package), single records or batches
of N to ``/v1/records:batch``. Prints records/s and p50/p99 latency, and checks that the
database holds every acknowledged record.

In the same run, before the service and under the same server settings and wrk script, it
drives the references of benchmarks/trivial_app.py and benchmarks/durable_app.py:

- trivial: a Litestar endpoint that decodes the same body and stores nothing (the ceiling
  the issue compares against);
- durable: the trivial endpoint plus a group-committed, durable insert of the payload on the
  same backend (SQLite through the service's own writer; PostgreSQL through one connection per
  process with the same group commit, on the same throwaway cluster);
- floor: durable plus the commitment, AES-256-GCM and one Ed25519 signature per record, the
  least the spec requires, composed in Python per record;
- signing: ``openssl speed -multi <workers> ed25519``, raw Ed25519 signatures per second on
  the workers' cores (the batch targets are ratios to it), and ``openssl speed ed25519`` on
  one core: the CPU time of one signature, the unit CPU per record is also printed in.

Every rate is printed with its ratio to the trivial endpoint and to the signing rate, and the
seal lag: how long after the run every stored record is sealed. Beside the rates, which move
with whatever else the machine does, each run prints what a record cost over the wrk window
(from /proc, so steadier than the rates from run to run):

- CPU us/rec: CPU time of the server's processes, all their threads (for PostgreSQL, the
  database server's processes too), per record;
- KB/rec: bytes those processes had written to storage, per record;
- idle: the share of the machine's CPU time nobody used (wrk included as a user);
- WAL KB (PostgreSQL): the cluster's WAL written over the window, per record.

``--rounds N`` repeats the whole round (signing, references, service) N times, so that the
references and the service interleave, and ends with each figure's median and range over the
rounds; ``--json PATH`` keeps every round's figures.

With ``--hsm`` the service's header, log and key-encryption keys live in a SoftHSM2 token made
in the run's scratch directory (``keys init … --hsm``): every header is signed in the module.

Each run starts after ``sync`` and a pause, so one run's disk writeback does not slow the next.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
sys.path.insert(0, str(HERE))
from payloads import load_record  # noqa: E402

#: wrk's threads (``-t``); each has a Lua state of its own, which ``setup`` numbers.
WRK_THREADS = 2

# Record k of request n (from 0) of wrk thread t is subject ((n * threads + t) * per_request +
# k), modulo --subjects if set: the threads' subjects interleave and never repeat each other's.
LUA = """
local threads = %d
local per_request = %d
local subjects = %d
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
  local i = (n * threads + id) * per_request + tonumber(k)
  if subjects > 0 then i = i %% subjects end
  return "subject-" .. tostring(i)
end
request = function()
  local body = template:gsub("SUBJECT%%-(%%d+)", subject)
  n = n + 1
  return wrk.format(nil, "%s", nil, body)
end
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, path: str = "/health") -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url + path, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def settle() -> None:
    """Let the previous run's writeback finish before the next run is timed."""
    os.sync()
    time.sleep(2)


def group_usage(roots: set[int]) -> tuple[float, int]:
    """CPU seconds (user + system, every thread) and bytes written to storage so far by the
    live processes in the process group of one of ``roots`` or children of one (PostgreSQL's
    backends each have a session of their own, under the postmaster)."""
    cpu, written = 0.0, 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) not in roots and int(fields[1]) not in roots:  # pgrp, ppid
                continue
            io = (entry / "io").read_text()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # gone meanwhile
        cpu += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        written += int(re.search(r"^write_bytes: (\d+)", io, re.M).group(1))
    return cpu, written


def machine_times() -> tuple[float, float]:
    """The machine's idle and total CPU time so far (idle and iowait count as idle)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return values[3] + values[4], sum(values[:8])


def measured_wrk(
    roots: set[int],
    url: str,
    script: Path,
    seconds: int,
    connections: int,
    per_request: int,
    wal: Callable[[], int] | None = None,
) -> dict[str, float]:
    """``run_wrk``, with what each record cost the server's processes (``group_usage``) and,
    given ``wal`` (the database's WAL position), the WAL it wrote per record."""
    start = wal() if wal else 0
    (cpu, written), (idle, total) = group_usage(roots), machine_times()
    result = run_wrk(url, script, seconds, connections)
    (cpu_after, written_after), (idle_after, total_after) = group_usage(roots), machine_times()
    records = max(result["requests"] * per_request, 1)
    if wal:
        result["wal_kb"] = (wal() - start) / records / 1024
    result["cpu_us"] = (cpu_after - cpu) / records * 1e6
    result["kb"] = (written_after - written) / records / 1024
    result["idle"] = (idle_after - idle) / max(total_after - total, 1)
    return result


def run_wrk(url: str, script: Path, seconds: int, connections: int) -> dict[str, float]:
    threads, duration = f"-t{WRK_THREADS}", f"-d{seconds}s"
    out = subprocess.run(
        ["wrk", threads, f"-c{connections}", duration, "--latency", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    def latency(label: str) -> float:
        match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        assert match, out
        value, unit = float(match.group(1)), match.group(2)
        return value * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    requests = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: (.*)", out)
    return {
        "rate": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": latency("50"),
        "p99": latency("99"),
        "requests": requests,
        "non_2xx": int(errors.group(1)) if errors else 0,
        "socket_errors": socket_errors.group(1) if socket_errors else "none",
    }


def serve(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def stop(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGINT)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def start_witnesses(
    tmp: Path, data_dir: Path, count: int, cli: list[str]
) -> tuple[list[subprocess.Popen[bytes]], list[dict[str, str]]]:
    """``count`` witness processes that trust the log key of tenant ``load``."""
    if count == 0:
        return [], []
    from recordseal.ledger.log_keys import log_keys

    origin = "recordseal.local/load/default"
    log_vkey = log_keys(data_dir / "keys")[-1].signer(origin).verifier().vkey
    processes, config = [], []
    for number in range(count):
        name, home, port = f"witness-{number}.load", tmp / f"witness-{number}", free_port()
        vkey = (
            subprocess.run(
                [*cli, "witness", "key", "--data-dir", str(home), "--name", name],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        processes.append(
            serve(
                [
                    *cli,
                    "witness",
                    "serve",
                    "--data-dir",
                    str(home),
                    "--name",
                    name,
                    "--port",
                    str(port),
                    "--log",
                    f"{origin}={log_vkey}",
                ]
            )
        )
        wait_healthy(f"http://127.0.0.1:{port}")
        config.append({"name": name, "url": f"http://127.0.0.1:{port}", "vkey": vkey})
    return processes, config


def module_keys(scratch: Path, data_dir: Path, cli: list[str], env: dict[str, str]) -> None:
    """A SoftHSM2 token in ``scratch`` holding the service's header, log and key-encryption
    keys (``keys init … --hsm``); ``env`` gets the ``SOFTHSM2_CONF`` every process needs."""
    tokens = scratch / "softhsm"
    tokens.mkdir()
    conf = scratch / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tokens}\nobjectstore.backend = file\n")
    pin = scratch / "pin"
    pin.write_text("1234\n")
    env["SOFTHSM2_CONF"] = str(conf)
    run_env = {**os.environ, **env}
    subprocess.run(
        ["softhsm2-util", "--init-token", "--free", "--label", "load", "--so-pin", "5678",
         "--pin", "1234"],
        check=True, capture_output=True, env=run_env,
    )  # fmt: skip
    module = "/usr/lib/softhsm/libsofthsm2.so"
    for purpose in ("header", "log", "kek"):
        uri = f"pkcs11:token=load;object={purpose}?module-path={module}&pin-source=file:{pin}"
        subprocess.run(
            [*cli, "keys", "init", purpose, "--hsm", uri, "--data-dir", str(data_dir),
             "--create-data-dir"],
            check=True, capture_output=True, env=run_env,
        )  # fmt: skip


def batch_body(record: dict, size: int) -> str:
    """A batch of ``size`` copies of ``record``, each with its own subject."""
    records = [{**record, "subject_id": f"SUBJECT-{k}"} for k in range(size)]
    return json.dumps({"records": records})


def signing_rate(seconds: int, workers: int) -> float:
    """Ed25519 signatures per second on ``workers`` cores: ``openssl speed -multi``, the
    reference the batch target is set against (raw signing, nothing else)."""
    out = subprocess.run(
        ["openssl", "speed", "-seconds", str(seconds), "-multi", str(workers), "ed25519"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    match = re.search(r"EdDSA \(Ed25519\)\s+\S+\s+\S+\s+([\d.]+)", out)
    assert match, out
    return float(match.group(1))


def wait_sealed(data_dir: Path, url: str | None, limit: float = 30.0) -> tuple[float, int, int]:
    """Seconds from now (the end of the wrk run) until every stored record is sealed, the
    requests still in flight included (the stored count then unchanged for 0.5 s); with the
    counts. Gives up after ``limit`` seconds."""
    start = time.monotonic()
    last, changed, sealed_at = -1, start, None
    while True:
        stored, sealed, _, _ = count_rows(data_dir, url)
        now = time.monotonic()
        if stored != last:
            last, changed = stored, now
        if sealed < stored:
            sealed_at = None
        elif sealed_at is None:
            sealed_at = now
        if sealed_at is not None and now - changed >= 0.5:
            return sealed_at - start, stored, sealed
        if now - start > limit:
            return now - start, stored, sealed
        time.sleep(0.05)


def count_rows(data_dir: Path, url: str | None) -> tuple[int, int, int, int]:
    """Records stored, records sealed, checkpoints, cosignatures."""
    queries = (
        "SELECT count(*) FROM records",
        "SELECT count(*) FROM records r JOIN logs l ON l.id = r.log_id WHERE r.log_index < l.size",
        "SELECT count(*) FROM checkpoints",
        "SELECT count(*) FROM cosignatures",
    )
    if url is None:
        with sqlite3.connect(data_dir / "recordseal.sqlite3") as conn:
            a, b, c, d = (conn.execute(q).fetchone()[0] for q in queries)
            return a, b, c, d
    import asyncio

    import asyncpg

    async def fetch() -> tuple[int, int, int, int]:
        conn = await asyncpg.connect(url)
        try:
            a, b, c, d = [await conn.fetchval(q) for q in queries]
            return a, b, c, d
        finally:
            await conn.close()

    return asyncio.run(fetch())


def signature_us(seconds: int) -> float:
    """Microseconds of one Ed25519 signature on one core (``openssl speed ed25519``): the unit
    CPU per record is reported in."""
    return 1e6 / signing_rate(seconds, 1)


def wal_position(url: str) -> int:
    """The PostgreSQL cluster's current WAL position, in bytes."""
    import asyncio

    import asyncpg

    async def fetch() -> int:
        conn = await asyncpg.connect(url)
        try:
            return int(await conn.fetchval("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn"))
        finally:
            await conn.close()

    return asyncio.run(fetch())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument(
        "--batch",
        type=int,
        default=0,
        help="post batches of this many records to /v1/records:batch (0: single records)",
    )
    parser.add_argument(
        "--subjects",
        type=int,
        default=None,
        help="distinct subjects, reused in turn (default: 997 for single records; for batches"
        " 0, every record a new subject)",
    )
    parser.add_argument(
        "--witnesses",
        type=int,
        default=0,
        help="start this many witness processes and have every checkpoint cosigned",
    )
    parser.add_argument(
        "--hsm",
        action="store_true",
        help="keep the header, log and key-encryption keys in a SoftHSM2 token",
    )
    parser.add_argument(
        "--no-references",
        action="store_true",
        help="drive only the service (for quick A/B runs; no ratios are printed)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run references and service this many times, interleaved, and print the median"
        " and range of each figure",
    )
    parser.add_argument("--json", type=Path, help="write every round's figures here")
    args = parser.parse_args()
    load = Load(args)
    cluster = None
    if args.backend == "postgres":
        sys.path.insert(0, str(HERE.parent))
        from tests.pg_cluster import Cluster

        cluster = Cluster.start()
    rounds: list[dict[str, Any]] = []
    try:
        for number in range(args.rounds):
            rounds.append(load.round(cluster))
            load.print_round(number, rounds[-1])
    finally:
        if cluster:
            cluster.stop()
    if args.rounds > 1:
        load.print_summary(rounds)
    if args.json:
        args.json.write_text(json.dumps({"shape": load.shape(), "rounds": rounds}, indent=1))
    for result in rounds:
        if result["stored"] < result["acknowledged"]:
            sys.exit("LOST ACKNOWLEDGED RECORDS")
        if result["sealed"] < result["stored"]:
            sys.exit("RECORDS LEFT UNSEALED")


#: The references a round drives before the service: (name, module, path prefix, label).
REFERENCES = [
    ("trivial", "trivial_app:app", "", "trivial Litestar, same body"),
    ("durable", "durable_app:app", "/durable", "trivial + durable insert"),
    ("floor", "durable_app:app", "/floor", "floor: + commit, AES-GCM, Ed25519"),
]


class Load:
    """One shape of load (the command line's), run round after round."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        record = load_record("SUBJECT-0")
        self.per_request = max(args.batch, 1)
        self.subjects = args.subjects if args.subjects is not None else (0 if args.batch else 997)
        self.body = batch_body(record, args.batch) if args.batch else json.dumps(record)
        self.path = "/v1/records:batch" if args.batch else "/v1/records"
        self.cli = [sys.executable, "-m", "recordseal.cli"]

    def shape(self) -> str:
        args = self.args
        where = "SQLite synchronous=FULL" if args.backend == "sqlite" else "PostgreSQL fsync=on"
        where += ", keys in SoftHSM2" if args.hsm else ", key files"
        shape = f"batches of {args.batch}" if args.batch else "single records"
        shape += (
            f", {self.subjects} subjects in turn"
            if self.subjects
            else ", every record a new subject"
        )
        return (
            f"{args.connections} connections, {args.seconds} s, {args.workers} workers,"
            f" {shape}, body {len(self.body)} bytes, {where}"
        )

    def round(self, cluster: Any) -> dict[str, Any]:
        """References (unless ``--no-references``), then the service: every figure of one
        round."""
        args, per_request = self.args, self.per_request
        result: dict[str, Any] = {"references": {}}
        database_url = cluster.url() if cluster else None  # a new, empty schema every round
        #: the database server, whose work counts as the server's
        database = {cluster.postmaster_pid} if cluster else set()
        wal = (lambda: wal_position(database_url)) if database_url else None
        with tempfile.TemporaryDirectory() as tmp:
            scratch = Path(tmp)

            def wrk_script(name: str, token: str, target: str) -> Path:
                script = scratch / f"{name}.lua"
                script.write_text(
                    LUA % (WRK_THREADS, per_request, self.subjects, self.body, token, target)
                )
                return script

            pythonpath = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
            if not args.no_references:
                settle()
                result["signing"] = signing_rate(3, args.workers)
                result["signature_us"] = signature_us(3)
                for name, module, prefix, _ in REFERENCES:
                    settle()
                    port = free_port()
                    url = f"http://127.0.0.1:{port}"
                    reference = serve(
                        [sys.executable, "-m", "granian", "--interface", "asgi", "--host",
                         "127.0.0.1", "--port", str(port), "--workers", str(args.workers),
                         "--no-access-log", module],
                        env={
                            "PYTHONPATH": pythonpath,
                            "DURABLE_DB": str(scratch / f"{name}.sqlite3"),
                            # the durable insert on the service's backend (a schema of its own)
                            **({"DURABLE_PG_URL": database_url} if database_url else {}),
                        },
                    )  # fmt: skip
                    try:
                        wait_healthy(url, "/")
                        script = wrk_script(name, "none", prefix + self.path)
                        result["references"][name] = measured_wrk(
                            {reference.pid, *database}, url, script, args.seconds,
                            args.connections, per_request, wal,
                        )  # fmt: skip
                    finally:
                        stop(reference)

            settle()
            data_dir = scratch / "data"
            env = {"RECORDSEAL_DATABASE_URL": database_url} if database_url else {}
            if args.hsm:
                module_keys(scratch, data_dir, self.cli, env)
            witnesses, witness_config = start_witnesses(scratch, data_dir, args.witnesses, self.cli)
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            env["RECORDSEAL_WITNESSES"] = json.dumps(witness_config)
            server = serve(
                [*self.cli, "serve", "--data-dir", str(data_dir), "--port", str(port),
                 "--workers", str(args.workers)],
                env=env,
            )  # fmt: skip
            try:
                wait_healthy(url)
                token = (
                    subprocess.run(
                        [
                            *self.cli,
                            "token",
                            "create",
                            "--data-dir",
                            str(data_dir),
                            "--tenant",
                            "load",
                        ],
                        capture_output=True,
                        text=True,
                        check=True,
                        env={**os.environ, **env},
                    )
                    .stdout.strip()
                    .splitlines()[-1]
                )
                httpx.post(
                    url + "/v1/streams",
                    json={"name": "load"},
                    headers={"Authorization": f"Bearer {token}"},
                ).raise_for_status()
                script = wrk_script("recordseal", token, self.path)
                ingest = measured_wrk(
                    {server.pid, *database}, url, script, args.seconds, args.connections,
                    per_request, wal,
                )  # fmt: skip
                result["lag"], _, _ = wait_sealed(data_dir, database_url)
                time.sleep(1.5 if args.witnesses else 0)  # the last witness round
            finally:
                stop(server)
                for witness in witnesses:
                    stop(witness)
            stored, sealed, checkpoints, cosigned = count_rows(data_dir, database_url)
        result["service"] = ingest
        result["acknowledged"] = (ingest["requests"] - ingest["non_2xx"]) * per_request
        result.update(stored=stored, sealed=sealed, checkpoints=checkpoints, cosigned=cosigned)
        return result

    def print_round(self, number: int, result: dict[str, Any]) -> None:
        """The round's table: every endpoint's rate, latency and cost, and its checks."""
        per_request, ingest = self.per_request, result["service"]
        print(f"\nround {number + 1}: {self.shape()}\n")
        records_per_second = ingest["rate"] * per_request
        if not result["references"]:
            print(
                f"recordseal: {records_per_second:.0f} records/s, p99 {ingest['p99']:.2f} ms,"
                f" non-2xx {ingest['non_2xx']}, seal lag {result['lag']:.2f} s, CPU"
                f" {ingest['cpu_us']:.1f} us/record, {ingest['kb']:.1f} KB written/record,"
                f"{wal_text(ingest)} machine idle {ingest['idle']:.0%}"
            )
        else:
            ceiling, signing = result["references"]["trivial"], result["signing"]
            unit = result["signature_us"]
            print(
                f"{'endpoint':<36}{'records/s':>11}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
                f"{'non-2xx':>9}{'/trivial':>9}{'/signing':>9}{'CPU us/rec':>11}{'sig/rec':>8}"
                f"{'KB/rec':>8}{'WAL KB':>8}{'idle':>6}"
            )
            rows = [(f"POST {self.path} (recordseal)", ingest)]
            rows += [(label, result["references"][name]) for name, _, _, label in REFERENCES]
            for name, r in rows:
                print(
                    f"{name:<36}{r['rate'] * per_request:>11.0f}{r['rate']:>9.0f}"
                    f"{r['p50']:>9.2f}{r['p99']:>9.2f}{r['non_2xx']:>9}"
                    f"{r['rate'] / ceiling['rate']:>9.2f}"
                    f"{r['rate'] * per_request / signing:>9.2f}{r['cpu_us']:>11.1f}"
                    f"{r['cpu_us'] / unit:>8.2f}{r['kb']:>8.1f}"
                    f"{wal_cell(r):>8}{r['idle']:>6.0%}"
                )
            print(
                f"{f'openssl speed -multi {self.args.workers} ed25519':<36}{signing:>11.0f}"
                f"{'':>45}{signing / per_request / ceiling['rate']:>9.2f}{1:>9.2f}"
            )
            print(f"{'openssl speed ed25519 (one core)':<36}{1e6 / unit:>11.0f}"
                  f"   one signature: {unit:.1f} us of CPU")  # fmt: skip
            for name, r in rows[1:]:
                if r["non_2xx"]:
                    print(f"WARNING: '{name}' answered {r['non_2xx']} non-2xx: its rate is void")
            print(
                f"\nratio to the trivial endpoint (requests/s): "
                f"{ingest['rate'] / ceiling['rate']:.2f}\n"
                f"ratio to {self.args.workers}-core Ed25519 signing (records/s):"
                f" {records_per_second / signing:.2f}\n"
                f"CPU per record: {ingest['cpu_us'] / unit:.2f} one-core Ed25519 signatures"
            )
        print(f"seal lag after the run: {result['lag']:.2f} s until every stored record was sealed")
        print(
            f"records stored: {result['stored']}; records in 2xx answers counted by wrk:"
            f" {result['acknowledged']} (wrk stops mid-flight, so stored may exceed it by the"
            f" requests in flight)"
        )
        print(
            f"sealed: {result['sealed']} of {result['stored']} records in"
            f" {result['checkpoints']} checkpoints; cosignatures stored: {result['cosigned']}"
        )

    def print_summary(self, rounds: list[dict[str, Any]]) -> None:
        """Each figure of the service over the rounds: median [lowest, highest]."""
        per_request = self.per_request

        def spread(values: list[float], form: str) -> str:
            low, mid, high = min(values), statistics.median(values), max(values)
            return f"{mid:{form}} [{low:{form}}, {high:{form}}]"

        service = [r["service"] for r in rounds]
        figures = {
            "records/s": [s["rate"] * per_request for s in service],
            "p99 ms": [s["p99"] for s in service],
            "CPU us/record": [s["cpu_us"] for s in service],
            "KB written/record": [s["kb"] for s in service],
            "machine idle %": [s["idle"] * 100 for s in service],
            "seal lag s": [r["lag"] for r in rounds],
        }
        if all("wal_kb" in s for s in service):
            figures["WAL KB/record"] = [s["wal_kb"] for s in service]
        if all(r["references"] for r in rounds):
            figures["/ trivial (requests)"] = [
                r["service"]["rate"] / r["references"]["trivial"]["rate"] for r in rounds
            ]
            figures["/ 2-core signing (records)"] = [
                r["service"]["rate"] * per_request / r["signing"] for r in rounds
            ]
            figures["/ floor (records)"] = [
                r["service"]["rate"] / r["references"]["floor"]["rate"] for r in rounds
            ]
            figures["CPU/record in signatures"] = [
                r["service"]["cpu_us"] / r["signature_us"] for r in rounds
            ]
            figures["one signature, us"] = [r["signature_us"] for r in rounds]
            figures["trivial CPU us/request"] = [
                r["references"]["trivial"]["cpu_us"] * per_request for r in rounds
            ]
        print(f"\n{len(rounds)} rounds, interleaved: median [lowest, highest]\n{self.shape()}")
        for name, values in figures.items():
            form = ".2f" if max(values) < 10 else ".0f" if max(values) >= 1000 else ".1f"
            print(f"  {name:<30}{spread(values, form)}")


def wal_cell(result: dict[str, float]) -> str:
    return f"{result['wal_kb']:.2f}" if "wal_kb" in result else "-"


def wal_text(result: dict[str, float]) -> str:
    return f" {result['wal_kb']:.2f} KB of WAL/record," if "wal_kb" in result else ""


if __name__ == "__main__":
    main()
