"""Keys in a hardware module with real processes (docs/operations.md, "Keys in a hardware
module"): SoftHSM2 (tests/hsm.py) holds the header, log and key-encryption keys of a
two-worker service, which ingests from concurrent clients, seals, is cosigned by its demo
witness, erases a subject, and gives bundles that reach VERIFIED, with no key material of
those keys in the data directory; the settings name module keys; a service with file keys
moves each key into the module under concurrent ingest; a KEK rotation inside the module
destroys the old KEK there."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from recordseal.crypto.hsm import ModuleUri
from recordseal.crypto.wrapped_seeds import WRAP_LABEL as WRAP
from recordseal.crypto.wrapped_seeds import WrappedSeedError, read_wrapped_seed
from recordseal.ledger.log_keys import log_keys
from recordseal.settings import Settings
from recordseal.tlog import MLDSA44CosignatureSigner, log_verifier, open_checkpoint
from recordseal.verify import load_key_directory, load_trust_store, verify_bundle
from tests.hsm import softhsm, unique
from tests.servers import Posting, create_token, free_port, kill_service, start_service

RECORD: dict[str, object] = {
    "stream": "s",
    "record_type": "t",
    "occurred_at": "2026-11-26T08:00:00Z",
}
#: Names of key files whose keys, in the module, must leave no file behind.
FILE_KEYS = ("header-signing", "log-signing", "kek", "subject-index", "panel-secrets")


def cli(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *argv],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    softhsm()  # SOFTHSM2_CONF set before any process of the test starts
    directory = tmp_path / "data"
    directory.mkdir()
    yield directory


def assert_wrapped(keys_dir: Path, wrapped: Path, wrap: ModuleUri) -> None:
    """The ML-DSA-44 seed of ``wrapped`` is in no file in the clear: the file holds its
    ciphertext under ``wrap``, a key in the module, and only the module opens it; the seed is
    the one the log signs with."""
    [key] = [k for k in log_keys(keys_dir) if k.path == wrapped]
    assert key.seed is None  # read without the module: unwrapped when it signs
    seed = read_wrapped_seed(wrapped)
    assert len(seed) == 32
    signer = key.signer("recordseal.local")
    assert signer.public_key == MLDSA44CosignatureSigner.from_seed("x", seed).public_key
    for path in keys_dir.iterdir():
        content = path.read_bytes()
        assert seed not in content and seed.hex().encode() not in content, path
    document = json.loads(wrapped.read_text())
    assert (document["format"], document["key"]) == ("recordseal/wrapped-seed/v1", str(wrap))
    text = "recordseal.local\n1\n" + "A" * 43 + "=\n"
    cosignature = signer.cosign(text, 1)  # the seed unwrapped in the module to sign
    assert signer.verifier().verify_signed(text, 1, cosignature.signature)
    elsewhere = wrapped.with_name("log-signing-9.ml-dsa-44.wrapped")
    elsewhere.write_bytes(wrapped.read_bytes())  # bound to its name: another does not unwrap
    try:
        with pytest.raises(WrappedSeedError, match="the module did not unwrap it"):
            read_wrapped_seed(elsewhere)
    finally:
        elsewhere.unlink()


def export(data: Path, into: Path) -> tuple[object, object]:
    cli(["keys", "export", "--data-dir", str(data), "--keys-out", str(into / "k.json"),
         "--trust-out", str(into / "t.json")])  # fmt: skip
    keys = load_key_directory((into / "k.json").read_bytes())
    return keys, load_trust_store((into / "t.json").read_bytes())


@contextmanager
def served(data: Path, **options: Any) -> Iterator[httpx.Client]:
    """A service on ``data`` (``start_service``'s options) and a client of tenant ``acme``
    whose stream ``s`` exists; the service is killed on exit."""
    token = create_token(data, "acme")
    port = free_port()
    server = start_service(data, port, **options)
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            yield http
    finally:
        kill_service(server)


#: The deployment's aggregate log: the service's origin (docs/tlog.md, "The aggregate log").
AGGREGATE = "recordseal.local"


def wait_for_aggregate(http: httpx.Client, lines: int, timeout: float = 120) -> str:
    """The aggregate's newest checkpoint once it carries ``lines`` log signatures (sealed
    from a round after the sealer took the keys: at most once a second)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = http.get(f"/logs/{AGGREGATE}/checkpoint")
        if answer.status_code == 200:
            signed = [
                line for line in answer.text.splitlines() if line.startswith(f"— {AGGREGATE} ")
            ]
            if len(signed) == lines:
                return answer.text
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.2)


