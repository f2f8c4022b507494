"""Header-key rotation and revocation with real processes (docs/operations.md, "Keys"):
``recordseal keys rotate header`` while a two-worker service ingests from concurrent
clients; every record is acknowledged, signed by the old key or the new one, within that
key's validity, and every bundle reaches VERIFIED with one key directory exported after the
rotation; ``keys revoke`` rotates away from the active key and marks it compromised;
``keys list`` names every key and where it lives, never a secret."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

from recordseal.verify import (
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from tests.servers import Posting, create_token, free_port, kill_service, start_service

RECORD = {"stream": "s", "record_type": "t", "occurred_at": "2026-11-26T08:00:00Z"}
ONE = {**RECORD, "subject_id": "a", "payload": {"n": 1}}
JSON = {"Content-Type": "application/json"}


def cli(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv],
        capture_output=True, text=True, check=check, timeout=120,
    )  # fmt: skip


def test_a_header_key_rotates_under_concurrent_ingest_without_a_gap(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    server = start_service(
        data,
        port,
        workers=2,
        args=["--demo-witness", str(tmp_path / "witness")],
        env={"RECORDSEAL_SEAL_INTERVAL": "0.2"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            with Posting(url, token, RECORD, lambda number, n: f"c{number}") as posting:
                posting.wait_for(100)
                rotated = json.loads(
                    cli(["keys", "rotate", "header", "--data-dir", str(data), "--json"]).stdout
                )
                old, new = rotated["old"]["key_id"], rotated["new"]["key_id"]
                assert old != new
                # Every process switches within the refresh interval: wait for its records.
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    recent = [
                        a.json()["key_id"] for a in posting.answers[-20:] if a.status_code == 201
                    ]
                    if len(recent) == 20 and set(recent) == {new}:
                        break
                    time.sleep(0.05)
            answers = posting.answers
            assert [a.status_code for a in answers if a.status_code != 201] == []
            records = [a.json() for a in answers]
            assert {r["key_id"] for r in records} == {old, new}
            # Waiting for the last record to be witnessed: every earlier one is too (one log).
            last = max(records, key=lambda r: r["seq"])
            bundles = []
            for record in [last, *(r for r in records if r is not last)]:
                disclosed = http.post(
                    f"/v1/records/{record['record_id']}/disclosure?wait=30", json={"fields": []}
                )
                assert disclosed.status_code == 200, disclosed.text
                bundles.append(disclosed.content)
            listed = json.loads(cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout)
            # Key ages on /metrics: when each key in use came into use.
            exposed = http.get("/metrics").text
            for purpose in ("header", "log", "kek", "cookie"):
                assert 'recordseal_key_created_timestamp_seconds{key_id="' in exposed
                assert f'purpose="{purpose}"' in exposed, purpose
            assert f'key_id="{new}",purpose="header"' in exposed
    finally:
        kill_service(server)
    cli(["keys", "export", "--data-dir", str(data), "--keys-out", str(tmp_path / "k.json"),
         "--trust-out", str(tmp_path / "t.json")])  # fmt: skip
    keys = load_key_directory((tmp_path / "k.json").read_bytes())
    trust = load_trust_store((tmp_path / "t.json").read_bytes())
    # Both keys in the directory, the old one with the end of its validity.
    validity = {k.key_id: k for k in keys.keys}
    assert validity[old].not_after is not None and validity[new].not_after is None
    verdicts = {verify_bundle(b, keys, trust).verdict for b in bundles}
    assert verdicts == {"VERIFIED"}
    headers = [header for header in listed["keys"] if header["purpose"] == "header"]
    assert {h["key_id"]: h["active"] for h in headers} == {old: False, new: True}
    assert all(Path(k["location"]).parent == data / "keys" for k in listed["keys"])
    purposes = {k["purpose"] for k in listed["keys"]}
    assert purposes == {"header", "log", "kek", "cookie"}
    kek = (data / "keys" / "kek.key").read_bytes()
    assert kek.hex() not in json.dumps(listed)  # ids, never secrets


def test_revoking_the_active_key_rotates_and_marks_it_compromised(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    server = start_service(data, port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            first = http.post("/v1/records", json=ONE)
            old = first.json()["key_id"]
            revoked = cli(
                ["keys", "revoke", old, "--compromised-at", "2026-01-01T00:00:00Z",
                 "--data-dir", str(data), "--json"]
            )  # fmt: skip
            report = json.loads(revoked.stdout)
            assert report["revoked"]["compromised_at"] == "2026-01-01T00:00:00.000000Z"
            assert report["revoked"]["revoked_at"] is not None
            new = report["new"]["key_id"]
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                answer = http.post("/v1/records", json=ONE)
                assert answer.status_code in (201, 503), answer.text
                if answer.status_code == 201 and answer.json()["key_id"] == new:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the service never signed with the new key")
            listed = json.loads(http.get("/v1/keys").text)
            assert {k["key_id"] for k in listed["keys"]} == {old, new}
            marks = {k["key_id"]: k.get("compromised_at") for k in listed["keys"]}
            assert marks == {old: "2026-01-01T00:00:00.000000Z", new: None}
            # The online verifier applies it (docs/bundle.md, rule 3.5): no witness shows the
            # first record before the compromise, so its header is not trusted; the new key's is.
            for record, status in ((first.json(), "failed"), (answer.json(), "passed")):
                bundle = http.post(
                    f"/v1/records/{record['record_id']}/disclosure", json={"fields": []}
                ).content
                check = http.post("/v1/verify", content=bundle, headers=JSON).json()["checks"][2]
                assert check["status"] == status, check
                if status == "failed":
                    assert "compromised" in check["detail"], check
    finally:
        kill_service(server)
    # Refused, changing nothing: an unknown key, a time in the future, a time without offset.
    for bad in (
        ["nope", "--compromised-at", "2026-01-01T00:00:00Z"],
        [new, "--compromised-at", "2999-01-01T00:00:00Z"],
        [new, "--compromised-at", "2026-01-01T00:00:00"],
    ):
        refused = cli(["keys", "revoke", *bad, "--data-dir", str(data)], check=False)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith("recordseal: "), refused.stderr


def test_a_data_directory_without_the_stores_header_key_is_refused(tmp_path: Path) -> None:
    """A store whose keys directory lacks its active key (a restore without the keys): the
    service refuses to start rather than sign under a new identity."""
    data = tmp_path / "data"
    data.mkdir()
    create_token(data, "acme")
    kill_service(start_service(data, free_port()))  # the first key is made and registered
    (data / "keys" / "header-signing.ed25519").unlink()
    server = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(data), "--port",
         str(free_port())],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert server.returncode != 0
    assert "restore the keys directory from its backup" in server.stdout + server.stderr
    assert not (data / "keys" / "header-signing.ed25519").exists()  # no new key was made


def test_the_cookie_key_rotates_and_is_listed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    create_token(data, "acme")
    kill_service(start_service(data, free_port()))  # the keys are made
    rotated = json.loads(
        cli(["keys", "rotate", "cookie", "--data-dir", str(data), "--json"]).stdout
    )
    assert rotated == {"new": {"key_id": "panel-2"}}
    listed = json.loads(cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout)
    cookies = {k["key_id"]: k["active"] for k in listed["keys"] if k["purpose"] == "cookie"}
    assert cookies == {"panel-1": False, "panel-2": True}
    assert (data / "keys" / "panel-cookie-2.key").stat().st_mode & 0o777 == 0o600


def test_the_log_key_rotates_and_the_log_is_witnessed_throughout(tmp_path: Path) -> None:
    """``keys rotate log`` (both keys sign each checkpoint) and ``keys rotate log
    --complete`` (the new key alone signs) beside a running service: its demo witness follows
    the data directory's log keys by itself, so every record on the way is cosigned, and every
    bundle is VERIFIED with one export."""
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    args = ["--demo-witness", str(tmp_path / "witness")]

    def witnessed(http: httpx.Client, n: int) -> dict:  # type: ignore[type-arg]
        record = http.post("/v1/records", json={**ONE, "payload": {"n": n}}).json()
        answer = http.post(
            f"/v1/records/{record['record_id']}/disclosure?wait=30", json={"fields": []}
        )
        assert answer.status_code == 200 and answer.json()["seal"], answer.text
        bundle: dict = answer.json()  # type: ignore[type-arg]
        return bundle

    def log_signatures(bundle: dict) -> list[str]:  # type: ignore[type-arg]
        seal = bundle["seal"]
        return [line for line in seal["proof"].splitlines() if line.startswith(f"— {seal['log']} ")]

    families = tmp_path / "witness" / "log-families.vkeys"
    bundles = []
    server = start_service(data, port, args=args, env={"RECORDSEAL_SEAL_INTERVAL": "0.2"})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            bundles.append(witnessed(http, 1))
            assert len(families.read_text().splitlines()) == 2  # Ed25519 and ML-DSA-44
            rotation = cli(["keys", "rotate", "log", "--data-dir", str(data), "--json"])
            rotated = json.loads(rotation.stdout)
            assert rotated["new"] == "log-signing-2.ed25519"
            assert rotated["new_files"] == ["log-signing-2.ed25519", "log-signing-2.ml-dsa-44"]
            assert rotated["family_vkeys"][0] == rotated["family_vkey"]
            # The event: serve gives the demo witness the new keys (it re-reads keys/ every 2 s).
            deadline = time.monotonic() + 30
            while len(families.read_text().splitlines()) < 4:
                assert time.monotonic() < deadline, "the demo witness was never given the key"
                time.sleep(0.1)
            time.sleep(2.5)  # the sealer re-reads keys/ every 2 s: let it see the new key
            bundles.append(witnessed(http, 2))  # both keys sign
            cli(["keys", "rotate", "log", "--complete", "--data-dir", str(data)])
            time.sleep(2.5)
            bundles.append(witnessed(http, 3))  # the new key alone, cosigned without a restart
    finally:
        kill_service(server)
    assert len(log_signatures(bundles[0])) == 2  # Ed25519 and ML-DSA-44
    assert len(log_signatures(bundles[1])) == 4, bundles[1]["seal"]["proof"]
    assert len(log_signatures(bundles[2])) == 2, bundles[2]["seal"]["proof"]
    exported = cli(["keys", "export", "--data-dir", str(data), "--keys-out",
                    str(tmp_path / "k.json"), "--trust-out", str(tmp_path / "t.json")])  # fmt: skip
    # Two logs, each with four keys: counted apart (it said "8 logs").
    header_keys = len(json.loads((tmp_path / "k.json").read_text())["keys"])
    assert exported.stdout.splitlines()[0] == (
        f"key directory: {tmp_path / 'k.json'} (2 logs, 8 log keys; {header_keys} header key"
        + ("s)" if header_keys != 1 else ")")
    )
    keys = load_key_directory((tmp_path / "k.json").read_bytes())
    trust = load_trust_store((tmp_path / "t.json").read_bytes())
    # One tenant log and the deployment's aggregate log (docs/tlog.md), each listed once per
    # key: two generations of two (Ed25519 and ML-DSA-44).
    assert sorted(log.origin for log in keys.logs) == [
        *["recordseal.local"] * 4,
        *["recordseal.local/acme/default"] * 4,
    ]
    for bundle in bundles:
        result = verify_bundle(json.dumps(bundle).encode(), keys, trust)
        assert result.verdict == "VERIFIED", result
    listed = json.loads(cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout)
    logs = [
        (Path(k["location"]).name, k["algorithm"], k["active"])
        for k in listed["keys"]
        if k["purpose"] == "log"
    ]
    assert logs == [
        ("log-signing.ed25519", "Ed25519", False),
        ("log-signing.ml-dsa-44", "ML-DSA-44", False),
        ("log-signing-2.ed25519", "Ed25519", True),
        ("log-signing-2.ml-dsa-44", "ML-DSA-44", True),
    ]


def _aggregated(answer: httpx.Response) -> bool:
    """The aggregate's checkpoint (c2sp.org/tlog-tiles) answers and holds an entry."""
    return answer.status_code == 200 and int(answer.text.splitlines()[1]) >= 1


