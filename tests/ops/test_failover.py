"""A PostgreSQL failover while the service runs: one history throughout (docs/continuity.md,
"What a running service catches").

Real parts: a primary P, an asynchronous streaming standby S (``pg_basebackup -R``), the
continuity journal (a database on a third server J, or the directory of the data directory
both processes share), two service processes (one data directory, as two
hosts: each reaches the store through a TCP proxy of its own, standing in for a virtual IP
or a pooler), an independent witness (``recordseal witness serve``), clients posting singles
and batches into streams ``alpha`` and ``beta``.

Replication is cut; alpha keeps receiving on P alone and a subject is erased; P is killed
(SIGKILL, every server process), S promoted, and the proxies switched to S — first the
proxy of the process that held the sealing role on P (the role **stays** with it), or first
the other's (the role **moves**), the other proxy refusing connections for two seconds. The
services are not restarted. Asserted: no (stream, seq) acknowledged with two records; no
(log, size) with two roots among every checkpoint stored on P (started again afterwards) and
S; the journal saw no two roots either; the erased subject's payload is never served; both
processes report the same fences; after ``recordseal recover`` every acknowledged record
that S still holds verifies ``VERIFIED``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import asyncpg
import httpx
import pytest

from recordseal.ledger.log_keys import log_keys
from recordseal.settings import Settings
from recordseal.storage.postgres.logs import SEALER_LOCK
from tests.ops.test_continuity import stop
from tests.pg_cluster import Cluster, _free_port
from tests.servers import create_token, free_port, kill_service, start_service, witness_server

ERASED = "subject-erased"


class Proxy:
    """A TCP proxy on 127.0.0.1 to one PostgreSQL server at a time. ``switch`` points it
    at another server and cuts every connection it carries (as a virtual IP moving does);
    while ``refusing``, it closes new connections at once."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.refusing = False
        self.port = free_port()
        self._loop = asyncio.new_event_loop()
        self._links: set[asyncio.StreamWriter] = set()
        #: upstream local port -> True while open: which server sessions are this proxy's
        self.upstream_ports: set[int] = set()
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self._thread.start()
        started.wait(10)

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._accept, "127.0.0.1", self.port)
        )
        started.set()
        self._loop.run_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        local = up_writer.get_extra_info("sockname")[1]
        self.upstream_ports.add(local)
        self._links |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.close()
                self._links.discard(dst)

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.upstream_ports.discard(local)

    def switch(self, target: int, *, refusing: bool = False) -> None:
        def cut() -> None:
            self.target, self.refusing = target, refusing
            for link in list(self._links):
                link.transport.abort()
            self._links.clear()

        self._loop.call_soon_threadsafe(cut)

    def admit(self) -> None:
        self._loop.call_soon_threadsafe(setattr, self, "refusing", False)

    def close(self) -> None:
        async def shut() -> None:
            self._server.close()
            self.refusing = True
            for link in list(self._links):
                link.transport.abort()
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if others:
                await asyncio.wait(others, timeout=5)
            self._loop.stop()

        asyncio.run_coroutine_threadsafe(shut(), self._loop)
        self._thread.join(10)
        self._loop.close()


def standby_of(primary: Cluster) -> Cluster:
    """An asynchronous streaming standby of ``primary`` (``pg_basebackup -R``), started."""
    directory = Path(tempfile.mkdtemp(prefix="recordseal-pg-standby-"))
    standby = Cluster(directory, _free_port())
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    data = directory / "data"
    standby._run(
        str(standby._bin / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port),
        "-U", "postgres", "-D", str(data), "-R", "-X", "stream", "--no-sync",
    )  # fmt: skip
    standby.serve()
    return standby


