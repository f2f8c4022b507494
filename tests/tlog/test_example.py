"""The worked example of docs/tlog.md (vectors/recordseal_example.json), byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from asn1crypto import tsp  # type: ignore[import-untyped]

from recordseal.core import consistency_proof, merkle_root
from recordseal.tlog import (
    Checkpoint,
    CosignatureSigner,
    CosignatureVerifier,
    Ed25519Signer,
    Ed25519Verifier,
    open_note,
    sign_checkpoint,
)
from recordseal.tlog.protocol import encode_add_checkpoint
from recordseal.tlog.tsa import build_request

EXAMPLE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "recordseal_example.json").read_text(encoding="utf-8")
)


def test_worked_example_is_reproduced() -> None:
    log = Ed25519Signer.from_seed(
        EXAMPLE["log_name"], hashlib.sha256(b"recordseal docs: log key").digest()
    )
    witness = CosignatureSigner.from_seed(
        EXAMPLE["witness_name"], hashlib.sha256(b"recordseal docs: witness key").digest()
    )
    leaves = [leaf.encode() for leaf in EXAMPLE["leaves"]]
    checkpoint = Checkpoint(EXAMPLE["log_name"], len(leaves), merkle_root(leaves))
    signed = sign_checkpoint(checkpoint, log)
    assert log.verifier().vkey == EXAMPLE["log_vkey"]
    assert witness.vkey == EXAMPLE["witness_vkey"]
    assert checkpoint.text() == EXAMPLE["checkpoint_text"]
    assert signed == EXAMPLE["signed_checkpoint"]
    cosignature = witness.cosign(checkpoint.text(), EXAMPLE["timestamp"])
    assert cosignature.line == EXAMPLE["cosignature_line"]
    request = encode_add_checkpoint(3, consistency_proof(leaves, 3), signed)
    assert request.decode() == EXAMPLE["add_checkpoint_request"]
    der = build_request(checkpoint.root_hash, nonce=EXAMPLE["tsa_request_nonce"]).der
    assert der.hex() == EXAMPLE["tsa_request_der_hex"]
    assert tsp.TimeStampReq.load(der)["message_imprint"]["hashed_message"].native == (
        checkpoint.root_hash
    )


def test_worked_example_verifies_from_the_vkeys_alone() -> None:
    note = EXAMPLE["signed_checkpoint"] + EXAMPLE["cosignature_line"]
    log = Ed25519Verifier.from_vkey(EXAMPLE["log_vkey"])
    witness = CosignatureVerifier.from_vkey(EXAMPLE["witness_vkey"])
    opened = open_note(note, [log, witness])
    assert [s.name for s in opened.verified] == [EXAMPLE["log_name"], EXAMPLE["witness_name"]]
