"""The witness with ML-DSA-44 (c2sp.org/tlog-witness and tlog-cosignature v1.1 as they stand):
``--algorithm ml-dsa-44`` and ``both``, dual-signed and ML-DSA-44 log keys, the monitoring API,
422 for a second root at one size and for a size-0 checkpoint with another root."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.network.witness_client import WitnessClient
from recordseal.tlog import (
    MLDSA44,
    Checkpoint,
    CosignatureVerifier,
    Ed25519Signer,
    MLDSA44CosignatureSigner,
    MLDSA44CosignatureVerifier,
    NoteSignature,
    cosigner_verifier,
    log_verifier,
    open_checkpoint,
    parse_note,
    parse_vkey,
    sign_note,
    verify_cosignatures,
)
from recordseal.tlog.protocol import encode_add_checkpoint
from recordseal.witness.app import create_witness_app
from tests.tlog.support import WITNESS_NAME, Log

NOW = 1767225600
SERVICE = "svc.example"
ORIGIN = f"{SERVICE}/acme/default"


class DualLog(Log):
    """A log whose checkpoints carry an Ed25519 and an ML-DSA-44 signature (the service's)."""

    def __init__(self, seed: bytes = bytes(range(32)), origin: str = ORIGIN) -> None:
        super().__init__(Ed25519Signer.from_seed(origin, seed), origin=origin)
        self.mldsa = MLDSA44CosignatureSigner.from_seed(origin, seed, clock=None)

    def signed(self, size: int | None = None) -> str:
        return sign_note(self.checkpoint(size).text(), [self.signer, self.mldsa])


def families(seed: bytes = bytes(range(32))) -> list[str]:
    """The service's log family vkeys: Ed25519 and ML-DSA-44, under its name."""
    return [
        Ed25519Signer.from_seed(SERVICE, seed).verifier().vkey,
        MLDSA44CosignatureSigner.from_seed(SERVICE, seed).vkey,
    ]


def make_app(tmp_path: Path, algorithm: str, vkeys: list[str] | None = None) -> Litestar:
    return create_witness_app(
        tmp_path / "state",
        WITNESS_NAME,
        tmp_path / "keys",
        {},
        families=families() if vkeys is None else vkeys,
        algorithm=algorithm,
        clock=lambda: NOW + 0.9,
    )


@pytest.fixture
def log() -> DualLog:
    return DualLog()


def post(client: TestClient[Litestar], old: int, proof: list[bytes], note: str) -> httpx.Response:
    return client.post("/add-checkpoint", content=encode_add_checkpoint(old, proof, note))


def lines_of(response: httpx.Response) -> list[NoteSignature]:
    assert response.status_code == 200, response.text
    assert response.text.endswith("\n")
    return [NoteSignature.parse_line(line) for line in response.text[:-1].split("\n")]


def test_an_ml_dsa_witness_cosigns_with_the_time(tmp_path: Path, log: DualLog) -> None:
    app = make_app(tmp_path, "ml-dsa-44")
    with TestClient(app) as client:
        health = client.get("/health").json()
        assert health["vkeys"] == [health["witness"]]
        assert parse_vkey(health["witness"]).signature_type == MLDSA44
        log.append(4)
        [line] = lines_of(post(client, 0, [], log.signed()))
        [cosignature] = verify_cosignatures(
            log.checkpoint().text(), [line], [cosigner_verifier(health["witness"])]
        )
        assert cosignature.timestamp == NOW  # never 0 (c2sp.org/tlog-witness)
        assert len(cosignature.signature) == 2420
    assert (tmp_path / "keys" / "witness-key.ml-dsa-44").is_file()
    assert not (tmp_path / "keys" / "witness-key.ed25519").exists()


def test_both_algorithms_answer_two_lines_ed25519_first(tmp_path: Path, log: DualLog) -> None:
    app = make_app(tmp_path, "both")
    with TestClient(app) as client:
        health = client.get("/health").json()
        ed25519, mldsa = (cosigner_verifier(vkey) for vkey in health["vkeys"])
        assert isinstance(ed25519, CosignatureVerifier)
        assert isinstance(mldsa, MLDSA44CosignatureVerifier)
        assert health["witness"] == ed25519.vkey
        assert ed25519.name == mldsa.name == WITNESS_NAME  # one witness, one name
        log.append(3)
        lines = lines_of(post(client, 0, [], log.signed()))
        found = verify_cosignatures(log.checkpoint().text(), lines, [ed25519, mldsa])
        assert [c.key_id for c in found] == [ed25519.key_id, mldsa.key_id]


def test_the_client_keeps_the_cosignatures_of_the_keys_it_is_given(
    tmp_path: Path, log: DualLog
) -> None:
    app = make_app(tmp_path, "both")
    with TestClient(app) as client:
        ed25519, mldsa = (cosigner_verifier(v) for v in client.get("/health").json()["vkeys"])

    async def run(keys: list[object]) -> list[int]:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://w") as http:
            witness = WitnessClient("http://w", keys, http=http)  # type: ignore[arg-type]
            found = await witness.cosign(log.signed(), 0, log.proof)
            return [c.key_id for c in found]

    log.append(2)
    assert asyncio.run(run([mldsa])) == [mldsa.key_id]
    log.append(2)
    assert asyncio.run(run([ed25519, mldsa])) == [ed25519.key_id, mldsa.key_id]


def test_the_monitoring_api_serves_the_latest_cosigned_checkpoint(
    tmp_path: Path, log: DualLog
) -> None:
    """``GET /monitor/<hex SHA-256 of the origin>/checkpoint``: the checkpoint with the log
    signatures the witness verified and its own cosignatures; 404 before, and for anything
    but a lowercase hex SHA-256."""
    app = make_app(tmp_path, "both")
    path = f"/monitor/{hashlib.sha256(ORIGIN.encode()).hexdigest()}/checkpoint"
    with TestClient(app) as client:
        assert client.get(path).status_code == 404
        stranger = MLDSA44CosignatureSigner.generate("stranger.example")
        log.append(5)
        submitted = parse_note(log.signed())
        note = submitted.with_signatures(
            [stranger.cosign(submitted.text, 1).note_signature]
        ).encode()  # an unknown key's line: not the witness's to serve
        lines = lines_of(post(client, 0, [], note))
        served = client.get(path)
        assert served.status_code == 200
        assert served.headers["content-type"].startswith("text/plain")
        # The log's two signatures as submitted (the stranger's dropped), then the witness's.
        expected = submitted.with_signatures(lines).encode()
        assert served.text == expected
        verifiers = [log_verifier(vkey) for vkey in families()]
        under_origin = [type(v)(ORIGIN, v.public_key) for v in verifiers]
        assert len(open_checkpoint(served.text, under_origin)[1].verified) == 2
        log.append(1)
        post(client, 5, log.proof(5), log.signed())
        assert "\n6\n" in client.get(path).text  # the latest
        upper = path.replace(path[9:73], path[9:73].upper())
        for bad in (upper, "/monitor/abc/checkpoint", "/monitor/" + "0" * 64 + "/checkpoint"):
            response = client.get(bad)
            assert (response.status_code, response.json()["code"]) == (404, "unknown_origin")


def test_a_second_root_at_one_size_is_422(tmp_path: Path, log: DualLog) -> None:
    app = make_app(tmp_path, "ml-dsa-44")
    fork = DualLog()
    with TestClient(app) as client:
        log.append(4)
        post(client, 0, [], log.signed())
        fork.append(4, "fork")
        response = post(client, 4, [], fork.signed())
        assert (response.status_code, response.json()["code"]) == (422, "root_mismatch")


def test_a_size_0_checkpoint_has_the_empty_trees_root(tmp_path: Path) -> None:
    app = make_app(tmp_path, "ml-dsa-44")
    with TestClient(app) as client:
        signer = Ed25519Signer.from_seed(ORIGIN, bytes(range(32)))
        other = sign_note(Checkpoint(ORIGIN, 0, hashlib.sha256(b"x").digest()).text(), [signer])
        response = post(client, 0, [], other)
        assert (response.status_code, response.json()["code"]) == (422, "empty_root_invalid")
        empty = sign_note(Checkpoint(ORIGIN, 0, hashlib.sha256(b"").digest()).text(), [signer])
        assert post(client, 0, [], empty).status_code == 200


def test_ml_dsa_log_keys_are_checked(tmp_path: Path, log: DualLog) -> None:
    """A family of the ML-DSA-44 key alone witnesses a log by that signature; a changed
    ML-DSA-44 log signature is 403 even beside a valid Ed25519 one."""
    app = make_app(tmp_path, "ml-dsa-44", vkeys=families()[1:])
    with TestClient(app) as client:
        log.append(3)
        assert post(client, 0, [], log.signed()).status_code == 200
        note = parse_note(log.signed())
        bad = bytearray(note.signatures[1].signature)
        bad[50] ^= 1
        changed = NoteSignature(note.signatures[1].name, note.signatures[1].key_id, bytes(bad))
        tampered = type(note)(note.text, (note.signatures[0], changed)).encode()
        response = post(client, 3, [], tampered)
        assert (response.status_code, response.json()["code"]) == (403, "signature_invalid")
        ed25519_only = sign_note(log.checkpoint().text(), [log.signer])
        response = post(client, 3, [], ed25519_only)
        assert (response.status_code, response.json()["code"]) == (403, "note_unverified")


def test_extension_lines_are_cosigned_by_ed25519_alone(tmp_path: Path) -> None:
    signer = Ed25519Signer.from_seed(ORIGIN, bytes(range(32)))
    text = Checkpoint(ORIGIN, 1, hashlib.sha256(b"\x00x").digest(), ("an extension",)).text()
    note = sign_note(text, [signer])
    with TestClient(make_app(tmp_path / "a", "both")) as client:
        assert len(lines_of(post(client, 0, [], note))) == 1
    with TestClient(make_app(tmp_path / "b", "ml-dsa-44")) as client:
        response = post(client, 0, [], note)
        assert (response.status_code, response.json()["code"]) == (400, "extensions_unsupported")