def psql(cluster: Cluster, sql: str) -> str:
    done = subprocess.run(
        ["psql", "-qtAX", "-v", "ON_ERROR_STOP=1", cluster.base_url, "-c", sql],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


def cut_replication(primary: Cluster, standby: Cluster) -> None:
    """Once the standby has replayed what the primary holds now (so it holds the records of
    the run so far), stop its replication: it receives nothing more."""
    lsn = psql(primary, "SELECT pg_current_wal_lsn()")
    deadline = time.monotonic() + 60
    while psql(standby, f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn") != "t":
        assert time.monotonic() < deadline, "the standby did not catch up"
        time.sleep(0.05)
    psql(standby, "ALTER SYSTEM SET primary_conninfo = ''")
    psql(standby, "SELECT pg_reload_conf()")
    deadline = time.monotonic() + 30
    while psql(standby, "SELECT count(*) FROM pg_stat_wal_receiver") != "0":
        assert time.monotonic() < deadline, "the standby kept receiving"
        time.sleep(0.1)


def kill_every_server_process(cluster: Cluster) -> None:
    """SIGKILL the postmaster and every backend it started: the primary is gone."""
    postmaster = cluster.postmaster_pid
    children = [
        int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _parent(int(pid)) == postmaster
    ]
    for pid in [postmaster, *children]:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def promote(standby: Cluster) -> None:
    standby._run(str(standby._bin / "pg_ctl"), "-D", str(standby.directory / "data"), "-w",
                 "promote")  # fmt: skip
    while psql(standby, "SELECT pg_is_in_recovery()") != "f":
        time.sleep(0.05)


def restart(cluster: Cluster) -> None:
    """Start a killed cluster again (crash recovery): it holds what it committed."""
    data = cluster.directory / "data"
    (data / "postmaster.pid").unlink(missing_ok=True)
    cluster.serve()


@contextmanager
def replicated() -> Iterator[tuple[Cluster, Cluster, str]]:
    """P, its standby S, and the search_path of the schema both hold."""
    primary = Cluster.start()
    schema = f"t_{uuid.uuid4().hex[:16]}"
    psql(primary, f"CREATE SCHEMA {schema}")
    standby = None
    try:
        standby = standby_of(primary)
        yield primary, standby, schema
    finally:
        for cluster in (primary, standby):
            if cluster is not None:
                try:
                    cluster.stop()
                except subprocess.CalledProcessError:
                    shutil.rmtree(cluster.directory, ignore_errors=True)


async def checkpoints(url: str) -> set[tuple[str, int, bytes]]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT l.origin, c.size, c.root FROM checkpoints c"
            " JOIN logs l ON l.tenant = c.tenant AND l.id = c.log_id"
        )
    finally:
        await conn.close()
    return {(origin, size, bytes(root)) for origin, size, root in rows}


class Clients:
    """Four clients posting singles and batches to alpha and beta through both processes,
    each request sent again with its Idempotency-Key until answered (as the client library
    does); every acknowledged record is kept."""

    def __init__(self, ports: tuple[int, int], token: str) -> None:
        self.ports, self.headers = ports, {"Authorization": f"Bearer {token}"}
        self.acknowledged: list[dict] = []
        self.streams = ["alpha", "beta"]
        self.stop = asyncio.Event()
        self.statuses: dict[int, int] = {}
        #: the records of the subject erased later
        self.erased: list[str] = []
        self.round = 0

    async def client(self, number: int) -> None:
        base = f"http://127.0.0.1:{self.ports[number % 2]}"
        async with httpx.AsyncClient(base_url=base, timeout=10, headers=self.headers) as http:
            n = 0
            while not self.stop.is_set():
                n += 1
                stream = self.streams[(number + n) % len(self.streams)]
                body = {
                    "stream": stream,
                    "record_type": "failover.test",
                    "occurred_at": "2026-11-28T08:00:00Z",
                    "subject_id": ERASED if n in (1, 2) else f"subject-{number}-{n % 5}",
                    "payload": {"client": number, "n": n},
                }
                key = f"r{self.round}-c{number}-{n}"
                batch = n % 4 == 0
                path, json = (
                    ("/v1/records:batch", {"records": [body, {**body, "payload": {"b": n}}]})
                    if batch
                    else ("/v1/records", body)
                )
                while not self.stop.is_set():
                    try:
                        answer = await http.post(path, json=json, headers={"Idempotency-Key": key})
                    except httpx.HTTPError:
                        await asyncio.sleep(0.2)
                        continue
                    self.statuses[answer.status_code] = self.statuses.get(answer.status_code, 0) + 1
                    if answer.status_code in (200, 201):
                        got = answer.json()
                        results = got["results"] if batch else [{"record": got}]
                        records = [r["record"] for r in results if "record" in r]
                        stored = [r for r in records if "record_id" in r]
                        self.acknowledged += stored
                        if body["subject_id"] == ERASED:
                            self.erased += [r["record_id"] for r in stored]
                        break
                    if answer.status_code == 410 and body["subject_id"] == ERASED:
                        break  # erased meanwhile: refused, nothing stored
                    if answer.status_code == 503:
                        problem = answer.json()
                        if problem["code"] == "store_rolled_back":
                            break  # a fenced stream: nothing stored, try the next record
                        assert "Retry-After" in answer.headers, problem
                        await asyncio.sleep(0.2)
                        continue
                    raise AssertionError(f"{answer.status_code}: {answer.text}")
                await asyncio.sleep(0.02)

    async def run(self, seconds: float) -> None:
        self.round += 1
        self.stop = asyncio.Event()
        tasks = [asyncio.create_task(self.client(n)) for n in range(4)]
        await asyncio.sleep(seconds)
        self.stop.set()
        await asyncio.gather(*tasks)


def service_env(url: str, journal: str | None, witnesses: str | None) -> dict[str, str]:
    """``journal`` None: the directory journal of the data directory both processes share."""
    env = {"RECORDSEAL_DATABASE_URL": url, "RECORDSEAL_SEAL_INTERVAL": "0.2"}
    if journal is not None:
        env["RECORDSEAL_JOURNAL"] = journal
    if witnesses:
        env["RECORDSEAL_WITNESSES"] = witnesses
    return env


def sealing_process(primary: Cluster, proxies: list[Proxy]) -> int:
    """Which process (0 or 1) holds the sealing role on the primary: the server session that
    holds the sealer's advisory lock, found by the proxy that opened it."""
    high, low = divmod(SEALER_LOCK, 2**32)
    for _ in range(100):
        port = psql(
            primary,
            "SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            f" WHERE l.locktype = 'advisory' AND l.classid = {high} AND l.objid = {low}"
            " AND l.granted",
        )
        for number, proxy in enumerate(proxies):
            if port and int(port) in proxy.upstream_ports:
                return number
        time.sleep(0.1)
    raise AssertionError("no process holds the sealing role")


#: (where the sealing role goes, which journal): each role with each kind of journal, the
#: two processes sharing one data directory (so one directory journal) or a journal database.
CASES = [("stays", "database"), ("moves", "directory")]
#: ``FAILOVER_CASES=all`` runs the four combinations (the repeated series of
#: docs/continuity.md); the suite runs two, each role once and each journal once.
if os.environ.get("FAILOVER_CASES") == "all":
    CASES = [(r, j) for r in ("stays", "moves") for j in ("database", "directory")]


@pytest.mark.parametrize(("role", "journal_kind"), CASES)
def test_a_failover_while_the_service_runs_keeps_one_history(
    tmp_path: Path, journal_server: Cluster, role: str, journal_kind: str
) -> None:
    journal = journal_server.url() if journal_kind == "database" else None
    data = tmp_path / "data"
    data.mkdir()
    with replicated() as (primary, standby, schema):
        proxies = [Proxy(primary.port), Proxy(primary.port)]
        urls = [
            f"postgresql://postgres@127.0.0.1:{p.port}/recordseal?search_path={schema}"
            for p in proxies
        ]
        ports = (free_port(), free_port())
        # A first start makes the keys; the witness follows the service's log families.
        first = start_service(data, ports[0], env=service_env(urls[0], journal, None))
        stop(first)
        settings = Settings(data_dir=data, database_url=urls[0])
        families = [k.signer(settings.origin).verifier().vkey for k in log_keys(data / "keys")]
        witness_dir = tmp_path / "witness"
        witness_dir.mkdir()
        from tests.servers import witness_key

        witness_vkey = witness_key(witness_dir, "witness.test")
        servers: list[subprocess.Popen[bytes]] = []
        with witness_server(witness_dir, "witness.test", {}, families=families) as witness_url:
            witnesses = (
                f'[{{"name": "witness.test", "url": "{witness_url}", "vkey": "{witness_vkey}"}}]'
            )
            try:
                for n in (0, 1):
                    env = service_env(urls[n], journal, witnesses)
                    servers.append(start_service(data, ports[n], env=env))
                token = create_token(data, "acme", urls[0])
                acknowledged = run_failover(
                    primary, standby, proxies, ports, token, role, schema, data, journal
                )
            finally:
                for server in servers:
                    kill_service(server)
                for proxy in proxies:
                    proxy.close()
            env = service_env(f"{standby.base_url}?search_path={schema}", journal, witnesses)
            verify_after_recover(data, env, token, acknowledged)


def run_failover(
    primary: Cluster,
    standby: Cluster,
    proxies: list[Proxy],
    ports: tuple[int, int],
    token: str,
    role: str,
    schema: str,
    data: Path,
    journal: str | None,
) -> list[dict]:
    """The scenario up to the checks made while the service runs; the acknowledged
    records, but the erased subject's (they are never disclosed again)."""
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=f"http://127.0.0.1:{ports[0]}", headers=auth, timeout=30) as http:
        for stream in ("alpha", "beta"):
            assert http.post("/v1/streams", json={"name": stream}).status_code == 201
    clients = Clients(ports, token)
    asyncio.run(clients.run(2.0))  # replicated
    cut_replication(primary, standby)
    clients.streams = ["alpha"]  # alpha alone, on P alone
    asyncio.run(clients.run(1.5))
    with httpx.Client(base_url=f"http://127.0.0.1:{ports[0]}", headers=auth, timeout=30) as http:
        assert http.post(f"/v1/subjects/{ERASED}/erase").status_code == 200
    gone = clients.erased
    assert gone, "the erased subject had records"
    asyncio.run(clients.run(1.0))
    leader = sealing_process(primary, proxies)
    first = leader if role == "stays" else 1 - leader

    kill_every_server_process(primary)
    for proxy in proxies:
        proxy.switch(standby.port, refusing=True)  # nothing reaches a server meanwhile
    promote(standby)
    proxies[first].admit()
    clients.streams = ["alpha", "beta"]

    async def after_switch() -> list[int]:
        """Clients post for 4 s; the other proxy admits after 2 s; meanwhile the erased
        subject's payloads are read through both processes."""
        statuses: list[int] = []

        async def read_erased() -> None:
            async with httpx.AsyncClient(headers=auth, timeout=10) as http:
                for _ in range(40):
                    for port in ports:
                        for record_id in gone[:3]:
                            url = f"http://127.0.0.1:{port}/v1/records/{record_id}/payload"
                            with suppress(httpx.HTTPError):
                                statuses.append((await http.get(url)).status_code)
                    await asyncio.sleep(0.1)

        async def admit_later() -> None:
            await asyncio.sleep(2.0)
            proxies[1 - first].admit()

        await asyncio.gather(clients.run(4.0), read_erased(), admit_later())
        return statuses

    statuses = asyncio.run(after_switch())
    assert 200 not in statuses, "an erased subject's payload was served"
    # The role is where the case put it: with the process whose proxy reached S first.
    assert sealing_process(standby, proxies) == first

    # Both processes report the same fences (journaled, adopted within a second).
    time.sleep(1.5)
    ready = [httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10) for port in ports]
    assert [r.status_code for r in ready] == [503, 503]  # alpha was lost: fenced
    assert ready[0].json()["code"] == ready[1].json()["code"] == "store_rolled_back"
    assert ready[0].json()["detail"] == ready[1].json()["detail"]

    # No (stream, seq) acknowledged with two records.
    by_seq: dict[tuple[str, int], set[str]] = {}
    for record in clients.acknowledged:
        key = (record["header"]["stream"], record["header"]["seq"])
        by_seq.setdefault(key, set()).add(record["record_id"])
    assert all(len(ids) == 1 for ids in by_seq.values()), "a seq was acknowledged twice"

    # Every checkpoint signed is stored on P (started again) or S: one root per (log, size).
    restart(primary)
    signed: dict[tuple[str, int], set[bytes]] = {}
    for cluster in (primary, standby):
        url = f"{cluster.base_url}?search_path={schema}"
        for origin, size, root in asyncio.run(checkpoints(url)):
            signed.setdefault((origin, size), set()).add(root)
    forks = {key: roots for key, roots in signed.items() if len(roots) > 1}
    assert not forks, f"two roots signed for {sorted(forks)}"
    erased = set(clients.erased)
    return [r for r in clients.acknowledged if r["record_id"] not in erased]


