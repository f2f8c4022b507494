"""Proofs that keep up (issue 19): the freshest witnessed checkpoint, ``?wait``, refreshing a
bundle anyone holds, and big bundles verified online. Through HTTP, on each backend, with a
real ``recordseal witness serve`` process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from recordseal.core import verify_consistency
from recordseal.crypto.keyfiles import read_or_create_secret
from recordseal.ops.tokens import create_token
from recordseal.services.bundles import tlog_proof_text as format_tlog_proof
from recordseal.settings import Settings, WitnessSetting
from recordseal.tlog import Checkpoint, Ed25519Signer, sign_checkpoint
from recordseal.verify import (
    INCOMPLETE,
    VERIFIED,
    decode_bundle,
    load_key_directory,
    load_trust_store,
    verify_bundle,
)
from recordseal.verify.sealing import open_seal
from recordseal.verify.tlogproof import parse_tlog_proof
from recordseal.web.app import create_app
from tests.servers import witness_key, witness_server

ORIGIN = "test.recordseal"
LOG = f"{ORIGIN}/acme/default"
WITNESS = "witness.test"
JSON = {"Content-Type": "application/json"}


def log_signer(data: Path, origin: str = LOG) -> Ed25519Signer:
    return Ed25519Signer.from_seed(
        origin, read_or_create_secret(data / "keys" / "log-signing.ed25519")
    )


def settings_of(data: Path, store_settings: Settings, **more: Any) -> Settings:
    return Settings(
        data_dir=data,
        database_url=store_settings.database_url,
        origin=ORIGIN,
        seal_interval=0.05,
        **more,
    )


@contextmanager
def service(settings: Settings) -> Iterator[tuple[TestClient, dict[str, str]]]:  # type: ignore[type-arg]
    with TestClient(create_app(settings)) as client:
        token = asyncio.run(create_token(settings, "acme", "t"))
        yield client, {"Authorization": f"Bearer {token}"}


def post_records(client: TestClient, headers: dict[str, str], payloads: list[dict]) -> list[str]:  # type: ignore[type-arg]
    if client.post("/v1/streams", json={"name": "orders"}, headers=headers).status_code == 201:
        pass
    ids = []
    for i, payload in enumerate(payloads):
        response = client.post(
            "/v1/records",
            headers=headers,
            json={
                "stream": "orders",
                "record_type": "order",
                "subject_id": f"c{i}",
                "occurred_at": "2026-11-21T08:00:00Z",
                "payload": payload,
            },
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["record_id"])
    return ids


def witnesses_setting(url: str, vkey: str) -> tuple[WitnessSetting, ...]:
    return (WitnessSetting(WITNESS, url, vkey),)


def trust_of(vkey: str) -> bytes:
    return json.dumps(
        {"format": "recordseal/trust/v1", "witnesses": [{"name": WITNESS, "vkey": vkey}]}
    ).encode()


def verify_with(bundle: bytes, keys: bytes, witness_vkey: str) -> Any:
    return verify_bundle(bundle, load_key_directory(keys), load_trust_store(trust_of(witness_vkey)))


def checks(result: Any) -> list[tuple[int, str, str]]:
    return [(c.number, c.status, c.detail) for c in result.checks]


def test_a_witness_configured_after_sealing_brings_old_records_to_verified(
    tmp_path: Path, store_settings: Settings
) -> None:
    data = tmp_path / "service"
    plain = settings_of(data, store_settings)
    with service(plain) as (client, headers):
        ids = post_records(client, headers, [{"amount": 100 + i, "note": "x"} for i in range(3)])
        # Asked right after ingest, the disclosure waits for the seal (no witness configured:
        # sealing is all there is to wait for).
        early = client.post(
            f"/v1/records/{ids[1]}/disclosure?wait=20",
            headers=headers,
            json={"fields": ["o:/amount"]},
        )
        assert early.status_code == 200, early.text
        assert early.json()["seal"] is not None
        old_bundle = early.content
        keys = client.get("/v1/keys").content
    old = verify_bundle(old_bundle, load_key_directory(keys))
    assert old.verdict == INCOMPLETE and old.check(4).status == "passed", checks(old)

    vkey = witness_key(tmp_path / "witness", WITNESS)
    with witness_server(
        tmp_path / "witness", WITNESS, {LOG: log_signer(data).verifier().vkey}
    ) as url:
        witnessed = settings_of(data, store_settings, witnesses=witnesses_setting(url, vkey))
        with service(witnessed) as (client, headers):
            # No new record: the newest checkpoint is offered at start and cosigned.
            fresh = client.post(
                f"/v1/records/{ids[1]}/disclosure?wait=30",
                headers=headers,
                json={"fields": ["o:/amount"]},
            )
            assert fresh.status_code == 200, fresh.text
            online = client.post("/v1/verify", content=fresh.content, headers=JSON).json()
            assert online["verdict"] == VERIFIED, online
            # Anyone holding the old bundle refreshes it: no token.
            refreshed = client.post("/v1/proofs:refresh?wait=30", content=old_bundle, headers=JSON)
            assert refreshed.status_code == 200, refreshed.text
            assert refreshed.headers["cache-control"] == "no-store"
            assert (
                client.post("/v1/verify", content=refreshed.content, headers=JSON).json()["verdict"]
                == VERIFIED
            )
            consistency = refreshed.headers["recordseal-consistency"]
            keys = client.get("/v1/keys").content

    result = verify_bundle(
        fresh.content, load_key_directory(keys), load_trust_store(trust_of(vkey))
    )
    assert result.verdict == VERIFIED, checks(result)
    assert result.time_bracket.not_after_by == WITNESS
    renewed = decode_bundle(refreshed.content)
    before = decode_bundle(old_bundle)
    # The same disclosure: header, signature, fields untouched; only the proof is new.
    assert (renewed.header, renewed.signature, renewed.fields, renewed.coverage) == (
        before.header,
        before.signature,
        before.fields,
        before.coverage,
    )
    again = verify_bundle(
        refreshed.content, load_key_directory(keys), load_trust_store(trust_of(vkey))
    )
    assert again.verdict == VERIFIED, checks(again)
    # The header's consistency proof links the old checkpoint to the new one.
    assert before.seal is not None and renewed.seal is not None
    old_checkpoint = open_seal(before.seal).checkpoint
    new_checkpoint = open_seal(renewed.seal).checkpoint
    low, high, *hashes = consistency.split(" ")
    assert (int(low), int(high)) == (old_checkpoint.size, new_checkpoint.size)
    proof = [base64.b64decode(node) for node in hashes]
    verify_consistency(
        old_checkpoint.size,
        new_checkpoint.size,
        old_checkpoint.root_hash,
        new_checkpoint.root_hash,
        proof,
    )


def sealed_service_with_witness(
    tmp_path: Path, store_settings: Settings
) -> tuple[Path, str, dict[str, str]]:
    """The service's data directory (keys made), the witness vkey and the witness's logs."""
    data = tmp_path / "service"
    with service(settings_of(data, store_settings)):
        pass
    vkey = witness_key(tmp_path / "witness", WITNESS)
    return data, vkey, {LOG: log_signer(data).verifier().vkey}


def test_a_4096_field_disclosure_verifies_online(tmp_path: Path, store_settings: Settings) -> None:
    data, vkey, logs = sealed_service_with_witness(tmp_path, store_settings)
    payload = {f"f{i:04d}": i for i in range(4096)}  # the spec's limit of committed fields
    with witness_server(tmp_path / "witness", WITNESS, logs) as url:
        settings = settings_of(data, store_settings, witnesses=witnesses_setting(url, vkey))
        with service(settings) as (client, headers):
            (record_id,) = post_records(client, headers, [payload])
            response = client.post(
                f"/v1/records/{record_id}/disclosure?wait=30",
                headers=headers,
                json={"fields": [f"o:/f{i:04d}" for i in range(4096)]},
            )
            assert response.status_code == 200, response.text
            bundle = response.content
            assert len(bundle) > 3_500_000  # over the former 1 MiB limit, well under 16 MiB
            online = client.post("/v1/verify", content=bundle, headers=JSON)
            assert online.status_code == 200, online.text
            result = online.json()
            assert result["verdict"] == VERIFIED, result["checks"]
            assert result["checks"][1]["detail"].startswith("4096 of 4096 fields verified")
            assert len(result["disclosed"]) == 4096
            form = client.post("/verify-record", data={"bundle": bundle.decode()})
            assert form.status_code == 200
            assert '<p class="verdict VERIFIED" id="verdict" role="status">VERIFIED</p>' in (
                form.text
            )
            too_big = client.post(
                "/v1/verify", content=b" " * (settings.max_bundle_bytes + 1), headers=JSON
            )
            assert too_big.status_code == 413


def test_online_verification_reads_keys_again_only_when_a_bundle_names_new_ones(
    tmp_path: Path, store_settings: Settings
) -> None:
    data = tmp_path / "service"
    with service(settings_of(data, store_settings)) as (client, headers):
        store = client.app.state.services.store.logs
        reads = []
        original = store.log_origins

        async def counted() -> list[str]:
            reads.append(1)
            return await original()

        store.log_origins = counted  # a spy on the store the service reads its keys from
        (acme,) = post_records(client, headers, [{"a": 1}])
        bundle = client.post(
            f"/v1/records/{acme}/disclosure?wait=20", headers=headers, json={"fields": ["o:/a"]}
        ).content
        for _ in range(5):
            result = client.post("/v1/verify", content=bundle, headers=JSON).json()
            assert result["checks"][3]["status"] == "passed"
        verifier = client.app.state.verifier
        assert (len(reads), verifier.builds) == (1, 1)
        # A bundle naming a made-up key: the keys are read again (at most once a second),
        # found unchanged, and nothing is rebuilt.
        stranger = json.loads(bundle)
        stranger["header"]["key_id"] = "00" * 8
        for _ in range(3):
            client.post("/v1/verify", content=json.dumps(stranger), headers=JSON)
        assert verifier.builds == 1 and len(reads) <= 2
        # A new tenant's log: its first bundle makes the verifier rebuild, once.
        settings = settings_of(data, store_settings)
        globex = {"Authorization": f"Bearer {asyncio.run(create_token(settings, 'globex', 't'))}"}
        (other,) = post_records(client, globex, [{"b": 2}])
        other_bundle = client.post(
            f"/v1/records/{other}/disclosure?wait=20", headers=globex, json={"fields": ["o:/b"]}
        ).content
        deadline = time.monotonic() + 10
        while True:
            result = client.post("/v1/verify", content=other_bundle, headers=JSON).json()
            if result["checks"][3]["status"] == "passed":
                break
            assert time.monotonic() < deadline, result["checks"][3]
            time.sleep(0.2)
        assert verifier.builds == 2
        for bundle_bytes in (bundle, other_bundle, bundle):
            result = client.post("/v1/verify", content=bundle_bytes, headers=JSON).json()
            assert result["checks"][3]["status"] == "passed"
        assert verifier.builds == 2


def _mutated(bundle: bytes, change: Any) -> bytes:
    document = json.loads(bundle)
    change(document)
    return json.dumps(document).encode()


def _with_checkpoint(bundle: bytes, note: str, index: int | None = None) -> bytes:
    """The bundle with its seal's checkpoint (and index) replaced."""
    proof = parse_tlog_proof(json.loads(bundle)["seal"]["proof"])
    text = format_tlog_proof(proof.index if index is None else index, proof.hashes, note)
    return _mutated(bundle, lambda d: d["seal"].update(proof=text))


