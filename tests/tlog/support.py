"""Fixtures for the transparency-log tests (tlog, witness, network): keys, a growing log, and
helpers to sign it; each of those folders' conftest.py offers them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from recordseal.core import consistency_proof, merkle_root
from recordseal.tlog import Checkpoint, CosignatureSigner, Ed25519Signer, sign_checkpoint

ORIGIN = "log.example/recordseal-test"
WITNESS_NAME = "witness.example/w1"


@dataclass
class Log:
    """An RFC 6962 log whose leaves are made up, with its checkpoint signing key."""

    signer: Ed25519Signer
    origin: str = ORIGIN
    leaves: list[bytes] = field(default_factory=list)

    def append(self, count: int, tag: str = "leaf") -> None:
        start = len(self.leaves)
        self.leaves.extend(f"{tag} {i}".encode() for i in range(start, start + count))

    def checkpoint(self, size: int | None = None) -> Checkpoint:
        size = len(self.leaves) if size is None else size
        return Checkpoint(self.origin, size, merkle_root(self.leaves[:size]))

    def signed(self, size: int | None = None) -> str:
        return sign_checkpoint(self.checkpoint(size), self.signer)

    def proof(self, old_size: int, size: int | None = None) -> list[bytes]:
        size = len(self.leaves) if size is None else size
        return consistency_proof(self.leaves[:size], old_size)


@pytest.fixture
def log_signer() -> Ed25519Signer:
    return Ed25519Signer.generate(ORIGIN)


@pytest.fixture
def log(log_signer: Ed25519Signer) -> Log:
    return Log(log_signer)


@pytest.fixture
def forked_log(log_signer: Ed25519Signer) -> Log:
    """Same origin and key as ``log``, different leaves: a split view."""
    forked = Log(log_signer)
    forked.append(1)  # the same genesis leaf as ``log`` after log.append(...)
    return forked


@pytest.fixture
def witness_signer() -> CosignatureSigner:
    return CosignatureSigner.generate(WITNESS_NAME)
