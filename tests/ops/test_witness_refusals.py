"""A witness that answers and refuses a log's checkpoints is named in ``serve``'s log
(``voucher.refusing``, ERROR) and in every worker's ``GET /readyz`` ``detail`` (still 200: the
service serves), with real processes: a two-worker service and a real witness that does not
witness the service's origin (404 ``unknown_origin`` on every checkpoint)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

from recordseal.tlog import Ed25519Signer
from tests.servers import create_token, free_port, kill_service, start_service, wait_for

DETAIL = (
    "witness 'refusing' refuses the checkpoints of 1 logs: their bundles stay VERIFICATION"
    " INCOMPLETE until it accepts them"
)


def test_a_witness_that_refuses_every_checkpoint_is_named_in_the_log_and_in_readyz(
    tmp_path: Path,
) -> None:
    other_log = Ed25519Signer.generate("elsewhere.example/log").verifier().vkey
    witness_port = free_port()
    witness = subprocess.Popen(
        [sys.executable, "-m", "recordseal.cli", "witness", "serve", "--data-dir",
         str(tmp_path / "witness"), "--name", "w.example", "--port", str(witness_port),
         "--log", f"elsewhere.example/log={other_log}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    server = None
    try:
        wait_for(f"http://127.0.0.1:{witness_port}/health")
        vkey = httpx.get(f"http://127.0.0.1:{witness_port}/health").json()["witness"]
        witnesses = [{"name": "refusing", "url": f"http://127.0.0.1:{witness_port}", "vkey": vkey}]
        server = start_service(
            data, port, workers=2, env={"RECORDSEAL_WITNESSES": json.dumps(witnesses)}
        )
        url = f"http://127.0.0.1:{port}"
        ready = httpx.get(f"{url}/readyz").json()
        assert "detail" not in ready, ready  # no log yet: nothing offered, nothing refused
        token = create_token(data, "acme")
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as client:
            assert client.post("/v1/streams", json={"name": "orders"}).status_code == 201
            record = {"stream": "orders", "record_type": "order.placed", "subject_id": "c-1",
                      "occurred_at": "2026-11-21T08:00:00Z", "payload": {"amount": 1}}  # fmt: skip
            assert client.post("/v1/records", json=record).status_code == 201
        # The event: the sealing leader records the refusal (bounded, never a guess of speed).
        deadline = time.monotonic() + 60
        while "detail" not in httpx.get(f"{url}/readyz").json():
            assert time.monotonic() < deadline, "no worker ever said the witness refuses"
            time.sleep(0.2)
        for _ in range(12):  # every worker says it, not only the leader
            answer = httpx.get(f"{url}/readyz")
            assert answer.status_code == 200
            body = answer.json()
            assert body["status"] == "ready" and body["checks"] == {"keys": "ok", "store": "ok"}
            assert body["detail"].startswith(DETAIL), body
            assert "acme" not in body["detail"]  # a public endpoint names no tenant
        log = (data / f"server-{port}.log").read_text()
        (line,) = [line for line in log.splitlines() if "voucher.refusing" in line]
        assert " ERROR " in line and "voucher=refusing" in line, line
        assert "origin=recordseal.local/acme/default" in line and "code=witness_refused" in line
        assert "unknown_origin" in line, line  # the witness's own answer
    finally:
        if server is not None:
            kill_service(server)
        kill_service(witness)