def verify_after_recover(
    data: Path, env: dict[str, str], token: str, acknowledged: list[dict]
) -> None:
    """``recordseal recover`` with the services stopped, then one service on S: every
    acknowledged record S still holds verifies ``VERIFIED`` (online verifier)."""
    recovered = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "recover", "--data-dir", str(data), "--json"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert recovered.returncode == 0, recovered.stderr
    url = env["RECORDSEAL_DATABASE_URL"]

    async def held() -> set[str]:
        conn = await asyncpg.connect(url)
        try:
            return {row[0] for row in await conn.fetch("SELECT record_id FROM records")}
        finally:
            await conn.close()

    stored = asyncio.run(held())
    kept = [r["record_id"] for r in acknowledged if r["record_id"] in stored]
    assert kept
    port = free_port()
    server = start_service(data, port, env=env)
    try:

        async def verdicts() -> dict[str, str]:
            base = f"http://127.0.0.1:{port}"
            found: dict[str, str] = {}
            auth = {"Authorization": f"Bearer {token}"}
            async with httpx.AsyncClient(base_url=base, timeout=120, headers=auth) as http:
                ready = await http.get("/readyz")
                assert ready.status_code == 200, ready.text
                gate = asyncio.Semaphore(4)

                async def one(record_id: str) -> None:
                    async with gate:
                        bundle = await http.post(
                            f"/v1/records/{record_id}/disclosure?wait=60", json={"fields": []}
                        )
                        assert bundle.status_code == 200, bundle.text
                        checked = await http.post("/v1/verify", json=bundle.json())
                        found[record_id] = checked.json()["verdict"]

                await asyncio.gather(*(one(record_id) for record_id in kept))
            return found

        found = asyncio.run(verdicts())
    finally:
        stop(server)
    assert {v for v in found.values()} == {"VERIFIED"}, {
        v: sum(1 for x in found.values() if x == v) for v in set(found.values())
    }


