"""A deployment witnessed as a whole (issue 32, item 3): a real ``recordseal serve`` whose only
witness is a real ``recordseal witness serve`` configured for the aggregate log alone
(``"logs": "aggregate"``). A record's bundle is proven through a witnessed aggregate
checkpoint and reaches VERIFIED with a trust store naming only that witness, in the command
line verifier, online (``POST /v1/verify``) and in the browser (Chromium, the modules the
service serves); the witness never sees a tenant log; the aggregate is public as tiles.
On each storage backend.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from recordseal.crypto.keyfiles import read_or_create_secret
from recordseal.tlog import MLDSA44, Checkpoint, Ed25519Signer, parse_note
from tests.pg_cluster import Cluster
from tests.servers import (
    chromium,
    create_token,
    free_port,
    kill_service,
    start_service,
    witness_key,
    witness_server,
)

SERVICE = "records.example"
WITNESS = "public.witness"


@dataclass
class Deployment:
    url: str
    headers: dict[str, str]
    witness_vkey: str
    witness_dir: Path

    def post(self, count: int) -> list[str]:
        ids = []
        for n in range(count):
            answer = httpx.post(
                f"{self.url}/v1/records",
                headers=self.headers,
                json={
                    "stream": "orders",
                    "record_type": "order.placed",
                    "occurred_at": "2026-11-21T08:00:00Z",
                    "subject_id": f"customer-{n}",
                    "payload": {"amount": 100 + n, "currency": "EUR"},
                },
                timeout=30,
            )
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["record_id"])
        return ids

    def trust(self, checkpoint_signatures: list[str] | None = None) -> dict[str, Any]:
        """A trust store naming the aggregate's witness alone (and the log signatures it
        requires, when given)."""
        document: dict[str, Any] = {
            "format": "recordseal/trust/v1",
            "witnesses": [{"name": WITNESS, "vkey": self.witness_vkey}],
            "quorum": 1,
        }
        if checkpoint_signatures is not None:
            document["checkpoint_signatures"] = checkpoint_signatures
        return document


@pytest.fixture(params=["sqlite", "postgres"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    data = tmp_path / "service"
    # The service's log key, made before it starts so the witness can be configured with the
    # aggregate's vkey: the log key under the service's origin (docs/tlog.md).
    seed = read_or_create_secret(data / "keys" / "log-signing.ed25519")
    aggregate_vkey = Ed25519Signer.from_seed(SERVICE, seed).verifier().vkey
    witness_dir = tmp_path / "witness"
    vkey = witness_key(witness_dir, WITNESS)
    with witness_server(witness_dir, WITNESS, {SERVICE: aggregate_vkey}) as witness_url:
        witnesses = [{"name": WITNESS, "url": witness_url, "vkey": vkey, "logs": "aggregate"}]
        env = {
            "RECORDSEAL_ORIGIN": SERVICE,
            "RECORDSEAL_SEAL_INTERVAL": "0.2",
            "RECORDSEAL_WITNESSES": json.dumps(witnesses),
        }
        database_url = None
        if request.param == "postgres":
            cluster: Cluster = request.getfixturevalue("postgres")
            database_url = cluster.url()
            env["RECORDSEAL_DATABASE_URL"] = database_url
        port = free_port()
        server = start_service(data, port, env=env)
        try:
            token = create_token(data, "acme", database_url)
            url = f"http://127.0.0.1:{port}"
            headers = {"Authorization": f"Bearer {token}"}
            httpx.post(f"{url}/v1/streams", json={"name": "orders"}, headers=headers)
            yield Deployment(url, headers, vkey, witness_dir)
        finally:
            kill_service(server)


def verify_cli(folder: Path, bundle: bytes, keys: bytes, trust: dict[str, Any]) -> Any:
    (folder / "bundle.json").write_bytes(bundle)
    (folder / "keys.json").write_bytes(keys)
    (folder / "trust.json").write_text(json.dumps(trust))
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "verify", str(folder / "bundle.json"),
         "--keys", str(folder / "keys.json"), "--trust", str(folder / "trust.json"), "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def verify_in_browser(url: str, bundle: bytes, keys: bytes, trust: dict[str, Any]) -> Any:
    """The browser verifier's modules, as the service serves them, in Chromium."""
    script = """async ({bundle, keys, trust}) => {
        const documents = await import('/static/verify/documents.js');
        const checks = await import('/static/verify/checks.js');
        const keyring = await documents.loadKeyDirectory(keys);
        const policy = await documents.loadTrustStore(trust);
        return await checks.verifyBundle(bundle, keyring, policy);
    }"""
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{url}/verify-record")
        argument = {"bundle": bundle.decode(), "keys": keys.decode(), "trust": json.dumps(trust)}
        return page.evaluate(script, argument)


