"""``recordseal restore`` as an operator uses it, on SQLite with real processes: a real
``recordseal backup`` taken while the service runs, more records signed and witnessed after
it, the restore refused while the service runs, then done with it stopped; the next start
fences what the restore forgot, ``recordseal recover`` declares it and says what auditors
need, and a new record's bundle verifies (VERIFIED) with the keys exported again. A damaged
backup, or PostgreSQL, is refused before anything changes (docs/operations.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.servers import create_token, free_port, kill_service, start_service

RECORD = {"record_type": "t", "occurred_at": "2026-11-26T08:00:00Z", "payload": {"n": 1}}


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip


def stop(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=60)
    finally:
        kill_service(server)


def post_witnessed(http: httpx.Client, token: str, subject: str) -> dict:  # type: ignore[type-arg]
    headers = {"Authorization": f"Bearer {token}"}
    posted = http.post("/v1/records", json={**RECORD, "stream": "s", "subject_id": subject},
                       headers=headers)  # fmt: skip
    assert posted.status_code == 201, posted.text
    record_id = posted.json()["record_id"]
    answer = http.post(f"/v1/records/{record_id}/disclosure?wait=30", json={"fields": ["o:/n"]},
                       headers=headers)  # fmt: skip
    assert answer.status_code == 200 and answer.json()["seal"] is not None, answer.text
    bundle: dict = answer.json()  # type: ignore[type-arg]
    return bundle


def test_a_backup_restored_is_fenced_recovered_and_verifies(tmp_path: Path) -> None:
    data, witness, backup = tmp_path / "data", tmp_path / "witness", tmp_path / "backup"
    data.mkdir()
    port = free_port()
    env = {"RECORDSEAL_SEAL_INTERVAL": "0.2"}

    def start() -> subprocess.Popen[bytes]:
        return start_service(data, port, args=["--demo-witness", str(witness)], env=env)

    token = create_token(data, "acme")
    server = start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            headers = {"Authorization": f"Bearer {token}"}
            assert http.post("/v1/streams", json={"name": "s"}, headers=headers).status_code == 201
            post_witnessed(http, token, "ann")
            post_witnessed(http, token, "bob")
            copied = cli("backup", "--data-dir", str(data), "--to", str(backup))
            assert copied.returncode == 0, copied.stderr
            post_witnessed(http, token, "cid")  # seq 3, signed after the backup
        running = cli("restore", "--data-dir", str(data), "--from", str(backup))
        assert running.returncode == 2
        assert running.stderr == (
            f"recordseal: a service serves {data} (it holds sealer.lock): stop every service"
            " process of this data directory first; nothing was changed\n"
        )
    finally:
        stop(server)
    before = (data / "recordseal.sqlite3").read_bytes()

    restored = cli("restore", "--data-dir", str(data), "--from", str(backup))
    assert restored.returncode == 0, restored.stderr
    out = restored.stdout
    assert "recordseal: restored recordseal.sqlite3 as the backup of " in out
    assert "\n  stream acme/s (the backup ends at seq 2, the service signed seq 3)\n" in out
    assert "/acme/default (the backup holds size 3, the service signed size 4)\n" in out
    assert f"run `recordseal recover --data-dir {data}`" in out
    # The database is the backup's, byte for byte; the one it replaced was moved aside whole.
    manifest = json.loads((backup / "backup.json").read_text())
    assert (data / "recordseal.sqlite3").read_bytes() == (
        backup / "recordseal.sqlite3"
    ).read_bytes()
    assert manifest["databases"][0]["file"] == "recordseal.sqlite3"
    [aside] = data.glob("before-restore-*")
    assert (aside / "recordseal.sqlite3").read_bytes() == before
    assert not (data / "recordseal.sqlite3-wal").exists()

    server = start()
    try:
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=30)
        assert ready.status_code == 503 and ready.json()["code"] == "store_rolled_back"
    finally:
        stop(server)

    recovered = cli("recover", "--data-dir", str(data))
    assert recovered.returncode == 0, recovered.stderr
    said = recovered.stdout
    assert (
        "recordseal: stream acme/s: seq 3 declared lost (gap header at seq 4); the next record is"
        " seq 5\n" in said
    )
    assert "recordseal: auditors' key directories lack the successor logs (" in said
    assert f"recordseal: run now: recordseal keys export --data-dir {data}\n" in said
    assert "continuity." not in said  # sentences, not log keys
    assert "continuity.stream_fenced" not in recovered.stderr.splitlines()  # a log line if any

    server = start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            assert http.get("/readyz").status_code == 200
            bundle = post_witnessed(http, token, "dan")
            assert bundle["header"]["seq"] == 5
    finally:
        stop(server)
    keys, trust = tmp_path / "keys.json", tmp_path / "trust.json"
    exported = cli("keys", "export", "--data-dir", str(data), "--keys-out", str(keys),
                   "--trust-out", str(trust))  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    checked = cli("verify", str(tmp_path / "bundle.json"), "--keys", str(keys), "--trust",
                  str(trust), "--json")  # fmt: skip
    assert checked.returncode == 0, checked.stdout
    assert json.loads(checked.stdout)["verdict"] == "VERIFIED"


def test_a_damaged_backup_or_postgresql_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    data, backup = tmp_path / "data", tmp_path / "backup"
    data.mkdir()
    create_token(data, "acme")
    assert cli("backup", "--data-dir", str(data), "--to", str(backup)).returncode == 0
    damaged = tmp_path / "damaged"
    shutil.copytree(backup, damaged)
    copy = damaged / "recordseal.sqlite3"
    content = bytearray(copy.read_bytes())
    content[-1] ^= 1
    copy.write_bytes(bytes(content))
    before = (data / "recordseal.sqlite3").read_bytes()
    refused = cli("restore", "--data-dir", str(data), "--from", str(damaged))
    assert refused.returncode == 2
    assert refused.stderr == (
        f"recordseal: {copy} is not the file the backup wrote (its size or SHA-256 differs from"
        " backup.json): the backup is damaged; nothing was changed\n"
    )
    not_a_backup = cli("restore", "--data-dir", str(data), "--from", str(tmp_path))
    assert not_a_backup.returncode == 2 and "is not a backup" in not_a_backup.stderr
    assert (data / "recordseal.sqlite3").read_bytes() == before
    assert list(data.glob("before-restore-*")) == []
    # Into a new data directory (the old one lost): the databases, and service.json with
    # them; a second restore of it moves the first one's databases aside.
    fresh = tmp_path / "fresh"
    (data / "service.json").write_text('{"format": "recordseal/service/v1"}')
    assert cli("backup", "--data-dir", str(data), "--to", str(tmp_path / "b2")).returncode == 0
    into = cli("restore", "--data-dir", str(fresh), "--from", str(tmp_path / "b2"), "--json")
    assert into.returncode == 0, into.stderr
    report = json.loads(into.stdout)
    assert (report["databases"], report["moved_aside"]) == (["recordseal.sqlite3"], None)
    assert report["also"] == ["service.json"] and report["fenced"] == {"streams": [], "logs": []}
    assert (fresh / "service.json").read_bytes() == (data / "service.json").read_bytes()
    assert (fresh / "recordseal.sqlite3").stat().st_mode & 0o777 == 0o600
    postgres = cli("restore", "--data-dir", str(data), "--from", str(backup), "--database-url",
                   "postgresql://u@db.example/records")  # fmt: skip
    assert postgres.returncode == 2
    assert (
        "pg_basebackup or pgBackRest" in postgres.stderr
        and "nothing was changed" in postgres.stderr
    )
