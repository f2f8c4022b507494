"""cosignature/v1: the signed message, round trips, and tampering."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from recordseal.tlog import (
    Checkpoint,
    Cosignature,
    CosignatureSigner,
    CosignatureVerifier,
    Ed25519Signer,
    NoteSignature,
    TlogError,
    cosigned_message,
    open_note,
    parse_vkey,
    sign_checkpoint,
    sign_note,
    verify_cosignatures,
)
from recordseal.tlog.cosignature import MAX_TIMESTAMP

CHECKPOINT = Checkpoint("example.com/log", 10, bytes(range(32)))
TEXT = CHECKPOINT.text()
WHEN = 1_700_000_000


@pytest.fixture
def signer() -> CosignatureSigner:
    return CosignatureSigner.generate("witness.example/w1")


@pytest.fixture
def cosignature(signer: CosignatureSigner) -> Cosignature:
    return signer.cosign(TEXT, WHEN)


def refused(
    verifier: CosignatureVerifier, text: str, cosignature: Cosignature, **options: int
) -> TlogError:
    with pytest.raises(TlogError) as error:
        verifier.verify_cosignature(text, cosignature, **options)
    return error.value


def test_signed_message_is_the_spec_layout() -> None:
    assert cosigned_message(TEXT, WHEN) == f"cosignature/v1\ntime {WHEN}\n{TEXT}".encode()
    with pytest.raises(TlogError):
        cosigned_message("not a checkpoint\n", WHEN)


def test_round_trip(signer: CosignatureSigner, cosignature: Cosignature) -> None:
    signer.verifier().verify_cosignature(TEXT, cosignature)
    assert cosignature.timestamp == WHEN
    assert cosignature.time == datetime.fromtimestamp(WHEN, UTC)
    line = cosignature.line
    assert line.startswith("— witness.example/w1 ") and line.endswith("\n")
    raw = base64.b64decode(line.split(" ")[2])
    assert raw[:4] == signer.key_id.to_bytes(4, "big")
    assert raw[4:12] == WHEN.to_bytes(8, "big")
    assert len(raw) == 4 + 8 + 64
    assert Cosignature.parse_line(line) == cosignature


def test_key_id_uses_type_0x04(signer: CosignatureSigner) -> None:
    plain = Ed25519Signer("witness.example/w1", signer._private)
    assert plain.key_id != signer.key_id
    key = parse_vkey(signer.vkey)
    assert key.signature_type == 0x04 and key.key_id == signer.key_id
    assert CosignatureVerifier.from_vkey(signer.vkey) == signer.verifier()
    with pytest.raises(TlogError) as error:
        CosignatureVerifier.from_vkey(plain.verifier().vkey)
    assert error.value.code == "key_unsupported"


def test_default_timestamp_is_now(signer: CosignatureSigner) -> None:
    before = int(datetime.now(UTC).timestamp())
    cosignature = signer.cosign(TEXT)
    assert before <= cosignature.timestamp <= before + 5


def test_tampered_timestamp(signer: CosignatureSigner, cosignature: Cosignature) -> None:
    for timestamp in (WHEN + 1, WHEN - 1, 0):
        moved = Cosignature(cosignature.name, cosignature.key_id, timestamp, cosignature.signature)
        assert refused(signer.verifier(), TEXT, moved).code == "cosignature_invalid"


@pytest.mark.parametrize(
    "other",
    [
        Checkpoint("example.com/log", 11, bytes(range(32))),
        Checkpoint("example.com/log", 10, bytes(range(1, 33))),
        Checkpoint("example.com/other", 10, bytes(range(32))),
        Checkpoint("example.com/log", 10, bytes(range(32)), ("extension",)),
    ],
    ids=["size", "root", "origin", "extension"],
)
def test_tampered_body(
    signer: CosignatureSigner, cosignature: Cosignature, other: Checkpoint
) -> None:
    assert refused(signer.verifier(), other.text(), cosignature).code == "cosignature_invalid"


def test_tampered_signature(signer: CosignatureSigner, cosignature: Cosignature) -> None:
    for position in (0, 31, 63):
        flipped = bytearray(cosignature.signature)
        flipped[position] ^= 0x80
        bad = Cosignature(cosignature.name, cosignature.key_id, WHEN, bytes(flipped))
        assert refused(signer.verifier(), TEXT, bad).code == "cosignature_invalid"


def test_other_witness_key(cosignature: Cosignature) -> None:
    impostor = CosignatureSigner.generate("witness.example/w1").verifier()
    assert refused(impostor, TEXT, cosignature).code == "cosignature_unknown_key"


def test_future_timestamps_can_be_refused(
    signer: CosignatureSigner, cosignature: Cosignature
) -> None:
    signer.verifier().verify_cosignature(TEXT, cosignature, max_timestamp=WHEN)
    error = refused(signer.verifier(), TEXT, cosignature, max_timestamp=WHEN - 1)
    assert error.code == "cosignature_future"


def test_malformed_cosignatures(signer: CosignatureSigner) -> None:
    for payload in (b"\x00" * 71, b"\x00" * 73, b""):
        with pytest.raises(TlogError) as error:
            Cosignature.from_note_signature(NoteSignature(signer.name, signer.key_id, payload))
        assert error.value.code == "cosignature_malformed"
    too_late = (MAX_TIMESTAMP + 1).to_bytes(8, "big") + bytes(64)
    with pytest.raises(TlogError) as error:
        Cosignature.from_note_signature(NoteSignature(signer.name, signer.key_id, too_late))
    assert error.value.code == "cosignature_malformed"
    with pytest.raises(TlogError):
        signer.cosign(TEXT, MAX_TIMESTAMP + 1)
    assert signer.cosign(TEXT, MAX_TIMESTAMP).timestamp == MAX_TIMESTAMP


def test_cosigned_checkpoint_note(signer: CosignatureSigner) -> None:
    log = Ed25519Signer.generate("example.com/log")
    signed = sign_checkpoint(CHECKPOINT, log)
    cosignature = signer.cosign(TEXT, WHEN)
    note = signed + cosignature.line
    opened = open_note(note, [log.verifier(), signer.verifier()])
    assert len(opened.verified) == 2
    found = verify_cosignatures(opened.text, opened.verified, [signer.verifier()])
    assert found == [cosignature]
    other = CosignatureSigner.generate("witness.example/w2").verifier()
    assert verify_cosignatures(TEXT, opened.verified, [other]) == []
    # A witness's note signature through the generic note API is a cosignature too.
    assert open_note(sign_note(TEXT, [signer]), [signer.verifier()]).text == TEXT


def test_verify_cosignatures_refuses_a_bad_known_one(signer: CosignatureSigner) -> None:
    bad = Cosignature(signer.name, signer.key_id, WHEN, bytes(64))
    with pytest.raises(TlogError) as error:
        verify_cosignatures(TEXT, [bad.note_signature], [signer.verifier()])
    assert error.value.code == "cosignature_invalid"


def test_note_verifier_form_refuses_wrong_lengths(signer: CosignatureSigner) -> None:
    verifier = signer.verifier()
    good = signer.cosign(TEXT, WHEN).note_signature.signature
    assert verifier.verify(TEXT.encode(), good)
    assert not verifier.verify(TEXT.encode(), good[:-1])
    assert not verifier.verify(b"not a checkpoint\n", good)
    assert not verifier.verify(b"\xff\n", good)
