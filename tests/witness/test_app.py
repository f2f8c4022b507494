"""The witness over HTTP (Litestar's TestClient): the status codes of c2sp.org/tlog-witness."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from recordseal.tlog import CosignatureVerifier, Ed25519Signer, open_note, sign_checkpoint
from recordseal.tlog.protocol import encode_add_checkpoint
from recordseal.witness.app import create_witness_app
from tests.tlog.support import WITNESS_NAME, Log


def make_app(tmp_path: Path, log: Log) -> Litestar:
    return create_witness_app(
        tmp_path / "state",
        WITNESS_NAME,
        tmp_path / "keys",
        {log.origin: [log.signer.verifier().vkey]},
    )


@pytest.fixture
def app(tmp_path: Path, log: Log) -> Litestar:
    return make_app(tmp_path, log)


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Litestar]]:
    with TestClient(app) as client:
        yield client


def witness_verifier(app: Litestar) -> CosignatureVerifier:
    verifier: CosignatureVerifier = app.state.witness.signer.verifier()
    return verifier


def post(client: TestClient[Litestar], old: int, proof: list[bytes], signed: str):  # type: ignore[no-untyped-def]
    return client.post("/add-checkpoint", content=encode_add_checkpoint(old, proof, signed))


def test_cosigns_with_200(app: Litestar, client: TestClient[Litestar], log: Log) -> None:
    log.append(5)
    response = post(client, 0, [], log.signed())
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text.startswith(f"— {WITNESS_NAME} ") and response.text.endswith("\n")
    note = log.signed() + response.text
    opened = open_note(note, [log.signer.verifier(), witness_verifier(app)])
    assert len(opened.verified) == 2


def test_409_carries_the_witness_size(client: TestClient[Litestar], log: Log) -> None:
    log.append(5)
    post(client, 0, [], log.signed())
    log.append(2)
    response = post(client, 0, [], log.signed())
    assert response.status_code == 409
    assert response.headers["content-type"] == "text/x.tlog.size"
    assert response.content == b"5\n"


def test_422_for_a_second_root_at_the_same_size(
    client: TestClient[Litestar], log: Log, forked_log: Log
) -> None:
    """c2sp.org/tlog-witness as it stands: an equal size with another root is 422."""
    log.append(5)
    post(client, 0, [], log.signed())
    forked_log.append(4, "fork")
    response = post(client, 5, [], forked_log.signed())
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "root_mismatch"


def test_422_for_a_bad_proof(client: TestClient[Litestar], log: Log, forked_log: Log) -> None:
    log.append(5)
    post(client, 0, [], log.signed())
    forked_log.append(8, "fork")
    response = post(client, 5, forked_log.proof(5), forked_log.signed())
    assert response.status_code == 422
    assert response.json()["code"] == "proof_invalid"
    log.append(2)
    response = post(client, 0, log.proof(3), log.signed(3))
    assert response.status_code == 409  # the old size is checked before the proof


def test_400_for_malformed_requests(client: TestClient[Litestar], log: Log) -> None:
    log.append(5)
    for body in (b"", b"old 0\n", b"old x\n\n" + log.signed().encode(), b"old 0\n\nnot a note"):
        response = client.post("/add-checkpoint", content=body)
        assert response.status_code == 400, body
        assert response.headers["content-type"] == "application/problem+json"
    response = post(client, 6, [], log.signed())
    assert (response.status_code, response.json()["code"]) == (400, "old_size_invalid")


def test_403_for_untrusted_signatures(client: TestClient[Litestar], log: Log) -> None:
    log.append(5)
    impostor = Ed25519Signer.generate(log.origin)
    response = post(client, 0, [], sign_checkpoint(log.checkpoint(), impostor))
    assert (response.status_code, response.json()["code"]) == (403, "note_unverified")


def test_404_for_unknown_logs(client: TestClient[Litestar], log: Log) -> None:
    other = Log(Ed25519Signer.generate("other.example/log"), origin="other.example/log")
    other.append(2)
    response = post(client, 0, [], other.signed())
    assert (response.status_code, response.json()["code"]) == (404, "unknown_origin")


def test_state_and_key_survive_a_new_app(tmp_path: Path, log: Log) -> None:
    log.append(5)
    first = make_app(tmp_path, log)
    with TestClient(first) as client:
        assert post(client, 0, [], log.signed()).status_code == 200
    key = tmp_path / "keys" / "witness-key.ed25519"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    second = make_app(tmp_path, log)
    assert witness_verifier(second) == witness_verifier(first)
    with TestClient(second) as client:
        response = post(client, 0, [], log.signed())
        assert (response.status_code, response.content) == (409, b"5\n")


def test_health_and_methods(client: TestClient[Litestar], app: Litestar) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    vkey = witness_verifier(app).vkey
    assert response.json() == {"status": "ok", "witness": vkey, "demo": False, "vkeys": [vkey]}
    assert client.get("/add-checkpoint").status_code == 405


def test_500_for_a_corrupt_state(app: Litestar, client: TestClient[Litestar], log: Log) -> None:
    log.append(5)
    post(client, 0, [], log.signed())
    app.state.witness.store.path_for(log.origin).write_text("{")
    response = post(client, 5, [], log.signed())
    assert (response.status_code, response.json()["code"]) == (500, "state_corrupt")


def test_a_log_family_covers_logs_made_later_and_nothing_else(tmp_path: Path) -> None:
    """``--logs-under``: one key under the service's name stands for every log below it, each
    signed under its own origin; a sibling name, the bare name, another key are refused."""
    seed = bytes(range(32))
    family = Ed25519Signer.from_seed("svc.example", seed).verifier().vkey
    app = create_witness_app(
        tmp_path / "state", WITNESS_NAME, tmp_path / "keys", {}, families=[family]
    )
    with TestClient(app) as client:
        for origin in ("svc.example/acme/default", "svc.example/new-tenant/edge"):
            log = Log(Ed25519Signer.from_seed(origin, seed), origin=origin)
            log.append(3)
            assert post(client, 0, [], log.signed()).status_code == 200, origin
        for origin, key in (
            ("svc.example.evil/acme/default", seed),  # not under "svc.example/"
            ("svc.example", seed),  # the family's own name is no log of it
        ):
            log = Log(Ed25519Signer.from_seed(origin, key), origin=origin)
            log.append(1)
            response = post(client, 0, [], log.signed())
            assert (response.status_code, response.json()["code"]) == (404, "unknown_origin")
        stranger = Log(
            Ed25519Signer.from_seed("svc.example/acme/x", bytes(32)), "svc.example/acme/x"
        )
        stranger.append(1)
        response = post(client, 0, [], stranger.signed())
        assert (response.status_code, response.json()["code"]) == (403, "note_unverified")
