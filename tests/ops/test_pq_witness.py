"""Post-quantum end to end, with real processes (issue 32): ``recordseal serve`` signs every
checkpoint with its Ed25519 and ML-DSA-44 log keys, a ``recordseal witness serve --algorithm
ml-dsa-44`` that knows only the service's ML-DSA-44 key cosigns them, and the bundles reach
VERIFIED in ``recordseal verify`` and ``POST /v1/verify`` with a trust store naming that
witness alone, whatever log signatures the trust store requires."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import httpx

from recordseal.ledger.log_keys import ML_DSA_44, log_keys
from tests.servers import (
    create_token,
    free_port,
    kill_service,
    start_service,
    witness_key,
    witness_server,
)

SERVICE = "recordseal.local"
WITNESS = "pq-witness.example"
RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T07:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 1500},
}


def _verify(bundle: Path, keys: Path, trust: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "verify", str(bundle), "--keys", str(keys),
         "--trust", str(trust), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_an_ml_dsa_44_witness_alone_brings_bundles_to_verified(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    token = create_token(data, "acme")
    # The service's log keys, as its first start makes them: the witness is given only the
    # ML-DSA-44 one, as the family of every log of the service.
    mldsa = next(key for key in log_keys(data / "keys") if key.algorithm == ML_DSA_44)
    family = mldsa.signer(SERVICE).verifier().vkey
    witness_dir = tmp_path / "witness"
    vkey = witness_key(witness_dir, WITNESS, "ml-dsa-44")
    port = free_port()
    with witness_server(witness_dir, WITNESS, {}, algorithm="ml-dsa-44", families=[family]) as url:
        witnesses = [{"name": "pq witness", "url": url, "vkey": vkey}]
        env = {"RECORDSEAL_WITNESSES": json.dumps(witnesses), "RECORDSEAL_SEAL_INTERVAL": "0.2"}
        server = start_service(data, port, env=env)
        try:
            auth = {"Authorization": f"Bearer {token}"}
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, headers=auth, timeout=60) as http:
                assert http.post("/v1/streams", json={"name": "orders"}).status_code == 201
                record = http.post("/v1/records", json=RECORD).json()
                answer = http.post(
                    f"/v1/records/{record['record_id']}/disclosure?wait=30",
                    json={"fields": ["o:/amount"]},
                )
                assert answer.status_code == 200, answer.text
                bundle = answer.content
                online = http.post(
                    "/v1/verify", content=bundle, headers={"Content-Type": "application/json"}
                ).json()
                directory = http.get("/v1/keys").content
                published_trust = http.get("/v1/trust").json()
        finally:
            kill_service(server)
    assert online["verdict"] == "VERIFIED", online["checks"]
    assert "ML-DSA-44" in online["checks"][3]["detail"]
    proof = json.loads(bundle)["seal"]["proof"]
    log_lines = [line for line in proof.splitlines() if line.startswith(f"— {SERVICE}/acme/")]
    witness_lines = [line for line in proof.splitlines() if line.startswith(f"— {WITNESS} ")]
    assert len(log_lines) == 2  # Ed25519 and ML-DSA-44
    assert len(witness_lines) == 1
    raw = base64.b64decode(witness_lines[0].rsplit(" ", 1)[1])
    assert len(raw) == 4 + 8 + 2420 and int.from_bytes(raw[4:12], "big") > 0
    assert published_trust["witnesses"] == [{"name": "pq witness", "vkey": vkey}]
    assert "checkpoint_signatures" not in published_trust  # the default: Ed25519

    (tmp_path / "bundle.json").write_bytes(bundle)
    (tmp_path / "keys.json").write_bytes(directory)
    # The tenant's log and the deployment's aggregate log, each with its two keys.
    listed = sorted(k["origin"] for k in json.loads(directory)["logs"])
    assert listed == sorted([f"{SERVICE}/acme/default", SERVICE] * 2), listed
    for required in (["Ed25519"], ["ML-DSA-44"], ["Ed25519", "ML-DSA-44"]):
        trust = {
            "format": "recordseal/trust/v1",
            "witnesses": [{"name": "pq witness", "vkey": vkey}],
            "quorum": 1,
            "checkpoint_signatures": required,
        }
        (tmp_path / "trust.json").write_text(json.dumps(trust))
        done = _verify(tmp_path / "bundle.json", tmp_path / "keys.json", tmp_path / "trust.json")
        result = json.loads(done.stdout)
        assert (done.returncode, result["verdict"]) == (0, "VERIFIED"), (required, result)
