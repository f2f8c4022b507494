"""Acknowledged records survive a crash: a real server is killed with SIGKILL mid-ingest; the
continuity journal holds every answered head and fences nothing after the restart."""

from __future__ import annotations

import asyncio
import json
import sqlite3
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
from recordseal.storage.journal import DirectoryJournal
from recordseal.storage.sqlite import SQLiteStore
from tests.servers import create_token, free_port, kill_service, start_service

STREAMS = ("alpha", "beta")


async def ingest_until_killed(port: int, token: str, server: subprocess.Popen[bytes]):
    acknowledged: list[dict] = []
    stop = asyncio.Event()
    headers = {"Authorization": f"Bearer {token}"}

    async def client(number: int) -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
            i = 0
            while not stop.is_set():
                i += 1
                try:
                    response = await http.post(
                        "/v1/records",
                        headers=headers,
                        json={
                            "stream": STREAMS[i % 2],
                            "record_type": "crash.test",
                            "occurred_at": "2026-11-21T08:00:00Z",
                            "subject_id": f"subject-{number}-{i % 3}",
                            "payload": {"client": number, "i": i, "pad": "x" * 200},
                        },
                    )
                except httpx.HTTPError:
                    continue
                if response.is_success:
                    acknowledged.append(response.json())

    async def killer() -> None:
        while len(acknowledged) < 300:
            await asyncio.sleep(0.01)
        kill_service(server)
        await asyncio.sleep(0.3)
        stop.set()

    await asyncio.gather(killer(), *(client(n) for n in range(16)))
    return acknowledged


def test_sigkill_loses_no_acknowledged_record(tmp_path: Path):
    port = free_port()
    server = start_service(tmp_path, port, workers=2)
    try:
        token = create_token(tmp_path, "acme")
        headers = {"Authorization": f"Bearer {token}"}
        for name in STREAMS:
            created = httpx.post(
                f"http://127.0.0.1:{port}/v1/streams", json={"name": name}, headers=headers
            )
            assert created.status_code == 201
        acknowledged = asyncio.run(ingest_until_killed(port, token, server))
    finally:
        kill_service(server)
    assert len(acknowledged) >= 300

    # The continuity journal lost nothing acknowledged: its head of each stream is at least
    # every seq answered (docs/continuity.md: journaled before the answer).
    journal = DirectoryJournal(Settings(data_dir=tmp_path).journal_dir).read_now()
    for name in STREAMS:
        answered = max(r["seq"] for r in acknowledged if r["stream"] == name)
        assert journal.heads[("acme", name)].seq >= answered

    server = start_service(tmp_path, port, workers=2)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as http:
            # ... and a crash fences nothing: the journal never claims more than was committed.
            assert http.get("/readyz").status_code == 200
            for record in acknowledged:
                view = http.get(f"/v1/records/{record['record_id']}")
                assert view.status_code == 200
                assert view.json()["header"] == record["header"]
            keys = {
                k["key_id"]: bytes.fromhex(k["public_key"])
                for k in http.get("/v1/keys").json()["keys"]
            }
        # The restarted leader seals whatever the killed one had not (or had half) sealed.
        deadline = time.monotonic() + 30
        while unsealed(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert unsealed(tmp_path) == 0
    finally:
        kill_service(server)

    store = SQLiteStore(Settings(data_dir=tmp_path).database_path)

    async def rows():
        await store.open()
        try:
            return {name: await store.records.stream_records("acme", name) for name in STREAMS}
        finally:
            await store.close()

    log = (tmp_path / f"server-{port}.log").read_text()
    assert "continuity.stream_fenced" not in log and "continuity.log_fenced" not in log
    for name, records in asyncio.run(rows()).items():
        # The journal's head of the stream is one the store holds, with its chain leaf.
        head = journal.heads[("acme", name)]
        assert records[head.seq - 1].chain_leaf == head.leaf
        headers_ = [row.header for row in records]
        chain.verify_links("acme", name, headers_)  # dense from 1, every link verifies
        for row in records:
            key_id = json.loads(row.header)["key_id"]
            assert verify_header_signature(keys[key_id], row.header, row.signature)
    acked_per_stream = {name: sum(r["stream"] == name for r in acknowledged) for name in STREAMS}
    stored = asyncio.run(rows())
    for name in STREAMS:
        assert len(stored[name]) >= acked_per_stream[name]

    assert_log_is_whole(tmp_path)


#: Records past their log's sealed size (positions are taken at insert, docs/records.md).
UNSEALED = (
    "SELECT count(*) FROM records r JOIN logs l ON l.id = r.log_id WHERE r.log_index >= l.size"
)


def unsealed(data_dir: Path) -> int:
    with sqlite3.connect(Settings(data_dir=data_dir).database_path) as conn:
        return conn.execute(UNSEALED).fetchone()[0]


def assert_log_is_whole(data_dir: Path) -> None:
    """Every record sealed exactly once, at indexes 1..n with no gap, under the last
    checkpoint, whose root is recomputed here from scratch."""
    with sqlite3.connect(Settings(data_dir=data_dir).database_path) as conn:
        leaves = conn.execute(
            "SELECT log_index, chain_leaf FROM records ORDER BY log_index"
        ).fetchall()
        size, root, note = conn.execute(
            "SELECT size, root, note FROM checkpoints ORDER BY size DESC LIMIT 1"
        ).fetchone()
    assert [index for index, _ in leaves] == list(range(1, len(leaves) + 1))
    assert size == len(leaves) + 1  # leaf 0 is the tenant genesis root
    nodes: dict[tuple[int, int], bytes] = {}
    hashes = [leaf_hash(tenant_genesis("acme", "default"))] + [leaf for _, leaf in leaves]
    for index, digest in enumerate(hashes):
        for level, i, node in tree.nodes_completed_by_append(
            index, digest, lambda lv, ix: nodes[(lv, ix)]
        ):
            nodes[(level, i)] = node
    assert tree.root(size, lambda lv, ix: nodes[(lv, ix)]) == root
    assert f"\n{size}\n" in note
