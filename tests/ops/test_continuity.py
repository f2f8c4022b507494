"""A restore of the database, as an operator does it, with real processes on both backends:
``serve`` with its demo witness (a process of its own that remembers what it cosigned),
stopped, its database put back to an earlier backup (SQLite's files, or a ``pg_dump`` of
PostgreSQL's schema), started again. Nothing equivocates; what the store lost is fenced;
everything else keeps working; an erased subject stays erased; ``recordseal recover`` then
declares the loss and starts a successor log, and every verdict is what docs/bundle.md says
(docs/continuity.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import BACKENDS
from tests.pg_cluster import Cluster
from tests.servers import create_token, free_port, kill_service, start_service

RECORD = {"record_type": "t", "occurred_at": "2026-11-26T08:00:00Z", "payload": {"n": 1}}


def stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM, as an operator stops the service; it finishes its requests and exits."""
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=60)
    finally:
        kill_service(server)


def cli(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv],
        capture_output=True, text=True, check=check, timeout=120,
    )  # fmt: skip


def database_files(data: Path) -> list[Path]:
    return [p for p in data.glob("recordseal.sqlite3*") if not p.name.endswith(".lock")]


class Database:
    """The service's database and an operator's backup and restore of it: SQLite's files
    copied while the service is stopped, or ``pg_dump``/``pg_restore`` of PostgreSQL's."""

    def __init__(self, data: Path, copy: Path, cluster: Cluster | None) -> None:
        self.data, self.copy, self.cluster = data, copy, cluster
        self.url = cluster.url() if cluster else None

    def options(self) -> list[str]:
        return ["--database-url", self.url] if self.url else []

    def back_up(self) -> None:
        if self.cluster and self.url:
            self.cluster.dump(self.url, self.copy / "db.dump")
            return
        for path in database_files(self.data):  # the database, never the journal
            shutil.copy2(path, self.copy / path.name)

    def restore(self) -> None:
        if self.cluster and self.url:
            self.cluster.restore(self.url, self.copy / "db.dump")
            return
        for path in database_files(self.data):
            path.unlink()
        for path in self.copy.iterdir():
            shutil.copy2(path, self.data / path.name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_restored_database_is_fenced_and_signs_nothing_twice(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    data, witness, copy = tmp_path / "data", tmp_path / "witness", tmp_path / "copy"
    data.mkdir()
    copy.mkdir()
    cluster = request.getfixturevalue("postgres") if backend == "postgres" else None
    database = Database(data, copy, cluster)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ["--demo-witness", str(witness)]
    env = {"RECORDSEAL_SEAL_INTERVAL": "0.2"}
    if database.url:
        env["RECORDSEAL_DATABASE_URL"] = database.url

    def start() -> subprocess.Popen[bytes]:
        return start_service(data, port, args=args, env=env)

    def post(http: httpx.Client, token: str, stream: str, subject: str) -> httpx.Response:
        body = {**RECORD, "stream": stream, "subject_id": subject}
        return http.post("/v1/records", json=body, headers={"Authorization": f"Bearer {token}"})

    def witnessed(http: httpx.Client, token: str, record_id: str) -> dict:  # type: ignore[type-arg]
        answer = http.post(
            f"/v1/records/{record_id}/disclosure?wait=30",
            json={"fields": []},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 200, answer.text
        bundle: dict = answer.json()  # type: ignore[type-arg]
        assert bundle["seal"] is not None
        return bundle

    acme, beta = (create_token(data, t, database.url) for t in ("acme", "beta"))
    server = start()
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            for token in (acme, beta):
                created = http.post(
                    "/v1/streams", json={"name": "s"}, headers={"Authorization": f"Bearer {token}"}
                )
                assert created.status_code == 201, created.text
            bob = post(http, acme, "s", "bob").json()
            post(http, acme, "s", "carol")
            dave = post(http, beta, "s", "dave").json()
            witnessed(http, acme, bob["record_id"])
            # Both logs sealed before the backup: a checkpoint of beta's signed after it
            # would rightly fence beta's log too once the backup is restored.
            witnessed(http, beta, dave["record_id"])
    finally:
        stop(server)
    database.back_up()

    server = start()
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            third = post(http, acme, "s", "erin").json()
            assert third["seq"] == 3
            before = witnessed(http, acme, third["record_id"])
            erased = http.post(
                "/v1/subjects/bob/erase", headers={"Authorization": f"Bearer {acme}"}
            )
            assert erased.json()["status"] == "erased"
            (tmp_path / "erase.json").write_bytes(erased.content)
    finally:
        stop(server)
    # The data subject's proof of erasure: the whole answer verifies with the key directory.
    keys = tmp_path / "keys.json"
    cli(["keys", "export", "--data-dir", str(data), *database.options(), "--keys-out", str(keys),
         "--trust-out", str(tmp_path / "trust.json")])  # fmt: skip
    checked = cli(
        ["verify-receipt", str(tmp_path / "erase.json"), "--keys", str(keys)], check=False
    )
    assert checked.returncode == 0 and checked.stdout.startswith("VALID"), checked.stdout
    answer = json.loads((tmp_path / "erase.json").read_text())
    answer["erasure_receipt"]["receipt"]["tenant"] = "beta"
    (tmp_path / "forged.json").write_text(json.dumps(answer))
    forged = cli(
        ["verify-receipt", str(tmp_path / "forged.json"), "--keys", str(keys)], check=False
    )
    assert forged.returncode == 1 and forged.stdout.startswith("INVALID"), forged.stdout
    database.restore()

    server = start()
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            ready = http.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["code"] == "store_rolled_back"
            # acme's log and the deployment's aggregate log, both behind (docs/tlog.md).
            assert ready.json()["detail"].startswith("1 streams and 2 logs are fenced")
            assert "acme" not in ready.text  # a public endpoint names no tenant
            refused = post(http, acme, "s", "frank")
            assert refused.status_code == 503
            assert (refused.json()["code"], refused.json()["field"]) == (
                "store_rolled_back",
                "stream",
            )
            # bob's erasure, made after the backup, holds.
            payload = http.get(
                f"/v1/records/{bob['record_id']}/payload",
                headers={"Authorization": f"Bearer {acme}"},
            )
            assert payload.status_code == 410
            assert post(http, acme, "other", "bob").status_code in (404, 410)
            # Another tenant's stream and log were not behind: they keep working, witnessed.
            fine = post(http, beta, "s", "dave")
            assert fine.status_code == 201 and fine.json()["seq"] == 2
            witnessed(http, beta, fine.json()["record_id"])
            metrics = http.get("/metrics").text
            assert 'recordseal_fenced{kind="stream"} 1.0' in metrics
            assert 'recordseal_fenced{kind="log"} 2.0' in metrics
            # The log that lost its tail was not sealed again: its newest checkpoint is still
            # the restored one, below the size the witness cosigned before the restore.
            keys = http.get("/v1/keys").json()
            assert any(log["origin"].endswith("/acme/default") for log in keys["logs"])
        log = (data / f"server-{port}.log").read_text()
        assert "continuity.stream_fenced" in log and "continuity.log_fenced" in log
        assert "witness.two_roots" not in log
        assert "checkpoint_inconsistent" not in log
    finally:
        stop(server)
    assert before["header"]["seq"] == 3

    # Recover, with the service stopped: seq 3 declared lost (the gap header is seq 4), the log
    # retired after the size 4 the witness cosigned, its successor started.
    recovered = cli(["recover", "--data-dir", str(data), "--json", *database.options()])
    report = json.loads(recovered.stdout)
    assert report["gaps"] == [
        {"tenant": "acme", "stream": "s", "from_seq": 3, "to_seq": 3, "seq": 4}
    ]
    [succession] = report["successions"]
    assert succession["predecessor"].endswith("/acme/default")
    assert succession["size"] == 4
    assert succession["successor"] == succession["predecessor"] + "/2"
    assert report["refused"] == []
    # The aggregate is taken up again at the size it was signed for, from its frontier.
    assert report["aggregate"]["origin"] == "recordseal.local"
    server = start()
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            assert http.get("/readyz").status_code == 200
            fifth = post(http, acme, "s", "frank")
            assert fifth.status_code == 201 and fifth.json()["seq"] == 5
            after = witnessed(http, acme, fifth.json()["record_id"])
            assert after["seal"]["log"] == succession["successor"]
            across = http.post(
                f"/v1/records/{fifth.json()['record_id']}/disclosure",
                json={"fields": [], "coverage": {"from_seq": 1, "to_seq": 5}},
                headers={"Authorization": f"Bearer {acme}"},
            )
            assert across.status_code == 200, across.text
            # The online verifier (the service's own key directory and trust store) agrees.
            for bundle, verdict in (
                (after, "VERIFIED"),
                (before, "VERIFIED"),
                (across.json(), "VERIFICATION INCOMPLETE"),
            ):
                online = http.post("/v1/verify", json=bundle).json()
                assert online["verdict"] == verdict, online
            assert "seq 3 declared lost on" in online["checks"][5]["detail"]
        log = (data / f"server-{port}.log").read_text()
        assert "witness.two_roots" not in log and "checkpoint_inconsistent" not in log
    finally:
        stop(server)
    keys_file = tmp_path / "keys-after.json"
    cli(["keys", "export", "--data-dir", str(data), *database.options(),
         "--keys-out", str(keys_file), "--trust-out", str(tmp_path / "trust.json")])  # fmt: skip
    trust = tmp_path / "trust.json"

    def verify(bundle: Path) -> subprocess.CompletedProcess[str]:
        argv = ["verify", str(bundle), "--keys", str(keys_file), "--trust", str(trust), "--json"]
        return cli(argv, check=False)

    for name, bundle in (("before", before), ("after", after), ("across", across.json())):
        (tmp_path / f"{name}.json").write_text(json.dumps(bundle))
    # The new record verifies through the successor, witnessed by the same witness; the record
    # signed before the restore still verifies against the retired log.
    for name in ("after", "before"):
        checked = verify(tmp_path / f"{name}.json")
        assert checked.returncode == 0, checked.stdout
        assert json.loads(checked.stdout)["verdict"] == "VERIFIED"
    # A window across the gap: incomplete, naming the declared loss; never failed.
    checked = verify(tmp_path / "across.json")
    assert checked.returncode == 2, checked.stdout
    result = json.loads(checked.stdout)
    assert result["verdict"] == "VERIFICATION INCOMPLETE"
    continuity = result["checks"][5]
    assert continuity["status"] == "unchecked"
    assert "seq 3 declared lost on" in continuity["detail"], continuity
    assert continuity["detail"].endswith("(store_rolled_back)"), continuity