def test_a_bundle_proven_through_the_aggregate_is_verified_by_its_witness_alone(
    deployment: Deployment, tmp_path: Path
) -> None:
    (record_id,) = deployment.post(1)
    answer = httpx.post(
        f"{deployment.url}/v1/records/{record_id}/disclosure?wait=60",
        headers=deployment.headers,
        json={"fields": ["o:/amount"]},
        timeout=90,
    )
    assert answer.status_code == 200, answer.text
    bundle = answer.content
    seal = answer.json()["seal"]
    assert "aggregate" in seal, "the disclosure did not wait for the witnessed aggregate"
    # The witness cosigned the aggregate checkpoint, never the tenant log's; both are
    # dual-signed by the log keys (Ed25519 and ML-DSA-44), each under its own origin.
    tenant_note = parse_note(seal["proof"].split("\n\n", 1)[1])
    assert [s.name for s in tenant_note.signatures] == [f"{SERVICE}/acme/default"] * 2
    aggregate_note = parse_note(seal["aggregate"]["proof"].split("\n\n", 1)[1])
    assert sorted(s.name for s in aggregate_note.signatures) == sorted([SERVICE, SERVICE, WITNESS])
    states = list((deployment.witness_dir / "state").glob("*.json"))
    assert [json.loads(p.read_text())["origin"] for p in states] == [SERVICE]

    keys = httpx.get(f"{deployment.url}/v1/keys").content
    assert SERVICE in {log["origin"] for log in json.loads(keys)["logs"]}
    trust = deployment.trust()
    code, result = verify_cli(tmp_path, bundle, keys, trust)
    assert (code, result["verdict"]) == (0, "VERIFIED"), result["checks"]
    assert WITNESS in result["checks"][4]["detail"] and SERVICE in result["checks"][4]["detail"]
    assert result["time_bracket"]["not_after_by"] == WITNESS
    online = httpx.post(
        f"{deployment.url}/v1/verify", content=bundle, headers={"Content-Type": "application/json"}
    ).json()
    assert online["verdict"] == "VERIFIED", online["checks"]
    browser = verify_in_browser(deployment.url, bundle, keys, trust)
    assert browser["verdict"] == "VERIFIED", browser["checks"]
    assert [c["status"] for c in browser["checks"]] == [c["status"] for c in result["checks"]]
    assert browser["time_bracket"] == result["time_bracket"]

    # Without the aggregate's key in the directory its witness counts for nothing.
    without = json.loads(keys)
    without["logs"] = [log for log in without["logs"] if log["origin"] != SERVICE]
    code, result = verify_cli(tmp_path, bundle, json.dumps(without).encode(), trust)
    assert (code, result["verdict"]) == (2, "VERIFICATION INCOMPLETE")

    # A trust store requiring both log-signature algorithms: the aggregate checkpoint is
    # dual-signed like the tenant log's (rules 4.9 and 5.14), in every verifier.
    both = deployment.trust(["Ed25519", "ML-DSA-44"])
    aggregate_keys = [log for log in json.loads(keys)["logs"] if log["origin"] == SERVICE]
    assert sorted(log["vkey"].split("+")[0] for log in aggregate_keys) == [SERVICE] * 2
    code, result = verify_cli(tmp_path, bundle, keys, both)
    assert (code, result["verdict"]) == (0, "VERIFIED"), result["checks"]
    assert "signed with Ed25519 and ML-DSA-44" in result["checks"][3]["detail"]
    assert f"through the aggregate log {SERVICE}" in result["checks"][4]["detail"]
    browser = verify_in_browser(deployment.url, bundle, keys, both)
    assert browser["verdict"] == "VERIFIED", browser["checks"]
    # A directory without the aggregate's ML-DSA-44 key cannot show it signed as required:
    # its witness is not counted (rule 5.14), though the tenant log's keys are all there.
    mldsa = next(log["vkey"] for log in aggregate_keys if _algorithm(log["vkey"]) == MLDSA44)
    partial = json.loads(keys)
    partial["logs"] = [log for log in partial["logs"] if log["vkey"] != mldsa]
    code, result = verify_cli(tmp_path, bundle, json.dumps(partial).encode(), both)
    assert (code, result["verdict"]) == (2, "VERIFICATION INCOMPLETE"), result["checks"]
    assert result["checks"][3]["status"] == "passed"
    assert "not signed as the trust store requires" in result["checks"][4]["detail"]
    browser = verify_in_browser(deployment.url, bundle, json.dumps(partial).encode(), both)
    assert [c["status"] for c in browser["checks"]] == [c["status"] for c in result["checks"]]


def _algorithm(vkey: str) -> int:
    """The signature type of a vkey (its key material's first byte)."""
    return base64.b64decode(vkey.split("+", 2)[2])[0]


def test_the_aggregate_is_public_as_tiles(deployment: Deployment) -> None:
    deployment.post(3)
    prefix = f"{deployment.url}/logs/{SERVICE}"
    deadline = time.monotonic() + 60
    while True:  # until the witness has cosigned an aggregate checkpoint
        answer = httpx.get(f"{prefix}/checkpoint")  # no token
        if answer.status_code == 200 and f"\u2014 {WITNESS} " in answer.text:
            break
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.1)
    assert answer.headers["cache-control"] == "public, max-age=1"
    size = Checkpoint.parse(parse_note(answer.text).text).size
    assert size >= 1
    entries = httpx.get(f"{prefix}/tile/entries/000.p/{size}")
    assert entries.status_code == 200
    assert entries.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert b"acme" not in entries.content
    # A tenant log stays the tenant's.
    assert httpx.get(f"{prefix}/acme/default/checkpoint").status_code == 401
