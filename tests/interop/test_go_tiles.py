"""Go's reference implementation reads a running service's logs as c2sp.org/tlog-tiles (issue 32,
item 4): ``golang.org/x/mod/sumdb/note`` opens the served checkpoint, ``sumdb/tlog``'s
``TileHashReader`` authenticates the served hash tiles against it and proves every record's
chain leaf (``ProveRecord``, ``CheckRecord``) and the consistency with an earlier checkpoint
(``ProveTree``, ``CheckTree``); the entry bundles hash to the tiles' leaves. A tile changed by
one bit makes every proof fail. The deployment's aggregate log is read the same way, with no
token. A real ``recordseal serve`` on each storage backend.

The Go program (``tilecheck/main.go``) is built offline like ``sumdbcheck`` (``golang.py``).
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from recordseal.core import leaf_hash
from recordseal.merkle.aggregate import aggregate_entry
from recordseal.merkle.genesis import tenant_genesis
from recordseal.tlog import Checkpoint, Ed25519Signer, Ed25519Verifier, log_verifier, parse_note
from recordseal.tlog.tiles import Tile, parse_entry_bundle
from tests.interop.golang import build_go
from tests.pg_cluster import Cluster
from tests.servers import create_token, free_port, kill_service, start_service

SOURCE = Path(__file__).parent / "tilecheck" / "main.go"
SERVICE = "interop.recordseal"
ORIGIN = f"{SERVICE}/acme/default"


@pytest.fixture(scope="module")
def tilecheck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_go(SOURCE, tmp_path_factory.mktemp("go"))


@dataclass
class Service:
    url: str
    acme: dict[str, str]
    globex: dict[str, str]

    @property
    def prefix(self) -> str:
        return f"{self.url}/logs/{ORIGIN}"

    def checkpoint(self) -> str:
        answer = httpx.get(f"{self.prefix}/checkpoint", headers=self.acme)
        answer.raise_for_status()
        return answer.text

    def wait_for_size(self, size: int) -> str:
        """The signed checkpoint once the log has ``size`` entries (sealed every 200 ms). Until
        the first seal the log has no checkpoint and its route answers 404 log_not_found."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            answer = httpx.get(f"{self.prefix}/checkpoint", headers=self.acme)
            if answer.status_code == 404 and answer.json()["code"] == "log_not_found":
                time.sleep(0.1)
                continue
            answer.raise_for_status()
            if Checkpoint.parse(parse_note(answer.text).text).size == size:
                return answer.text
            time.sleep(0.1)
        raise AssertionError(f"the log did not reach size {size}")

    def post(self, count: int) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        while len(records) < count:
            body = {
                "records": [
                    {
                        "stream": "orders",
                        "record_type": "order.placed",
                        "occurred_at": "2026-11-21T08:00:00Z",
                        "subject_id": f"customer-{n % 7}",
                        "payload": {"amount": n},
                    }
                    for n in range(len(records), min(count, len(records) + 100))
                ]
            }
            answer = httpx.post(
                f"{self.url}/v1/records:batch", json=body, headers=self.acme, timeout=60
            )
            answer.raise_for_status()
            records += [item["record"] for item in answer.json()["results"]]
        return records

    def vkey(self, origin: str = ORIGIN) -> str:
        """The log's Ed25519 vkey (Go's note package knows that type; the checkpoints'
        ML-DSA-44 line is a signature by an unknown key to it, which note.Open ignores)."""
        logs = httpx.get(f"{self.url}/v1/keys").json()["logs"]
        (vkey,) = [
            entry["vkey"]
            for entry in logs
            if entry["origin"] == origin
            and log_verifier(entry["vkey"]).SIGNATURE_TYPE == Ed25519Verifier.SIGNATURE_TYPE
        ]
        return str(vkey)

    def aggregate_entries(self) -> list[bytes]:
        """Every entry of the aggregate log, read as anyone reads it (no token)."""
        answer = httpx.get(f"{self.url}/logs/{SERVICE}/checkpoint")
        if answer.status_code != 200:
            return []
        size = Checkpoint.parse(parse_note(answer.text).text).size
        entries: list[bytes] = []
        for start in range(0, size, 256):
            bundle = Tile(None, start // 256, min(256, size - start))
            read = httpx.get(f"{self.url}/logs/{SERVICE}/{bundle.path()}")
            read.raise_for_status()
            entries += parse_entry_bundle(read.content)
        return entries


@pytest.fixture(params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    env = {"RECORDSEAL_ORIGIN": SERVICE, "RECORDSEAL_SEAL_INTERVAL": "0.2"}
    database_url = None
    if request.param == "postgres":
        cluster: Cluster = request.getfixturevalue("postgres")
        database_url = cluster.url()
        env["RECORDSEAL_DATABASE_URL"] = database_url
    port = free_port()
    server = start_service(tmp_path, port, env=env)
    try:
        tokens = {t: create_token(tmp_path, t, database_url) for t in ("acme", "globex")}
        url = f"http://127.0.0.1:{port}"
        acme, globex = ({"Authorization": f"Bearer {tokens[t]}"} for t in ("acme", "globex"))
        for headers in (acme, globex):
            httpx.post(f"{url}/v1/streams", json={"name": "orders"}, headers=headers)
        yield Service(url, acme, globex)
    finally:
        kill_service(server)


def run_go(binary: Path, request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [str(binary)], input=json.dumps(request), capture_output=True, text=True, check=True
    )
    return {item["name"]: item for item in map(json.loads, done.stdout.splitlines())}


def test_go_proves_every_record_from_the_served_tiles(tilecheck: Path, service: Service) -> None:
    records = service.post(300)
    old = service.wait_for_size(301)
    records += service.post(300)
    service.wait_for_size(601)  # leaf 0 and 600 records: partial tiles at levels 0 and 1
    leaves = [record["chain_leaf"] for record in records]
    request = {
        "prefix": service.prefix,
        "authorization": service.acme["Authorization"],
        "vkey": service.vkey(),
        "leaves": leaves,
        "old": old,
    }
    outcomes = run_go(tilecheck, request)
    failed = {name: o["error"] for name, o in outcomes.items() if not o["ok"]}
    assert failed == {}
    assert set(outcomes) == {"checkpoint", "entries", "consistency", *(f"leaf {x}" for x in leaves)}
    # The entries Go read are leaf 0's preimage and the records' signed headers, in order.
    entries = [base64.b64decode(e, validate=True) for e in outcomes["entries"]["entries"]]
    assert entries[0] == tenant_genesis("acme", "default")
    assert [leaf_hash(e).hex() for e in entries[1:]] == leaves
    assert [json.loads(e) for e in entries[1:]] == [record["header"] for record in records]

    # One bit of each tile flipped: Go's tile reader refuses them, no proof passes.
    tampered = run_go(tilecheck, {**request, "tamper": True})
    assert tampered["checkpoint"]["ok"]
    assert not any(o["ok"] for name, o in tampered.items() if name != "checkpoint")
    # Another key does not open the checkpoint.
    stranger = Ed25519Signer.generate(ORIGIN).verifier().vkey
    assert not run_go(tilecheck, {**request, "vkey": stranger})["checkpoint"]["ok"]
    # Another tenant's token reads nothing of the log.
    for name in ("checkpoint", "tile/0/000", "tile/entries/000"):
        answer = httpx.get(f"{service.prefix}/{name}", headers=service.globex)
        assert (answer.status_code, answer.json()["code"]) == (403, "forbidden_tenant")
    # The aggregate log, public: once it took the newest checkpoint, Go proves that
    # checkpoint's entry in it and reads its entries (hashes: no tenant name).
    newest = Checkpoint.parse(parse_note(service.checkpoint()).text)
    entry = aggregate_entry(ORIGIN, newest.size, newest.root_hash)
    deadline = time.monotonic() + 60
    while entry not in (entries := service.aggregate_entries()):
        assert time.monotonic() < deadline, "the aggregate did not take the checkpoint"
        time.sleep(0.2)
    aggregate = run_go(
        tilecheck,
        {
            "prefix": f"{service.url}/logs/{SERVICE}",
            "authorization": "",
            "vkey": service.vkey(SERVICE),
            "leaves": [leaf_hash(entry).hex()],
        },
    )
    assert {name: o["ok"] for name, o in aggregate.items()} == {
        "checkpoint": True,
        f"leaf {leaf_hash(entry).hex()}": True,
        "entries": True,
    }, aggregate
    served = [base64.b64decode(e) for e in aggregate["entries"]["entries"]]
    assert served[: len(entries)] == entries and all(len(e) == 32 for e in served)
    denied = run_go(tilecheck, {**request, "authorization": service.globex["Authorization"]})
    assert denied["checkpoint"] == {
        "name": "checkpoint",
        "ok": False,
        "error": "GET checkpoint: 403 Forbidden",
    }
