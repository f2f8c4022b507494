"""Disclosure through the service, verified offline with the server stopped (issue 4)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from litestar.testing import TestClient

from recordseal.ops.tokens import create_token
from recordseal.settings import AuthoritySetting, Settings, WitnessSetting
from recordseal.verify import (
    FAILED,
    INCOMPLETE,
    VERIFIED,
    decode_bundle,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.web.app import create_app
from tests.servers import free_port, wait_for
from tests.verify.conftest import in_order

ORIGIN = "test.recordseal"


@pytest.fixture
def witness(tmp_path: Path):
    """A real `recordseal witness serve` process that trusts the service's log key."""
    data = tmp_path / "witness"
    vkey = (
        subprocess.run(
            [
                sys.executable,
                "-m",
                "recordseal.cli",
                "witness",
                "key",
                "--data-dir",
                str(data),
                "--name",
                "witness.test",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    return data, vkey


def start_witness(data: Path, log_vkeys: list[tuple[str, str]]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "recordseal.cli",
        "witness",
        "serve",
        "--data-dir",
        str(data),
        "--name",
        "witness.test",
        "--port",
        str(port),
    ]
    for origin, vkey in log_vkeys:
        args += ["--log", f"{origin}={vkey}"]
    process = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    wait_for(url + "/health")
    return process, url


def stop(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def export_keys(data: Path, out: Path, env: dict[str, str]) -> None:
    """``recordseal keys export``: out/keys.json and out/trust.json."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "recordseal.cli",
            "keys",
            "export",
            "--data-dir",
            str(data),
            "--keys-out",
            str(out / "keys.json"),
            "--trust-out",
            str(out / "trust.json"),
        ],
        check=True,
        env=env,
        capture_output=True,
    )


def test_a_sealed_witnessed_record_verifies_offline(tmp_path: Path, witness, store_settings):
    witness_dir, witness_vkey = witness
    data = tmp_path / "service"
    log_origin = f"{ORIGIN}/acme/default"
    # The log key is made on first start; learn its vkey before the witness starts.
    settings = Settings(
        data_dir=data, database_url=store_settings.database_url, origin=ORIGIN, seal_interval=0
    )
    with TestClient(create_app(settings)) as client:
        pass
    from recordseal.crypto.keyfiles import read_or_create_secret
    from recordseal.tlog import Ed25519Signer

    log_vkey = (
        Ed25519Signer.from_seed(
            log_origin, read_or_create_secret(data / "keys" / "log-signing.ed25519")
        )
        .verifier()
        .vkey
    )
    witness_process, witness_url = start_witness(witness_dir, [(log_origin, log_vkey)])
    try:
        witnesses = (WitnessSetting("witness.test", witness_url, witness_vkey),)
        settings = Settings(
            data_dir=data,
            database_url=store_settings.database_url,
            origin=ORIGIN,
            seal_interval=0.05,
            witnesses=witnesses,
        )
        with TestClient(create_app(settings)) as client:
            headers = {
                "Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"
            }
            client.post(
                "/v1/streams",
                json={"name": "orders", "declarations": {"o:/amount": "money"}},
                headers=headers,
            )
            posted = [
                client.post(
                    "/v1/records",
                    headers=headers,
                    json={
                        "stream": "orders",
                        "record_type": "order",
                        "subject_id": f"c{i}",
                        "occurred_at": "2026-11-21T08:00:00Z",
                        "payload": {"amount": 100 + i, "note": f"n{i}", "secret": "hidden"},
                    },
                ).json()
                for i in range(4)
            ]
            record_id = posted[2]["record_id"]
            deadline = time.monotonic() + 20
            while client.get(f"/v1/records/{record_id}", headers=headers).json()["seal"] is None:
                assert time.monotonic() < deadline, "never sealed"
                time.sleep(0.05)
            time.sleep(0.5)  # the witness round follows the seal
            response = client.post(
                f"/v1/records/{record_id}/disclosure",
                headers=headers,
                json={"fields": ["o:/amount", "o:/note"], "coverage": {"from_seq": 1, "to_seq": 4}},
            )
            assert response.status_code == 200, response.text
            bundle_bytes = response.content
            keys = client.get("/v1/keys").content
            online = client.post(
                "/v1/verify", content=bundle_bytes, headers={"Content-Type": "application/json"}
            )
            assert online.status_code == 200, online.text
            assert online.json()["verdict"] == VERIFIED
            unknown = client.post(
                f"/v1/records/{record_id}/disclosure", headers=headers, json={"fields": ["o:/nope"]}
            )
            assert (unknown.status_code, unknown.json()["field"]) == (422, "o:/nope")
    finally:
        stop(witness_process)

    # Undisclosed fields are absent: no value, no path.
    assert b"hidden" not in bundle_bytes and b"secret" not in bundle_bytes
    trust = json.dumps(
        {
            "format": "recordseal/trust/v1",
            "quorum": 1,
            "timestamp_authorities": [],
            "witnesses": [{"name": "witness.test", "vkey": witness_vkey}],
        }
    )
    # The server is stopped: everything below is offline.
    alone = verify_bundle(bundle_bytes)
    assert alone.verdict == INCOMPLETE
    assert [c.status for c in alone.checks][2:5] == ["unchecked"] * 3

    result = verify_bundle(bundle_bytes, load_key_directory(keys), load_trust_store(trust))
    assert result.verdict == VERIFIED, [(c.number, c.status, c.detail) for c in result.checks]
    assert result.time_bracket.not_after is not None
    assert result.time_bracket.not_after_by == "witness.test"
    assert in_order(result.time_bracket), result.time_bracket
    assert result.disclosed == {"o:/amount": 102, "o:/note": "n2"}

    # The same offline, through the command line: keys export, then verify.
    env = {
        **os.environ,
        "RECORDSEAL_ORIGIN": ORIGIN,
        "RECORDSEAL_WITNESSES": msgspec.json.encode(witnesses).decode(),
    }
    if store_settings.database_url:
        env["RECORDSEAL_DATABASE_URL"] = store_settings.database_url
    bundle_file = tmp_path / "bundle.json"
    bundle_file.write_bytes(bundle_bytes)
    export_keys(data, tmp_path, env)
    verdict = subprocess.run(
        [
            sys.executable,
            "-m",
            "recordseal.cli",
            "verify",
            str(bundle_file),
            "--keys",
            str(tmp_path / "keys.json"),
            "--trust",
            str(tmp_path / "trust.json"),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert json.loads(verdict.stdout)["verdict"] == VERIFIED

    tampered = json.loads(bundle_bytes)
    tampered["fields"][0]["value"] = 999
    broken = verify_bundle(
        json.dumps(tampered).encode(), load_key_directory(keys), load_trust_store(trust)
    )
    assert broken.verdict == FAILED
    assert decode_bundle(bundle_bytes).header.seq == 3


def test_time_stamping_authority_receipts_verify(tmp_path: Path, store_settings):
    """A checkpoint root time-stamped by a real local RFC 3161 authority (openssl ts)."""
    from cryptography.hazmat.primitives.serialization import Encoding

    from tests.tlog.tsa_support import make_authority, serve

    authority = make_authority(tmp_path / "tsa", "Local TSA")
    roots_pem = authority.ca.public_bytes(Encoding.PEM).decode()
    data = tmp_path / "service"
    with serve(authority) as tsa_url:
        authorities = (AuthoritySetting("tsa.local", f"{tsa_url}/tsa", roots_pem),)
        settings = Settings(
            data_dir=data,
            database_url=store_settings.database_url,
            origin=ORIGIN,
            seal_interval=0.05,
            timestamp_authorities=authorities,
        )
        with TestClient(create_app(settings)) as client:
            headers = {
                "Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"
            }
            client.post("/v1/streams", json={"name": "orders"}, headers=headers)
            record_id = client.post(
                "/v1/records",
                headers=headers,
                json={
                    "stream": "orders",
                    "record_type": "order",
                    "subject_id": "c",
                    "occurred_at": "2026-11-21T08:00:00Z",
                    "payload": {"a": 1},
                },
            ).json()["record_id"]
            deadline = time.monotonic() + 20
            bundle = None
            while time.monotonic() < deadline:
                response = client.post(
                    f"/v1/records/{record_id}/disclosure",
                    headers=headers,
                    json={"fields": ["o:/a"]},
                )
                seal = response.json()["seal"]
                if seal and seal["timestamps"]:
                    bundle = response.content
                    break
                time.sleep(0.1)
            assert bundle is not None, "never time-stamped"
            keys = client.get("/v1/keys").content
    env = {
        **os.environ,
        "RECORDSEAL_ORIGIN": ORIGIN,
        "RECORDSEAL_TIMESTAMP_AUTHORITIES": msgspec.json.encode(authorities).decode(),
    }
    export_keys(data, tmp_path, env)
    trust = load_trust_store((tmp_path / "trust.json").read_bytes())
    result = verify_bundle(bundle, load_key_directory(keys), trust)
    assert result.verdict == VERIFIED, [(c.number, c.status, c.detail) for c in result.checks]
    assert result.time_bracket.not_after_by == "tsa.local"
    # The first record of a fresh tenant, time-stamped within its ingest second by an
    # authority that writes whole seconds: the bracket still runs forwards (check 7).
    assert in_order(result.time_bracket), result.time_bracket


def test_a_key_directory_older_than_the_log_says_to_export_it_again(
    tmp_path: Path, store_settings
) -> None:
    """``keys export`` before the tenant's log existed: its bundles are INCOMPLETE, and check
    4 says how to get a directory that knows the log; a fresh export verifies them."""
    data = tmp_path / "service"
    settings = Settings(
        data_dir=data, database_url=store_settings.database_url, origin=ORIGIN, seal_interval=0.05
    )
    env = {**os.environ, "RECORDSEAL_ORIGIN": ORIGIN}
    if store_settings.database_url:
        env["RECORDSEAL_DATABASE_URL"] = store_settings.database_url
    with TestClient(create_app(settings)):
        pass
    stale = tmp_path / "stale"
    stale.mkdir()
    export_keys(data, stale, env)
    assert json.loads((stale / "keys.json").read_text())["logs"] == []
    with TestClient(create_app(settings)) as client:
        headers = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'acme', 't'))}"}
        client.post("/v1/streams", json={"name": "orders"}, headers=headers)
        record = {"stream": "orders", "record_type": "order", "subject_id": "c"}
        record |= {"occurred_at": "2026-11-21T08:00:00Z", "payload": {"a": 1}}
        record_id = client.post("/v1/records", headers=headers, json=record).json()["record_id"]
        bundle = client.post(
            f"/v1/records/{record_id}/disclosure?wait=20", headers=headers, json={"fields": []}
        ).content
    assert json.loads(bundle)["seal"] is not None, "never sealed"
    (tmp_path / "bundle.json").write_bytes(bundle)

    def verify(keys: Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "recordseal.cli", "verify", str(tmp_path / "bundle.json")]
        command += ["--keys", str(keys / "keys.json"), "--json"]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    done = verify(stale)
    assert done.returncode == 2, done.stdout + done.stderr
    sealed = json.loads(done.stdout)["checks"][3]
    assert sealed["status"] == "unchecked"
    assert f"no log key for '{ORIGIN}/acme/default'" in sealed["detail"]
    assert "export the directory again (recordseal keys export)" in sealed["detail"]
    assert "GET /v1/keys" in sealed["detail"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    export_keys(data, fresh, env)
    assert json.loads(verify(fresh).stdout)["checks"][3]["status"] == "passed"