def test_a_compromised_log_key_is_retired_for_a_new_one_and_named_in_the_directory(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    token = create_token(data, "acme")
    auth = {"Authorization": f"Bearer {token}"}
    server = start_service(data, port, env={"RECORDSEAL_SEAL_INTERVAL": "0.2"})
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            record = http.post("/v1/records", json=ONE).json()
            bundle = http.post(
                f"/v1/records/{record['record_id']}/disclosure?wait=10", json={"fields": []}
            ).content
            # The aggregate log takes the tenant's checkpoint in its own round (at most once a
            # second): wait for it, so both logs are in the store before the key is revoked.
            deadline = time.monotonic() + 120
            while not _aggregated(http.get("/logs/recordseal.local/checkpoint")):
                assert time.monotonic() < deadline, "the aggregate never took the checkpoint"
                time.sleep(0.2)
    finally:
        kill_service(server)
    listed = json.loads(cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout)
    old, old_mldsa = (
        next(k["key_id"] for k in listed["keys"] if (k["purpose"], k["algorithm"]) == kind)
        for kind in (("log", "Ed25519"), ("log", "ML-DSA-44"))
    )
    revoked = cli(
        ["keys", "revoke", old, "--compromised-at", "2026-01-01T00:00:00Z",
         "--data-dir", str(data), "--json"]
    )  # fmt: skip
    report = json.loads(revoked.stdout)
    assert report["revoked"]["purpose"] == "log"
    assert report["new"] == {"file": "log-signing-2.ed25519"}
    assert (data / "keys" / "log-signing.ed25519.retired").exists()
    assert (data / "keys" / "log-signing.ml-dsa-44.retired").exists()  # its generation's
    export = ["keys", "export", "--data-dir", str(data), "--keys-out", str(tmp_path / "k.json"),
              "--trust-out", str(tmp_path / "t.json")]  # fmt: skip
    cli(export)
    exported = json.loads((tmp_path / "k.json").read_text())
    # The tenant log and the aggregate log (docs/tlog.md) share the key: both are marked.
    marks = sorted(
        (entry["origin"], entry.get("compromised_at") or "") for entry in exported["logs"]
    )
    assert [mark for _, mark in marks] == ["", "", "", "2026-01-01T00:00:00.000000Z"] * 2
    # The checkpoint's ML-DSA-44 signature is by a key not compromised: it still vouches.
    result = verify_bundle(bundle, load_key_directory((tmp_path / "k.json").read_bytes()))
    assert result.checks[3].status == "passed", result.checks[3].detail
    # Its generation's ML-DSA-44 key compromised too (retired: nothing rotates again).
    again = cli(
        ["keys", "revoke", old_mldsa, "--compromised-at", "2026-01-01T00:00:00Z",
         "--data-dir", str(data), "--json"]
    )  # fmt: skip
    assert json.loads(again.stdout)["new"] is None
    cli(export)
    # No witness shows the checkpoint before the compromise: check 4 fails naming it (rule 4.8).
    result = verify_bundle(bundle, load_key_directory((tmp_path / "k.json").read_bytes()))
    assert result.checks[3].status == "failed" and "compromised" in result.checks[3].detail
