"""``GET /metrics`` and ``/readyz`` of a real ``recordseal serve --workers 2``: every counter is
the sum over both workers (prometheus_client's multiprocess mode), and each family the issue
names is there: ingested and refused records by code, request latency, seal lag, witness and
TSA failures, panel denials with 403 and 404 apart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from recordseal.panel.cookies import COOKIE_NAME, CookieKeyring, SigningKey
from recordseal.panel.sessions import TenantSession
from recordseal.tlog import Ed25519Signer
from tests.servers import create_token, free_port, kill_service, start_service, wait_for
from tests.tlog.tsa_support import make_authority

RECORD = {
    "stream": "orders",
    "record_type": "order.placed",
    "occurred_at": "2026-11-21T08:00:00Z",
    "subject_id": "customer-1",
    "payload": {"amount": 1},
}
SEED = {
    "tenants": [
        {"id": "acme", "display_name": "Acme", "active": True},
        {"id": "globex", "display_name": "Globex", "active": True},
    ],
    "organizations": [{"id": "eng", "tenant_id": "acme", "display_name": "Engineering"}],
    "fleets": [],
}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page, keyed by name and sorted labels."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(
    page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return page.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    root = tmp_path_factory.mktemp("metrics")
    seed = root / "seed.json"
    seed.write_text(json.dumps(SEED))
    # A witness that knows none of the service's logs: it refuses every checkpoint (404).
    other_log = Ed25519Signer.generate("elsewhere.example/log").verifier().vkey
    witness_port = free_port()
    witness = subprocess.Popen(
        [sys.executable, "-m", "recordseal.cli", "witness", "serve", "--data-dir",
         str(root / "witness"), "--name", "w.example", "--port", str(witness_port),
         "--log", f"elsewhere.example/log={other_log}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    wait_for(f"http://127.0.0.1:{witness_port}/health")
    witness_vkey = httpx.get(f"http://127.0.0.1:{witness_port}/health").json()["witness"]
    authority = make_authority(root / "tsa")
    metrics_dir = root / "metric-files"
    env = {
        "RECORDSEAL_PANEL_TENANT_SEED": str(seed),
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        "RECORDSEAL_WITNESSES": json.dumps(
            [{"name": "refusing", "url": f"http://127.0.0.1:{witness_port}", "vkey": witness_vkey}]
        ),
        "RECORDSEAL_TIMESTAMP_AUTHORITIES": json.dumps(
            [
                {
                    "name": "nobody-home",
                    "url": f"http://127.0.0.1:{free_port()}/tsa",
                    "roots_pem": (authority.directory / "ca.pem").read_text(),
                }
            ]
        ),
    }
    data = root / "data"
    data.mkdir()
    port = free_port()
    server = start_service(data, port, workers=2, env=env)
    try:
        yield f"http://127.0.0.1:{port}", data, metrics_dir
    finally:
        kill_service(server)
        kill_service(witness)  # the witness's whole process group: granian and its worker


def worker_pids(metrics_dir: Path) -> set[str]:
    return {
        m.group(1)
        for p in metrics_dir.glob("histogram_*.db")
        if (m := re.search(r"_(\d+)\.db$", p.name))
    }


def test_counters_are_the_sum_over_both_workers(service: tuple[str, Path, Path]) -> None:
    url, data, metrics_dir = service
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
        assert client.post("/v1/streams", json={"name": "orders"}).status_code == 201

    def ingest(i: int) -> int:
        with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
            body = {**RECORD, "subject_id": f"customer-{i}"}
            return client.post("/v1/records", json=body).status_code

    sent = 0
    with ThreadPoolExecutor(8) as pool:
        # Until both workers have answered ingest requests (bounded), in rounds of 24.
        while sent < 480 and (sent < 24 or len(worker_pids(metrics_dir)) < 2):
            assert set(pool.map(ingest, range(sent, sent + 24))) == {201}
            sent += 24
    assert len(worker_pids(metrics_dir)) >= 2, "one worker answered every request"
    with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
        batch = [dict(RECORD, subject_id=f"b-{i}") for i in range(10)]
        batch += [dict(RECORD, stream="nope")] * 2
        answer = client.post("/v1/records:batch", json={"records": batch})
        assert answer.json()["accepted"] == 10
        for _ in range(3):
            assert client.post("/v1/records", json={**RECORD, "stream": "nope"}).status_code == 404
        assert (
            client.post(
                "/v1/records", json=RECORD, headers={"Authorization": "Bearer rs_x"}
            ).status_code
            == 401
        )
        replay = {"Idempotency-Key": "once"}
        assert client.post("/v1/records", json=RECORD, headers=replay).status_code == 201
        assert client.post("/v1/records", json=RECORD, headers=replay).json()["replayed"] is True
        text = client.get("/metrics").text
        page = samples(text)
    assert "acme" not in text  # no label names a tenant: /metrics is public
    assert value(page, "recordseal_records_ingested_total") == sent + 10 + 1
    assert value(page, "recordseal_records_replayed_total") == 1
    assert value(page, "recordseal_records_refused_total", code="stream_not_found") == 2 + 3
    assert value(page, "recordseal_records_refused_total", code="unauthenticated") == 1
    posts = value(
        page, "recordseal_http_request_duration_seconds_count", method="POST", route="/v1/records"
    )
    assert posts == sent + 3 + 1 + 2
    assert (
        value(
            page, "recordseal_http_requests_total", method="POST", route="/v1/records", status="201"
        )
        == sent + 2
    )
    assert (
        value(
            page,
            "recordseal_http_request_duration_seconds_bucket",
            method="POST",
            route="/v1/records",
            le="+Inf",
        )
        == posts
    )


def test_sealing_witness_and_tsa_failures_are_counted(service: tuple[str, Path, Path]) -> None:
    url, _, _ = service
    deadline = time.monotonic() + 30
    while True:
        page = samples(httpx.get(f"{url}/metrics").text)
        witness = value(
            page, "recordseal_witness_failures_total", witness="refusing", code="witness_refused"
        )
        tsa = value(
            page, "recordseal_tsa_failures_total", authority="nobody-home", code="tsa_unavailable"
        )
        if witness and tsa and value(page, "recordseal_sealed_records_total"):
            break
        assert time.monotonic() < deadline, "no sealing round counted its failures"
        time.sleep(0.5)
    assert value(page, "recordseal_cosignatures_total", witness="refusing") == 0
    lag = value(page, "recordseal_seal_lag_seconds")
    assert 0 <= lag < 30
    assert value(page, "recordseal_sealed_through_timestamp_seconds") > time.time() - 60


def test_panel_denials_keep_403_and_404_apart(service: tuple[str, Path, Path]) -> None:
    url, data, _ = service
    keyring = CookieKeyring(
        SigningKey("panel-1", (data / "keys" / "panel-cookie.key").read_bytes())
    )
    session = keyring.issue(
        TenantSession("dana@acme.test", "acme", "eng", int(time.time()) + 600, "viewer", None)
    )
    headers = {"Cookie": f"{COOKIE_NAME}={session}", "Accept": "application/json"}
    before = samples(httpx.get(f"{url}/metrics").text)
    assert httpx.get(f"{url}/tenants/globex", headers=headers).status_code == 403
    assert httpx.get(f"{url}/tenants/acme/orgs/nope", headers=headers).status_code == 404
    assert httpx.get(f"{url}/tenants/acme/orgs/nope", headers=headers).status_code == 404
    after = samples(httpx.get(f"{url}/metrics").text)

    def grew(status: str, code: str) -> float:
        name = "recordseal_panel_denials_total"
        return value(after, name, status=status, code=code) - value(
            before, name, status=status, code=code
        )

    assert grew("403", "forbidden_tenant") == 1
    assert grew("404", "organization_not_found") == 2


def test_readyz_answers_from_every_worker(service: tuple[str, Path, Path]) -> None:
    url, _, _ = service
    for _ in range(6):
        answer = httpx.get(f"{url}/readyz")
        assert answer.status_code == 200
        body = answer.json()
        assert {k: body[k] for k in ("status", "checks")} == {
            "status": "ready",
            "checks": {"keys": "ok", "store": "ok"},
        }
        # Its witness refuses every checkpoint: once the leader has seen it, every worker says so
        # (tests/ops/test_witness_refusals.py).
        assert body.keys() <= {"status", "checks", "detail"}
        assert body.get("detail", "witness 'refusing'").startswith("witness 'refusing'")
