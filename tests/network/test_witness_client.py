"""The witness client against the real witness app (in process, through ASGI)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from litestar import Litestar

from recordseal.network.witness_client import WitnessClient
from recordseal.tlog import CosignatureSigner, CosignatureVerifier, TlogError
from recordseal.witness.app import create_witness_app
from tests.tlog.support import WITNESS_NAME, Log


@pytest.fixture
def app(tmp_path: Path, log: Log) -> Litestar:
    return create_witness_app(
        tmp_path / "state",
        WITNESS_NAME,
        tmp_path / "keys",
        {log.origin: [log.signer.verifier().vkey]},
    )


def verifier_of(app: Litestar) -> CosignatureVerifier:
    verifier: CosignatureVerifier = app.state.witness.signer.verifier()
    return verifier


def client_for(
    app: Litestar, verifier: CosignatureVerifier | None = None, attempts: int = 5
) -> WitnessClient:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    http = httpx.AsyncClient(transport=transport, base_url="http://witness")
    return WitnessClient(
        "http://witness/",
        verifier or verifier_of(app),
        http=http,
        attempts=attempts,
        backoff_seconds=0.001,
    )


class Proofs:
    """``proof_for`` that records which old sizes were asked for."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self.asked: list[int] = []

    def __call__(self, old_size: int) -> Sequence[bytes]:
        self.asked.append(old_size)
        return self.log.proof(old_size)


def test_first_submission(app: Litestar, log: Log) -> None:
    log.append(5)
    proofs = Proofs(log)
    cosignature = asyncio.run(client_for(app).add_checkpoint(log.signed(), 0, proofs))
    verifier_of(app).verify_cosignature(log.checkpoint().text(), cosignature)
    assert proofs.asked == [0]


def test_recovers_from_409_with_the_witness_size(app: Litestar, log: Log) -> None:
    client = client_for(app)
    log.append(5)
    asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    log.append(6)
    proofs = Proofs(log)
    cosignature = asyncio.run(client.add_checkpoint(log.signed(), 0, proofs))
    assert proofs.asked == [0, 5]
    verifier_of(app).verify_cosignature(log.checkpoint().text(), cosignature)
    assert app.state.witness.latest(log.origin).size == 11


def test_async_proof_source(app: Litestar, log: Log) -> None:
    client = client_for(app)
    log.append(3)
    asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    log.append(3)

    async def proof_for(old_size: int) -> Sequence[bytes]:
        await asyncio.sleep(0)
        return log.proof(old_size)

    asyncio.run(client.add_checkpoint(log.signed(), 2, proof_for))


def test_witness_ahead_of_the_checkpoint(app: Litestar, log: Log) -> None:
    client = client_for(app)
    log.append(9)
    asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    with pytest.raises(TlogError) as error:
        asyncio.run(client.add_checkpoint(log.signed(6), 0, Proofs(log)))
    assert error.value.code == "witness_ahead"
    assert error.value.evidence["witness_size"] == 9


def test_refusal_is_reported_with_status(app: Litestar, log: Log, forked_log: Log) -> None:
    client = client_for(app)
    log.append(4)
    asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    forked_log.append(6, "fork")
    with pytest.raises(TlogError) as error:
        asyncio.run(client.add_checkpoint(forked_log.signed(), 4, Proofs(forked_log)))
    assert error.value.code == "witness_refused"
    assert error.value.evidence["status"] == 422


def test_cosignature_from_another_key_is_not_accepted(app: Litestar, log: Log) -> None:
    expected = CosignatureSigner.generate(WITNESS_NAME).verifier()
    log.append(2)
    with pytest.raises(TlogError) as error:
        asyncio.run(client_for(app, expected).add_checkpoint(log.signed(), 0, Proofs(log)))
    assert error.value.code == "cosignature_missing"


def test_server_errors_are_retried_then_reported(app: Litestar, log: Log) -> None:
    client = client_for(app, attempts=3)
    log.append(2)
    asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    app.state.witness.store.path_for(log.origin).write_text("{")
    proofs = Proofs(log)
    with pytest.raises(TlogError) as error:
        asyncio.run(client.add_checkpoint(log.signed(), 2, proofs))
    assert error.value.code == "witness_unavailable"
    assert proofs.asked == [2, 2, 2]
    assert str(error.value.evidence["last"]).startswith("500")


def test_unreachable_witness(log: Log, witness_signer: CosignatureSigner) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = WitnessClient(
        f"http://127.0.0.1:{port}", witness_signer.verifier(), attempts=2, backoff_seconds=0.001
    )
    log.append(1)
    with pytest.raises(TlogError) as error:
        asyncio.run(client.add_checkpoint(log.signed(), 0, Proofs(log)))
    assert error.value.code == "witness_unavailable"
