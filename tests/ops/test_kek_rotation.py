"""KEK rotation with real processes (``recordseal keys rotate kek``, docs/operations.md
"Keys"): under concurrent ingest of a two-worker service every subject key is re-wrapped
under the new KEK, the old KEK file is destroyed, every payload still decrypts, erasure still
works, and a database copy from before cannot be read with the keys after; a rotation killed
half way (SIGKILL) resumes to the same KEK and finishes."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from recordseal.crypto.keks import load_wrapper
from recordseal.crypto.vault import VaultError
from tests.servers import Posting, create_token, free_port, kill_service, start_service

RECORD = {"stream": "s", "record_type": "t", "occurred_at": "2026-11-26T08:00:00Z"}


def cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip


def wrapped_lengths(data: Path) -> list[tuple[int, int]]:
    """(length, first byte) of every subject's wrapped key (erased ones left out)."""
    with sqlite3.connect(data / "recordseal.sqlite3") as conn:
        rows = conn.execute("SELECT wrapped_key FROM subjects WHERE wrapped_key IS NOT NULL")
        return [(len(w), w[0]) for (w,) in rows]


def test_the_kek_rotates_under_concurrent_ingest(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    server = start_service(data, port, workers=2)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            subject = lambda number, n: f"c{number}-{n % 15}"  # noqa: E731
            with Posting(url, token, RECORD, subject) as posting:
                posting.wait_for(100)
                copy = tmp_path / "before"
                cli(["backup", "--data-dir", str(data), "--to", str(copy)])
                rotated = json.loads(
                    cli(
                        ["keys", "rotate", "kek", "--batch", "7", "--data-dir", str(data), "--json"]
                    ).stdout
                )
                time.sleep(1)  # ingest goes on after the rotation too
            answers = posting.answers
            assert [a.status_code for a in answers if a.status_code != 201] == []
            assert rotated["generation"] == 2 and rotated["destroyed"] == ["kek.key"]
            assert rotated["rewrapped"] > 0 and not rotated["resumed"]
            # Every payload, of subjects made before and after, still decrypts.
            for answer in answers[::7]:
                record = answer.json()
                payload = http.get(f"/v1/records/{record['record_id']}/payload")
                assert payload.status_code == 200, payload.text
            # An existing subject still ingests (its index did not change), and erasure works.
            again = http.post(
                "/v1/records", json={**RECORD, "subject_id": "c0-1", "payload": {"n": 0}}
            )
            assert again.status_code == 201
            assert http.post("/v1/subjects/c0-1/erase").json()["status"] == "erased"
            gone = http.get(f"/v1/records/{again.json()['record_id']}/payload")
            assert gone.status_code == 410
    finally:
        kill_service(server)
    keys = data / "keys"
    assert not (keys / "kek.key").exists() and (keys / "kek-2.key").is_file()
    assert (keys / "subject-index.key").is_file() and (keys / "panel-secrets.key").is_file()
    assert not (keys / "kek-rotation").exists()
    assert set(wrapped_lengths(data)) == {(61, 2)}  # every subject key under KEK 2
    # A copy of the database from before the rotation cannot be read with the keys after.
    wrapper = load_wrapper(keys)
    with sqlite3.connect(copy / "recordseal.sqlite3") as conn:
        tenant, ref, wrapped = conn.execute(
            "SELECT tenant, subject_ref, wrapped_key FROM subjects LIMIT 1"
        ).fetchone()
    with pytest.raises(VaultError, match="KEK 1"):
        wrapper.unwrap(tenant, ref, wrapped)


def test_a_kek_rotation_killed_half_way_resumes_and_finishes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    server = start_service(data, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            record_ids: list[str] = []
            for chunk in range(3):
                batch = [
                    {**RECORD, "subject_id": f"s{chunk}-{n}", "payload": {"n": n}}
                    for n in range(100)
                ]
                answer = http.post("/v1/records:batch", json={"records": batch})
                assert answer.status_code == 200 and answer.json()["accepted"] == 100, answer.text
                record_ids += [r["record"]["record_id"] for r in answer.json()["results"]]
    finally:
        kill_service(server)
    rotation = subprocess.Popen(
        [sys.executable, "-m", "recordseal.cli", "keys", "rotate", "kek", "--batch", "1",
         "--data-dir", str(data)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            moved = sum(length == 61 for length, _ in wrapped_lengths(data))
            if 0 < moved < 300:
                break
            assert rotation.poll() is None, "the rotation ended before it could be killed"
            time.sleep(0.005)
        rotation.send_signal(signal.SIGKILL)
        rotation.wait()
    finally:
        if rotation.poll() is None:
            rotation.kill()
    keys = data / "keys"
    assert (keys / "kek-rotation").read_text() == "2"  # under way, KEK 1 still there
    assert (keys / "kek.key").is_file()
    resumed = json.loads(cli(["keys", "rotate", "kek", "--data-dir", str(data), "--json"]).stdout)
    assert resumed["resumed"] and resumed["generation"] == 2
    assert 0 < resumed["rewrapped"] < 300
    assert not (keys / "kek-3.key").exists() and not (keys / "kek.key").exists()
    assert set(wrapped_lengths(data)) == {(61, 2)}
    server = start_service(data, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=60) as http:
            for record_id in record_ids:
                assert http.get(f"/v1/records/{record_id}/payload").status_code == 200
    finally:
        kill_service(server)
