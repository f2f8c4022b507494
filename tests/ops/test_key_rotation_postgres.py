"""Every key rotates under concurrent ingest into two service processes on one PostgreSQL
database (docs/operations.md, "Keys"): the header, log and key-encryption keys move into a
hardware module (SoftHSM2, tests/hsm.py) and the panel's cookie key rotates, while clients post
to both processes. Nothing acknowledged is lost or refused, both processes sign with the new
header key, every payload still opens, the witness keeps cosigning through the log key's
rotation, and every bundle made before and after reaches VERIFIED with one export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from recordseal.crypto.hsm import ModuleUri
from recordseal.ledger.log_keys import log_keys
from recordseal.verify import (
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from tests.hsm import softhsm, unique
from tests.pg_cluster import Cluster
from tests.servers import (
    Posting,
    create_token,
    free_port,
    kill_service,
    start_service,
    wait_for,
    witness_key,
)

RECORD: dict[str, object] = {
    "stream": "s",
    "record_type": "t",
    "occurred_at": "2026-11-26T08:00:00Z",
}
ORIGIN = "recordseal.local/acme/default"


def cli(argv: list[str], env: dict[str, str]) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv, "--json"],
        capture_output=True, text=True, timeout=180, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer: dict = json.loads(done.stdout)  # type: ignore[type-arg]
    return answer


def test_every_key_rotates_under_two_processes_on_postgresql(
    tmp_path: Path, postgres: Cluster
) -> None:
    hsm = softhsm()
    data = tmp_path / "data"
    data.mkdir()
    url = postgres.url()
    env = {**os.environ, "RECORDSEAL_DATABASE_URL": url}
    # A real witness that knows the log's first key (made here, as the first start would).
    log_vkey = log_keys(data / "keys")[0].signer(ORIGIN).verifier().vkey
    witness_port = free_port()
    witness = subprocess.Popen(
        [sys.executable, "-m", "recordseal.cli", "witness", "serve", "--data-dir",
         str(tmp_path / "witness"), "--name", "w.example", "--port", str(witness_port),
         "--log", f"{ORIGIN}={log_vkey}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    servers = []
    try:
        wait_for(f"http://127.0.0.1:{witness_port}/health")
        witnesses = [{"name": "w.example", "url": f"http://127.0.0.1:{witness_port}",
                      "vkey": witness_key(tmp_path / "witness", "w.example")}]  # fmt: skip
        service_env = {
            "RECORDSEAL_DATABASE_URL": url,
            "RECORDSEAL_SEAL_INTERVAL": "0.2",
            "RECORDSEAL_WITNESSES": json.dumps(witnesses),
        }
        ports = (free_port(), free_port())
        servers = [start_service(data, port, env=service_env) for port in ports]
        token = create_token(data, "acme", url)
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        auth = {"Authorization": f"Bearer {token}"}
        assert httpx.post(bases[0] + "/v1/streams", json={"name": "s"}, headers=auth).is_success
        moved = {}
        subject = {0: lambda c, n: f"a{c}-{n % 9}", 1: lambda c, n: f"b{c}-{n % 9}"}
        with (
            Posting(bases[0], token, RECORD, subject[0], clients=2) as first,
            Posting(bases[1], token, RECORD, subject[1], clients=2) as second,
        ):
            first.wait_for(40)
            second.wait_for(40)
            keys_args = ["--data-dir", str(data), "--database-url", url]
            for purpose in ("header", "kek", "log"):
                location = ModuleUri.parse(hsm.uri(unique(purpose)))
                extra = ["--batch", "4"] if purpose == "kek" else []
                moved[purpose] = cli(
                    ["keys", "rotate", purpose, "--hsm", str(location), *keys_args, *extra], env
                )
            moved["cookie"] = cli(["keys", "rotate", "cookie", *keys_args], env)
            time.sleep(2.5)  # every process re-reads keys/ and the store within 2 s
            for posting in (first, second):
                seen = len(posting.answers)
                posting.wait_for(seen + 40)
        answers = first.answers + second.answers
        assert {a.status_code for a in answers} == {201}, {a.text for a in answers if a.is_error}
        records = [a.json() for a in answers]
        new_header = moved["header"]["new"]["key_id"]
        assert {r["key_id"] for r in records} == {moved["header"]["old"]["key_id"], new_header}
        for posting in (first, second):  # both processes switched to the new key
            assert posting.answers[-1].json()["key_id"] == new_header
        assert moved["kek"]["destroyed"] == ["kek.key"] and moved["kek"]["rewrapped"] > 0
        # Bundles of records from before and after, disclosed through both processes; the
        # newest first, so that waiting for it to be witnessed covers every earlier one.
        chosen = sorted(records[:: max(1, len(records) // 16)], key=lambda r: -r["seq"])
        bundles = []
        for number, record in enumerate(chosen):
            answer = httpx.post(
                f"{bases[number % 2]}/v1/records/{record['record_id']}/disclosure?wait=60",
                json={"fields": ["o:/n"]},
                headers=auth,
                timeout=90,
            )
            assert answer.status_code == 200, answer.text
            bundles.append(answer.content)
        exported = {"keys-out": tmp_path / "k.json", "trust-out": tmp_path / "t.json"}
        cli(["keys", "export", "--data-dir", str(data), "--database-url", url,
             *(f"--{k}={v}" for k, v in exported.items())], env)  # fmt: skip
    finally:
        for server in servers:
            kill_service(server)
        kill_service(witness)  # its whole group: witness serve forks a granian worker
    keys = load_key_directory(exported["keys-out"].read_bytes())
    trust = load_trust_store(exported["trust-out"].read_bytes())
    verdicts = [verify_bundle(bundle, keys, trust) for bundle in bundles]
    assert {v.verdict for v in verdicts} == {"VERIFIED"}, [
        v for v in verdicts if v.verdict != "VERIFIED"
    ][:1]