def test_store_and_journal_outages_are_answered_503_and_a_retry_stores_once(
    tmp_path: Path, postgres: Cluster, journal_server: Cluster
) -> None:
    """The store's server unreachable: ``503 store_unavailable`` with ``Retry-After`` (was a
    500), nothing stored. The journal unreachable after the store committed: ``503
    journal_unavailable``; the same request sent again with its Idempotency-Key once the
    journal answers returns the one stored record (was a 500 for a stored, signed record)."""
    store, journal = Proxy(postgres.port), Proxy(journal_server.port)
    schema_url = postgres.url()
    store_url = schema_url.replace(f":{postgres.port}/", f":{store.port}/")
    journal_url = journal_server.url().replace(f":{journal_server.port}/", f":{journal.port}/")
    port = free_port()
    server = start_service(tmp_path, port, env=service_env(store_url, journal_url, None))
    try:
        token = create_token(tmp_path, "acme", schema_url)
        auth = {"Authorization": f"Bearer {token}"}
        record = {
            "stream": "s",
            "record_type": "t",
            "occurred_at": "2026-11-28T08:00:00Z",
            "subject_id": "bob",
            "payload": {"n": 1},
        }
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=30) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            assert http.post("/v1/records", json=record).status_code == 201
            journal.switch(journal_server.port, refusing=True)
            late = http.post("/v1/records", json=record, headers={"Idempotency-Key": "k1"})
            assert late.status_code == 503, late.text
            assert late.json()["code"] == "journal_unavailable"
            assert late.headers["Retry-After"] == "1"
            journal.admit()
            again = http.post("/v1/records", json=record, headers={"Idempotency-Key": "k1"})
            assert again.status_code in (200, 201), again.text
            assert again.json()["seq"] == 2
            store.switch(postgres.port, refusing=True)
            down = http.post("/v1/records", json=record, headers={"Idempotency-Key": "k2"})
            assert down.status_code == 503, down.text
            assert down.json()["code"] == "store_unavailable"
            assert down.headers["Retry-After"] == "1"
            store.admit()
            listed = http.get("/v1/streams/s/records").json()
            seqs = [item["seq"] for item in listed["records"]]
            assert seqs == [1, 2]  # k1 stored once; k2 stored nothing

            # The client library sends again, with the same key, until the store answers.
            async def library() -> int:
                from recordseal.client import Record
                from recordseal.client.session import Client

                store.switch(postgres.port, refusing=True)
                loop = asyncio.get_running_loop()
                loop.call_later(1.5, store.admit)
                async with Client(f"http://127.0.0.1:{port}", token) as client:
                    receipt = await client.ingest(Record(**record), idempotency_key="k3")
                return receipt.seq

            assert asyncio.run(library()) == 3
            listed = http.get("/v1/streams/s/records").json()
            assert [item["seq"] for item in listed["records"]] == [1, 2, 3]
    finally:
        kill_service(server)
        store.close()
        journal.close()
