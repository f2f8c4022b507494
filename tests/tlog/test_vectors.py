"""Published examples (vectors/notes.json, provenance in vectors/README.md)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from recordseal.tlog import (
    Checkpoint,
    Cosignature,
    CosignatureVerifier,
    Ed25519Signer,
    Ed25519Verifier,
    NoteSignature,
    TlogError,
    cosigned_message,
    open_note,
    parse_note,
    parse_vkey,
    sign_note,
)
from recordseal.tlog.protocol import parse_add_checkpoint

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "vectors" / "notes.json").read_text(encoding="utf-8")
)
C2SP = VECTORS["c2sp"]
GO = VECTORS["go_sumdb_note"]
TD = VECTORS["transparency_dev_formats"]


def test_c2sp_signed_note_parses_with_inner_blank_line() -> None:
    vector = C2SP["signed_note"]
    note = parse_note(vector["note"])
    assert note.text == vector["text"]
    assert [s.name for s in note.signatures] == vector["signers"]
    assert note.encode() == vector["note"]


def test_c2sp_checkpoint_parses() -> None:
    vector = C2SP["checkpoint"]
    note = parse_note(vector["note"])
    checkpoint = Checkpoint.parse(note.text)
    assert checkpoint.origin == vector["origin"]
    assert checkpoint.size == vector["size"]
    assert checkpoint.root_hash == base64.b64decode(vector["root_hash_b64"])
    assert checkpoint.text() == note.text


def test_c2sp_cosignature_timestamp_and_signed_message() -> None:
    vector = C2SP["cosigned_checkpoint"]
    note = parse_note(vector["note"])
    witness_line = next(s for s in note.signatures if s.name == vector["witness"])
    cosignature = Cosignature.from_note_signature(witness_line)
    assert cosignature.timestamp == vector["timestamp"]
    assert cosigned_message(note.text, cosignature.timestamp) == vector["signed_message"].encode()


def test_c2sp_add_checkpoint_request_parses() -> None:
    vector = C2SP["add_checkpoint_request"]
    request = parse_add_checkpoint(vector["body"].encode())
    assert request.old_size == vector["old_size"]
    assert len(request.proof) == vector["proof_lines"]
    note = parse_note(request.signed_checkpoint)
    assert Checkpoint.parse(note.text).size == C2SP["checkpoint"]["size"]
    assert len(note.signatures) == 2


def test_c2sp_add_checkpoint_response_parses() -> None:
    vector = C2SP["add_checkpoint_response"]
    lines = vector["body"].splitlines(keepends=True)
    assert len(lines) == vector["lines"]
    # The example's bytes are placeholders (their "timestamps" exceed 2^63-1): syntax only.
    for line in lines:
        assert len(NoteSignature.parse_line(line).signature) == 8 + 64


def _go_signer() -> Ed25519Signer:
    _, _, name, _, key = GO["signer_key"].split("+", 4)
    material = base64.b64decode(key)
    assert material[0] == 0x01
    return Ed25519Signer.from_seed(name, material[1:])


def test_go_note_signs_byte_for_byte() -> None:
    signer = _go_signer()
    assert signer.verifier().vkey == GO["vkey"]
    assert sign_note(GO["text"], [signer]) == GO["signed"]


def test_go_note_verifies_and_ignores_unknown_cosigner() -> None:
    verifier = Ed25519Verifier.from_vkey(GO["vkey"])
    verified = open_note(GO["signed"] + GO["cosigned_by_unknown"], [verifier])
    assert verified.text == GO["text"]
    assert [s.name for s in verified.verified] == ["PeterNeumann"]
    assert [s.name for s in verified.unverified] == ["EnochRoot"]


@pytest.mark.parametrize("vector", TD["valid_vkeys"], ids=lambda v: v["vkey"].split("+")[0])
def test_transparency_dev_vkeys_parse(vector: dict[str, Any]) -> None:
    key = parse_vkey(vector["vkey"])
    assert key.signature_type == vector["type"]
    assert str(key) == vector["vkey"]
    if key.signature_type == 0x04:
        assert CosignatureVerifier.from_vkey(vector["vkey"]).vkey == vector["vkey"]
    else:
        assert Ed25519Verifier.from_vkey(vector["vkey"]).vkey == vector["vkey"]


@pytest.mark.parametrize("vkey", TD["invalid_vkeys"])
def test_transparency_dev_invalid_vkeys_refused(vkey: str) -> None:
    with pytest.raises(TlogError):
        parse_vkey(vkey)


def test_transparency_dev_cosignature_timestamp() -> None:
    for vector in TD["cosignature_timestamps"]:
        raw = base64.b64decode(vector["signature_b64"])
        signature = NoteSignature("w", int.from_bytes(raw[:4], "big"), raw[4:])
        assert Cosignature.from_note_signature(signature).timestamp == vector["timestamp"]
    raw = base64.b64decode(TD["not_a_cosignature_b64"])
    with pytest.raises(TlogError) as refused:
        Cosignature.from_note_signature(NoteSignature("w", 1, raw[4:]))
    assert refused.value.code == "cosignature_malformed"