def disclose_all(http: httpx.Client, records: list[dict]) -> list[bytes]:  # type: ignore[type-arg]
    """The bundle of each record; the newest first, so that waiting for it to be witnessed
    waits for every earlier one of its log."""
    last = max(records, key=lambda r: r["seq"])
    bundles = []
    for record in [last, *(r for r in records if r is not last)]:
        answer = http.post(
            f"/v1/records/{record['record_id']}/disclosure?wait=60", json={"fields": ["o:/n"]}
        )
        assert answer.status_code == 200, answer.text
        bundles.append(answer.content)
    return bundles


def test_a_service_whose_keys_live_in_the_module_ingests_seals_and_verifies(
    data: Path, tmp_path: Path
) -> None:
    hsm = softhsm()
    made = {}
    for purpose in ("header", "log", "kek"):
        location = hsm.uri(unique(purpose))
        report = json.loads(
            cli(
                ["keys", "init", purpose, "--hsm", location, "--data-dir", str(data), "--json"]
            ).stdout
        )
        assert report["purpose"] == purpose and location in report["made"]
        made[purpose] = location
    refused = cli(["keys", "init", "log", "--hsm", hsm.uri(unique("log")), "--data-dir",
                   str(data)], check=False)  # fmt: skip
    assert refused.returncode == 2 and "has a log key already" in refused.stderr
    token = create_token(data, "acme")
    port = free_port()
    server = start_service(
        data,
        port,
        workers=2,
        args=["--demo-witness", str(tmp_path / "witness")],
        env={"RECORDSEAL_SEAL_INTERVAL": "0.2"},
    )
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            with Posting(url, token, RECORD, lambda number, n: f"c{number}-{n % 5}") as posting:
                posting.wait_for(200)
            assert {a.status_code for a in posting.answers} == {201}
            records = [a.json() for a in posting.answers]
            header_ids = {r["key_id"] for r in records}
            bundles = disclose_all(http, records[:: len(records) // 20])
            # Erasure still works with the KEK in the module: one key destroyed, the
            # subject's payloads gone, every other subject's payload still opens.
            kept = http.post(
                "/v1/records", json={**RECORD, "subject_id": "kept", "payload": {"n": 1}}
            )
            lost = http.post(
                "/v1/records", json={**RECORD, "subject_id": "lost", "payload": {"n": 2}}
            )
            assert (kept.status_code, lost.status_code) == (201, 201), lost.text
            erased = http.post("/v1/subjects/lost/erase")
            assert erased.status_code == 200, erased.text
            assert erased.json()["payloads_deleted"] == 1, erased.text
            gone = http.get(f"/v1/records/{lost.json()['record_id']}/payload")
            assert (gone.status_code, gone.json()["code"]) == (410, "subject_erased")
            assert http.get(f"/v1/records/{kept.json()['record_id']}/payload").status_code == 200
            listed = cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout
    finally:
        kill_service(server)
    keys, trust = export(data, tmp_path)
    assert {verify_bundle(b, keys, trust).verdict for b in bundles} == {"VERIFIED"}  # type: ignore[arg-type]
    # Where each key lives: the module, named without a PIN; no key file of those purposes.
    locations = {(k["purpose"], k["algorithm"]): k["location"] for k in json.loads(listed)["keys"]}
    assert locations["header", "Ed25519"] == str(ModuleUri.parse(made["header"]))
    assert locations["log", "Ed25519"] == str(ModuleUri.parse(made["log"]))
    assert locations["kek", None] == str(ModuleUri.parse(made["kek"]))
    # SoftHSM2 has no ML-DSA: the log's ML-DSA-44 seed is a file beside the module's
    # reference, wrapped under an AES key the module made (docs/operations.md, "Keys").
    wrapped = data / "keys" / "log-signing.ml-dsa-44.wrapped"
    wrap = ModuleUri.parse(made["log"]).with_object(ModuleUri.parse(made["log"]).object + WRAP)
    assert locations["log", "ML-DSA-44"] == f"{wrapped} (wrapped by {wrap})"
    assert_wrapped(data / "keys", wrapped, wrap)
    assert len(header_ids) == 1
    leftovers = [p.name for p in (data / "keys").iterdir() if p.name.startswith(FILE_KEYS)]
    assert sorted(leftovers) == sorted(
        ["kek.pkcs11", "log-signing.pkcs11", "log-signing.ml-dsa-44.wrapped",
         "panel-secrets.pkcs11", "subject-index.pkcs11"]
    )  # fmt: skip
    pin = hsm.pin_file.read_text().strip()
    for path in data.rglob("*"):
        if path.is_file():
            assert pin.encode() not in path.read_bytes(), path  # logs and references too
    assert pin not in listed


def test_settings_name_module_keys_and_a_key_the_deployment_does_not_use_is_refused(
    data: Path, tmp_path: Path
) -> None:
    hsm = softhsm()
    locations = {purpose: ModuleUri.parse(hsm.uri(unique(purpose))) for purpose in ("h", "l")}
    locations["h"].generate("ed25519")
    locations["l"].generate("ed25519")
    kek = ModuleUri.parse(hsm.uri(unique("kek")))
    for label, kind in ((kek.object, "aes256"), (kek.object + ".subject-index", "hmac-sha256"),
                        (kek.object + ".panel-secrets", "aes256")):  # fmt: skip
        kek.with_object(label).generate(kind)
    env = {
        "RECORDSEAL_HEADER_KEY": str(locations["h"]),
        "RECORDSEAL_LOG_KEY": str(locations["l"]),
        "RECORDSEAL_KEK": str(kek),
    }
    with served(data, workers=2, env=env) as http:
        answer = http.post("/v1/records", json={**RECORD, "subject_id": "a", "payload": {"n": 1}})
        assert answer.status_code == 201, answer.text
    names = sorted(p.name for p in (data / "keys").iterdir() if p.name.startswith(FILE_KEYS))
    assert names == [
        "kek.pkcs11", "log-signing.ml-dsa-44.wrapped", "log-signing.pkcs11",
        "panel-secrets.pkcs11", "subject-index.pkcs11",
    ]  # fmt: skip
    listed = json.loads(cli(["keys", "list", "--data-dir", str(data), "--json"]).stdout)
    [header] = [k for k in listed["keys"] if k["purpose"] == "header"]
    assert header["location"] == str(locations["h"]) and header["key_id"] == answer.json()["key_id"]
    # A setting that names a key this deployment does not use: the start is refused, naming it.
    other = ModuleUri.parse(hsm.uri(unique("other")))
    other.generate("ed25519")
    refused = subprocess.run(
        [sys.executable, "-m", "recordseal.cli", "serve", "--data-dir", str(data),
         "--port", str(free_port()), "--workers", "1"],
        env={**env, "RECORDSEAL_LOG_KEY": str(other), "PATH": "/usr/bin:/bin",
             "SOFTHSM2_CONF": str(hsm.root / "softhsm2.conf")},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0
    output = refused.stdout + refused.stderr
    assert "RECORDSEAL_LOG_KEY" in output and other.object in output, output[-2000:]


def test_file_keys_move_into_the_module_under_concurrent_ingest(data: Path, tmp_path: Path) -> None:
    hsm = softhsm()
    token = create_token(data, "acme")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_service(
        data,
        port,
        workers=2,
        args=["--demo-witness", str(tmp_path / "witness")],
        env={"RECORDSEAL_SEAL_INTERVAL": "0.2"},
    )
    header = ModuleUri.parse(hsm.uri(unique("header")))
    kek = ModuleUri.parse(hsm.uri(unique("kek")))
    log = ModuleUri.parse(hsm.uri(unique("log")))
    try:
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as http:
            assert http.post("/v1/streams", json={"name": "s"}).status_code == 201
            with Posting(url, token, RECORD, lambda number, n: f"c{number}-{n % 7}") as posting:
                posting.wait_for(50)
                moved = json.loads(
                    cli(
                        [
                            "keys",
                            "rotate",
                            "header",
                            "--hsm",
                            str(header),
                            "--data-dir",
                            str(data),
                            "--json",
                        ]
                    ).stdout
                )
                assert moved["new"]["location"] == str(header)
                rewrapped = json.loads(
                    cli(
                        [
                            "keys",
                            "rotate",
                            "kek",
                            "--hsm",
                            str(kek),
                            "--data-dir",
                            str(data),
                            "--json",
                            "--batch",
                            "3",
                        ]
                    ).stdout
                )
                assert rewrapped["destroyed"] == ["kek.key"] and rewrapped["rewrapped"] > 0
                cli(["keys", "rotate", "log", "--hsm", str(log), "--data-dir", str(data)])
                time.sleep(2.5)  # the sealer re-reads keys/ every 2 s
                seen = len(posting.answers)
                posting.wait_for(seen + 50)
            assert {a.status_code for a in posting.answers} == {201}
            records = [a.json() for a in posting.answers]
            assert {r["key_id"] for r in records} == {
                moved["old"]["key_id"],
                moved["new"]["key_id"],
            }
            # Payloads wrapped under the file KEK and under the module's both open.
            bundles = disclose_all(http, records[:: max(1, len(records) // 25)] + records[-3:])
            # The aggregate is signed as the tenant logs are: its next checkpoint carries
            # both generations' log lines too, the module key's among them (public: no token).
            aggregate = wait_for_aggregate(http, lines=4)
    finally:
        kill_service(server)
    assert not (data / "keys" / "kek.key").exists()
    assert (data / "keys" / "kek-2.pkcs11").exists() and (
        data / "keys" / "log-signing-2.pkcs11"
    ).exists()
    # The rotation into the module wrapped the new generation's ML-DSA-44 seed there; the
    # file keys' generation keeps its seed file.
    wrapped = data / "keys" / "log-signing-2.ml-dsa-44.wrapped"
    assert not (data / "keys" / "log-signing-2.ml-dsa-44").exists()
    assert (data / "keys" / "log-signing.ml-dsa-44").exists()
    wrap = ModuleUri.parse(json.loads(wrapped.read_text())["key"])
    assert wrap.object.endswith(WRAP)
    assert_wrapped(data / "keys", wrapped, wrap)
    listed = cli(["keys", "list", "--data-dir", str(data)]).stdout
    assert f"{wrapped} (wrapped by {wrap})" in listed
    keys, trust = export(data, tmp_path)
    verdicts = {verify_bundle(b, keys, trust).verdict for b in bundles}  # type: ignore[arg-type]
    assert verdicts == {"VERIFIED"}
    # The newest record was sealed after the sealer took the module's log key: its checkpoint
    # carries both generations' signatures, the file key's and the module key's, each with its
    # ML-DSA-44 companion (and the witness's cosignature).
    seal = json.loads(bundles[0])["seal"]
    lines = seal["proof"].splitlines()
    assert len([line for line in lines if line.startswith(f"— {seal['log']} ")]) == 4
    # The aggregate's four lines verify with the exported keys of its origin, the module's
    # Ed25519 key (generation 2) and the file keys alike.
    aggregate_keys = [e for e in keys.logs if e.origin == AGGREGATE]  # type: ignore[attr-defined]
    _, verified = open_checkpoint(aggregate, [log_verifier(e.vkey) for e in aggregate_keys])
    assert len(verified.verified) == 4
    (in_module,) = [k.public for k in log_keys(data / "keys") if k.location is not None]
    signed_by = {base64.b64decode(entry.vkey.split("+", 2)[2])[1:] for entry in aggregate_keys}
    assert in_module in signed_by


def test_a_kek_rotation_inside_the_module_destroys_the_old_kek_there(data: Path) -> None:
    hsm = softhsm()
    first = ModuleUri.parse(hsm.uri(unique("kek")))
    cli(["keys", "init", "kek", "--hsm", str(first), "--data-dir", str(data)])
    with served(data, env={"RECORDSEAL_SEAL_INTERVAL": "0.2"}) as http:
        records = [
            http.post(
                "/v1/records", json={**RECORD, "subject_id": f"s{n}", "payload": {"n": n}}
            ).json()
            for n in range(6)
        ]
        second = ModuleUri.parse(hsm.uri(unique("kek")))
        rotate = ["keys", "rotate", "kek", "--hsm", str(second), "--data-dir", str(data)]
        done = json.loads(cli([*rotate, "--json"]).stdout)
        assert done == {"generation": 2, "rewrapped": 6, "destroyed": ["kek.pkcs11"],
                        "resumed": False}  # fmt: skip
        for n, record in enumerate(records):  # every payload opens under the new KEK
            answer = http.post(
                f"/v1/records/{record['record_id']}/disclosure", json={"fields": ["o:/n"]}
            )
            assert answer.status_code == 200, answer.text
            assert answer.json()["fields"][0]["value"] == n
    token = first.open_token()
    assert not token.has(first.object)  # destroyed in the module, not only forgotten
    assert token.has(first.object + ".subject-index")  # the index key stays


def test_a_module_that_cannot_sign_refuses_the_records_and_stores_none(data: Path) -> None:
    hsm = softhsm()
    header = ModuleUri.parse(hsm.uri(unique("header")))
    cli(["keys", "init", "header", "--hsm", str(header), "--data-dir", str(data)])
    with served(data, env={"RECORDSEAL_SEAL_INTERVAL": "0"}) as http:
        body = {**RECORD, "subject_id": "a", "payload": {"n": 1}}
        assert http.post("/v1/records", json=body).status_code == 201
        assert header.open_token().destroy(header.object) == 2  # both halves of the pair
        refused = http.post("/v1/records", json=body)
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "signing_key_unavailable"
        batch = http.post("/v1/records:batch", json={"records": [body, body]})
        assert batch.status_code == 503 or {
            item.get("code") for item in batch.json()["results"]
        } == {"signing_key_unavailable"}, batch.text
        port = httpx.URL(str(http.base_url)).port
    with sqlite3.connect(Settings(data_dir=data).database_path) as database:
        assert database.execute("SELECT count(*) FROM records").fetchone() == (1,)
    log = (data / f"server-{port}.log").read_text()
    assert "keys.header_key_module_failed" in log
    assert hsm.pin_file.read_text().strip() not in log
