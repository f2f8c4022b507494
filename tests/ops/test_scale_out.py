"""Two service processes on one PostgreSQL database, one of them killed mid-ingest.

Both ingest into the same stream from concurrent clients; both run a sealer (one leads,
through the database's advisory lock). The leader is killed with SIGKILL; the other takes
over sealing. Afterwards: every acknowledged record is there once, the stream is dense from
1, every link and signature verifies, every leaf is sealed once, and every checkpoint is
signed by the log key over the root recomputed here from the leaves.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import httpx

from recordseal import chain
from recordseal.core import leaf_hash
from recordseal.crypto.signing import verify_header_signature
from recordseal.merkle import tree
from recordseal.merkle.genesis import tenant_genesis
from recordseal.settings import Settings
from recordseal.tlog import log_verifier, open_checkpoint
from tests.backends import query
from tests.servers import create_token, free_port, kill_service, start_service

STREAM = "shared"


def start(data_dir: Path, url: str, port: int) -> subprocess.Popen[bytes]:
    env = {"RECORDSEAL_DATABASE_URL": url, "RECORDSEAL_SEAL_INTERVAL": "0.2"}
    return start_service(data_dir, port, env=env)


async def ingest(ports: tuple[int, int], headers: dict[str, str], victim) -> list[dict]:
    """16 clients, half on each server, until the first is killed and the second has
    acknowledged 200 more; returns every acknowledged record."""
    acknowledged: list[dict] = []
    stop = asyncio.Event()

    async def client(number: int) -> None:
        port = ports[number % 2]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            i = 0
            while not stop.is_set():
                i += 1
                body = {
                    "stream": STREAM,
                    "record_type": "scale.test",
                    "occurred_at": "2026-11-21T08:00:00Z",
                    "subject_id": f"subject-{i % 7}",
                    "payload": {"client": number, "i": i},
                }
                try:
                    if i % 5 == 0:  # some batches among the single posts
                        response = await http.post(
                            "/v1/records:batch", headers=headers, json={"records": [body] * 4}
                        )
                        if response.is_success:
                            acknowledged.extend(
                                r["record"] for r in response.json()["results"] if "record" in r
                            )
                        continue
                    response = await http.post("/v1/records", headers=headers, json=body)
                except httpx.HTTPError:
                    await asyncio.sleep(0.01)
                    continue
                if response.is_success:
                    acknowledged.append(response.json())

    async def killer() -> None:
        while len(acknowledged) < 400:
            await asyncio.sleep(0.01)
        kill_service(victim)
        survivors = len(acknowledged) + 200
        while len(acknowledged) < survivors:
            await asyncio.sleep(0.01)
        stop.set()

    await asyncio.gather(killer(), *(client(n) for n in range(16)))
    return acknowledged


def test_two_processes_one_database_one_killed(tmp_path: Path, postgres):
    url = postgres.url()
    settings = Settings(data_dir=tmp_path, database_url=url)
    ports = (free_port(), free_port())
    first = start(tmp_path, url, ports[0])  # makes the keys both processes share
    second = start(tmp_path, url, ports[1])
    try:
        headers = {"Authorization": f"Bearer {create_token(tmp_path, 'acme', url)}"}
        created = httpx.post(
            f"http://127.0.0.1:{ports[0]}/v1/streams", json={"name": STREAM}, headers=headers
        )
        assert created.status_code == 201
        # The first process started first, so it leads the sealing; it is the one killed.
        acknowledged = asyncio.run(ingest(ports, headers, first))
        assert first.poll() is not None
        with httpx.Client(base_url=f"http://127.0.0.1:{ports[1]}", headers=headers) as http:
            keys = http.get("/v1/keys").json()
            # The survivor takes the sealing over and seals everything.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and unsealed(settings):
                time.sleep(0.2)
            assert unsealed(settings) == 0
            keys = http.get("/v1/keys").json()
    finally:
        kill_service(first)
        kill_service(second)

    # Every acknowledged record is stored once, unchanged.
    rows = query(settings, "SELECT record_id, header, signature, seq FROM records ORDER BY seq")
    stored = {record_id: bytes(header) for record_id, header, _, _ in rows}
    assert len(stored) == len(rows)
    ids = [record["record_id"] for record in acknowledged]
    assert len(ids) == len(set(ids)) >= 600
    for record in acknowledged:
        assert json.loads(stored[record["record_id"]]) == record["header"]
    # Dense from 1, linked, signed.
    chain.verify_links("acme", STREAM, [bytes(header) for _, header, _, _ in rows])
    public = {k["key_id"]: bytes.fromhex(k["public_key"]) for k in keys["keys"]}
    for _, header, signature, _ in rows:
        key_id = json.loads(header)["key_id"]
        assert verify_header_signature(public[key_id], bytes(header), bytes(signature))
    assert_every_checkpoint_verifies(settings, keys)


#: Records past their log's sealed size (positions are taken at insert, docs/records.md).
UNSEALED = (
    "SELECT count(*) FROM records r JOIN logs l ON l.id = r.log_id WHERE r.log_index >= l.size"
)


def unsealed(settings: Settings) -> int:
    count: int = query(settings, UNSEALED)[0][0]
    return count


def assert_every_checkpoint_verifies(settings: Settings, keys: dict) -> None:
    """Leaves at indexes 1..n once each; every checkpoint's note is signed by the log key,
    names its size, and carries the root recomputed here from genesis and the leaves."""
    leaves = query(settings, "SELECT log_index, chain_leaf FROM records ORDER BY log_index")
    assert [index for index, _ in leaves] == list(range(1, len(leaves) + 1))
    # The tenant log's checkpoints (the deployment's aggregate log has its own: the log of
    # the empty fleet, docs/tlog.md).
    checkpoints = query(
        settings,
        "SELECT c.size, c.root, c.note FROM checkpoints c JOIN logs l ON l.id = c.log_id"
        " WHERE l.fleet <> '' ORDER BY c.size",
    )
    assert checkpoints[-1][0] == len(leaves) + 1  # leaf 0 is the tenant genesis root
    tenant_logs = [log for log in keys["logs"] if log["origin"].endswith("/acme/default")]
    ed25519, mldsa = (log_verifier(log["vkey"]) for log in tenant_logs)  # dual-signed
    assert (ed25519.SIGNATURE_TYPE, mldsa.SIGNATURE_TYPE) == (0x01, 0x06)
    nodes: dict[tuple[int, int], bytes] = {}
    hashes = [leaf_hash(tenant_genesis("acme", "default"))] + [bytes(leaf) for _, leaf in leaves]
    roots = {}
    for index, digest in enumerate(hashes):
        for level, i, node in tree.nodes_completed_by_append(
            index, digest, lambda lv, ix: nodes[(lv, ix)]
        ):
            nodes[(level, i)] = node
        roots[index + 1] = tree.root(index + 1, lambda lv, ix: nodes[(lv, ix)])
    sizes = [size for size, _, _ in checkpoints]
    assert sizes == sorted(set(sizes))  # no size sealed twice
    for size, root, note in checkpoints:
        checkpoint, opened = open_checkpoint(note, [ed25519, mldsa])
        assert len(opened.verified) == 2  # both log signatures, each verified
        assert (checkpoint.size, checkpoint.root_hash) == (size, bytes(root))
        assert bytes(root) == roots[size]