def test_refresh_and_wait_refuse_what_they_cannot_serve(
    tmp_path: Path, store_settings: Settings
) -> None:
    data = tmp_path / "service"
    with service(settings_of(data, store_settings)) as (client, headers):
        ids = post_records(client, headers, [{"a": i} for i in range(3)])
        # The last record sealed first: the log then gets no further checkpoint, so the
        # refreshes below meet the checkpoint this bundle holds (the sealer may otherwise seal
        # the records in two rounds, and a refresh rightly answers the newer checkpoint).
        last = client.post(
            f"/v1/records/{ids[2]}/disclosure?wait=20", headers=headers, json={"fields": []}
        )
        assert last.json()["seal"] is not None, last.text
        bundle = client.post(
            f"/v1/records/{ids[1]}/disclosure?wait=20", headers=headers, json={"fields": ["o:/a"]}
        ).content
        signer = log_signer(data)
        opened = open_seal(decode_bundle(bundle).seal)  # type: ignore[arg-type]

        def refresh(body: bytes, query: str = "", **extra: str) -> Any:
            response = client.post(
                f"/v1/proofs:refresh{query}", content=body, headers={**JSON, **extra}
            )
            return response.status_code, response.json().get("code"), response.json().get("field")

        signed = sign_checkpoint(opened.checkpoint, signer)
        fork = Checkpoint(LOG, opened.checkpoint.size, bytes(32))
        other_key = Ed25519Signer.generate(LOG)
        cases = {
            "not JSON": (refresh(b"{"), (400, "request_not_json", None)),
            "no header": (
                refresh(b'{"format": "recordseal/bundle/v1"}'),
                (400, "request_invalid", "header"),
            ),
            "not declared JSON": (
                refresh(bundle, **{"Content-Type": "text/plain"}),
                (415, "unsupported_media_type", "Content-Type"),
            ),
            "another header": (
                refresh(_mutated(bundle, lambda d: d["header"].update(record_type="x"))),
                (404, "record_not_found", "header"),
            ),
            "another signature": (
                refresh(_mutated(bundle, lambda d: d.update(signature="ab" * 64))),
                (404, "record_not_found", "header"),
            ),
            "another index": (
                refresh(_with_checkpoint(bundle, signed, opened.proof.index + 1)),
                (422, "seal_invalid", "seal"),
            ),
            "another log": (
                refresh(_mutated(bundle, lambda d: d["seal"].update(log="x/y/z"))),
                (422, "seal_invalid", "seal"),
            ),
            "another key": (
                refresh(_with_checkpoint(bundle, sign_checkpoint(opened.checkpoint, other_key))),
                (422, "seal_invalid", "seal.proof"),
            ),
            "a forked log": (
                refresh(_with_checkpoint(bundle, sign_checkpoint(fork, signer))),
                (409, "checkpoint_inconsistent", "seal.proof"),
            ),
            "wait not a number": (refresh(bundle, "?wait=soon"), (422, "wait_invalid", "wait")),
            "wait negative": (refresh(bundle, "?wait=-1"), (422, "wait_invalid", "wait")),
            "wait too long": (refresh(bundle, "?wait=60.5"), (422, "wait_invalid", "wait")),
            "wait twice": (refresh(bundle, "?wait=1&wait=2"), (422, "wait_invalid", "wait")),
        }
        assert {name: got for name, (got, _) in cases.items()} == {
            name: expected for name, (_, expected) in cases.items()
        }
        disclosure = client.post(
            f"/v1/records/{ids[1]}/disclosure?wait=100", headers=headers, json={"fields": []}
        )
        assert (disclosure.status_code, disclosure.json()["field"]) == (422, "wait")

        # A bundle asked before its record was sealed gets its seal; no old checkpoint, so
        # no consistency proof. An erased subject's records still refresh.
        unsealed = _mutated(bundle, lambda d: d.update(seal=None))
        assert client.post("/v1/subjects/c1/erase", headers=headers).status_code == 200
        response = client.post("/v1/proofs:refresh", content=unsealed, headers=JSON)
        assert response.status_code == 200, response.text
        assert "recordseal-consistency" not in response.headers
        assert decode_bundle(response.content).seal == decode_bundle(bundle).seal
